"""TensorFlow's `init_ops` module name: a face over segflow._ops.init_ops (TF1 initializers)."""
from segflow._ops.init_ops import (
    Initializer, Zeros, Ones, Constant, RandomUniform, RandomNormal, TruncatedNormal, UniformUnitScaling,
    VarianceScaling, GlorotUniform, GlorotNormal, Orthogonal, Identity, zeros_initializer, ones_initializer,
    constant_initializer, random_uniform_initializer, random_normal_initializer, truncated_normal_initializer,
    uniform_unit_scaling_initializer, variance_scaling_initializer, glorot_uniform_initializer,
    glorot_normal_initializer, orthogonal_initializer, identity_initializer, lecun_normal, lecun_uniform,
    he_normal, he_uniform, _compute_fans
)

__all__ = [
    'Initializer', 'Zeros', 'Ones', 'Constant', 'RandomUniform', 'RandomNormal', 'TruncatedNormal',
    'UniformUnitScaling', 'VarianceScaling', 'GlorotUniform', 'GlorotNormal', 'Orthogonal', 'Identity',
    'zeros_initializer', 'ones_initializer', 'constant_initializer', 'random_uniform_initializer',
    'random_normal_initializer', 'truncated_normal_initializer', 'uniform_unit_scaling_initializer',
    'variance_scaling_initializer', 'glorot_uniform_initializer', 'glorot_normal_initializer',
    'orthogonal_initializer', 'identity_initializer', 'lecun_normal', 'lecun_uniform', 'he_normal', 'he_uniform'
]
