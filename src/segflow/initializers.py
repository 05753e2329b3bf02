"""`sf.initializers` (TensorFlow's `tf.initializers` / `tf.compat.v1.initializers`): the
initializers by their short names (`zeros`, `glorot_uniform`, ...) and their classes, and the
variable initializer ops (`global_variables`, `local_variables`, `variables`)."""
from segflow._ops.init_ops import Constant, GlorotNormal, GlorotUniform, Identity, Initializer, Ones, Orthogonal
from segflow._ops.init_ops import RandomNormal, RandomUniform, TruncatedNormal, VarianceScaling, Zeros
from segflow._ops.init_ops import Constant as constant, Ones as ones, Zeros as zeros, Identity as identity
from segflow._ops.init_ops import GlorotNormal as glorot_normal, GlorotUniform as glorot_uniform
from segflow._ops.init_ops import Orthogonal as orthogonal, VarianceScaling as variance_scaling
from segflow._ops.init_ops import RandomNormal as random_normal, RandomUniform as random_uniform
from segflow._ops.init_ops import TruncatedNormal as truncated_normal, UniformUnitScaling as uniform_unit_scaling
from segflow._ops.init_ops import he_normal, he_uniform, lecun_normal, lecun_uniform
from segflow._ops.variables import global_variables_initializer as global_variables
from segflow._ops.variables import local_variables_initializer as local_variables
from segflow._ops.variables import variables_initializer as variables

__all__ = ["Constant", "GlorotNormal", "GlorotUniform", "Identity", "Initializer", "Ones", "Orthogonal", "RandomNormal",
           "RandomUniform", "TruncatedNormal", "VarianceScaling", "Zeros", "constant", "glorot_normal",
           "glorot_uniform", "global_variables", "he_normal", "he_uniform", "identity", "lecun_normal",
           "lecun_uniform", "local_variables", "ones", "orthogonal", "random_normal", "random_uniform",
           "truncated_normal", "uniform_unit_scaling", "variables", "variance_scaling", "zeros"]
