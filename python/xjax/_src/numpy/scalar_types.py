"""jnp.float32 and friends: dtype-like classes that also build arrays (`jnp.float32(3)`)."""
import ml_dtypes
import numpy as np

from xjax._src import dtypes
from xjax._src.numpy.creation import asarray


class _ScalarMeta(type):
    """The metaclass of jnp's scalar types: equal to the NumPy type, callable to build an Array."""

    def __hash__(cls):
        return hash(cls.dtype.type)

    def __eq__(cls, other):
        return cls is other or cls.dtype.type == other

    def __ne__(cls, other):
        return not cls == other

    def __call__(cls, x):
        return asarray(x, dtype=cls.dtype)

    def __instancecheck__(cls, instance):
        return isinstance(instance, cls.dtype.type)


def _make(name, np_type):
    cls = _ScalarMeta(name, (object,), {"dtype": np.dtype(np_type)})
    cls.__module__ = "xjax.numpy"
    cls.__doc__ = f"The {np.dtype(np_type).name} scalar type: usable as a dtype, and callable to build arrays."
    return cls


bool_ = _make("bool", np.bool_)
int8 = _make("int8", np.int8)
int16 = _make("int16", np.int16)
int32 = _make("int32", np.int32)
int64 = _make("int64", np.int64)
uint8 = _make("uint8", np.uint8)
uint16 = _make("uint16", np.uint16)
uint32 = _make("uint32", np.uint32)
uint64 = _make("uint64", np.uint64)
float16 = _make("float16", np.float16)
bfloat16 = _make("bfloat16", ml_dtypes.bfloat16)
float32 = _make("float32", np.float32)
float64 = _make("float64", np.float64)
# The 8-bit floats exist as names (libraries declare them); arrays of them are not supported yet.
float8_e4m3fn = _make("float8_e4m3fn", ml_dtypes.float8_e4m3fn)
float8_e5m2 = _make("float8_e5m2", ml_dtypes.float8_e5m2)
float8_e4m3fnuz = _make("float8_e4m3fnuz", ml_dtypes.float8_e4m3fnuz)
float8_e5m2fnuz = _make("float8_e5m2fnuz", ml_dtypes.float8_e5m2fnuz)
# Complex numbers are issue 27: the names exist (code compares dtypes with them), arrays of them are
# refused by canonicalize_dtype with a NotImplementedError.
complex64 = _make("complex64", np.complex64)
complex128 = _make("complex128", np.complex128)
# Aliases following the x64 flag are resolved by their dtype when used.
int_ = int64
uint = uint64
float_ = float64
single = float32
double = float64
complex_ = complex128
csingle = complex64
cdouble = complex128

del dtypes
