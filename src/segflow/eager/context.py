"""TensorFlow's module name for the execution mode: a face over segflow._core.mode."""
from segflow._core.mode import (  # noqa: F401
    executing_eagerly, eager_mode, context_safe, disable_eager_execution,
    enable_eager_execution, push_graph, pop_graph, global_default_graph,
)
from segflow._core.graph import graph_mode

__all__ = [
    'executing_eagerly', 'graph_mode', 'eager_mode', 'context_safe', 'disable_eager_execution',
    'enable_eager_execution', 'push_graph', 'pop_graph', 'global_default_graph',
]
