"""The framework layer: dtypes, shapes, Graph/Operation/Tensor, op definitions, errors."""
