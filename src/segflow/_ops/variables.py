"""TensorFlow's `variables` module: `Variable` (a resource variable), collections of variables and
their initializers.

    v = variables.Variable(np.zeros((4, 2)), name="v")
    init = variables.global_variables_initializer()    # graph mode: run it in each Session
"""

from __future__ import annotations

from segflow._core import mode as context
from segflow._core.graph import GraphKeys, get_collection
from segflow._ops.variable import ResourceVariable
from segflow._ops.control import group
from segflow._ops.variable_ops import report_uninitialized
from typing import Any, Optional, Sequence
from segflow._core.tensor import Tensor
from segflow._core.operation import Operation

__all__ = ["Variable", "ResourceVariable", "RefVariable", "VariableV1", "global_variables", "local_variables",
           "trainable_variables", "model_variables", "moving_average_variables", "all_variables",
           "global_variables_initializer", "local_variables_initializer", "variables_initializer",
           "initialize_all_variables", "initialize_variables", "initialize_local_variables",
           "is_variable_initialized", "assert_variables_initialized", "report_uninitialized_variables",
           "VariableSynchronization", "VariableAggregation", "initialize_resources"]

Variable = ResourceVariable
VariableV1 = ResourceVariable
RefVariable = ResourceVariable


class VariableSynchronization:
    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


class VariableAggregation:
    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3
    ONLY_FIRST_TOWER = 3


def global_variables(scope: Optional[str] = None) -> list[Any]:
    """The variables of the default graph's GLOBAL_VARIABLES collection (empty eagerly)."""
    return get_collection(GraphKeys.GLOBAL_VARIABLES, scope)


all_variables = global_variables


def local_variables(scope: Optional[str] = None) -> list[Any]:
    return get_collection(GraphKeys.LOCAL_VARIABLES, scope)


def trainable_variables(scope: Optional[str] = None) -> list[Any]:
    """The variables of the default graph's TRAINABLE_VARIABLES collection (empty eagerly)."""
    return get_collection(GraphKeys.TRAINABLE_VARIABLES, scope)


def model_variables(scope: Optional[str] = None) -> list[Any]:
    return get_collection(GraphKeys.MODEL_VARIABLES, scope)


def moving_average_variables(scope: Optional[str] = None) -> list[Any]:
    return get_collection("moving_average_variables", scope)


def variables_initializer(var_list: Sequence[Any], name: str = "init") -> Optional[Operation]:
    """One op running the initializers of `var_list` (graph mode); None eagerly, where variables are
    initialized when created."""
    if context.executing_eagerly():
        return None
    return group([v.initializer for v in var_list], name=name)


initialize_variables = variables_initializer


def initialize_resources(resource_list: Sequence[Any], name: str = "init") -> Optional[Operation]:
    """TF's `resources.initialize_resources`: one op running the initializers of `resource_list`
    (variables, or objects with an `initializer` or `create` op); a no-op for an empty list."""
    if context.executing_eagerly():
        return None
    ops = [getattr(r, "initializer", None) or getattr(r, "create", None) for r in resource_list]
    return group([op for op in ops if op is not None], name=name)


def global_variables_initializer() -> Optional[Operation]:
    """Initializes every variable in GLOBAL_VARIABLES (run it in each Session before reading)."""
    return variables_initializer(global_variables())


initialize_all_variables = global_variables_initializer


def local_variables_initializer() -> Optional[Operation]:
    return variables_initializer(local_variables(), name="init_local")


initialize_local_variables = local_variables_initializer


def is_variable_initialized(variable: Any) -> Tensor:
    return variable.is_initialized()


def assert_variables_initialized(var_list: Optional[Sequence[Any]] = None) -> None:
    return None


def report_uninitialized_variables(var_list: Optional[Sequence[Any]] = None,
                                   name: str = "report_uninitialized_variables") -> Tensor:
    """Names of the variables of `var_list` (default: all global ones) not yet initialized, as a
    string tensor (graph mode)."""
    if var_list is None:
        var_list = global_variables() + local_variables()
    return report_uninitialized(var_list, name)
