"""The one op record: `Operation` is a node of a Graph and, with `graph` None, an eagerly executed op as a tape records it; gradient functions see the same object in every mode."""
from segflow._core.graph_def import NodeDef
from segflow._core.mode import get_default_session
from segflow._core.tensor import Tensor

__all__ = ["Operation"]


_CPU = "/job:localhost/replica:0/task:0/device:CPU:0"


def _input_name(t):
    """How a NodeDef names an input: "op" for output 0, "op:i" for output i (TF's spelling)."""
    try:
        return t.op.name if t.value_index == 0 else t.name
    except (AttributeError, ValueError):
        return getattr(t, "name", "")


class Operation:
    """The one op record: a node of a Graph, or (with `graph` None) an eagerly executed op as a
    GradientTape recorded it. Gradient functions see the same interface in every mode: `type`,
    `name`, `inputs`, `outputs`, `get_attr(name)`, `graph`, `skip_input_indices`.

    A graph op's `_id` orders it by creation (inputs exist before the ops that use them), the order
    the backward walk relies on; a tape keeps its records in that order. `grad_fn` is set for
    records of `custom_gradient` calls. `_original_op` is the forward op for the ops `gradients()`
    built for its gradient (`Graph._original_op`), else None.
    """

    __slots__ = ("_graph", "_type", "_name", "inputs", "_attrs", "_opdef", "_input_counts", "_control_inputs",
                 "_device", "_colocation", "_gradient_type", "outputs", "_id", "_kernel_attrs", "grad_fn",
                 "skip_input_indices", "_const_cache", "_original_op", "__weakref__")

    def __init__(self, graph, op_type, name, inputs, attrs, output_specs, opdef, input_counts=None,
                 control_inputs=(), device="", colocation=None, kernel_attrs=None, original_op=None):
        self._graph = graph
        self._type = op_type
        self._name = name
        self.inputs = list(inputs)
        self._attrs = attrs
        self._opdef = opdef
        self._input_counts = input_counts   # lengths of list inputs, in opdef order
        self._control_inputs = list(control_inputs)
        self._device = device
        self._colocation = colocation
        self._gradient_type = None
        self._kernel_attrs = attrs if kernel_attrs is None else kernel_attrs
        self.grad_fn = None
        self.skip_input_indices = None      # inputs the current backward pass needs no gradient for
        self._const_cache = None
        self._original_op = original_op    # the forward op whose gradient this op is part of, if any
        self.outputs = [Tensor(self, i, dt, shp) for i, (dt, shp) in enumerate(output_specs)]
        self._id = next(graph._op_ids)
        for t in self.inputs:
            t._consumers.append(self)

    @property
    def type(self):
        return self._type

    @property
    def name(self):
        return self._name

    @property
    def graph(self):
        return self._graph

    @property
    def control_inputs(self):
        return self._control_inputs if self._graph is not None else []

    @property
    def device(self):
        return self._device if self._graph is not None else _CPU

    @property
    def node_def(self):
        """This op as a NodeDef (name, op, input, device, attr; dtype attrs included)."""
        attrs = dict(self._attrs)
        opdef = self._opdef
        if opdef is not None:
            for name in opdef.attr_positions:
                if name not in attrs:
                    try:
                        attrs[name] = self.get_attr(name)
                    except ValueError:
                        pass
        controls = self._control_inputs if self._graph is not None else []
        inputs = [_input_name(t) for t in self.inputs]
        return NodeDef(self._name, self._type, inputs + ["^" + c.name for c in controls],
                       self._device if self._graph is not None else "", attrs)

    @property
    def op_def(self):
        return self._opdef

    def colocation_groups(self):
        return [f"loc:@{self._colocation or self._name}".encode()]

    def get_attr(self, name):
        attrs = self._attrs
        if name in attrs:
            return attrs[name]
        # dtype attrs (T, Tindices, ...) are the dtype of the first input they name; N is the length
        # of the first list input
        opdef = self._opdef
        if opdef is not None and name in opdef.attr_positions:
            p = opdef.attr_positions[name][0]
            flat_index = p
            if opdef.has_list_input:
                flat_index, counts = 0, iter(self._input_counts or ())
                for q, is_list in enumerate(opdef.list_inputs):
                    if q == p:
                        break
                    flat_index += next(counts) if is_list else 1
            if flat_index < len(self.inputs):
                return self.inputs[flat_index].dtype
        if name == "N" and self._input_counts:
            return self._input_counts[0]
        raise ValueError(f"Operation '{self._name}' ({self._type}) has no attr named '{name}'. "
                         f"It has: {sorted(attrs)}")

    def _set_attr(self, name, value):
        self._attrs[name] = value

    def _add_control_input(self, op):
        if op not in self._control_inputs:
            self._control_inputs.append(op)

    def run(self, feed_dict=None, session=None):
        session = session or get_default_session()
        if session is None:
            raise ValueError("Cannot execute operation using `run()`: no default session is registered.")
        session.run(self, feed_dict)

    def values(self):
        return tuple(self.outputs)

    def __repr__(self):
        if self._graph is None:
            return f"<sf.Operation (eager record) type={self._type}>"
        return f"<sf.Operation '{self._name}' type={self._type}>"


_new_op = Operation.__new__


def eager_record(opdef, inputs, outputs, attrs, input_counts=None, grad_fn=None, name=None):
    """An eager record (the Operation a tape keeps for an op that ran): `inputs` and `outputs` are
    EagerTensors, `attrs` the static attrs the kernel ran with (dtype attrs are derived from the
    inputs by `get_attr`); opdef None for a custom gradient's record (`grad_fn` set). A plain
    function: it runs for every recorded op."""
    # Only what an eager record uses is set: the graph-only slots (_control_inputs, _device,
    # _colocation, _gradient_type, _kernel_attrs, _const_cache) stay empty and the properties that
    # read them answer for records themselves.
    op = _new_op(Operation)
    op._graph = None
    op._type = opdef.name if opdef is not None else "CustomGradient"
    op._name = name or op._type
    op.inputs = inputs
    op._attrs = attrs
    op._opdef = opdef
    op._input_counts = input_counts
    op.grad_fn = grad_fn
    op.skip_input_indices = None
    op._original_op = None
    op.outputs = outputs     # (no _id: a tape's record list is its creation order)
    return op
