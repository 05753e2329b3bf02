"""TensorFlow's module name for dtypes: a face over segflow._core.dtypes.

As TensorFlow's own `tensorflow.python.framework.dtypes` does, importing this module imports
ml_dtypes, so NumPy knows "bfloat16" and the float8 types by name (`x.astype("bfloat16")`)
afterwards. `import segflow` does not import this module (`sf.dtypes` is segflow._core.dtypes):
there ml_dtypes loads when one of its types is first used (see segflow._core.dtypes).
"""
from ml_dtypes import bfloat16 as _np_bfloat16  # noqa: F401  (NumPy learns the names here)

from segflow._core.dtypes import (
    DType, as_dtype, from_numpy, float16, half, bfloat16, float32, float64, double, int8, int16,
    int32, int64, uint8, uint16, uint32, uint64, bool, complex64, complex128, string, resource,
    variant, float8_e5m2, float8_e4m3fn, qint8, quint8, qint16, quint16, qint32, FLOATING, FLOAT8,
    INTEGER, COMPLEX, REAL_NUMERIC, NUMERIC, QUANTIZED, ALL
)

__all__ = [
    'DType', 'as_dtype', 'from_numpy', 'float16', 'half', 'bfloat16', 'float32', 'float64',
    'double', 'int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64', 'bool',
    'complex64', 'complex128', 'string', 'resource', 'variant', 'float8_e5m2', 'float8_e4m3fn',
    'qint8', 'quint8', 'qint16', 'quint16', 'qint32',
    'FLOATING', 'FLOAT8', 'INTEGER', 'COMPLEX', 'REAL_NUMERIC', 'NUMERIC', 'QUANTIZED', 'ALL'
]
