"""Moving averages (TF1's `training/moving_averages`): `assign_moving_average` and
`ExponentialMovingAverage`, which keeps a shadow variable per averaged variable or tensor.

    ema = sf.train.ExponentialMovingAverage(0.999, num_updates=global_step)
    with sf.control_dependencies([opt.minimize(loss)]):
        train_op = ema.apply(sf.trainable_variables())     # shadow -= (1 - decay) * (shadow - var)
    saver_map = ema.variables_to_restore()                # {"w/ExponentialMovingAverage": w, ...}

As in TensorFlow, a variable's shadow `<var>/<name>` starts at the variable's initial value and a
tensor's at zeros (zero-debiased if `zero_debias`); `apply` returns the update op while building a
graph and updates at once (returning None) eagerly.
"""
from segflow._core import mode as context
from segflow._core import dtypes
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import add_to_collection, control_dependencies, name_scope
from segflow._core.tensor import Tensor
from segflow._ops import cast as cast_ops
from segflow._ops import elementwise as cw
from segflow._ops import variables
from segflow._ops.control import group
from segflow._ops.variable import ResourceVariable
from segflow._training import slot_creator

__all__ = ["assign_moving_average", "ExponentialMovingAverage", "MOVING_AVERAGE_VARIABLES"]

MOVING_AVERAGE_VARIABLES = "moving_average_variables"
_AVERAGED_DTYPES = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)


def _key(x):
    return x.ref() if hasattr(x, "ref") else id(x)


def _base_name(x):
    name = x.name
    return name.rsplit(":", 1)[0] if ":" in name else name


def assign_moving_average(variable, value, decay, zero_debias=True, name=None):
    """variable -= (1 - decay) * (variable - value): one step of an exponential moving average.

    With `zero_debias`, `variable` is instead set to biased / (1 - decay ** t), where `biased` is
    a zeros-initialized average kept in `<variable>/biased` and t counts the updates in
    `<variable>/local_step` (so early averages are not pulled towards the zero start).
    Returns the updated variable (graph mode: reading it runs the update).
    """
    with name_scope(name, "AssignMovingAvg", [variable, value, decay]):
        one_minus = cw.subtract(convert_to_tensor(1.0, dtype=variable.dtype.base_dtype),
                                cast_ops.cast(decay, variable.dtype.base_dtype))
        value = value if isinstance(value, Tensor) else convert_to_tensor(value, dtype=variable.dtype.base_dtype)
        if not zero_debias:
            return variable.assign_sub(cw.multiply(cw.subtract(variable, value), one_minus))
        return _zero_debias(variable, value, one_minus)


def _zero_debias(unbiased, value, one_minus):
    base = _base_name(unbiased)
    dt = unbiased.dtype.base_dtype
    with name_scope(None), control_dependencies(None):
        biased = slot_creator.create_zeros_slot(unbiased, "biased")
        local_step = ResourceVariable(convert_to_tensor(0, dtype=dt), trainable=False, name=f"{base}/local_step")
    new_biased = biased.assign_sub(cw.multiply(cw.subtract(biased, value), one_minus))
    t = local_step.assign_add(convert_to_tensor(1, dtype=dt))
    bias_factor = cw.subtract(convert_to_tensor(1, dtype=dt),
                              cw.pow(cw.subtract(convert_to_tensor(1, dtype=dt), one_minus), t))
    return unbiased.assign(cw.divide(new_biased, bias_factor))


class ExponentialMovingAverage:
    """Keeps exponential moving averages of variables (or tensors) in shadow variables.

    Args:
      decay: the decay, e.g. 0.999; each update does shadow -= (1 - decay) * (shadow - value).
      num_updates: optional count of updates (e.g. the global step): the decay used is then
        min(decay, (1 + num_updates) / (10 + num_updates)), so early averages move faster.
      zero_debias: debias the averages of tensors (not variables) that start at zero.
      name: the suffix of the shadow variables' names and the name of the update op.
    """

    def __init__(self, decay, num_updates=None, zero_debias=False, name="ExponentialMovingAverage"):
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages = {}
        self._debiased = set()

    @property
    def name(self):
        return self._name

    def apply(self, var_list=None):
        """Creates the shadows of `var_list` (default: the trainable variables) where missing and
        updates them.

        Returns:
          The update op (a NoOp named `name`) while building a graph; None eagerly, where the
          shadows are updated at once.
        Raises:
          TypeError: an entry that is not float16, bfloat16, float32 or float64.
        """
        if var_list is None:
            var_list = variables.trainable_variables()
        var_list = list(var_list)
        for var in var_list:
            if var.dtype.base_dtype not in _AVERAGED_DTYPES:
                raise TypeError(f"The variables must be half, float, or double: {var.name}")
            if _key(var) in self._averages:
                continue
            with name_scope(None), control_dependencies(None):
                if isinstance(var, ResourceVariable):
                    init = var.read_value() if context.executing_eagerly() else var.initial_value
                    avg = slot_creator.create_slot(var, init, self._name)
                    add_to_collection(MOVING_AVERAGE_VARIABLES, var)
                else:
                    avg = slot_creator.create_zeros_slot(var, self._name)
                    if self._zero_debias:
                        self._debiased.add(_key(avg))
            self._averages[_key(var)] = avg
        with name_scope(self._name):
            decay = convert_to_tensor(self._decay, dtype=dtypes.float32, name="decay")
            if self._num_updates is not None:
                n = cast_ops.cast(self._num_updates, dtypes.float32, name="num_updates")
                decay = cw.minimum(decay, cw.divide(cw.add(1.0, n), cw.add(10.0, n)))
            updates = []
            for var in var_list:
                avg = self._averages[_key(var)]
                updates.append(assign_moving_average(avg, var, decay, zero_debias=_key(avg) in self._debiased))
        if context.executing_eagerly():
            return None
        return group(*updates, name=self._name)

    def average(self, var):
        """The shadow variable of `var`, or None if `var` is not averaged."""
        return self._averages.get(_key(var))

    def average_name(self, var):
        """The name of var's shadow (without ":0"): its actual name once `apply` made it, else
        `<var>/<name>`, the name a Saver restores it under."""
        avg = self._averages.get(_key(var))
        if avg is not None:
            return _base_name(avg)
        return f"{_base_name(var)}/{self._name}"

    def variables_to_restore(self, moving_avg_variables=None):
        """A {checkpoint name: variable} map for a Saver that loads the averages into the model's
        variables: each variable of `moving_avg_variables` (default: the trainable and moving-average
        variables) under its shadow's name, every other global variable under its own name.
        """
        if moving_avg_variables is None:
            moving_avg_variables = variables.trainable_variables() + variables.moving_average_variables()
        unique = {}
        for v in moving_avg_variables:
            unique.setdefault(_key(v), v)
        name_map = {self.average_name(v): v for v in unique.values()}
        averaged_names = {v.name for v in unique.values()}
        for v in variables.global_variables():
            if v.name not in averaged_names and _base_name(v) not in name_map:
                name_map[_base_name(v)] = v
        return name_map

