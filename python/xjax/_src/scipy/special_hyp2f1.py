"""jax.scipy.special.hyp2f1, the Gauss hypergeometric function 2F1(a, b; c; x) for real arguments, by JAX's
algorithm (Pearson, Olver and Porter 2014): the Taylor series, terminated where a or b is a non-positive
integer, Euler's transform where c - a - b <= -1, the digamma transform (AMS55 15.3.10-12) for x > 0.9
when c - a - b is an integer, closed forms at x == 1 and for b == c or a == c, inf for x > 1 and at
non-positive integer c. Each element is computed by scalar loops under jnp.vectorize, as JAX's is, so
elements stop where their own series converge. The derivatives are JAX's series in a, b, c and
a b / c 2F1(a+1, b+1; c+1; x) in x."""
import numpy as np

from xjax._src import dtypes, lax
from xjax._src.custom_derivatives import custom_jvp
from xjax._src.jit import jit
from xjax._src.numpy.util import promote_args_inexact
from xjax._src.numpy.vectorize import vectorize
from xjax._src.scipy.special import digamma, gamma
import xjax.numpy as jnp

_MAX_TERMS = 250


def _c(x, value):
    return np.array(value, x.dtype)


def _terminal(a, b, c, x):
    """The series when a or b is a non-positive integer: it ends after |a| terms. Of the two, the one
    used for the count is the more negative integer, unless c is a non-positive integer above it."""
    eps = _c(x, dtypes.finfo(x.dtype).eps * 50)
    swap = (b < a) & (jnp.abs(b - jnp.round(b)) < eps) & ~((c % 1 == 0) & (c <= 0) & (c > b))
    a, b = jnp.where(swap, b, a), jnp.where(swap, a, b)
    a = jnp.abs(a)

    def body(i, state):
        total, term = state
        term = term * (-(a - i + 1) / (c + i - 1) * (b + i - 1) / i * x)
        return total + term, term

    return lax.fori_loop(_c(a, 1), a + 1, body, (_c(x, 1), _c(x, 1)))[0]


def _series(a, b, c, x):
    """sum_k (a)_k (b)_k / (c)_k x^k / k! until a term falls below epsilon times the sum (or 250 terms)."""
    rtol = _c(x, dtypes.finfo(x.dtype).eps)

    def cond(state):
        total, k, term = state
        return (k < _MAX_TERMS) & (lax.abs(term) > rtol * lax.abs(total))

    def body(state):
        total, k, term = state
        return total + term, k + 1, term * ((a + k - 1) * (b + k - 1) / (c + k - 1) / k * x)

    return lax.while_loop(cond, body, (_c(x, 0), _c(x, 1), _c(x, 1)))[0]


def _digamma_transform(a, b, c, x):
    """2F1 near x = 1 when d = c - a - b is an integer (AMS55 15.3.10-12): a series in s = 1 - x with
    digamma weights, plus a finite sum of |d| - 1 terms for d != 0."""
    rtol = _c(x, dtypes.finfo(x.dtype).eps)
    zero = _c(x, 0)
    d = c - a - b
    s = 1 - x
    rd = jnp.round(d)
    e = jnp.where(rd >= 0, d, -d)
    d1, d2 = jnp.where(rd >= 0, d, zero), jnp.where(rd >= 0, zero, d)
    ard = jnp.where(rd >= 0, rd, -rd).astype(np.int32)
    log_s = jnp.log(s)
    y = (digamma(_c(x, 1)) + digamma(1 + e) - digamma(a + d1) - digamma(b + d1) - log_s) / gamma(e + 1)
    p = (a + d1) * (b + d1) * s / gamma(e + 2)

    def cond(state):
        p, q, t, y = state
        return (t < _MAX_TERMS) & (jnp.abs(q) >= rtol * jnp.abs(y))

    def body(state):
        p, q, t, y = state
        r = digamma(1 + t) + digamma(1 + t + e) - digamma(a + t + d1) - digamma(b + t + d1) - log_s
        q = p * r
        p = p * (s * (a + t + d1) / (t + 1)) * ((b + t + d1) / (t + 1 + e))
        return p, q, t + 1, y + q

    _, _, _, y = lax.while_loop(cond, body, (p, y, _c(x, 1), y))

    def finite_sum(i, state):
        p, t, total = state
        p = p * s * (a + t + d2) * (b + t + d2) / (1 - e + t)
        t = t + 1
        p = p / t
        return p, t, total + p

    y1 = lax.fori_loop(np.int32(1), ard, finite_sum, (_c(x, 1), zero, _c(x, 1)))[2]
    gamma_c = gamma(c)
    y1 = y1 * gamma(e) * gamma_c / (gamma(a + d1) * gamma(b + d1))
    y_scaled = y * gamma_c / (gamma(a + d2) * gamma(b + d2))
    y_scaled = jnp.where((ard & 1) != 0, -y_scaled, y_scaled)
    q = s ** rd
    integer_d = jnp.where(rd > 0, y_scaled * q + y1, y_scaled + y1 * q)
    return jnp.where(rd == 0, y * gamma_c / (gamma(a) * gamma(b)), integer_d)


def _terminal_or_series(a, b, c, x):
    eps = _c(x, dtypes.finfo(x.dtype).eps * 50)
    d = c - a - b
    a_terminates = (a <= 0) & (jnp.abs(a - jnp.round(a)) < eps)
    non_positive_integer = a_terminates | ((b <= 0) & (jnp.abs(b - jnp.round(b)) < eps))
    # 0: the series; 1: the digamma transform (x > 0.9, integer c - a - b); 2: the terminating series
    index = jnp.where((x > 0.9) & ~non_positive_integer, jnp.where(jnp.abs(d - jnp.round(d)) >= eps, 0, 1),
                      jnp.where(non_positive_integer, 2, 0))
    return lax.select_n(index.astype(np.int32), _series(a, b, c, x), _digamma_transform(a, b, c, x),
                        _terminal(a, b, c, x))


@jit
@vectorize
def _hyp2f1_values(a, b, c, x):
    eps = _c(x, dtypes.finfo(x.dtype).eps * 50)
    d = c - a - b
    s = 1 - x
    ca, cb = c - a, c - b
    euler = (d <= -1) & ~((jnp.abs(d - jnp.round(d)) >= eps) & (s < 0))
    # The first case that holds, in JAX's order: 0: 1; 1: inf; 2: Euler's transform; 3, 4: (1 - x)^-a,
    # (1 - x)^-b; 5: Gauss's sum at x = 1; 6 (otherwise): the series
    cases = [((x == 0) | (((a == 0) | (b == 0)) & (c != 0)), 0), ((c == 0) | ((c < 0) & (c % 1 == 0)), 1),
             (euler, 2), ((d <= 0) & (x == 1), 1), ((x < 1) & (b == c), 3), ((x < 1) & (a == c), 4), (x > 1, 1),
             (x == 1, 5)]
    index = jnp.select([cond for cond, _ in cases], [np.int32(i) for _, i in cases], default=np.int32(6))
    return lax.select_n(index.astype(np.int32), _c(x, 1), _c(x, np.inf), s ** d * _terminal_or_series(ca, cb, c, x),
                        s ** (-a), s ** (-b), gamma(c) * gamma(d) / (gamma(ca) * gamma(cb)),
                        _terminal_or_series(a, b, c, x))


def _parameter_series(weight):
    """sum_k t_k weight(a, b, c, k), t_k = (a)_k (b)_k / (c)_k x^k / k! from k = 1 (Wolfram 07.23.20.0001-3),
    until the terms fall below epsilon relative to the sum."""
    @jit
    @vectorize
    def derivative(a, b, c, x):
        precision = _c(x, dtypes.finfo(x.dtype).eps)

        def cond(state):
            total, k, term = state
            return (k < _MAX_TERMS) & (lax.abs(term) / lax.abs(total) > precision)

        def body(state):
            total, k, term = state
            total = total + term * weight(a, b, c, k)
            return total, k + 1, term * ((a + k) * (b + k) / (c + k) / (k + 1) * x)

        return lax.while_loop(cond, body, (_c(x, 0), _c(x, 1), a * b / c * x))[0]
    return derivative


_d_a = _parameter_series(lambda a, b, c, k: digamma(a + k) - digamma(a))
_d_b = _parameter_series(lambda a, b, c, k: digamma(b + k) - digamma(b))
_d_c = _parameter_series(lambda a, b, c, k: digamma(c) - digamma(c + k))


@custom_jvp
def _hyp2f1(a, b, c, x):
    return _hyp2f1_values(a, b, c, x)


_hyp2f1.defjvps(lambda a_dot, _, a, b, c, x: _d_a(a, b, c, x) * a_dot,
                lambda b_dot, _, a, b, c, x: _d_b(a, b, c, x) * b_dot,
                lambda c_dot, _, a, b, c, x: _d_c(a, b, c, x) * c_dot,
                lambda x_dot, _, a, b, c, x: a * b / c * _hyp2f1(a + 1, b + 1, c + 1, x) * x_dot)


def hyp2f1(a, b, c, x):
    """2F1(a, b; c; x) = sum_k (a)_k (b)_k / (c)_k x^k / k! for real arguments (JAX's domain: x > 1 gives inf;
    large values may lose accuracy in float32, as in JAX)."""
    a, b, c, x = promote_args_inexact("hyp2f1", a, b, c, x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise NotImplementedError("jax.scipy.special.hyp2f1: complex arguments are not supported")
    return _hyp2f1(a, b, c, x)
