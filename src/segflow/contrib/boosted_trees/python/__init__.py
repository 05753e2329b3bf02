"""TF contrib boosted trees, python side."""
