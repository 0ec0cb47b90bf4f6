"""Polynomial evaluation, multiplication, division, least-squares fits and roots (jnp.polyval, polymul,
polydiv, polyfit, roots), coefficients highest degree first, as JAX computes them."""
import operator

import numpy as np

from xjax._src import dtypes, lax
from xjax._src.jit import jit
from xjax._src.numpy import (creation, decompositions, linalg_solve, manipulation, products, rearrange, reductions,
                             sorting, ufuncs, util)
from xjax._src.numpy.extras import trim_zeros
from xjax._src.numpy.misc import vander


def _check_1d(name, *arrays):
    for a in arrays:
        if a.aval.ndim != 1:
            raise ValueError(f"jnp.{name}: the coefficients must be a 1-D array; got shape {a.aval.shape}")


@jit(static_argnames=("unroll",))
def _polyval(p, x, unroll):
    shape = util.broadcast_shapes(p.aval.shape[1:], x.aval.shape)
    y = util.full(shape, 0, x.aval.dtype)
    # Horner's rule as a scan over the coefficients, `unroll` steps per iteration (as JAX).
    y, _ = lax.scan(lambda acc, c: (ufuncs.add(ufuncs.multiply(acc, x), c), None), y, p, unroll=unroll)
    return y


def polyval(p, x, *, unroll=16):
    """The polynomial with coefficients p (shape (M, ...), highest degree first) at x, by Horner's
    rule; `unroll` (static) is the number of steps the scan unrolls."""
    util.check_arraylike("polyval", p, x)
    pv, xv = util.promote_dtypes(util.asarray(p), util.asarray(x))
    if pv.aval.ndim == 0:
        raise ValueError("jnp.polyval: p must have at least one dimension (the coefficients); got a scalar")
    return _polyval(pv, xv, operator.index(unroll))


def polymul(a1, a2, *, trim_leading_zeros=False):
    """The product of two polynomials (always inexact); trim_leading_zeros=True drops the leading
    zeros of the inputs as NumPy does (their values must then be concrete)."""
    util.check_arraylike("polymul", a1, a2)
    a, b = util.promote_dtypes_inexact(util.asarray(a1), util.asarray(a2))
    _check_1d("polymul", a, b)
    if trim_leading_zeros and (a.aval.shape[0] > 1 or b.aval.shape[0] > 1):
        a, b = trim_zeros(a, trim="f"), trim_zeros(b, trim="f")
    if a.aval.shape[0] == 0:
        a = util.full((1,), 0, b.aval.dtype)
    if b.aval.shape[0] == 0:
        b = util.full((1,), 0, a.aval.dtype)
    return products.convolve(a, b, mode="full")


def _trim_leading_small(x, tol):
    """x without its leading entries whose magnitude is at most tol (x concrete)."""
    big = np.asarray(util.concrete_value(ufuncs.greater(ufuncs.abs(x), tol),
                                         "jnp.polydiv with trim_leading_zeros=True needs concrete inputs"))
    start = int(big.argmax()) if big.any() else big.shape[0]
    return lax.slice(x, (start,), (x.aval.shape[0],))


def polydiv(u, v, *, trim_leading_zeros=False):
    """(quotient, remainder) of u / v (always inexact). The remainder keeps u's length, its leading
    entries zero, unless trim_leading_zeros=True drops those within sqrt(eps) of zero as NumPy does."""
    util.check_arraylike("polydiv", u, v)
    u, v = util.promote_dtypes_inexact(util.asarray(u), util.asarray(v))
    _check_1d("polydiv", u, v)
    m, n = u.aval.shape[0] - 1, v.aval.shape[0] - 1
    scale = ufuncs.true_divide(1.0, v[0])
    q = util.full((max(m - n + 1, 1),), 0, u.aval.dtype)
    # Long division, one quotient coefficient per step (the degrees are static).
    for k in range(m - n + 1):
        d = ufuncs.multiply(scale, u[k])
        q = q.at[k].set(d)
        u = u.at[k:k + n + 1].add(ufuncs.multiply(ufuncs.negative(d), v))
    if trim_leading_zeros:
        u = _trim_leading_small(u, float(np.sqrt(dtypes.finfo(u.aval.dtype).eps)))
    return q, u


def _polyfit_operands(x, y, w):
    if w is None:
        util.check_arraylike("polyfit", x, y)
    else:
        util.check_arraylike("polyfit", x, y, w)
    xv, yv = util.asarray(x), util.asarray(y)
    if xv.aval.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if xv.aval.size == 0:
        raise TypeError("expected non-empty vector for x")
    if yv.aval.ndim < 1 or yv.aval.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if xv.aval.shape[0] != yv.aval.shape[0]:
        raise TypeError("expected x and y to have same length")
    if w is not None:
        (w,) = util.promote_dtypes_inexact(util.asarray(w))
        if w.aval.ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if w.aval.shape[0] != yv.aval.shape[0]:
            raise TypeError("expected w and y to have the same length")
    return xv, yv, w


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """The least-squares polynomial of degree deg through (x, y) (y 1-D, or 2-D with one fit per
    column), optionally weighted by w. full=True also returns (residuals, rank, singular values,
    rcond); cov=True the coefficients' covariance ("unscaled": not scaled by the residuals)."""
    deg = operator.index(util.concrete_value(deg, "deg must be int") if util.is_array(deg) else deg)
    if deg < 0:
        raise ValueError("expected deg >= 0")
    xv, yv, w = _polyfit_operands(x, y, w)
    if rcond is None:
        rcond = xv.aval.shape[0] * float(dtypes.finfo(dtypes.to_inexact_dtype(xv.aval.dtype)).eps)
    rcond = float(util.concrete_value(rcond, "rcond must be float") if util.is_array(rcond) else rcond)
    return _polyfit(xv, yv, w, deg, rcond, bool(full), cov)


@jit(static_argnames=("deg", "rcond", "full", "cov"))
def _polyfit(x, y, w, deg, rcond, full, cov):
    order = deg + 1
    lhs, rhs = vander(x, order), y
    if w is not None:
        lhs = ufuncs.multiply(lhs, w[:, None])
        rhs = ufuncs.multiply(rhs, w[:, None] if rhs.aval.ndim == 2 else w)
    # Columns scaled to unit norm: a better conditioned least-squares problem.
    scale = ufuncs.sqrt(reductions.sum(ufuncs.multiply(lhs, lhs), axis=0))
    lhs = ufuncs.true_divide(lhs, scale[None, :])
    c, resids, rank, s = linalg_solve.lstsq(lhs, rhs, rcond)
    c = ufuncs.true_divide(c, scale[:, None] if c.aval.ndim > 1 else scale)
    if full:
        return c, resids, rank, s, util.asarray(rcond)
    if not cov:
        return c
    vbase = linalg_solve.inv(products.dot(lhs.T, lhs))
    vbase = ufuncs.true_divide(vbase, products.outer(scale, scale))
    if cov == "unscaled":
        fac = creation.array(1.0)
    else:
        n = x.aval.shape[0]
        if n <= order:
            raise ValueError("the number of data points must exceed order to scale the covariance matrix")
        fac = ufuncs.true_divide(resids, n - order)
    fac = manipulation.atleast_1d(fac)
    if y.aval.ndim == 1:
        return c, ufuncs.multiply(vbase, fac[None])
    return c, ufuncs.multiply(vbase[:, :, None], fac[None, None, :])


def poly(seq_of_zeros):
    """The coefficients of the monic polynomial with the given roots (or the eigenvalues of a square
    matrix: then complex, as in JAX): the product of the factors (x - r), one root at a time (JAX
    convolves with (1, -r); the two-term sums are the same, and complex ones need no complex convolution)."""
    util.check_arraylike("poly", seq_of_zeros)
    (zeros,) = util.promote_dtypes_inexact(util.asarray(seq_of_zeros))
    zeros = manipulation.atleast_1d(zeros)
    shape = zeros.aval.shape
    if len(shape) == 2 and shape[0] == shape[1] and shape[0] != 0:
        zeros = decompositions.eigvals(zeros)
    elif len(shape) != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    dt = zeros.aval.dtype
    if zeros.aval.shape[0] == 0:
        return creation.ones((), dtype=dt)
    coeffs = creation.ones((1,), dtype=dt)
    zero = creation.zeros((1,), dtype=dt)
    for k in range(zeros.aval.shape[0]):
        shifted = manipulation.concatenate([zero, coeffs])
        scaled = ufuncs.multiply(ufuncs.negative(zeros[k]), shifted)
        coeffs = ufuncs.add(manipulation.concatenate([coeffs, zero]), scaled)
    return coeffs


@jit
def _roots_no_zeros(p):
    n = p.aval.shape[0]
    if n < 2:
        return util.full((0,), 0, dtypes.complex_dtype_of(p.aval.dtype))
    # The companion matrix: ones below the diagonal, -p[1:] / p[0] in the first row.
    comp = creation.diag(util.full((n - 2,), 1, p.aval.dtype), -1)
    comp = comp.at[0, :].set(ufuncs.negative(ufuncs.true_divide(p[1:], p[0])))
    return decompositions.eigvals(comp)


@jit
def _roots_with_zeros(p):
    """JAX's traceable roots: the k leading zeros are rolled to the end (the polynomial times x^k), the zero
    roots that adds moved last (a stable partition), and the last k roots set to NaN."""
    n = p.aval.shape[0]
    is_zero = ufuncs.equal(p, 0)
    num_leading_zeros = ufuncs.where(reductions.all(is_zero), n, reductions.argmin(is_zero))
    p = ufuncs.where(num_leading_zeros == n, creation.full_like(p, 1), p)  # all zeros: no LAPACK error
    found = _roots_no_zeros(rearrange.roll(p, -num_leading_zeros))
    order = sorting.argsort(ufuncs.equal(found, 0).astype(np.int32), stable=True)
    found = found[order]
    nan = creation.full_like(found, complex(np.nan, np.nan))
    return ufuncs.where(creation.arange(n - 1) < n - 1 - num_leading_zeros, found, nan)


def roots(p, *, strip_zeros=True):
    """The roots of the polynomial with coefficients p (highest degree first), complex: the eigenvalues
    of its companion matrix. Leading zeros are stripped (p must then be concrete)."""
    util.check_arraylike("roots", p)
    (pv,) = util.promote_dtypes_inexact(util.asarray(p))
    pv = manipulation.atleast_1d(pv)
    if pv.aval.ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    if pv.aval.shape[0] < 2:
        return util.full((0,), 0, dtypes.complex_dtype_of(pv.aval.dtype))
    if not strip_zeros:
        return _roots_with_zeros(pv)
    try:
        coeffs = np.asarray(pv)
    except Exception:
        raise ValueError("The error occurred in the jnp.roots() function. To use this within a JIT-compiled context, "
                         "pass strip_zeros=False, but be aware that leading zeros will result in some returned roots "
                         "being set to NaN.") from None
    nonzero = np.flatnonzero(coeffs != 0)
    lead = int(nonzero[0]) if nonzero.size else coeffs.size
    return _roots_no_zeros(pv[lead:])
