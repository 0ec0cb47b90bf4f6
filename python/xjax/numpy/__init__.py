"""xjax.numpy: the NumPy API on xjax arrays, with JAX's semantics (`import xjax.numpy as jnp`)."""
import math as _math

import numpy as _np

from xjax._src.array import Array as ndarray  # noqa: F401
from xjax._src.numpy import array_methods as _array_methods  # noqa: F401  (attaches Array's operators)
from xjax._src.numpy.creation import (arange, array, asarray, copy, diag, diagflat, diagonal, empty,  # noqa: F401
                                      empty_like, eye, fromfunction, full, full_like, geomspace, identity,
                                      indices, linspace, logspace, meshgrid, ones, ones_like, tri, tril, triu,
                                      zeros, zeros_like)
from xjax._src.numpy.dtype_api import (can_cast, finfo, iinfo, isdtype, issubdtype, promote_types,  # noqa: F401
                                       result_type)
from xjax._src.numpy.einsum import einsum, einsum_path  # noqa: F401
from xjax._src.numpy.extras import (apply_over_axes, bartlett, bitwise_count, blackman, block,  # noqa: F401
                                    fill_diagonal, gradient, hamming, hanning, index_exp, iscomplex, iscomplexobj,
                                    isreal, isrealobj, mgrid, ogrid, piecewise, polyadd, polyder, polyint,
                                    polymul, polysub, put, put_along_axis, s_, spacing, trim_zeros, unwrap)
from xjax._src.numpy.indexing import take, take_along_axis  # noqa: F401
from xjax._src.numpy.manipulation import (append, array_split, astype, atleast_1d, atleast_2d,  # noqa: F401
                                          atleast_3d, broadcast_arrays, broadcast_shapes, broadcast_to,
                                          column_stack, concat, concatenate, delete, diff, dsplit, dstack,
                                          ediff1d, expand_dims, flip, fliplr, flipud, hsplit, hstack, insert,
                                          matrix_transpose, moveaxis, ndim, pad, permute_dims, ravel, repeat,
                                          reshape, resize, roll, rollaxis, rot90, row_stack, shape, size, split,
                                          squeeze, stack, swapaxes, tile, transpose, unstack, vsplit, vstack)
from xjax._src.numpy.misc import (apply_along_axis, array_repr, array_str, corrcoef, cov, interp,  # noqa: F401
                                  isscalar, iterable, polyval, trapezoid, vander)
from xjax._src.numpy.products import (convolve, correlate, cross, dot, inner, kron, matmul, matvec,  # noqa: F401
                                      outer, tensordot, trace, vdot, vecdot, vecmat)
from xjax._src.numpy.reductions import (all, amax, amin, any, argmax, argmin, average, count_nonzero,  # noqa: F401
                                        cumprod, cumsum, cumulative_prod, cumulative_sum, max, mean, median,
                                        min, nanargmax, nanargmin, nancumprod, nancumsum, nanmax, nanmean,
                                        nanmedian, nanmin, nanpercentile, nanprod, nanquantile, nanstd, nansum,
                                        nanvar, percentile, prod, ptp, quantile, std, sum, var)
from xjax._src.numpy.scalar_types import (bfloat16, bool_, double, float16, float32, float64, float_,  # noqa: F401
                                          int8, int16, int32, int64, int_, single, uint, uint8, uint16, uint32,
                                          uint64)
from xjax._src.numpy.sorting import (argpartition, argsort, argwhere, bincount, choose, compress,  # noqa: F401
                                     diag_indices, diag_indices_from, digitize, extract, flatnonzero, histogram,
                                     in1d, intersect1d, isin, ix_, lexsort, nonzero, partition, ravel_multi_index,
                                     searchsorted, select, setdiff1d, setxor1d, sort, sort_complex, tril_indices,
                                     tril_indices_from, triu_indices, triu_indices_from, union1d, unique,
                                     unique_all, unique_counts, unique_inverse, unique_values, unravel_index)
from xjax._src.numpy.ufuncs import (abs, absolute, acos, acosh, add, allclose, angle, arccos, arccosh,  # noqa: F401
                                    arcsin, arcsinh, arctan, arctan2, arctanh, around, array_equal, array_equiv,
                                    asin, asinh, atan, atan2, atanh, bitwise_and, bitwise_invert,
                                    bitwise_left_shift, bitwise_not, bitwise_or, bitwise_right_shift,
                                    bitwise_xor, cbrt, ceil, clip, conj, conjugate, copysign, cos, cosh, deg2rad,
                                    degrees, divide, divmod, equal, exp, exp2, expm1, fabs, fix, float_power,
                                    floor, floor_divide, fmax, fmin, fmod, frexp, gcd, greater, greater_equal,
                                    heaviside, hypot, imag, invert, isclose, isfinite, isinf, isnan, isneginf,
                                    isposinf, lcm, ldexp, left_shift, less, less_equal, log, log1p, log2, log10,
                                    logaddexp, logaddexp2, logical_and, logical_not, logical_or, logical_xor,
                                    maximum, minimum, mod, modf, multiply, nan_to_num, negative, nextafter,
                                    not_equal, positive, pow, power, rad2deg, radians, real, reciprocal,
                                    remainder, right_shift, rint, round, sign, signbit, sin, sinc, sinh, sqrt,
                                    square, subtract, tan, tanh, true_divide, trunc, where)
from xjax.numpy import linalg  # noqa: F401

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
