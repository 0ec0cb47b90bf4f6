"""xjax.numpy.linalg: norms, matrix_power, cond, and the Array API's linalg products and helpers
(over the last two axes).

The decompositions (svd, qr, cholesky, eigh...) live in decompositions.py, the solvers in
linalg_solve.py, det and slogdet in determinants.py.
"""
import math
import operator

import numpy as np

from xjax._src import dtypes, lax
from xjax._src.jit import jit
from xjax._src.numpy import creation, manipulation, products, reductions, ufuncs, util
from xjax._src.numpy.decompositions import svd, svdvals
from xjax._src.numpy.linalg_solve import inv


def _abs(x):
    return lax.abs(x)


def _abs2(x):
    """|x|^2, real for complex x."""
    if dtypes.is_complex(x.aval.dtype):
        return lax.add(lax.square(lax.real(x)), lax.square(lax.imag(x)))
    return lax.mul(x, x)


def _vector_norm(x, ord, axes, keepdims):
    if ord is None or ord == 2:
        return lax.sqrt(reductions.sum(_abs2(x), axes, keepdims=keepdims))
    a = _abs(x)
    if ord == math.inf:
        return reductions.max(a, axes, keepdims=keepdims, initial=0.0 if x.aval.size == 0 else None)
    if ord == -math.inf:
        return reductions.min(a, axes, keepdims=keepdims)
    if ord == 0:
        nz = lax.convert_element_type(lax.ne(x, util.full(x.aval.shape, 0, x.aval.dtype)), a.aval.dtype)
        return reductions.sum(nz, axes, keepdims=keepdims)
    if ord == 1:
        return reductions.sum(a, axes, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"Invalid order '{ord}' for vector norm.")
    p = float(ord)
    s = reductions.sum(lax.pow(a, util.full(a.aval.shape, p, a.aval.dtype)), axes, keepdims=keepdims)
    return lax.pow(s, util.full(s.aval.shape, 1.0 / p, s.aval.dtype))


def _matrix_norm(x, ord, axes, keepdims):
    r, c = axes
    if ord in (None, "fro", "f"):
        return lax.sqrt(reductions.sum(_abs2(x), axes, keepdims=keepdims))
    if ord in ("nuc", 2, -2):
        s = svd(manipulation.moveaxis(x, axes, (-2, -1)), compute_uv=False)
        if ord == 2:
            out = reductions.max(s, -1, initial=0.0 if s.aval.size == 0 else None)
        else:
            out = reductions.min(s, -1) if ord == -2 else reductions.sum(s, -1)
        return manipulation.expand_dims(out, axes) if keepdims else out
    a = _abs(x)
    if ord in (1, -1):
        col_sums = reductions.sum(a, r, keepdims=True)
        red = reductions.max if ord == 1 else reductions.min
        out = red(col_sums, c, keepdims=True)
    elif ord in (math.inf, -math.inf):
        row_sums = reductions.sum(a, c, keepdims=True)
        red = reductions.max if ord == math.inf else reductions.min
        out = red(row_sums, r, keepdims=True)
    else:
        raise ValueError(f"Invalid order '{ord}' for matrix norm.")
    if keepdims:
        return out
    return lax.reshape(out, tuple(d for i, d in enumerate(out.aval.shape) if i not in axes))


def _improper_axes(axis):
    return ValueError(f"Improper number of axes for norm: axis={axis}. Pass one axis to compute a vector-norm, or "
                      "two axes to compute a matrix-norm.")


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector (1-D, or one axis) or matrix (2-D, or two axes) norm; ord as in NumPy, including the
    matrix norms 2, -2 and 'nuc' from the singular values."""
    util.check_arraylike("jnp.linalg.norm", x)
    if isinstance(axis, list):
        axis = tuple(axis)
    return _norm(x, ord=ord, axis=axis, keepdims=keepdims)


def _norm(x, ord, axis, keepdims):
    v = util.to_inexact(util.asarray(x))
    if v.aval.weak_type:
        v = lax.elementwise._convert(v, v.aval.dtype, weak_type=False)
    nd = v.aval.ndim
    if axis is None:
        if ord is None:
            return lax.sqrt(reductions.sum(_abs2(v), keepdims=keepdims))
        axes = tuple(range(nd))
    else:
        axes = util.canonicalize_axes(axis, nd)
    if len(axes) == 1:
        return _vector_norm(v, ord, axes, keepdims)
    if len(axes) == 2:
        return _matrix_norm(v, ord, axes, keepdims)
    raise _improper_axes(axes)


_norm.__name__ = "norm"  # a jit named norm, as JAX's jnp.linalg.norm is
_norm = jit(_norm, static_argnames=("ord", "axis", "keepdims"))


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The vector norm over axis (all elements, flattened, if None)."""
    v = util.to_default_float(util.asarray(x))  # not to_inexact: JAX gives float64 for int32 under x64
    if axis is None:
        out = _vector_norm(lax.reshape(v, (v.aval.size,)), ord, (0,), False)
        return lax.reshape(out, (1,) * v.aval.ndim) if keepdims else out
    return _vector_norm(v, ord, util.canonicalize_axes(axis, v.aval.ndim), keepdims)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """The matrix norm over the last two axes."""
    v = util.to_inexact(util.asarray(x))
    nd = v.aval.ndim
    return _matrix_norm(v, ord, (nd - 2, nd - 1), keepdims)


def matrix_power(a, n):
    """a raised to the integer power n by repeated squaring (a negative n inverts a first)."""
    util.check_arraylike("jnp.linalg.matrix_power", a)
    x = util.asarray(a)
    if x.aval.ndim < 2:
        raise TypeError(f"{x.aval.ndim}-dimensional array given. Array must be at least two-dimensional")
    if x.aval.shape[-1] != x.aval.shape[-2]:
        raise TypeError("Last 2 dimensions of the array must be square")
    try:
        n = operator.index(n)
    except TypeError as err:
        raise TypeError(f"exponent must be an integer, got {n}") from err
    if n == 0:
        return util.broadcast_to_shape(creation.eye(x.aval.shape[-1], dtype=x.aval.dtype), x.aval.shape)
    if n < 0:
        x, n = inv(x), -n
    if n == 3:  # JAX's order of the products
        return products.matmul(products.matmul(x, x), x)
    result = None
    base = x
    while n:
        if n & 1:
            result = base if result is None else products.matmul(result, base)
        n >>= 1
        if n:
            base = products.matmul(base, base)
    return result


def cond(x, p=None):
    """The condition number of x in the p-norm: from the singular values for p None, 2 or -2, else
    norm(x) * norm(inv(x)) (square x). A singular x gives inf."""
    util.check_arraylike("cond", x)
    x = util.asarray(x)
    shape = x.aval.shape
    if len(shape) < 2:
        raise ValueError(f"jnp.linalg.cond: input array must be at least 2D; got arr.shape={shape}")
    if shape[-1] == 0 or shape[-2] == 0:
        raise ValueError(f"jnp.linalg.cond: input array must not be empty; got arr.shape={shape}")
    if p is None or p == 2:
        s = svdvals(x)
        return s[..., 0] / s[..., -1]
    if p == -2:
        s = svdvals(x)
        r = s[..., -1] / s[..., 0]
    else:
        if shape[-2] != shape[-1]:
            raise ValueError(f"jnp.linalg.cond: for p={p}, array must be square; got arr.shape={shape}")
        r = norm(x, ord=p, axis=(-2, -1)) * norm(inv(x), ord=p, axis=(-2, -1))
    # NaN from inf * 0 (a singular x) reads as an infinite condition number, unless x itself has NaNs.
    x_nan = reductions.any(ufuncs.isnan(x), axis=(-2, -1))
    return ufuncs.where(ufuncs.isnan(r) & ~x_nan, np.inf, r)


def diagonal(x, /, *, offset=0):
    """The offset-th diagonals of the matrices in the last two axes (Array API; jnp.diagonal uses 0, 1)."""
    return creation.diagonal(x, offset, -2, -1)


def trace(x, /, *, offset=0, dtype=None):
    """Sums of the offset-th diagonals of the matrices in the last two axes (Array API)."""
    util.check_arraylike("jnp.linalg.trace", x)
    if util.aval_of(x).ndim < 2:
        raise ValueError(f"jnp.linalg.trace requires an array of at least two dimensions, got shape "
                         f"{util.aval_of(x).shape}")
    return products.trace(x, offset, -2, -1, dtype)


def outer(x1, x2, /):
    """The outer product of two 1-D arrays (Array API; jnp.outer flattens instead)."""
    util.check_arraylike("jnp.linalg.outer", x1, x2)
    n1, n2 = util.aval_of(x1).ndim, util.aval_of(x2).ndim
    if n1 != 1 or n2 != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are x1.ndim={n1} x2.ndim={n2}")
    return products.outer(x1, x2)


def cross(x1, x2, /, *, axis=-1):
    """The cross product of 3-vectors along axis (Array API: 2-vectors are an error)."""
    util.check_arraylike("jnp.linalg.cross", x1, x2)
    s1, s2 = util.aval_of(x1).shape, util.aval_of(x2).shape
    d1, d2 = s1[util.canonicalize_axis(axis, len(s1))], s2[util.canonicalize_axis(axis, len(s2))]
    if d1 != 3 or d2 != 3:
        raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors, but they have "
                         f"x1.shape[axis]={d1} and x2.shape[axis]={d2}")
    return products.cross(x1, x2, axis=axis)


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None, out_sharding=None):
    """tensordot with the Array API's keyword-only axes."""
    return products.tensordot(x1, x2, axes, precision=precision, preferred_element_type=preferred_element_type,
                              out_sharding=out_sharding)


def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    """The matrix product (Array API: positional-only operands), as jnp.matmul."""
    util.check_arraylike("jnp.linalg.matmul", x1, x2)
    return products.matmul(x1, x2, precision=precision, preferred_element_type=preferred_element_type)


def _chain_order(dims):
    """split[i][j]: where the cheapest product of matrices i..j splits (matrix k is dims[k] x dims[k+1])."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j], split[i][j] = min((cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1], k)
                                          for k in range(i, j))
    return split


def multi_dot(arrays, *, precision=None):
    """The product of a chain of matrices, multiplied in the order that needs the fewest flops; the
    first and last may be 1-D."""
    arrs = [util.asarray(a) for a in arrays]
    if len(arrs) < 2:
        raise ValueError(f"multi_dot requires at least two arrays; got len(arrays)={len(arrs)}")
    shapes = [a.aval.shape for a in arrs]
    if not (len(shapes[0]) in (1, 2) and len(shapes[-1]) in (1, 2) and all(len(s) == 2 for s in shapes[1:-1])):
        raise ValueError("multi_dot: input arrays must all be two-dimensional, except for the first and last array "
                         f"which may be 1 or 2 dimensional. Got array shapes {shapes}")
    if any(a[-1] != b[0] for a, b in zip(shapes[:-1], shapes[1:])):
        raise ValueError("multi_dot: last dimension of each array must match first dimension of following array. "
                         f"Got array shapes {shapes}")
    dims = [1 if len(shapes[0]) == 1 else shapes[0][0]] + [s[-1] for s in shapes[:-1]] + \
        [1 if len(shapes[-1]) == 1 else shapes[-1][1]]
    split = _chain_order(dims)

    def product(i, j):
        if i == j:
            return arrs[i]
        k = split[i][j]
        return products.matmul(product(i, k), product(k + 1, j), precision=precision)

    return product(0, len(arrs) - 1)
