"""TensorFlow's `control_flow_ops` module name: a face over segflow._ops.control."""
from segflow._ops.control import no_op, group, tuple, with_dependencies
from segflow._ops.control_flow import case, cond, switch_case, while_loop

__all__ = [
    'no_op', 'group', 'tuple', 'with_dependencies', 'case', 'cond', 'switch_case', 'while_loop'
]
