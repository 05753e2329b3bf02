"""The graph an `sf.function` is traced into (TF's FuncGraph): placeholders for the arguments, and
captures for what the trace uses from outside.

Tensors from outside the trace (closures: eager tensors, tensors of an outer graph) are captured:
the graph gets a placeholder that is fed their value at each call (and keeps their static value, if
known, for shape inference and constant folding, as a Const would). Eager variables are captured by
handle (a `VarHandleOp` stand-in fed the variable's own handle), so reads and updates inside the
function act on the variable itself. Variables created while tracing are created once, eagerly or
in the outermost graph (TF's `init_scope`).
"""
from segflow._core import dtypes, fold as tensor_util, shapes as tensor_shape
from segflow._core import mode as context
from segflow._core.apply import _EAGER_RESOURCES, apply_op
from segflow._core.graph import Graph
from segflow._core.session import execute_plan, make_plan
from segflow._core.tensor import EagerTensor, Tensor
from segflow._ops import shape as shape_ops

__all__ = ["FuncGraph"]


class FuncGraph(Graph):
    """The graph of one trace: its argument placeholders, its captures and its outputs."""

    building_function = True    # TF's flag: `==` on its tensors is elementwise (TF2)

    def __init__(self, name, outer_graph=None):
        super().__init__()
        self.name = name
        self.outer_graph = outer_graph     # the graph the trace was made in (None: eagerly)
        self.inputs = []                   # placeholders of the tensor arguments, in order
        self.captures = []                 # (outside value, placeholder) fed at each call
        self._capture_of = {}              # id(outside value) -> placeholder
        self._keep = []                    # outside values captured (ids stay unique)
        self.variables = []                # eager variables the trace reads or updates
        self.created_variables = []
        self.allow_variable_creation = True
        self.outputs = []
        self.structured_outputs = None

    def capture(self, value):
        """The stand-in inside this graph for a tensor from outside it (fed its value at each call)."""
        found = self._capture_of.get(id(value))
        if found is not None:
            return found
        with self.as_default(), self.control_dependencies(None), self.name_scope(""):
            if value.dtype == dtypes.resource:
                # a variable's handle: a VarHandleOp stand-in carries the variable's dtype and shape
                # for shape inference; its value is the fed handle
                dtype, shape, name = _variable_of(value)
                inside = apply_op("VarHandleOp", name="captured_" + _op_name(name),
                                  shared_name=f"{self.name}/captured/{len(self.captures)}/{name}",
                                  dtype=dtype, shape=shape)
            else:
                inside = shape_ops.placeholder(value.dtype, value.shape, name="captured")
                # the value fed is fixed (an eager tensor, or a constant of the outer graph): shape
                # inference and constant folding inside the trace may use it, as they would a Const
                known = tensor_util.constant_value(value)
                if known is not None:
                    inside.op._const_cache = [known]
        self.captures.append((value, inside))
        self._capture_of[id(value)] = inside
        self._keep.append(value)
        return inside

    def note_variable(self, variable):
        """An eager variable read or updated while tracing: tapes around a call watch it."""
        if all(v is not variable for v in self.variables):
            self.variables.append(variable)
        outer = getattr(self.outer_graph, "note_variable", None)
        if outer is not None:       # a cond branch or loop body inside a trace: the trace uses it too
            outer(variable)

    def variable_graph(self):
        """Where a variable created while tracing lives (TF's init_scope): None for eagerly, else the
        outermost graph that is not a trace (TF1 graph mode)."""
        graph = self
        while isinstance(graph, FuncGraph):
            graph = graph.outer_graph
        return graph

    def lift_variable_initial_value(self, initial_value):
        """A variable is being created while this graph traces: its initial value, made eagerly (or
        in `variable_graph()`)."""
        if not self.allow_variable_creation:
            raise ValueError(f"sf.function '{self.name}' tried to create a variable on a trace other than its "
                             "first; create variables once (on the first call, or outside the function)")
        outer = self.variable_graph()
        if callable(initial_value):
            with (context.eager_mode() if outer is None else outer.as_default()):
                value = initial_value()
        else:
            value = initial_value
        if outer is not None and isinstance(value, Tensor) and value.graph is outer:
            return value
        if isinstance(value, Tensor) and not isinstance(value, EagerTensor):
            if value.graph is not self:
                raise ValueError("a variable's initial value must come from the function being traced")
            plan = make_plan([value], [], [])
            for op, *_ in plan.steps:
                if op.type == "Placeholder":
                    raise ValueError(f"sf.function '{self.name}': the initial value of a variable created in the "
                                     "function depends on the function's arguments; pass a callable or a value "
                                     "that does not")
            value = execute_plan(plan, [], _EAGER_RESOURCES)[0]
        return value


def _variable_of(handle):
    """(dtype, static shape, name) of the variable behind a handle (eager, or of an outer graph)."""
    if isinstance(handle, EagerTensor):
        resource = handle.numpy().item()
        value = resource.value
        shape = tensor_shape.TensorShape(value.shape) if value is not None else tensor_shape.unknown_shape()
        return dtypes.from_numpy(resource.dtype), shape, resource.name
    op = handle.op
    if op.type == "VarHandleOp":
        return op.get_attr("dtype"), tensor_shape.as_shape(op.get_attr("shape")), op.name
    return None, tensor_shape.unknown_shape(), op.name


def _op_name(name):
    return "".join(c if c.isalnum() or c in "_-./" else "_" for c in name).lstrip("_./-") or "v"
