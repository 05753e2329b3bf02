"""Training: the TF1 `Optimizer` base (slots, `_prepare`, `_apply_dense`, `_apply_sparse`,
deduplication of sparse gradients) and the optimizers built on it, plus the global step.
`sf.train` (segflow/train.py) re-exports them; `segflow.training.training` is TF's module name."""
