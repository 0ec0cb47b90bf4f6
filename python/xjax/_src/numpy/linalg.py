"""xjax.numpy.linalg: norms and the products and helpers of the Array API's linalg namespace.

Decompositions (svd, qr, cholesky, eig...) need kernels the core does not have yet; they raise
NotImplementedError naming themselves.
"""
import math

from xjax._src import dtypes, lax
from xjax._src.numpy import reductions, util


def _abs(x):
    return lax.abs(x)


def _vector_norm(x, ord, axes, keepdims):
    a = _abs(x)
    if ord is None or ord == 2:
        return lax.sqrt(reductions.sum(lax.mul(x, x), axes, keepdims=keepdims))
    if ord == math.inf:
        return reductions.max(a, axes, keepdims=keepdims, initial=0.0 if x.aval.size == 0 else None)
    if ord == -math.inf:
        return reductions.min(a, axes, keepdims=keepdims)
    if ord == 0:
        nz = lax.convert_element_type(lax.ne(x, util.full(x.aval.shape, 0, x.aval.dtype)), x.aval.dtype)
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
        return lax.sqrt(reductions.sum(lax.mul(x, x), axes, keepdims=keepdims))
    a = _abs(x)
    if ord in (1, -1):
        col_sums = reductions.sum(a, r, keepdims=True)
        red = reductions.max if ord == 1 else reductions.min
        out = red(col_sums, c, keepdims=True)
    elif ord in (math.inf, -math.inf):
        row_sums = reductions.sum(a, c, keepdims=True)
        red = reductions.max if ord == math.inf else reductions.min
        out = red(row_sums, r, keepdims=True)
    elif ord in ("nuc", 2, -2):
        raise NotImplementedError(f"norm(ord={ord!r}) of a matrix needs singular values (svd), which xjax does not "
                                  "implement yet")
    else:
        raise ValueError(f"Invalid order '{ord}' for matrix norm.")
    if keepdims:
        return out
    return lax.reshape(out, tuple(d for i, d in enumerate(out.aval.shape) if i not in axes))


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector (1-D, or one axis) or matrix (2-D, or two axes) norm; ord as in NumPy."""
    util.check_arraylike("jnp.linalg.norm", x)
    v = util.to_inexact(util.asarray(x))
    if v.aval.weak_type:
        v = lax.elementwise._convert(v, v.aval.dtype, weak_type=False)
    nd = v.aval.ndim
    if axis is None:
        if ord is None:
            flat = lax.reshape(v, (v.aval.size,))
            out = lax.sqrt(reductions.sum(lax.mul(flat, flat)))
            return lax.reshape(out, (1,) * nd) if keepdims else out
        if nd == 1:
            return _vector_norm(v, ord, (0,), keepdims)
        if nd == 2:
            return _matrix_norm(v, ord, (0, 1), keepdims)
        raise ValueError("Improper number of axes for norm: pass axis to compute a vector or matrix norm of an "
                         f"array of dimension {nd}.")
    axes = util.canonicalize_axes(axis, nd)
    if len(axes) == 1:
        return _vector_norm(v, ord, axes, keepdims)
    if len(axes) == 2:
        return _matrix_norm(v, ord, axes, keepdims)
    raise ValueError(f"Invalid axis values ({axis}) for jnp.linalg.norm.")


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


def _missing(name):
    def fn(*args, **kwargs):
        raise NotImplementedError(f"jnp.linalg.{name} is not implemented in xjax yet (it needs a decomposition "
                                  "kernel in the core)")

    fn.__name__ = name
    fn.__doc__ = f"Not implemented yet: jnp.linalg.{name}."
    return fn


svd = _missing("svd")
qr = _missing("qr")
cholesky = _missing("cholesky")
eig = _missing("eig")
eigh = _missing("eigh")
eigvals = _missing("eigvals")
eigvalsh = _missing("eigvalsh")
inv = _missing("inv")
pinv = _missing("pinv")
solve = _missing("solve")
det = _missing("det")
slogdet = _missing("slogdet")
lstsq = _missing("lstsq")
matrix_rank = _missing("matrix_rank")


def matrix_power(a, n):
    """a raised to the integer power n >= 0 by repeated squaring (negative n needs inv)."""
    from xjax._src.numpy.creation import eye
    from xjax._src.numpy.products import matmul

    x = util.asarray(a)
    if x.aval.ndim < 2 or x.aval.shape[-1] != x.aval.shape[-2]:
        raise ValueError(f"Last 2 dimensions of the array must be square, got shape {x.aval.shape}")
    n = int(n)
    if n < 0:
        raise NotImplementedError("matrix_power with a negative exponent needs jnp.linalg.inv")
    result = util.broadcast_to_shape(eye(x.aval.shape[-1], dtype=x.aval.dtype), x.aval.shape)
    base = x
    while n:
        if n & 1:
            result = matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return result

del dtypes
