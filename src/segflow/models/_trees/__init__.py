"""Gradient-boosted trees: quantile binning, split statistics, histogram learner."""
