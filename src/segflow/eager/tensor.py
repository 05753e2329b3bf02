"""`tensor.Tensor(value)`: the early-eager-API constructor some TF test code uses; an eager constant."""
from segflow._ops.constant import constant


def Tensor(value, dtype=None):
    """An eager tensor holding `value` (same rules as `sf.constant`)."""
    return constant(value, dtype=dtype)
