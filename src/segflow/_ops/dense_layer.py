"""TF1's densely connected layer (`tf.compat.v1.layers.dense` / `Dense`): `activation(inputs @ kernel
+ bias)`, with the kernel `[input_dim, units]` and the bias `[units]` made, on the first call, as
the variables `<scope>/kernel` and `<scope>/bias` of the layer's variable scope (`get_variable`, so
`reuse` and the enclosing scopes' settings apply). Inputs of rank above 2 are multiplied along
their last axis.
"""
from segflow._core import dtypes, mode as context
from segflow._core import shapes as tensor_shape
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import name_scope
from segflow._ops import shape as array_ops
from segflow._ops import init_ops
from segflow._ops import join as join_ops
from segflow._ops import variable_scope as vs
from segflow._ops import variables as variables_lib
from segflow._ops.linalg import matmul
from segflow._ops.nn import bias_add

__all__ = ["Dense", "dense"]


class Dense:
    """`Dense(units)(inputs)`: `activation(inputs @ kernel + bias)` (TF1's `tf.layers.Dense`).

    Args:
      units: the output size (last dimension).
      activation: a function applied to the result, or None (linear).
      use_bias: whether to add a bias.
      kernel_initializer: default: the variable scope's (glorot uniform).
      bias_initializer: default zeros.
      kernel_regularizer, bias_regularizer: fn(variable) -> loss, as for `get_variable`.
      activity_regularizer: fn(output) -> loss, added to the layer's `losses`.
      kernel_constraint, bias_constraint: fn(variable value) -> projected value.
      trainable: whether the variables are trainable.
      name: the layer's variable scope (default "dense", made unique: "dense_1", ...).
      reuse: reuse the variables of a previous layer of the same scope.
    """

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True,
                 name=None, reuse=None, dtype=None, **kwargs):
        units = int(units)
        if units <= 0:
            raise ValueError(f"Received an invalid value for `units`, expected a positive integer, got {units}.")
        self.units = units
        self.activation = activation
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer
        self.activity_regularizer = activity_regularizer
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint
        self.trainable = trainable
        self._given_name = name
        self._reuse = reuse
        self.dtype = None if dtype is None else dtypes.as_dtype(dtype)
        self._scope = None
        self.kernel = None
        self.bias = None
        self.built = False
        self.losses = []

    # -- naming
    @property
    def name(self):
        if self._scope is not None:
            return self._scope.name.split("/")[-1]
        return self._given_name or "dense"

    @property
    def scope_name(self):
        if self._scope is None:
            raise ValueError("No name available for layer scope because the layer has not been used yet.")
        return self._scope.name

    # -- variables
    @property
    def variables(self):
        return self.weights

    @property
    def weights(self):
        return [v for v in (self.kernel, self.bias) if v is not None]

    @property
    def trainable_variables(self):
        return self.weights if self.trainable else []

    trainable_weights = trainable_variables

    @property
    def non_trainable_variables(self):
        return [] if self.trainable else self.weights

    non_trainable_weights = non_trainable_variables

    def _make(self, name, shape, initializer, regularizer, constraint, dtype):
        if context.executing_eagerly():
            # Eagerly each layer owns its variables (no variable store shares them by name).
            if initializer is None:
                initializer = init_ops.glorot_uniform_initializer()
            if isinstance(initializer, type):
                initializer = initializer()
            value = initializer(shape, dtype=dtype) if callable(initializer) else initializer
            var = variables_lib.Variable(value, name=f"{self._scope.name}/{name}", dtype=dtype,
                                         trainable=self.trainable, constraint=constraint)
            if regularizer is not None:
                loss = regularizer(var)
                if loss is not None:
                    self.losses.append(loss)
            return var
        return vs.get_variable(name, shape=shape, dtype=dtype, initializer=initializer,
                               regularizer=regularizer, constraint=constraint, trainable=self.trainable)

    def build(self, input_shape):
        input_shape = tensor_shape.as_shape(input_shape)
        if input_shape.rank is None or input_shape.rank < 1 or tensor_shape.dimension_value(input_shape[-1]) is None:
            raise ValueError("The last dimension of the inputs to `Dense` should be defined. Found `None`.")
        last = tensor_shape.dimension_value(input_shape[-1])
        dtype = self.dtype or dtypes.float32
        self.kernel = self._make("kernel", [last, self.units], self.kernel_initializer, self.kernel_regularizer,
                                 self.kernel_constraint, dtype)
        if self.use_bias:
            self.bias = self._make("bias", [self.units], self.bias_initializer, self.bias_regularizer,
                                   self.bias_constraint, dtype)
        self.built = True

    def __call__(self, inputs, *args, **kwargs):
        inputs = convert_to_tensor(inputs, dtype=self.dtype)
        if self.dtype is None:
            self.dtype = inputs.dtype.base_dtype
        if self._scope is None:
            # The first call opens the layer's scope ("dense", "dense_1", ... unless named), makes
            # the variables in it and builds the ops under its name scope.
            with vs.variable_scope(self._given_name, default_name="dense", reuse=self._reuse) as scope:
                self._scope = scope
                self.build(inputs.shape)
                outputs = self.call(inputs)
        else:
            with vs.variable_scope(self._scope, reuse=True, auxiliary_name_scope=False), \
                    name_scope(self._scope.original_name_scope or None):
                outputs = self.call(inputs)
        if self.activity_regularizer is not None:
            self.losses.append(self.activity_regularizer(outputs))
        return outputs

    def call(self, inputs):
        rank = inputs.shape.rank
        if rank is not None and rank <= 2:
            outputs = matmul(inputs, self.kernel)
        else:
            # [..., d] @ [d, units] along the last axis
            shape = array_ops.shape(inputs)
            flat = matmul(array_ops.reshape(inputs, [-1, int(self.kernel.shape[0])]), self.kernel)
            outputs = array_ops.reshape(flat, join_ops.concat([shape[:-1], [self.units]], 0))
            if rank is not None:
                outputs.set_shape(inputs.shape[:-1].concatenate([self.units]))
        if self.use_bias:
            outputs = bias_add(outputs, self.bias)
        if self.activation is not None:
            outputs = self.activation(outputs)
        return outputs

    def apply(self, inputs, *args, **kwargs):
        return self(inputs, *args, **kwargs)


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None,
          bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None, bias_regularizer=None,
          activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
          reuse=None):
    """`Dense(units, ...)(inputs)` in one call (TF1's `tf.layers.dense`): makes (or, with `reuse`,
    finds) the variables `<name>/kernel` and `<name>/bias` and returns the layer's output."""
    layer = Dense(units, activation=activation, use_bias=use_bias, kernel_initializer=kernel_initializer,
                  bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                  bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                  kernel_constraint=kernel_constraint, bias_constraint=bias_constraint, trainable=trainable,
                  name=name, reuse=reuse)
    return layer(inputs)
