"""jax.scipy.special's standard normal functions: ndtr (the CDF), ndtri (its inverse, Cephes'
rational approximations) and log_ndtr (log CDF with an asymptotic series in the far left tail),
as JAX computes them. float32 and float64 only, as in JAX.
"""
import numpy as np

from xjax._src import lax
from xjax._src.custom_derivatives import custom_jvp
from xjax._src.numpy import util
import xjax.numpy as jnp


def _float_operand(name, x, what="x"):
    x = util.asarray(x)
    dtype = x.aval.dtype
    if dtype not in (np.float32, np.float64):
        raise TypeError(f"{what}.dtype={dtype} is not supported, see docstring for supported types.")
    return x


def _horner(coeffs, x):
    """The polynomial with NumPy coefficients `coeffs` (highest degree first) at x."""
    out = x * 0
    for c in coeffs:
        out = out * x + c
    return out


def ndtr(x):
    """The standard normal CDF, (1 + erf(x / sqrt 2)) / 2 (erfc in the tails)."""
    x = _float_operand("ndtr", x)
    return _ndtr(x)


def _ndtr(x):
    dtype = x.aval.dtype.type
    half_sqrt_2 = dtype(0.5) * np.sqrt(2.0, dtype=dtype)
    w = x * half_sqrt_2
    z = lax.abs(w)
    y = lax.select(lax.lt(z, half_sqrt_2), dtype(1.0) + lax.erf(w),
                   lax.select(lax.gt(w, dtype(0.0)), dtype(2.0) - lax.erfc(z), lax.erfc(z)))
    return dtype(0.5) * y


# Cephes' rational approximations of ndtri: for |p - 1/2| <= 1/2 - exp(-2) (p0/q0), and in the
# tails in z = sqrt(-2 log p) for z < 8 (p1/q1) and z >= 8 (p2/q2).
_P0 = [-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
       1.39312609387279679503E1, -1.23916583867381258016E0]
_Q0 = [1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
       -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
       1.59056225126211695515E1, -1.18331621121330003142E0]
_P1 = [4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
       4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
       -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4]
_Q1 = [1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
       1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
       -3.80806407691578277194E-2, -9.33259480895457427372E-4]
_P2 = [3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
       1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
       3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9]
_Q2 = [1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
       2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
       2.89247864745380683936E-6, 6.79019408009981274425E-9]


def ndtri(p):
    """The inverse of the standard normal CDF: -inf at 0, inf at 1, NaN outside [0, 1]."""
    p = _float_operand("ndtri", p)
    return _ndtri(p)


def _ndtri(p):
    dtype = p.aval.dtype.type
    coeffs = [np.array(c, dtype) for c in (_P0, _Q0, _P1, _Q1, _P2, _Q2)]
    p0, q0, p1, q1, p2, q2 = coeffs
    maybe_complement_p = jnp.where(p > dtype(-np.expm1(-2.0)), dtype(1.0) - p, p)
    # 0 would give NaNs in the unused branches (and so in derivatives): any safe value will do.
    sanitized_mcp = jnp.where(maybe_complement_p == dtype(0.0), jnp.full(p.shape, dtype(0.5)), maybe_complement_p)
    # p > exp(-2): x / sqrt(2 pi) = w + w^3 P0(w^2) / Q0(w^2), w = p - 1/2.
    w = sanitized_mcp - dtype(0.5)
    ww = lax.square(w)
    x_for_big_p = w + w * ww * (_horner(p0, ww) / _horner(q0, ww))
    x_for_big_p *= -dtype(np.sqrt(2.0 * np.pi))
    # p <= exp(-2): x = z - log(z) / z - (1/z) P(1/z) / Q(1/z), z = sqrt(-2 log p).
    z = lax.sqrt(dtype(-2.0) * lax.log(sanitized_mcp))
    first_term = z - lax.log(z) / z
    second_term_small_p = _horner(p2, 1 / z) / _horner(q2, 1 / z) / z
    second_term_otherwise = _horner(p1, 1 / z) / _horner(q1, 1 / z) / z
    x_for_small_p = first_term - second_term_small_p
    x_otherwise = first_term - second_term_otherwise
    x = jnp.where(sanitized_mcp > dtype(np.exp(-2.0)), x_for_big_p,
                  jnp.where(z >= dtype(8.0), x_for_small_p, x_otherwise))
    x = jnp.where(p > dtype(1.0 - np.exp(-2.0)), x, -x)
    infinity = jnp.full(p.shape, dtype(np.inf))
    return jnp.where(p == dtype(0.0), -infinity, jnp.where(p == dtype(1.0), infinity, x))


# log_ndtr's segments: log(ndtr(x)) between them, -ndtr(-x) above, the asymptotic series below.
_LOGNDTR_LOWER = {np.dtype(np.float64): -20.0, np.dtype(np.float32): -10.0}
_LOGNDTR_UPPER = {np.dtype(np.float64): 8.0, np.dtype(np.float32): 5.0}


def _log_ndtr(x, series_order=3):
    if not isinstance(series_order, int):
        raise TypeError("series_order must be a Python integer.")
    if series_order < 0:
        raise ValueError("series_order must be non-negative.")
    if series_order > 30:
        raise ValueError("series_order must be <= 30.")
    x = util.asarray(x)
    dtype = x.aval.dtype
    if dtype not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={np.dtype(dtype)} is not supported.")
    lower = np.array(_LOGNDTR_LOWER[np.dtype(dtype)], dtype)
    upper = np.array(_LOGNDTR_UPPER[np.dtype(dtype)], dtype)
    # The max/min keep the unchosen branches finite (their NaN would reach the derivative).
    x_gt_upper = lax.gt(x, upper)
    ndtr_res = _ndtr(jnp.where(x_gt_upper, -x, lax.max(x, lower)))
    return jnp.where(x_gt_upper, -ndtr_res,
                     jnp.where(lax.gt(x, lower), lax.log(ndtr_res), _log_ndtr_lower(lax.min(x, lower), series_order)))


log_ndtr = custom_jvp(_log_ndtr, nondiff_argnums=(1,))
log_ndtr.__doc__ = """log of the standard normal CDF, accurate in both tails (series_order: terms of the
asymptotic series used below x = -20 in float64, -10 in float32)."""


@log_ndtr.defjvp
def _log_ndtr_jvp(series_order, primals, tangents):
    (x,), (t,) = primals, tangents
    ans = log_ndtr(x, series_order)
    return ans, lax.mul(t, lax.exp(lax.sub(_norm_logpdf(x), ans)))


def _log_ndtr_lower(x, series_order):
    """log ndtr(x) for x << -1: log(exp(-x^2/2) / (-x sqrt(2 pi))) + log(1 + sum)."""
    dtype = x.aval.dtype.type
    x_2 = lax.square(x)
    log_scale = -dtype(0.5) * x_2 - lax.log(-x) - dtype(0.5 * np.log(2.0 * np.pi))
    return log_scale + lax.log(_log_ndtr_asymptotic_series(x, series_order))


def _log_ndtr_asymptotic_series(x, series_order):
    """1 + sum_n (-1)^n (2n-1)!! / x^2n for n = 1..series_order."""
    dtype = x.aval.dtype.type
    if series_order <= 0:
        return np.array(1, dtype)
    x_2 = lax.square(x)
    even_sum = jnp.zeros_like(x)
    odd_sum = jnp.zeros_like(x)
    x_2n = x_2
    for n in range(1, series_order + 1):
        y = np.array(np.prod(np.arange(2 * n - 1, 1, -2)), dtype) / x_2n
        if n % 2:
            odd_sum += y
        else:
            even_sum += y
        x_2n *= x_2
    return dtype(1.0) + even_sum - odd_sum


def _norm_logpdf(x):
    dtype = x.aval.dtype
    return lax.sub(lax.mul(np.array(-0.5, dtype), lax.square(x)), np.array(np.log(np.sqrt(2 * np.pi)), dtype))
