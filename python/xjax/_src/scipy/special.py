"""jax.scipy.special: the gamma and beta families, zeta and polygamma, Bessel functions, logit and
expit, the entropy functions, and softmax/logsumexp, written in lax primitives as JAX writes them
(the same formulas, branch points and custom derivatives). The normal distribution's functions
(ndtr, ndtri, log_ndtr) are in special_normal.py.
"""
import operator

import numpy as np

from xjax._src import dtypes, lax
from xjax._src.autodiff import jvp
from xjax._src.custom_derivatives import custom_jvp
from xjax._src.nn import normalize
from xjax._src.numpy import util
from xjax._src.numpy.util import promote_args_inexact
from xjax._src.scipy.complex_gamma import complex_loggamma
import xjax.numpy as jnp


def _c(x, value):
    """A 0-d constant of x's dtype (strongly typed, as JAX's lax._const)."""
    return np.array(value, x.aval.dtype)


# ---- error functions ------------------------------------------------------------------------------

def erf(x):
    """The error function 2/sqrt(pi) int_0^x exp(-t^2) dt."""
    (x,) = promote_args_inexact("erf", x)
    return lax.erf(x)


def erfc(x):
    """1 - erf(x), accurate where erf(x) is near 1."""
    (x,) = promote_args_inexact("erfc", x)
    return lax.erfc(x)


def erfinv(x):
    """The inverse of erf on (-1, 1): -inf at -1, inf at 1, NaN outside."""
    (x,) = promote_args_inexact("erfinv", x)
    return lax.erf_inv(x)


# ---- the gamma family ----------------------------------------------------------------------------

def gammaln(x):
    """log |Gamma(x)|."""
    (x,) = promote_args_inexact("gammaln", x)
    return lax.lgamma(x)


def gammasgn(x):
    """The sign of Gamma(x): NaN at the poles (negative integers, -inf) and NaN, -1 at -0."""
    (x,) = promote_args_inexact("gammasgn", x)
    floor_x = lax.floor(x)
    x_negative = x < 0
    return jnp.select([(x_negative & (x == floor_x)) | jnp.isnan(x),
                       (x_negative & (jnp.remainder(floor_x, 2) != 0)) | ((x == 0) & jnp.signbit(x))],
                      [_c(x, np.nan), _c(x, -1.0)], _c(x, 1.0))


def gamma(x):
    """Gamma(x) = gammasgn(x) exp(gammaln(x)); exp(log Gamma) for complex x (NaN at the poles)."""
    (x,) = promote_args_inexact("gamma", x)
    if dtypes.is_complex(x.dtype):
        return lax.exp(complex_loggamma(x))
    return gammasgn(x) * lax.exp(lax.lgamma(x))


def digamma(x):
    """psi(x) = d/dx log Gamma(x)."""
    (x,) = promote_args_inexact("digamma", x)
    return lax.digamma(x)


def polygamma(n, x):
    """psi^(n)(x), the n-th derivative of digamma; n must have an integer dtype."""
    if not dtypes.issubdtype(util.aval_of(n).dtype, np.integer):
        raise ValueError(f"Argument `n` to polygamma must be of integer type. Got dtype {util.aval_of(n).dtype}.")
    n, x = promote_args_inexact("polygamma", n, x)
    return lax.polygamma(n, x)


def gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x)."""
    a, x = promote_args_inexact("gammainc", a, x)
    return lax.igamma(a, x)


def gammaincc(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    a, x = promote_args_inexact("gammaincc", a, x)
    return lax.igammac(a, x)


def factorial(n, exact=False):
    """n! = Gamma(n + 1) for n >= 0, 0 for negative n (exact=True is not supported, as in JAX)."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    (n,) = promote_args_inexact("factorial", n)
    return jnp.where(n < 0, 0, lax.exp(lax.lgamma(n + 1)))


def multigammaln(a, d):
    """log of the multivariate gamma function of dimension d (a concrete int)."""
    d = operator.index(d) if isinstance(d, (int, np.integer)) else int(util.concrete_value(d, "d argument of "
                                                                                           "multigammaln"))
    a, d_ = promote_args_inexact("multigammaln", a, d)
    constant = lax.mul(lax.mul(lax.mul(_c(a, 0.25), d_), lax.sub(d_, _c(a, 1))), lax.log(_c(a, np.pi)))
    b = lax.div(jnp.arange(d, dtype=d_.dtype), _c(a, 2))
    res = jnp.sum(gammaln(jnp.expand_dims(a, axis=-1) - jnp.expand_dims(b, axis=tuple(range(a.ndim)))), axis=-1)
    return res + constant


# ---- the beta family -----------------------------------------------------------------------------

def _algdiv(a, b):
    """log(Gamma(b) / Gamma(a + b)) for b >= 8 (and a <= b): cdflib's algdiv, as JAX's betaln uses it."""
    c0, c1, c2 = 0.833333333333333e-01, -0.277777777760991e-02, 0.793650666825390e-03
    c3, c4, c5 = -0.595202931351870e-03, 0.837308034031215e-03, -0.165322962780713e-02
    h = a / b
    c = h / (1 + h)
    x = h / (1 + h)
    d = b + (a - 0.5)
    x2 = x * x  # s_n = (1 - x^n) / (1 - x)
    s3 = 1.0 + (x + x2)
    s5 = 1.0 + (x + x2 * s3)
    s7 = 1.0 + (x + x2 * s5)
    s9 = 1.0 + (x + x2 * s7)
    s11 = 1.0 + (x + x2 * s9)
    t = (1.0 / b) ** 2  # w = del(b) - del(a + b), del the remainder of Stirling's series
    w = ((((c5 * s11 * t + c4 * s9) * t + c3 * s7) * t + c2 * s5) * t + c1 * s3) * t + c0
    w = w * (c / b)
    u = d * lax.log1p(a / b)
    v = a * (lax.log(b) - 1.0)
    return jnp.where(u <= v, (w - v) - u, (w - u) - v)


def betaln(a, b):
    """log |B(a, b)|, accurate for large arguments (Stirling's series past b >= 8, as JAX)."""
    a, b = promote_args_inexact("betaln", a, b)
    a, b = jnp.minimum(a, b), jnp.maximum(a, b)
    small_b = lax.lgamma(a) + (lax.lgamma(b) - lax.lgamma(a + b))
    large_b = lax.lgamma(a) + _algdiv(a, b)
    return jnp.where(b < 8, small_b, large_b)


def beta(a, b):
    """B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b)."""
    a, b = promote_args_inexact("beta", a, b)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * lax.exp(betaln(a, b))


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b) (differentiable in x only, as in JAX)."""
    a, b, x = promote_args_inexact("betainc", a, b, x)
    return lax.betainc(a, b, x)


# ---- zeta -----------------------------------------------------------------------------------------

def _check_q(q):
    if q is None:
        raise NotImplementedError("Riemann zeta function not implemented; pass q != None to compute the Hurwitz "
                                  "Zeta function.")


def _zeta_fun(x, q=None):
    _check_q(q)
    x, q = promote_args_inexact("zeta", x, q)
    return lax.zeta(x, q)


zeta = custom_jvp(_zeta_fun)
zeta.__doc__ = """The Hurwitz zeta function sum_k (k + q)^-x (q is required: no Riemann zeta, as in JAX).

Derivatives are those of a truncated series (Johansson's formula 5), as JAX computes them."""

# (2k)! / B_2k for k = 1..16 (B the Bernoulli numbers).
_BERNOULLI_COEFS = np.array([
    12, -720, 30240, -1209600, 47900160, -1307674368000 / 691, 74724249600, -10670622842880000 / 3617,
    5109094217170944000 / 43867, -802857662698291200000 / 174611, 14101100039391805440000 / 77683,
    -1693824136731743669452800000 / 236364091, 186134520519971831808000000 / 657931,
    -37893265687455865519472640000000 / 3392780147, 759790291646040068357842010112000000 / 1723168255201,
    -134196726836183700385281186201600000000 / 7709321041217])


def _zeta_series_expansion(x, q=None):
    """zeta by N terms plus Euler-Maclaurin's tail with M Bernoulli terms (Johansson 2015, eq. 5):
    smooth in both arguments, so that its JVP is zeta's derivative."""
    _check_q(q)
    s, a = promote_args_inexact("zeta", x, q)
    dtype = a.aval.dtype.type
    s_, a_ = jnp.expand_dims(s, -1), jnp.expand_dims(a, -1)
    N = M = dtype(8) if a.aval.dtype == np.float32 else dtype(16)  # noqa: N806 - the paper's names
    k = jnp.expand_dims(np.arange(N, dtype=N.dtype), tuple(range(a.ndim)))
    S = jnp.sum((a_ + k) ** -s_, -1)  # noqa: N806
    I = lax.div((a + N) ** (dtype(1) - s), s - dtype(1))  # noqa: E741,N806
    T0 = (a + N) ** -s  # noqa: N806
    m = jnp.expand_dims(np.arange(2 * M, dtype=M.dtype), tuple(range(s.ndim)))
    s_over_a = (s_ + m) / (a_ + N)
    T1 = jnp.cumprod(s_over_a, -1)[..., ::2]  # noqa: N806
    T1 = jnp.clip(T1, max=dtypes.finfo(dtype).max)  # noqa: N806
    coefs = np.expand_dims(np.array(_BERNOULLI_COEFS[:T1.shape[-1]], dtype=dtype), tuple(range(a.ndim)))
    T1 = T1 / coefs  # noqa: N806
    T = T0 * (dtype(0.5) + T1.sum(-1))  # noqa: N806
    return S + I + T


@zeta.defjvp
def _zeta_jvp(primals, tangents):
    return jvp(_zeta_series_expansion, primals, tangents)


# ---- Bessel functions ---------------------------------------------------------------------------

def i0e(x):
    """exp(-|x|) I0(x)."""
    (x,) = promote_args_inexact("i0e", x)
    return lax.bessel_i0e(x)


def i0(x):
    """I0(x), the modified Bessel function of order 0."""
    (x,) = promote_args_inexact("i0", x)
    return lax.mul(lax.exp(lax.abs(x)), lax.bessel_i0e(x))


def i1e(x):
    """exp(-|x|) I1(x)."""
    (x,) = promote_args_inexact("i1e", x)
    return lax.bessel_i1e(x)


def i1(x):
    """I1(x), the modified Bessel function of order 1."""
    (x,) = promote_args_inexact("i1", x)
    return lax.mul(lax.exp(lax.abs(x)), lax.bessel_i1e(x))


# ---- logit, expit, xlogy and the entropies ------------------------------------------------------

def _logit(x):
    (x,) = promote_args_inexact("logit", x)
    return lax.log(lax.div(x, lax.sub(_c(x, 1), x)))


logit = custom_jvp(_logit)
logit.__doc__ = "log(p / (1 - p)), with the derivative 1 / (p (1 - p))."
logit.defjvps(lambda g, ans, x: lax.div(g, lax.mul(x, lax.sub(_c(x, 1), x))))


def expit(x):
    """The logistic sigmoid 1 / (1 + exp(-x))."""
    (x,) = promote_args_inexact("expit", x)
    return lax.logistic(x)


def _xlogy(x, y):
    # NaN in y propagates even where x == 0, as in SciPy.
    x, y = promote_args_inexact("xlogy", x, y)
    return jnp.where((x != 0.0) | jnp.isnan(y), lax.mul(x, lax.log(y)), jnp.zeros_like(x))


xlogy = custom_jvp(_xlogy)
xlogy.__doc__ = "x * log(y), 0 where x == 0 (NaN y stays NaN), with the derivatives log(y) and x / y."


@xlogy.defjvp
def _xlogy_jvp(primals, tangents):
    (x, y), (x_dot, y_dot) = primals, tangents
    result = xlogy(x, y)
    return result, (x_dot * lax.log(y) + y_dot * x / y).astype(result.dtype)


def _xlog1py(x, y):
    x, y = promote_args_inexact("xlog1py", x, y)
    return jnp.where((x != 0.0) | jnp.isnan(y), lax.mul(x, lax.log1p(y)), jnp.zeros_like(x))


xlog1py = custom_jvp(_xlog1py)
xlog1py.__doc__ = "x * log1p(y), 0 where x == 0 (NaN y stays NaN), with the derivatives log1p(y) and x / (1 + y)."


@xlog1py.defjvp
def _xlog1py_jvp(primals, tangents):
    (x, y), (x_dot, y_dot) = primals, tangents
    result = xlog1py(x, y)
    return result, (x_dot * lax.log1p(y) + y_dot * x / (1 + y)).astype(result.dtype)


_xlogx = custom_jvp(lambda x: xlogy(x, x))


@_xlogx.defjvp
def _xlogx_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return _xlogx(x), x_dot * (lax.log(x) + 1)


def entr(x):
    """-x log(x) for x > 0, 0 at 0, -inf for x < 0."""
    (x,) = promote_args_inexact("entr", x)
    return lax.select(lax.lt(x, _c(x, 0)), jnp.full_like(x, -np.inf), lax.neg(_xlogx(x)))


def rel_entr(p, q):
    """p log(p / q) for p, q > 0; 0 for p == 0, q >= 0; inf otherwise."""
    p, q = promote_args_inexact("rel_entr", p, q)
    zero = _c(p, 0.0)
    both_gt_zero = lax.bitwise_and(lax.gt(p, zero), lax.gt(q, zero))
    one_zero = lax.bitwise_and(lax.eq(p, zero), lax.ge(q, zero))
    safe_p = jnp.where(both_gt_zero, p, 1)
    safe_q = jnp.where(both_gt_zero, q, 1)
    log_val = lax.sub(_xlogx(safe_p), xlogy(safe_p, safe_q))
    return jnp.where(both_gt_zero, log_val, jnp.where(one_zero, zero, np.inf))


def kl_div(p, q):
    """rel_entr(p, q) - p + q."""
    p, q = promote_args_inexact("kl_div", p, q)
    return rel_entr(p, q) - p + q


# ---- softmax and logsumexp -----------------------------------------------------------------------

logsumexp = normalize.logsumexp


def softmax(x, /, *, axis=None):
    """exp(x) / sum(exp(x)) over `axis` (all axes by default, as SciPy)."""
    return normalize.softmax(x, axis=axis)


def log_softmax(x, /, *, axis=None):
    """x - logsumexp(x) over `axis` (all axes by default, as SciPy)."""
    return normalize.log_softmax(x, axis=axis)
