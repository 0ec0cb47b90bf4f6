"""xjax.dtypes (jax.dtypes): dtype canonicalisation and promotion as JAX defines them."""
import numpy as _np

from xjax._src.autodiff import float0  # noqa: F401 - the dtype of tangents of integer and bool values
from xjax._src.dtypes import (bfloat16, canonicalize_dtype as _canonicalize_dtype, extended,  # noqa: F401
                              TypePromotionError, is_extended as _is_extended, prng_key)
from xjax._src.numpy.dtype_api import _np_dtype_like, finfo, iinfo, issubdtype, result_type  # noqa: F401


def canonicalize_dtype(dtype, allow_extended_dtype=False):
    """The dtype JAX computes in for `dtype` (64-bit types narrow to 32 bits while x64 is off)."""
    if _is_extended(dtype):
        if not allow_extended_dtype:
            raise ValueError(f"Internal: canonicalize_dtype called on extended dtype {dtype} with "
                             f"allow_extended_dtype=False")
        return dtype
    return _canonicalize_dtype(_np_dtype_like(dtype))


def scalar_type_of(x):
    """The Python scalar type (bool, int, float or complex) of x's dtype."""
    dtype = getattr(x, "dtype", None)
    dtype = _np.result_type(x) if dtype is None else _np.dtype(dtype)
    if dtype == _np.bool_:
        return bool
    if issubdtype(dtype, _np.integer):
        return int
    if issubdtype(dtype, _np.floating):
        return float
    if issubdtype(dtype, _np.complexfloating):
        return complex
    raise TypeError(f"Invalid scalar value {x}")


def itemsize_bits(dtype):
    """The size of one element of `dtype` in bits."""
    return _np.dtype(dtype).itemsize * 8
