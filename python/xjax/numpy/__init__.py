"""xjax.numpy: the NumPy API on xjax arrays, with JAX's semantics (`import xjax.numpy as jnp`)."""
import math as _math

import numpy as _np

from xjax._src.array import Array as ndarray  # noqa: F401
from xjax._src.numpy import array_methods as _array_methods  # noqa: F401  (attaches Array's operators)
from xjax._src.numpy.array_api import __array_api_version__, __array_namespace_info__  # noqa: F401
from xjax._src.numpy.creation import (arange, array, asarray, copy, diag, diagflat, diagonal, empty,  # noqa: F401
                                      empty_like, eye, fromfunction, full, full_like, identity,
                                      indices, linspace, meshgrid, ones, ones_like, tri, tril, triu,
                                      zeros, zeros_like)
from xjax._src.numpy.dtype_api import (can_cast, finfo, iinfo, isdtype, issubdtype, promote_types,  # noqa: F401
                                       result_type)
from xjax._src.numpy.einsum import einsum, einsum_path  # noqa: F401
from xjax._src.numpy.extras import (apply_over_axes, bartlett, bitwise_count, blackman, block,  # noqa: F401
                                    fill_diagonal, from_dlpack, frombuffer, fromiter, gradient, hamming, hanning,
                                    histogram_bin_edges, index_exp, kaiser, iscomplex, iscomplexobj, isreal, isrealobj,
                                    load, mgrid, ogrid, packbits, piecewise, polyadd, polyder, polyint,
                                    polysub, put, put_along_axis, s_, save, savez, spacing, trim_zeros, unpackbits,
                                    unwrap)
from xjax._src.numpy.take import take, take_along_axis  # noqa: F401
from xjax._src.numpy.vectorize import apply_along_axis, vectorize  # noqa: F401
from xjax._src.numpy.ufunc_api import frompyfunc, ufunc  # noqa: F401
from xjax._src.numpy.manipulation import (array_split, astype, atleast_1d, atleast_2d, atleast_3d,  # noqa: F401
                                          broadcast_arrays, broadcast_shapes, broadcast_to, column_stack, concat,
                                          concatenate, dsplit, dstack, expand_dims, hsplit, hstack,
                                          matrix_transpose, moveaxis, ndim, permute_dims, ravel, reshape, rollaxis,
                                          row_stack, shape, size, split, squeeze, stack, swapaxes, transpose,
                                          unstack, vsplit, vstack)
from xjax._src.numpy.misc import (array_repr, array_str, corrcoef, cov, interp,  # noqa: F401
                                  isscalar, iterable, trapezoid, vander)
from xjax._src.numpy.histograms import histogram2d, histogramdd  # noqa: F401
from xjax._src.numpy.index_concat import c_, r_  # noqa: F401
from xjax._src.numpy.polynomials import polydiv, polyfit, polymul, polyval, roots  # noqa: F401
from xjax._src.numpy.products import (convolve, correlate, cross, dot, inner, kron, matmul, matvec,  # noqa: F401
                                      outer, tensordot, trace, vdot, vecdot, vecmat)
from xjax._src.numpy.rearrange import (append, delete, diff, ediff1d, flip, fliplr, flipud, insert,  # noqa: F401
                                       repeat, resize, roll, rot90, tile)
from xjax._src.numpy.padding import pad  # noqa: F401
from xjax._src.numpy.reductions import (all, amax, amin, any, argmax, argmin, count_nonzero, cumprod,  # noqa: F401
                                        cumsum, cumulative_prod, cumulative_sum, max, mean, min, nanargmax,
                                        nanargmin, nancumprod, nancumsum, nanmax, nanmean, nanmin, nanprod, nanstd,
                                        nansum, nanvar, prod, ptp, std, sum, var)
from xjax._src.numpy.scalar_types import (bfloat16, bool_, cdouble, complex64, complex128, complex_, csingle,
                                          double, float16, float32, float64, float_,  # noqa: F401
                                          float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz,
                                          int8, int16, int32, int64, int_, single, uint, uint8, uint16, uint32,
                                          uint64)
from xjax._src.numpy.selection import (bincount, choose, compress, diag_indices, diag_indices_from,  # noqa: F401
                                       extract, histogram, ix_, ravel_multi_index, select, tril_indices,
                                       tril_indices_from, triu_indices, triu_indices_from, unravel_index)
from xjax._src.numpy.setops import in1d, intersect1d, isin, setdiff1d, setxor1d, union1d  # noqa: F401
from xjax._src.numpy.nonzero import argwhere, flatnonzero, nonzero  # noqa: F401
from xjax._src.numpy.log_spaces import geomspace, logspace  # noqa: F401
from xjax._src.numpy.sorting import (argpartition, argsort, digitize, lexsort, partition, searchsorted,  # noqa: F401
                                     sort, sort_complex, unique, unique_all, unique_counts, unique_inverse,
                                     unique_values)
from xjax._src.numpy.statistics import (average, median, nanmedian, nanpercentile, nanquantile,  # noqa: F401
                                        percentile, quantile)
from xjax._src.numpy.mathfuncs import (allclose, angle, array_equal, array_equiv, copysign, fmax, fmin,  # noqa: F401
                                       frexp, gcd, heaviside, hypot, i0, isclose, lcm, ldexp, logaddexp, logaddexp2,
                                       modf, nan_to_num, signbit, sinc)
from xjax._src.numpy.ufuncs import (abs, absolute, acos, acosh, add, arccos, arccosh, arcsin, arcsinh,  # noqa: F401
                                    arctan, arctan2, arctanh, around, asin, asinh, atan, atan2, atanh, bitwise_and,
                                    bitwise_invert, bitwise_left_shift, bitwise_not, bitwise_or, bitwise_right_shift,
                                    bitwise_xor, cbrt, ceil, clip, conj, conjugate, cos, cosh, deg2rad, degrees,
                                    divide, divmod, equal, exp, exp2, expm1, fabs, fix, float_power, floor,
                                    floor_divide, fmod, greater, greater_equal, imag, invert, isfinite, isinf, isnan,
                                    isneginf, isposinf, left_shift, less, less_equal, log, log1p, log2, log10,
                                    logical_and, logical_not, logical_or, logical_xor, maximum, minimum, mod,
                                    multiply, negative, nextafter, not_equal, positive, pow, power, rad2deg, radians,
                                    real, reciprocal, remainder, right_shift, rint, round, sign, sin, sinh, sqrt,
                                    square, subtract, tan, tanh, true_divide, trunc, where)
from xjax.numpy import fft, linalg  # noqa: F401

dtype = _np.dtype
bool = bool_  # noqa: A001 - NumPy 2's name
# NumPy's abstract scalar types, for issubdtype(x.dtype, jnp.floating) and the like.
generic = _np.generic
number = _np.number
integer = _np.integer
signedinteger = _np.signedinteger
unsignedinteger = _np.unsignedinteger
inexact = _np.inexact
floating = _np.floating
complexfloating = _np.complexfloating
character = _np.character
flexible = _np.flexible

pi = _math.pi
e = _math.e
inf = _math.inf
nan = _math.nan
euler_gamma = 0.5772156649015329
newaxis = None

get_printoptions = _np.get_printoptions
set_printoptions = _np.set_printoptions
printoptions = _np.printoptions

del _math

from xjax._src.out_sharding import add_out_sharding as _add_out_sharding  # noqa: E402

_add_out_sharding(globals(), "jax.numpy", ("array", "asarray", "bincount", "broadcast_to",  # (einsum, dot, arange,
                                           "percentile", "repeat"))  # matmul, ravel, reshape, tensordot: their own)
# jnp's binary functions as ufunc objects (reduce, accumulate, at, outer), as JAX's are
from xjax._src.numpy.ufunc_api import (  # noqa: F401,E402
    add, bitwise_and, bitwise_or, bitwise_xor, logaddexp, logaddexp2, logical_and, logical_or, logical_xor, maximum,
    minimum, multiply, subtract)
from xjax._src.numpy.extras import fromfile, fromstring, place  # noqa: F401,E402
from xjax._src.numpy.polynomials import poly  # noqa: F401,E402
from xjax._src.numpy.selection import mask_indices  # noqa: F401,E402
ComplexWarning = _np.exceptions.ComplexWarning  # NumPy's, as jnp's is
