"""jnp.linalg.det and slogdet, as JAX defines them: closed forms for 1x1 to 3x3, LU beyond, with
JAX's custom JVPs (slogdet: trace(a^-1 a'); det: the cofactor solve, finite at singular matrices)."""
import numpy as np

from xjax._src import dtypes, lax
from xjax._src.custom_derivatives import custom_jvp
from xjax._src.jit import jit
from xjax._src.lax import linalg as lax_linalg
from xjax._src.numpy import factor_solve
from xjax._src.numpy import creation, manipulation, products, reductions, ufuncs, util
from xjax._src.numpy.decompositions import SlogdetResult


def _square(name, a, what):
    util.check_arraylike(f"jnp.linalg.{name}", a)
    a, = util.promote_dtypes_inexact(util.asarray(a))
    shape = a.aval.shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"Argument to {what} must have shape [..., n, n], got {shape}")
    return a


def _trace(x):
    return products.trace(x, 0, -2, -1)


def _diag(x):
    return creation.diagonal(x, 0, -2, -1)


def _parity(pivots):
    """The number of row swaps the LU pivots make."""
    iota = lax.broadcasted_iota(pivots.aval.dtype, pivots.aval.shape, pivots.aval.ndim - 1)
    return reductions.count_nonzero(pivots != iota, axis=-1)


# ---- slogdet ------------------------------------------------------------------------------------

def _slogdet_small_impl(a):
    n = a.aval.shape[-1]
    if n == 1:
        det = a[..., 0, 0]
    else:
        det = a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]
    return ufuncs.sign(det), ufuncs.log(ufuncs.abs(det))


_slogdet_small = custom_jvp(_slogdet_small_impl)


def _sign_and_logdet_dots(sign, trace):
    """The tangents of (sign, log|det|) from trace(a^-1 a'): JAX's rule, the sign still for real
    matrices and turning by the trace's imaginary part for complex ones."""
    if dtypes.is_complex(trace.aval.dtype):
        return (trace - ufuncs.real(trace).astype(trace.dtype)) * sign, ufuncs.real(trace)
    return creation.zeros_like(sign), trace


def _slogdet_small_jvp(primals, tangents):
    (x,), (g,) = primals, tangents
    sign, logdet = _slogdet_small(x)
    if x.aval.shape[-1] == 1:
        trace = g[..., 0, 0] / x[..., 0, 0]
    else:
        det = x[..., 0, 0] * x[..., 1, 1] - x[..., 0, 1] * x[..., 1, 0]
        trace = (g[..., 0, 0] * x[..., 1, 1] - g[..., 0, 1] * x[..., 1, 0]
                 - g[..., 1, 0] * x[..., 0, 1] + g[..., 1, 1] * x[..., 0, 0]) / det
    return (sign, logdet), _sign_and_logdet_dots(sign, trace)


_slogdet_small.defjvp(_slogdet_small_jvp)


def _slogdet_lu_impl(a):
    dt = a.aval.dtype
    lu, pivots, _ = lax_linalg.lu(a)
    diag = _diag(lu)
    is_zero = reductions.any(diag == 0, axis=-1)
    parity = _parity(pivots)
    if dtypes.is_complex(dt):  # the phases of U's diagonal
        sign = reductions.prod(diag / ufuncs.abs(diag).astype(dt), axis=-1)
    else:
        sign = creation.ones(diag.aval.shape[:-1], dt)
        parity = parity + reductions.count_nonzero(diag < 0, axis=-1)
    sign = ufuncs.where(is_zero, 0, sign * (1 - 2 * (parity % 2)).astype(dt))
    logdet = ufuncs.where(is_zero, -np.inf, reductions.sum(ufuncs.log(ufuncs.abs(diag)), axis=-1))
    return sign, logdet.astype(ufuncs.real(diag).dtype)


def _slogdet_qr_impl(a):
    if dtypes.is_complex(a.aval.dtype):  # (as JAX)
        raise NotImplementedError("slogdet method='qr' not implemented for complex inputs")
    # |det| from R's diagonal; the sign also needs det(Q) = +-1, read from Q's LU (no Householder taus here).
    q, r = lax_linalg.qr(a)
    diag = _diag(r)
    logdet = reductions.sum(ufuncs.log(ufuncs.abs(diag)), axis=-1)
    sign = reductions.prod(ufuncs.sign(diag), axis=-1) * _slogdet_lu_impl(q)[0]
    return sign, logdet


def _slogdet_jvp(impl):
    def jvp(primals, tangents):
        (x,), (g,) = primals, tangents
        sign, logdet = impl(x)
        return (sign, logdet), _sign_and_logdet_dots(sign, _trace(factor_solve.solve(x, g)))

    return jvp


_slogdet_lu = custom_jvp(_slogdet_lu_impl)
_slogdet_lu.defjvp(_slogdet_jvp(_slogdet_lu))
_slogdet_qr = custom_jvp(_slogdet_qr_impl)
_slogdet_qr.defjvp(_slogdet_jvp(_slogdet_qr))


@jit(static_argnames=("method",))
def _slogdet(a, method):
    if method == "qr":
        return SlogdetResult(*_slogdet_qr(a))
    if a.aval.shape[-1] in (1, 2):
        return SlogdetResult(*_slogdet_small(a))
    return SlogdetResult(*_slogdet_lu(a))


def slogdet(a, *, method=None):
    """(sign, log|det|) of each square matrix; a singular one gives (0, -inf). method: None or "lu"
    (LU factorisation), or "qr"."""
    a = _square("slogdet", a, "slogdet()")
    if method not in (None, "lu", "qr"):
        raise ValueError(f"Unknown slogdet method '{method}'. Supported methods are 'lu' (`None`), and 'qr'.")
    return _slogdet(a, method or "lu")


# ---- det ----------------------------------------------------------------------------------------

def _cofactor_solve(a, b):
    """(det(a), z) with z = det(a) a^-1 b, finite where a is singular (rank n - 1 gives the adjugate's
    product): JAX's cofactor solve, the derivative of det. b: square, like a."""
    if a.aval.shape[-1] == 1:
        return a[..., 0, 0], b
    lu, pivots, permutation = lax_linalg.lu(a)
    dt = a.aval.dtype
    diag = _diag(lu)
    sign = (1 - 2 * (_parity(pivots) % 2)).astype(dt)
    # det(U[:-1, :-1]) and det(a), with the permutation's sign (two products: no cumulative op, which
    # complex matrices do not have yet)
    det_head = reductions.prod(diag[..., :-1], axis=-1) * sign
    det_all = det_head * diag[..., -1]
    # With U's last pivot replaced by 1/det(U[:-1, :-1]), solving and scaling by det(a) stays finite.
    lu = lu.at[..., -1, -1].set(1.0 / det_head)
    ones = creation.ones(b.aval.shape[:-1], dt)
    d = lax_linalg.triangular_solve(lu, ones, left_side=True, lower=False)
    bad = reductions.any(ufuncs.isnan(d) | ufuncs.isinf(d), axis=-1)[..., None, None]
    x = ufuncs.where(bad, 0, b)
    x = lax_linalg._permute_rows(x, permutation)
    x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
    x = manipulation.concatenate((x[..., :-1, :] * det_all[..., None, None], x[..., -1:, :]), axis=-2)
    x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=False)
    return det_all, ufuncs.where(bad, 0, x)


def _det_impl(a):
    sign, logdet = _slogdet(a, "lu")
    return sign * ufuncs.exp(logdet)


_det = custom_jvp(_det_impl)


def _det_jvp(primals, tangents):
    (x,), (g,) = primals, tangents
    y, z = _cofactor_solve(x, g)
    return y, _trace(z)


_det.defjvp(_det_jvp)


@jit
def _det_jit(a):
    n = a.aval.shape[-1]
    if n == 2:
        return a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]
    if n == 3:
        return (a[..., 0, 0] * a[..., 1, 1] * a[..., 2, 2] + a[..., 0, 1] * a[..., 1, 2] * a[..., 2, 0]
                + a[..., 0, 2] * a[..., 1, 0] * a[..., 2, 1] - a[..., 0, 2] * a[..., 1, 1] * a[..., 2, 0]
                - a[..., 0, 0] * a[..., 1, 2] * a[..., 2, 1] - a[..., 0, 1] * a[..., 1, 0] * a[..., 2, 2])
    return _det(a)


def det(a):
    """The determinant of each square matrix (closed forms up to 3x3, LU beyond)."""
    return _det_jit(_square("det", a, "_det()"))
