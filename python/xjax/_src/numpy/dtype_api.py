"""jnp's dtype functions: result_type, promote_types, can_cast, issubdtype, isdtype, finfo, iinfo."""
import ml_dtypes
import numpy as np

from xjax._src import dtypes
from xjax._src.numpy import scalar_types


def _np_dtype_like(x):
    """jnp scalar types (jnp.float32) become their NumPy dtype; anything else passes through."""
    if isinstance(x, scalar_types._ScalarMeta):
        return x.dtype
    return x


def result_type(*args, return_weak_type_flag=False):
    """The dtype JAX's promotion gives for the arrays, dtypes and Python scalars."""
    return dtypes.result_type(*(_np_dtype_like(a) for a in args), return_weak_type_flag=return_weak_type_flag)


def promote_types(a, b):
    """The promoted dtype of two dtypes (JAX's lattice; not canonicalised, as in JAX)."""
    return dtypes.promote_types(_np_dtype_like(a), _np_dtype_like(b))


def can_cast(from_, to, casting="safe"):
    """NumPy's can_cast, on canonical dtypes."""
    f = from_.aval.dtype if hasattr(from_, "aval") else np.dtype(_np_dtype_like(from_))
    return bool(np.can_cast(f, np.dtype(_np_dtype_like(to)), casting=casting))


def issubdtype(arg1, arg2):
    """np.issubdtype that knows bfloat16, the float8 types and jnp's scalar types."""
    a = _np_dtype_like(arg1)
    b = _np_dtype_like(arg2)
    if dtypes.is_extended(a):  # key<fry> is a prng_key, an extended and a generic, and nothing numeric
        return a == b if dtypes.is_extended(b) else isinstance(b, type) and issubclass(a.type, b)
    if dtypes.is_extended(b):
        return False
    if isinstance(b, np.dtype):
        b = b.type
    for ml in _ML_FLOATS:  # floating types NumPy files under np.void
        if isinstance(a, np.dtype) and a == ml or a is ml.type:
            return b in (np.floating, np.inexact, np.number, np.generic, ml.type)
        if b is ml.type:
            return np.dtype(a) == ml
    return bool(np.issubdtype(a, b))


_ML_FLOATS = (dtypes.bfloat16, *dtypes.FLOAT8)


_KINDS = {
    "bool": lambda d: d == dtypes.bool_,
    "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u",
    "integral": lambda d: d.kind in "iu",
    "real floating": lambda d: d in dtypes.FLOATING,
    "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: d.kind in "iufc" or d in dtypes.FLOATING,
}


def isdtype(dtype, kind):
    """The Array API's dtype-kind test: kind is a dtype, a kind name, or a tuple of those."""
    d = np.dtype(_np_dtype_like(dtype))
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _KINDS:
                raise ValueError(f"Unrecognized kind: {k!r}")
            if _KINDS[k](d):
                return True
        elif np.dtype(_np_dtype_like(k)) == d:
            return True
    return False


def finfo(dtype):
    """Machine limits of a floating dtype (bfloat16 included)."""
    return dtypes.finfo(np.dtype(_np_dtype_like(dtype)) if not hasattr(dtype, "aval") else dtype.aval.dtype)


def iinfo(int_type):
    """Machine limits of an integer dtype."""
    return dtypes.iinfo(np.dtype(_np_dtype_like(int_type)) if not hasattr(int_type, "aval") else
                        int_type.aval.dtype)

