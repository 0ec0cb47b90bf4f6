"""The exponential integrals: expi (Ei), exp1 (E1) and expn (E_n), for real arguments.

E_n(x), x > 1: the continued fraction of e^x E_n(x) (modified Lentz). x <= 1: the power series,
whose term k = n - 1 holds the logarithm and digamma(n). Ei(x), x > 0: the series
gamma + log x + sum x^k / (k k!) (all terms positive) up to 40, then the asymptotic series
e^x / x sum k! / x^k, whose smallest term there is below float64's epsilon. Ei(-x) = -E1(x).
The derivatives are exact: Ei' = e^x / x, E_n' = -E_{n-1}, as JAX defines them.
"""
import numpy as np

from xjax._src import dtypes, lax
from xjax._src.custom_derivatives import custom_jvp
from xjax._src.numpy.util import promote_args_inexact
import xjax.numpy as jnp

_CF_STEPS = 100  # the continued fraction's steps: converged to eps by ~60 at x = 1
_SERIES_TERMS = 30  # 1 / 30! is far below eps: the series for x <= 1
_EI_SERIES_TERMS = 160  # for x <= 40 the terms past k = 160 are below 1e-17 of the sum
_EI_SWITCH = 40.0
_EI_ASYMPTOTIC_TERMS = 40  # the smallest term of the asymptotic series at x = 40: 40! / 40^40 ~ 7e-17


def _c(x, value):
    return np.array(value, x.dtype)


def _check_real(name, x):
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise NotImplementedError(f"jax.scipy.special.{name}: complex arguments are not supported in xjax")


def _expn_continued_fraction(n, x):
    """E_n(x) for x > 1: e^-x / (x + n - 1 n / (x + n + 2 - 2 (n + 1) / (x + n + 4 - ...)))."""
    tiny = _c(x, 1e-30)  # stands in for a zero denominator (Lentz)
    b = x + n
    d = _c(x, 1) / b

    def step(i, state):
        b, c, d, h = state
        i = i.astype(x.dtype)
        an = -i * (n - 1 + i)
        b = b + 2
        d = an * d + b
        d = jnp.where(d == 0, tiny, d)
        c = b + an / c
        c = jnp.where(c == 0, tiny, c)
        d = _c(x, 1) / d
        return b, c, d, h * (c * d)

    state = (b, jnp.full_like(x, 1e30), d, d)
    _, _, _, h = lax.fori_loop(1, _CF_STEPS + 1, step, state)
    return h * jnp.exp(-x)


def _expn_series(n, x):
    """E_n(x) for 0 < x <= 1: (-x)^(n-1) / (n-1)! (psi(n) - log x) - sum_{k != n-1} (-x)^k / ((k - n + 1) k!)."""
    def term(k, state):
        total, power = state  # power = (-x)^k / k!
        kf = k.astype(x.dtype)
        denom = kf - n + 1
        total = total + jnp.where(denom == 0, _c(x, 0), power / jnp.where(denom == 0, _c(x, 1), denom))
        return total, power * (-x) / (kf + 1)

    total, _ = lax.fori_loop(0, _SERIES_TERMS, term, (jnp.zeros_like(x), jnp.ones_like(x)))
    log_part = (-x) ** (n - 1) / jnp.exp(lax.lgamma(n)) * (lax.digamma(n) - jnp.log(x))
    return log_part - total


def _expn_values(n, x):
    zero, one = _c(x, 0), _c(x, 1)
    safe_n = jnp.where(n >= 1, n, one)  # the series and the fraction only see n >= 1
    big = (x > one) & (x < _c(x, np.inf))
    cf = _expn_continued_fraction(safe_n, jnp.where(big, x, _c(x, 2)))
    series = _expn_series(safe_n, jnp.where(big | (x <= zero), _c(x, 0.5), x))
    out = jnp.where(big, cf, series)
    out = jnp.where(n == 0, jnp.exp(-x) / x, out)
    out = jnp.where(x == _c(x, np.inf), zero, out)
    out = jnp.where(x == zero, jnp.where(n < 2, _c(x, np.inf), one / jnp.where(n < 2, one, n - one)), out)
    return jnp.where((n < 0) | (x < zero) | jnp.isnan(x) | jnp.isnan(n), _c(x, np.nan), out)


@custom_jvp
def _expn(n, x):
    return _expn_values(n, x)


@_expn.defjvp
def _expn_jvp(primals, tangents):
    n, x = primals
    _, x_dot = tangents
    return _expn(n, x), -_expn(n - 1, x) * x_dot


def expn(n, x):
    """The generalised exponential integral E_n(x) = int_1^inf e^(-x t) / t^n dt (n a nonnegative
    integer, x >= 0; NaN otherwise). Differentiable in x: dE_n/dx = -E_{n-1}."""
    n, x = promote_args_inexact("expn", n, x)
    _check_real("expn", x)
    n, x = jnp.broadcast_arrays(n, x)
    return _expn(lax.stop_gradient(n), x)


def exp1(x):
    """E1(x) = int_x^inf e^-t / t dt for x >= 0 (NaN below 0, inf at 0)."""
    (x,) = promote_args_inexact("exp1", x)
    _check_real("exp1", x)
    return expn(jnp.ones_like(x), x)


def _ei_positive(x):
    """Ei(x) for x > 0 (x below the switch by the series, above by the asymptotic expansion)."""
    small = jnp.minimum(x, _c(x, _EI_SWITCH))

    def term(k, state):
        total, power = state  # power = x^k / k!
        kf = k.astype(x.dtype)
        power = power * small / kf
        return total + power / kf, power

    total, _ = lax.fori_loop(1, _EI_SERIES_TERMS + 1, term, (jnp.zeros_like(x), jnp.ones_like(x)))
    series = _c(x, np.euler_gamma) + jnp.log(small) + total

    large = jnp.maximum(x, _c(x, _EI_SWITCH))

    def asym(k, state):
        total, t = state  # t = k! / x^k
        t = t * k.astype(x.dtype) / large
        return total + t, t

    total, _ = lax.fori_loop(1, _EI_ASYMPTOTIC_TERMS + 1, asym, (jnp.ones_like(x), jnp.ones_like(x)))
    asymptotic = jnp.exp(large) / large * total
    return jnp.where(x <= _c(x, _EI_SWITCH), series, asymptotic)


@custom_jvp
def _expi(x):
    positive = _ei_positive(jnp.where((x > 0) & (x < _c(x, np.inf)), x, _c(x, 1)))
    negative = -_expn(jnp.ones_like(x), jnp.where(x < 0, -x, _c(x, 1)))
    out = jnp.where(x > 0, positive, negative)
    out = jnp.where(x == _c(x, np.inf), x, out)
    return jnp.where(x == 0, _c(x, -np.inf), jnp.where(jnp.isnan(x), x, out))


@_expi.defjvp
def _expi_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return _expi(x), jnp.exp(x) / x * x_dot


def expi(x):
    """The exponential integral Ei(x) = int_-inf^x e^t / t dt (principal value for x > 0)."""
    (x,) = promote_args_inexact("expi", x)
    _check_real("expi", x)
    return _expi(x)
