"""dtypes as JAX defines them: canonical dtypes (x64 off by default), weak types and promotion."""
import abc
import functools

import ml_dtypes
import numpy as np

from xjax._src.config import config

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
float16, float32, float64 = (np.dtype(t) for t in (np.float16, np.float32, np.float64))
bfloat16 = np.dtype(ml_dtypes.bfloat16)
float8_e4m3fn, float8_e5m2 = np.dtype(ml_dtypes.float8_e4m3fn), np.dtype(ml_dtypes.float8_e5m2)
FLOAT8 = (float8_e4m3fn, float8_e5m2)  # promote with nothing implicitly but integers, bools and Python scalars
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)

SUPPORTED = (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, bfloat16, float32, float64,
             complex64, complex128, float8_e4m3fn, float8_e5m2)
_SUPPORTED_SET = frozenset(SUPPORTED)
FLOATING = (float16, bfloat16, float32, float64, float8_e4m3fn, float8_e5m2)
COMPLEX = (complex64, complex128)
INTEGER = (int8, int16, int32, int64, uint8, uint16, uint32, uint64)



class extended(np.generic):
    """The scalar type of dtypes NumPy does not have (PRNG keys): `issubdtype(key.dtype, extended)`."""


class prng_key(extended):
    """The scalar type of PRNG key dtypes (`key<fry>`)."""


DType = np.dtype  # JAX's name for the type of (NumPy) dtypes


class ExtendedDType(abc.ABC):
    """The base class of dtypes that are not NumPy's (key<fry>, a library's own); `type` is their
    subclass of `extended`."""

    @property
    @abc.abstractmethod
    def type(self):
        ...


def is_extended(dtype):
    """Whether `dtype` is an extended dtype instance (such as a key array's `key<fry>`)."""
    return isinstance(getattr(dtype, "type", None), type) and issubclass(dtype.type, extended)


class TypePromotionError(ValueError):
    """Raised where promoting the given dtypes is not allowed."""


_ML_DTYPES_NOT_YET = frozenset({"float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e4m3b11fnuz", "float8_e4m3",
                                "float8_e3m4", "float8_e8m0fnu", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn",
                                "int4", "uint4", "int2", "uint2"})
_X64_TO_X32 = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}


def x64_enabled():
    return config._values["jax_enable_x64"]


def canonicalize_dtype(dtype):
    """The dtype JAX actually uses for `dtype`: 64-bit types narrow to 32 bits when x64 is off."""
    dt = np.dtype(dtype)
    if dt not in _SUPPORTED_SET:
        if dt.name in _ML_DTYPES_NOT_YET:  # types JAX has that xjax does not yet
            raise NotImplementedError(f"dtype {dt.name} is not supported by xjax yet (of the 8-bit floats: "
                                      "float8_e4m3fn and float8_e5m2)")
        raise TypeError(f"JAX only supports number and bool dtypes, got dtype {dt}.")
    if not x64_enabled():
        return _X64_TO_X32.get(dt, dt)
    return dt


def default_int_dtype():
    return int64 if x64_enabled() else int32


def default_uint_dtype():
    return uint64 if x64_enabled() else uint32


def default_float_dtype():
    return float64 if x64_enabled() else float32


def default_complex_dtype():
    return complex128 if x64_enabled() else complex64


def is_float(dtype):
    return np.dtype(dtype) in FLOATING


def is_int(dtype):
    return np.dtype(dtype) in INTEGER


def is_complex(dtype):
    return np.dtype(dtype) in COMPLEX


def complex_part_dtype(dtype):
    """The float dtype of a complex dtype's parts (float32 for complex64)."""
    return float64 if np.dtype(dtype) == complex128 else float32


def complex_dtype_of(dtype):
    """The complex dtype whose parts have the float dtype `dtype` (complex128 for float64)."""
    return complex128 if np.dtype(dtype) == float64 else complex64


def issubdtype(a, b):
    """np.issubdtype that knows bfloat16 and the float8 types are floating types."""
    if a is None:
        return False
    a = np.dtype(a) if not isinstance(a, type) or not issubclass(a, np.generic) else a
    for ml in (bfloat16, float8_e4m3fn, float8_e5m2):
        if a == ml or (isinstance(a, type) and a is ml.type):
            return b in (np.floating, np.inexact, np.number, np.generic, ml.type) or b == ml
    return np.issubdtype(a, b)


# The promotion lattice (JAX's "standard" lattice): each type maps to the types just above it.
# "i*", "f*", "c*" are the weak types of Python ints, floats and complex numbers.
_I, _F, _C = "i*", "f*", "c*"


def _lattice(x64):
    return {
        bool_: [_I],
        _I: [uint8, int8],
        uint8: [int16, uint16],
        uint16: [int32, uint32],
        uint32: [int64, uint64] if x64 else [int32, uint64],
        uint64: [_F],
        int8: [int16],
        int16: [int32],
        int32: [int64],
        int64: [_F],
        _F: [_C, bfloat16, float16, *FLOAT8],
        _C: [complex64],
        **{t: [] for t in FLOAT8},
        bfloat16: [float32],
        float16: [float32],
        float32: [float64, complex64],
        float64: [complex128],
        complex64: [complex128],
        complex128: [],
    }


def _upper_bounds(lattice):
    ub = {}
    for node in lattice:
        seen, todo = {node}, [node]
        while todo:
            for nxt in lattice[todo.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        ub[node] = seen
    return ub


_UPPER = {True: _upper_bounds(_lattice(True)), False: _upper_bounds(_lattice(False))}


@functools.lru_cache(maxsize=1024)
def _least_upper_bound(x64, nodes):
    ub = _UPPER[x64]
    common = set.intersection(*(ub[n] for n in nodes))
    lub = (common & set(nodes)) or {c for c in common if common <= ub[c]}
    if len(lub) != 1:  # only the float8 types (JAX's lattice gives them no way up)
        names = tuple(str(n) for n in nodes)
        raise TypePromotionError(
            f"Input dtypes {names} have no available implicit dtype promotion path. To avoid unintended "
            "promotion, 8-bit floats do not support implicit promotion. If you'd like your inputs to be "
            "promoted to another type, you can do so explicitly using e.g. x.astype('float32')")
    (result,) = lub
    return result


def _weak_node(dtype):
    if dtype == bool_:
        return bool_
    return _F if dtype in FLOATING else _C if dtype in COMPLEX else _I


@functools.lru_cache(maxsize=4096)
def _promote(x64, pairs):
    """(dtype, weak) pairs -> (dtype, weak) of the result, with JAX's rules."""
    dts = {d for d, _ in pairs}
    weaks = [w for _, w in pairs]
    if len(pairs) == 1:
        (d, w), = pairs
    elif len(dts) == 1 and not all(weaks):
        d, w = next(iter(dts)), False
    elif all(weaks):
        d, w = _least_upper_bound(x64, frozenset(dts)), True
    else:
        node = _least_upper_bound(x64, frozenset(_weak_node(d) if w else d for d, w in pairs))
        d, w = node, node in (_I, _F, _C)
    if d == _I:
        d = int64 if x64 else int32
    elif d == _F:
        d = float64 if x64 else float32
    elif d == _C:
        d = complex128 if x64 else complex64
    w = w and d != bool_
    if w:  # weak results take the default type of their kind
        d = ((int64 if x64 else int32) if d in INTEGER else (float64 if x64 else float32) if d in FLOATING
             else (complex128 if x64 else complex64) if d in COMPLEX else d)
    return canonicalize_dtype(d), w


def dtype_and_weak(x):
    """(dtype, weak_type) of an array, a Python scalar or a NumPy scalar/array, canonicalised."""
    if isinstance(x, bool):
        return bool_, False
    if isinstance(x, int):
        return default_int_dtype(), True
    if isinstance(x, float):
        return default_float_dtype(), True
    if isinstance(x, complex):
        return default_complex_dtype(), True
    weak = getattr(x, "weak_type", False)
    dt = getattr(x, "dtype", None)
    if dt is None:
        if getattr(x, "__jax_array__", None) is not None:  # (JAX's error: only operators and jnp.array convert)
            raise ValueError(JAX_ARRAY_PROTOCOL_ERROR)
        dt = np.result_type(x)
    return canonicalize_dtype(dt), weak


JAX_ARRAY_PROTOCOL_ERROR = (
    "Triggering __jax_array__() during abstractification is no longer supported. To avoid this error, either "
    "explicitly convert your object using jax.numpy.array(), or register your object as a pytree.")


def _is_python_scalar_type(t):
    # Identity, not `t in (int, float, bool)`: np.dtype("float64") == float holds.
    return t is int or t is float or t is bool or t is complex


def result_type(*args, return_weak_type_flag=False):
    """JAX's dtype promotion of arrays, dtypes and Python scalars."""
    if not args:
        raise ValueError("at least one array or dtype is required")
    pairs = []
    for a in args:
        if a is None:
            pairs.append((default_float_dtype(), False))
        elif _is_python_scalar_type(a):
            pairs.append(dtype_and_weak(a(0)))
        elif isinstance(a, (np.dtype, type, str)):
            pairs.append((canonicalize_dtype(a), False))
        else:
            pairs.append(dtype_and_weak(a))
    dtype, weak = _promote(x64_enabled(), tuple(pairs))
    return (dtype, weak) if return_weak_type_flag else dtype


def promote_types(a, b):
    """JAX's promote_types: the least upper bound of two dtypes in the lattice, not canonicalised
    (float64 with int64 gives float64 even with x64 off); Python int and float count as weak types."""
    nodes = []
    for t in (a, b):
        if t is int:
            nodes.append(_I)
        elif t is float:
            nodes.append(_F)
        elif t is complex:
            nodes.append(_C)
        else:
            d = np.dtype(t)
            if d not in _SUPPORTED_SET:
                canonicalize_dtype(d)  # raises the error naming the unsupported dtype
            nodes.append(d)
    node = _least_upper_bound(x64_enabled(), frozenset(nodes))
    return int64 if node is _I else float64 if node is _F else complex128 if node is _C else node


# JAX's float type for a bool or integer dtype: float32 up to 32 bits, float64 for 64-bit integers.
_TO_INEXACT = {bool_: float32, int8: float32, int16: float32, int32: float32, uint8: float32, uint16: float32,
               uint32: float32, int64: float64, uint64: float64}


def to_inexact_dtype(dtype):
    """The floating dtype that functions like sin and mean compute an int or bool dtype in."""
    return canonicalize_dtype(_TO_INEXACT.get(dtype, dtype))


def check_user_dtype(dtype):
    """The canonical dtype for a user-given `dtype=` argument (Python types -> default dtypes)."""
    if dtype is None:
        return None
    if dtype is int:
        return default_int_dtype()
    if dtype is float:
        return default_float_dtype()
    if dtype is bool:
        return bool_
    if dtype is complex:
        return default_complex_dtype()
    if hasattr(dtype, "dtype") and not isinstance(dtype, type):
        raise ValueError("Passing an array as a dtype argument is no longer supported; "
                         "instead of dtype=arr use dtype=arr.dtype.")
    return canonicalize_dtype(dtype)


def finfo(dtype):
    return ml_dtypes.finfo(np.dtype(dtype))


def iinfo(dtype):
    return ml_dtypes.iinfo(np.dtype(dtype))


class TypePromotionError(ValueError):
    """Operands whose dtypes do not promote to a common one (JAX's, for code that catches it)."""
