"""Smaller jnp functions built from the others: interp, trapezoid, cov/corrcoef, vander, and
the predicates isscalar/iterable."""
import numpy as np

from xjax._src import dtypes, lax
from xjax._src.numpy import manipulation, rearrange, reductions, sorting, ufuncs, util
from xjax._src.numpy.creation import diagonal
from xjax._src.numpy.products import dot
from xjax._src.numpy.take import take


def isscalar(element):
    """True for Python/NumPy scalars and 0-d arrays."""
    if hasattr(element, "aval"):
        return element.aval.ndim == 0
    if isinstance(element, (np.ndarray, np.generic)):
        return np.ndim(element) == 0
    return isinstance(element, (bool, int, float, complex))


def iterable(y):
    """True if iter(y) works."""
    try:
        iter(y)
    except TypeError:
        return False
    return True


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    """repr(arr)."""
    return repr(util.asarray(arr))


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    """str(a)."""
    return str(util.asarray(a))


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of (xp, fp) at x (xp increasing)."""
    util.check_arraylike("interp", x, xp, fp)
    if period is not None:
        raise NotImplementedError("jnp.interp with period is not supported")
    xv, xpv, fpv = util.promote_dtypes_inexact(x, xp, fp)
    n = xpv.aval.shape[0]
    if xpv.aval.ndim != 1 or fpv.aval.shape != (n,) or n == 0:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    i = sorting.searchsorted(xpv, xv, side="right")
    i = lax.clamp(util.scalar(1, dtypes.int32, False), i, util.scalar(max(n - 1, 1), dtypes.int32, False))
    lo = lax.sub(i, util.full(i.aval.shape, 1, dtypes.int32))
    x0, x1 = take(xpv, lo, mode="clip"), take(xpv, i, mode="clip")
    y0, y1 = take(fpv, lo, mode="clip"), take(fpv, i, mode="clip")
    dx = lax.sub(x1, x0)
    safe = lax.select(lax.eq(dx, util.full(dx.aval.shape, 0, dx.aval.dtype)),
                      util.full(dx.aval.shape, 1, dx.aval.dtype), dx)
    t = lax.div(lax.sub(xv, x0), safe)
    out = lax.add(y0, lax.mul(t, lax.sub(y1, y0)))
    out = lax.select(lax.eq(dx, util.full(dx.aval.shape, 0, dx.aval.dtype)), y0, out)
    first = lax.reshape(lax.slice(xpv, (0,), (1,)), ())
    last = lax.reshape(lax.slice(xpv, (n - 1,), (n,)), ())
    lval = lax.reshape(lax.slice(fpv, (0,), (1,)), ()) if left is None else util.convert(left, out.aval.dtype)
    rval = lax.reshape(lax.slice(fpv, (n - 1,), (n,)), ()) if right is None else util.convert(right, out.aval.dtype)
    shp = out.aval.shape
    b = lambda v: lax.broadcast_in_dim(v, shp, ())  # noqa: E731
    out = lax.select(lax.lt(xv, b(first)), b(lval), out)
    return lax.select(lax.gt(xv, b(last)), b(rval), out)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of y (over x, or spacing dx) by the trapezoidal rule along axis."""
    yv = util.to_inexact(util.asarray(y))
    ax = util.canonicalize_axis(axis, yv.aval.ndim)
    n = yv.aval.shape[ax]
    hi = lax.slice_in_dim(yv, 1, n, 1, ax)
    lo = lax.slice_in_dim(yv, 0, max(n - 1, 0), 1, ax)
    avg = ufuncs.multiply(ufuncs.add(hi, lo), 0.5)
    if x is None:
        return reductions.sum(ufuncs.multiply(avg, dx), axis=ax)
    d = rearrange.diff(util.asarray(x), axis=-1 if util.asarray(x).aval.ndim == 1 else ax)
    if d.aval.ndim == 1 and yv.aval.ndim > 1:
        shape = [1] * yv.aval.ndim
        shape[ax] = d.aval.shape[0]
        d = lax.reshape(d, tuple(shape))
    return reductions.sum(ufuncs.multiply(avg, d), axis=ax)


def vander(x, N=None, increasing=False):  # noqa: N803 - NumPy's name
    """The Vandermonde matrix of 1-D x."""
    xv = util.asarray(x)
    if xv.aval.ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    n = xv.aval.shape[0] if N is None else int(N)
    powers = lax.iota(xv.aval.dtype if xv.aval.dtype != dtypes.bool_ else dtypes.int32, n)
    if not increasing:
        powers = lax.rev(powers, (0,))
    base = lax.broadcast_in_dim(xv, (xv.aval.shape[0], n), (0,))
    ex = lax.broadcast_in_dim(powers, (xv.aval.shape[0], n), (1,))
    return ufuncs.power(base, lax.convert_element_type(ex, base.aval.dtype))


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None):
    """The covariance matrix of the variables (rows, unless rowvar=False)."""
    if fweights is not None or aweights is not None:
        raise NotImplementedError("jnp.cov with weights is not supported")
    x = manipulation.atleast_2d(util.to_inexact(util.asarray(m)))
    if not rowvar and x.aval.shape[0] != 1:
        x = lax.transpose(x, (1, 0))
    if y is not None:
        yv = manipulation.atleast_2d(util.to_inexact(util.asarray(y)))
        if not rowvar and yv.aval.shape[0] != 1:
            yv = lax.transpose(yv, (1, 0))
        x = manipulation.concatenate([x, yv], 0)
    n = x.aval.shape[1]
    if ddof is None:
        ddof = 0 if bias else 1
    mu = reductions.mean(x, axis=1, keepdims=True)
    xc = ufuncs.subtract(x, mu)
    xt = lax.transpose(xc, (1, 0))
    c = dot(xc, lax.conj(xt) if dtypes.is_complex(xt.aval.dtype) else xt)  # (the conjugate for complex data)
    out = ufuncs.true_divide(c, max(n - ddof, 0))
    return manipulation.squeeze(out) if out.aval.shape == (1, 1) else out


def corrcoef(x, y=None, rowvar=True):
    """Pearson correlation coefficients."""
    c = cov(x, y, rowvar)
    if c.aval.ndim == 0:
        return ufuncs.true_divide(c, c)
    d = diagonal(c)
    s = ufuncs.sqrt(d)
    c = ufuncs.true_divide(c, lax.broadcast_in_dim(s, c.aval.shape, (0,)))
    c = ufuncs.true_divide(c, lax.broadcast_in_dim(s, c.aval.shape, (1,)))
    return ufuncs.clip(c, -1, 1)
