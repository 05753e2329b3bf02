"""TensorFlow's `control_flow_ops` module name: a face over segflow._ops.control."""
from segflow._ops.control import no_op, group, tuple, with_dependencies

__all__ = [
    'no_op', 'group', 'tuple', 'with_dependencies'
]
