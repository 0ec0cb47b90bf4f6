"""Smaller jnp functions built from the others: interp, trapezoid, cov/corrcoef, vander, and
the predicates isscalar/iterable."""
import numpy as np

from xjax._src import dtypes, lax
from xjax._src.numpy import manipulation, rearrange, reductions, sorting, ufuncs, util
from xjax._src.numpy.creation import diagonal
from xjax._src.numpy.products import dot
from xjax._src.numpy.statistics import average
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


array_repr = np.array_repr  # (JAX's are NumPy's own)
array_str = np.array_str


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of (xp, fp) at x (xp increasing). `period` wraps x and xp onto one
    period (left/right are then unused); left/right='extrapolate' continues the end segments (JAX's
    extension of NumPy's)."""
    util.check_arraylike("interp", x, xp, fp)
    extrapolate_left, extrapolate_right = _extrapolates(left, "left"), _extrapolates(right, "right")
    xv, xpv = util.promote_dtypes_inexact(x, xp)
    (fpv,) = util.promote_dtypes_inexact(fp)
    if xpv.aval.ndim != 1 or fpv.aval.shape != xpv.aval.shape or xpv.aval.shape[0] == 0:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    if dtypes.is_complex(xv.aval.dtype):
        raise ValueError("jnp.interp: complex x values not supported.")
    if period is not None:
        if np.ndim(period) != 0:
            raise ValueError(f"period must be a scalar; got {period}")
        period = ufuncs.abs(period)
        xv, xpv = ufuncs.remainder(xv, period), ufuncs.remainder(xpv, period)
        xpv, fpv = lax.sort_key_val(xpv, fpv)
        # one point from each neighbouring period closes the cycle
        xpv = manipulation.concatenate([ufuncs.subtract(xpv[-1:], period), xpv, ufuncs.add(xpv[:1], period)])
        fpv = manipulation.concatenate([fpv[-1:], fpv, fpv[:1]])
    n = xpv.aval.shape[0]
    i = ufuncs.clip(sorting.searchsorted(xpv, xv, side="right"), 1, max(n - 1, 1))
    x0, y0 = take(xpv, i - 1, mode="clip"), take(fpv, i - 1, mode="clip")
    dx = ufuncs.subtract(take(xpv, i, mode="clip"), x0)
    dy = ufuncs.subtract(take(fpv, i, mode="clip"), y0)
    flat = ufuncs.less_equal(ufuncs.abs(dx), np.spacing(np.finfo(xpv.aval.dtype).eps))  # (no NaN gradients)
    slope_part = ufuncs.multiply(ufuncs.true_divide(ufuncs.subtract(xv, x0), ufuncs.where(flat, 1, dx)), dy)
    out = ufuncs.where(flat, y0, ufuncs.add(y0, slope_part))
    if period is None and not extrapolate_left:
        out = ufuncs.where(ufuncs.less(xv, xpv[0]), fpv[0] if left is None else left, out)
    if period is None and not extrapolate_right:
        out = ufuncs.where(ufuncs.greater(xv, xpv[-1]), fpv[-1] if right is None else right, out)
    return out


def _extrapolates(value, name):
    if not isinstance(value, str):
        return False
    if value != "extrapolate":
        raise ValueError(f"the only valid string value of `{name}` is 'extrapolate', but got: {value!r}")
    return True


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


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, dtype=None):
    """The covariance matrix of the variables (rows, unless rowvar=False), with optional integer
    frequency weights and real observation weights per sample (their magnitudes, as JAX takes them)."""
    util.check_arraylike("cov", m, *([] if y is None else [y]))
    mv, *yv = util.promote_dtypes_inexact(m, *([] if y is None else [y]))
    if mv.aval.ndim > 2 or (yv and yv[0].aval.ndim > 2):
        raise ValueError(f"{'m' if mv.aval.ndim > 2 else 'y'} has more than 2 dimensions")
    if dtype is not None and not dtypes.issubdtype(dtype, np.inexact):
        raise ValueError(f"cov: dtype must be a subclass of float or complex; got {dtype=}")
    x = manipulation.atleast_2d(mv)
    if not rowvar and mv.aval.ndim != 1:
        x = lax.transpose(x, (1, 0))
    if x.aval.shape[0] == 0:
        return util.full((0, 0), 0, x.aval.dtype)
    if yv:
        y2 = manipulation.atleast_2d(yv[0])
        if not rowvar and y2.aval.shape[0] != 1:
            y2 = lax.transpose(y2, (1, 0))
        x = manipulation.concatenate([x, y2], 0)
    nvars, n = x.aval.shape
    if n == 0:
        return util.full(() if nvars == 1 else (nvars, nvars), np.nan, x.aval.dtype)
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    if fweights is not None:
        fweights = _sample_weights("fweights", fweights, n)
        if not dtypes.issubdtype(fweights.aval.dtype, np.integer):
            raise TypeError("fweights must be integer.")
        w = ufuncs.abs(fweights)
    if aweights is not None:
        aweights = ufuncs.abs(_sample_weights("aweights", aweights, n))
        w = aweights if w is None else ufuncs.multiply(w, aweights)
    if dtype is not None:
        x = x.astype(dtype)
        w = None if w is None else w.astype(dtype)
    mu, w_sum = average(x, axis=1, weights=w, returned=True)
    if w is None:
        dof = n - ddof
    elif ddof == 0:
        dof = w_sum[0]
    elif aweights is None:
        dof = w_sum[0] - ddof
    else:
        dof = w_sum[0] - ddof * reductions.sum(ufuncs.multiply(w, aweights)) / w_sum[0]
    xc = ufuncs.subtract(x, mu[:, None])
    weighted = xc if w is None else ufuncs.multiply(xc, w[None, :])
    xt = lax.transpose(weighted, (1, 0))
    c = dot(xc, lax.conj(xt) if dtypes.is_complex(xt.aval.dtype) else xt)  # (the conjugate for complex data)
    return manipulation.squeeze(ufuncs.true_divide(c, dof))


def _sample_weights(name, weights, n):
    weights = util.asarray(weights)
    if weights.aval.ndim > 1:
        raise RuntimeError(f"cannot handle multidimensional {name}")
    if weights.aval.shape[0] != n:
        raise RuntimeError(f"incompatible numbers of samples and {name}")
    return weights


def corrcoef(x, y=None, rowvar=True, dtype=None):
    """Pearson correlation coefficients (real and imaginary parts each clipped to [-1, 1])."""
    if dtype is not None and not dtypes.issubdtype(dtype, np.inexact):
        raise ValueError(f"corrcoef: dtype must be a subclass of float or complex; got {dtype=}")
    c = cov(x, y, rowvar, dtype=dtype)
    if c.aval.ndim == 0:
        return ufuncs.true_divide(c, c)
    s = ufuncs.sqrt(ufuncs.real(diagonal(c))).astype(c.aval.dtype)
    c = ufuncs.true_divide(ufuncs.true_divide(c, s[:, None]), s[None, :])
    if not dtypes.is_complex(c.aval.dtype):
        return ufuncs.clip(c, -1, 1)
    return lax.complex(ufuncs.clip(ufuncs.real(c), -1, 1), ufuncs.clip(ufuncs.imag(c), -1, 1))
