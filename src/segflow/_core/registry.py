"""The gradient registry: gradient functions by op type (`RegisterGradient`, `NotDifferentiable`,
`get_gradient_function`)."""

import traceback

__all__ = ['NoGradient', 'NotDifferentiable', 'RegisterGradient', 'Registry', 'get_gradient_function', 'no_gradient']


# ----------------------------------------------------------------------------------------------
# Registries


class Registry:
    """Maps names to objects; registering a name twice is an error that names the first place."""

    def __init__(self, name):
        self._name = name
        self._registry = {}

    def register(self, candidate, name=None):
        name = name or candidate.__name__
        if name in self._registry:
            where = self._registry[name][1]
            raise KeyError(f"Registering two {self._name} with name '{name}'! "
                           f"(Previous registration was in {where})")
        frame = traceback.extract_stack(limit=3)[0]
        self._registry[name] = (candidate, f"{frame.name} {frame.filename}:{frame.lineno}")

    def lookup(self, name):
        try:
            return self._registry[name][0]
        except KeyError:
            raise LookupError(f"{self._name} registry has no entry for: {name}") from None

    def __contains__(self, name):
        return name in self._registry

    def list(self):
        return list(self._registry)


_gradient_registry = Registry("gradient")


class RegisterGradient:
    """Decorator registering the gradient function of an op type: `@RegisterGradient("MatMul")`.

    The function takes `(op, grad)` (or `(op, *grads)` for several outputs) and returns one gradient
    per input of `op`, `None` where the input has none.
    """

    def __init__(self, op_type):
        if not isinstance(op_type, str):
            raise TypeError("op_type must be a string")
        self._op_type = op_type

    def __call__(self, f):
        _gradient_registry.register(f, self._op_type)
        return f


def NotDifferentiable(op_type):
    """Declares that ops of type `op_type` have no gradient (their inputs get None)."""
    if not isinstance(op_type, str):
        raise TypeError("op_type must be a string")
    _gradient_registry.register(None, op_type)


NoGradient = NotDifferentiable
no_gradient = NotDifferentiable


def get_gradient_function(op):
    """The gradient function of `op` (honouring the graph's gradient_override_map), or None if the
    op type is NotDifferentiable. Raises LookupError when no gradient is registered."""
    op_type = op.type
    graph = getattr(op, "_graph", None)
    if graph is not None and op._gradient_type is not None:
        op_type = op._gradient_type
    try:
        return _gradient_registry.lookup(op_type)
    except LookupError:
        raise LookupError(f"No gradient defined for operation '{op.name}' (op type: {op_type}). "
                          f"Register one with @ops.RegisterGradient(\"{op_type}\")") from None
