"""sf.data's pipelines over in-memory data: stages (node, sources, transforms, functions), their
runs (instance), the public Dataset (dataset) and the iterators (iterator)."""
