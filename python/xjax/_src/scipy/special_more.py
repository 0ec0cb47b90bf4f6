"""More of jax.scipy.special for real arguments: erfcx, loggamma, poch, spence, bessel_jn and
hyp1f1, with the derivatives JAX gives them. Complex arguments raise NotImplementedError (xjax has
no complex special functions yet)."""
import operator

import numpy as np

from xjax._src import dtypes, lax
from xjax._src.custom_derivatives import custom_jvp
from xjax._src.numpy import util
from xjax._src.numpy.util import promote_args_inexact
from xjax._src.scipy.complex_gamma import complex_loggamma
from xjax._src.scipy.special import digamma, gamma
from xjax._src.scipy.special_misc import erfcx_complex
import xjax.numpy as jnp


def _c(x, value):
    return np.array(value, x.dtype)


def _check_real(name, *xs):
    for x in xs:
        if dtypes.issubdtype(x.dtype, np.complexfloating):
            raise NotImplementedError(f"jax.scipy.special.{name}: complex arguments are not supported in xjax")


# ---- erfcx ---------------------------------------------------------------------------------------

def _erfcx_asymptotic(x, nterms):
    """erfcx(x) ~ 1 / (sqrt(pi) x) sum_k (-1)^k (2k-1)!! / (2 x^2)^k, its first nterms terms."""
    coeffs = [1.0]
    for k in range(1, nterms):
        coeffs.append(-coeffs[-1] * (2 * k - 1) / 2)
    t = _c(x, 1) / lax.square(x)
    series = jnp.polyval(np.array(coeffs[::-1], x.dtype), t)
    return series / (x * _c(x, np.sqrt(np.pi)))


def _exact_square(x):
    """(s, e) with s + e = x^2 exactly (Dekker's product): exp(x^2) as exp(s) (1 + e) keeps the
    rounding of x^2, amplified x^2 times by exp, out of erfcx."""
    split = _c(x, 2.0 ** 27 + 1 if x.dtype == np.float64 else 2.0 ** 12 + 1)
    c = split * x
    hi = c - (c - x)
    lo = x - hi
    s = x * x
    return s, ((hi * hi - s) + 2 * hi * lo) + lo * lo


def _erfcx_values(x):
    # exp(x^2) erfc(x) until erfc(x) would leave the normal range (the core flushes subnormals),
    # then the asymptotic series, whose first omitted term there is below the dtype's epsilon.
    if x.dtype == np.float64:
        threshold, nterms = 26.0, 9
    else:
        threshold, nterms = 9.0, 5
    large = x > _c(x, threshold)
    safe = jnp.where(large, _c(x, 1), x)
    square, error = _exact_square(safe)
    error = jnp.where(jnp.isfinite(error), error, _c(x, 0))  # infinite x: no correction
    direct = lax.exp(square) * (1 + error) * lax.erfc(safe)
    return jnp.where(large, _erfcx_asymptotic(jnp.where(large, x, _c(x, threshold)), nterms), direct)


@custom_jvp
def _erfcx(x):
    if x.dtype in (np.float32, np.float64):
        return _erfcx_values(x)
    return _erfcx_values(x.astype(np.float32)).astype(x.dtype)


_erfcx.defjvps(lambda g, ans, x: g * (2 * x * ans - _c(x, 2 / np.sqrt(np.pi))))


def erfcx(x):
    """The scaled complementary error function exp(x^2) erfc(x), finite for large positive x."""
    (x,) = promote_args_inexact("erfcx", x)
    return erfcx_complex(x) if dtypes.is_complex(x.dtype) else _erfcx(x)


# ---- loggamma and poch ---------------------------------------------------------------------------

def loggamma(x):
    """The principal branch of log Gamma(x): gammaln(x) for x > 0, NaN for real x <= 0 (whose
    value would be complex); complex x on SciPy's branch."""
    (x,) = promote_args_inexact("loggamma", x)
    if dtypes.is_complex(x.dtype):
        return complex_loggamma(x)
    return jnp.where(x > 0, lax.lgamma(x), _c(x, np.nan))


@custom_jvp
def poch(z, m):
    """The Pochhammer symbol (z)_m = Gamma(z + m) / Gamma(z), 1 where m == 0."""
    z, m = promote_args_inexact("poch", z, m)
    _check_real("poch", z, m)
    return jnp.where(m == 0, _c(z, 1), gamma(z + m) / gamma(z))


poch.defjvps(lambda z_dot, ans, z, m: (digamma(z + m) - digamma(z)) * poch(z, m) * z_dot,
             lambda m_dot, ans, z, m: digamma(z + m) * poch(z, m) * m_dot)


# ---- spence --------------------------------------------------------------------------------------

# Cephes' rational approximation of spence on [0.5, 1.5] in w = x - 1 (spence.c).
_SPENCE_A = (4.65128586073990045278E-5, 7.31589045238094711071E-3, 1.33847639578309018650E-1,
             8.79691311754530315341E-1, 2.71149851196553469920E0, 4.25697156008121755724E0,
             3.29771340985225106936E0, 1.00000000000000000126E0)
_SPENCE_B = (6.90990488912553276999E-4, 2.54043763932544379113E-2, 2.82974860602568089943E-1,
             1.41172597751831069617E0, 3.63800533345137075418E0, 5.03278880143316990390E0,
             3.54771340985225096217E0, 9.99999999999999998740E-1)


def _spence_positive(x):
    """spence(x) for x > 0, x != 1: the reflections 1/x (x > 2 or 1.5 < x) and 1 - x (x < 0.5)
    bring the argument to the approximation's interval."""
    inverted = x > 2
    x = jnp.where(inverted, 1 / x, x)
    above = x > 1.5
    below = x < 0.5
    inverted = inverted | above
    w = jnp.where(above, 1 / x - 1, jnp.where(below, -x, x - 1))
    y = -w * jnp.polyval(np.array(_SPENCE_A, x.dtype), w) / jnp.polyval(np.array(_SPENCE_B, x.dtype), w)
    xb = jnp.where(below, x, _c(x, 0.25))  # log1p(-x) only where x < 0.5 (NaN-free gradients)
    y = jnp.where(below, _c(x, np.pi ** 2 / 6) - jnp.log(xb) * jnp.log1p(-xb) - y, y)
    return jnp.where(inverted, -0.5 * jnp.square(jnp.log(x)) - y, y)


def spence(x):
    """Spence's function (the dilogarithm) int_1^x log(t) / (1 - t) dt for x >= 0; NaN for x < 0
    (float32 and float64 only, as JAX)."""
    x = util.asarray(x)
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={x.dtype} is not supported, see docstring for supported types.")
    safe = jnp.where((x > 0) & (x != 1), x, _c(x, 2))
    out = _spence_positive(safe)
    out = jnp.where(x == 1, _c(x, 0), jnp.where(x == 0, _c(x, np.pi ** 2 / 6), out))
    return jnp.where(x < 0, _c(x, np.nan), out)


# ---- bessel_jn -----------------------------------------------------------------------------------

def bessel_jn(z, *, v, n_iter=50):
    """J_0(z), ..., J_v(z) (shape (v + 1, *z.shape)) for real z, by Miller's backward recurrence
    from order n_iter, normalised by J_0 + 2 sum_k J_2k = 1 (Zhang and Jin). n_iter must grow with
    |z| (about |z| + 20 for float64 accuracy)."""
    z = util.asarray(z)
    (z,) = util.promote_dtypes_inexact(z)
    if dtypes.issubdtype(z.dtype, np.complexfloating):
        raise ValueError("complex input not supported.")
    v = operator.index(util.concrete_value(v, "Argument v of bessel_jn.") if util.is_array(v) else v)
    n_iter = int(util.concrete_value(n_iter, "Argument n_iter of bessel_jn.") if util.is_array(n_iter) else n_iter)
    return _bessel_jn(z, v, n_iter)


def _bessel_jn(z, v, n_iter):
    def step(carry, k):
        f0, f1, norm = carry  # f1 ~ J_{k+1}, f0 ~ J_{k+2}, unnormalised
        f = 2 * (k + 1) * f1 / z - f0
        norm = jnp.where(jnp.remainder(k, 2) == 0, norm + 2 * f, norm)
        return (f1, f, norm), f

    init = (jnp.zeros_like(z), jnp.full_like(z, 1e-16), jnp.zeros_like(z))
    (_, _, norm), values = lax.scan(step, init, lax.iota(z.dtype, n_iter + 1), reverse=True)
    # values[k] ~ J_k; norm counted J_0 twice.
    return values[:v + 1] / (norm - values[0])


# ---- hyp1f1 --------------------------------------------------------------------------------------

_HYP1F1_MAX_TERMS = 250


def _sum_until_small(first, ratio, active, x):
    """1 + sum_k t_k with t_1 = first and t_{k+1} = t_k ratio(k), per element until a term falls
    below epsilon times the sum (or 250 terms), as JAX's loops stop."""
    eps = _c(x, dtypes.finfo(x.dtype).eps)

    def cond(state):
        k, _, _, running = state
        return (k < _HYP1F1_MAX_TERMS) & jnp.any(running)

    def body(state):
        k, total, term, running = state
        total = jnp.where(running, total + term, total)
        term = jnp.where(running, term * ratio(k.astype(x.dtype)), term)
        running = running & (jnp.abs(term) / jnp.abs(total) > eps)
        return k + 1, total, term, running

    state = (np.int32(1), jnp.ones_like(x), first, active & (jnp.abs(first) > eps))
    return lax.while_loop(cond, body, state)[1]


def _hyp1f1_values(a, b, x):
    near = jnp.abs(x) < 100
    # Taylor series (Pearson, Olver and Porter 2014, eq. 3.2) for |x| < 100.
    xs = jnp.where(near, x, _c(x, 0))
    series = _sum_until_small(a / b * xs, lambda k: (a + k) / (b + k) * xs / (k + 1), near, x)
    # The asymptotic expansion for large positive x (their eq. 3.8, real case).
    xl = jnp.where(near, _c(x, 100), x)
    asym_sum = _sum_until_small((b - a) * (1 - a) / xl, lambda k: (b - a + k) * (1 - a + k) / (k + 1) / xl,
                                ~near, x)
    asymptotic = gamma(b) / gamma(a) * jnp.exp(xl) * xl ** (a - b) * asym_sum
    out = jnp.where(near, series, asymptotic)
    out = jnp.where((b == 0) & (a != 0), _c(x, np.inf), out)
    out = jnp.where((a == b) & (a != 0), jnp.exp(x), out)
    return jnp.where(a == 0, _c(x, 1), out)


def _hyp1f1_parameter_derivative(a, b, x, digamma_weight):
    """sum_k t_k w_k, t_k the Taylor terms of hyp1f1 and w_k = digamma_weight(k) (the derivatives
    in a and b, Wolfram 07.20.20.0001/0002); while the terms matter, as JAX's loops."""
    eps = _c(x, dtypes.finfo(x.dtype).eps)

    def cond(state):
        k, _, _, running = state
        return (k < _HYP1F1_MAX_TERMS) & jnp.any(running)

    def body(state):
        k, total, term, running = state
        kf = k.astype(x.dtype)
        total = jnp.where(running, total + term * digamma_weight(kf), total)
        term = jnp.where(running, term * (a + kf) / (b + kf) * x / (kf + 1), term)
        running = running & (jnp.abs(term) / jnp.abs(total) > eps)
        return k + 1, total, term, running

    state = (np.int32(1), jnp.zeros_like(x), a / b * x, jnp.ones_like(x, dtype=bool))
    return lax.while_loop(cond, body, state)[1]


@custom_jvp
def _hyp1f1(a, b, x):
    return _hyp1f1_values(a, b, x)


_hyp1f1.defjvps(
    lambda a_dot, ans, a, b, x: _hyp1f1_parameter_derivative(a, b, x, lambda k: digamma(a + k) - digamma(a)) * a_dot,
    lambda b_dot, ans, a, b, x: _hyp1f1_parameter_derivative(a, b, x, lambda k: digamma(b) - digamma(b + k)) * b_dot,
    lambda x_dot, ans, a, b, x: a / b * _hyp1f1(a + 1, b + 1, x) * x_dot)


def hyp1f1(a, b, x):
    """Kummer's confluent hypergeometric function 1F1(a; b; x) = sum_k (a)_k / (b)_k x^k / k! for
    real arguments: the Taylor series for |x| < 100, the asymptotic expansion beyond (positive x),
    1 where a == 0 (also a == b == 0, unlike SciPy), exp(x) where a == b, inf where b == 0."""
    a, b, x = promote_args_inexact("hyp1f1", a, b, x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("hyp1f1 does not support complex-valued inputs.")
    a, b, x = jnp.broadcast_arrays(a, b, x)
    return _hyp1f1(a, b, x)
