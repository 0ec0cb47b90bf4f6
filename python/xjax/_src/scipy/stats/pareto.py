"""The Pareto distribution with shape b: density b / y^(b + 1) for y = (x - loc) / scale >= 1."""
import numpy as np

from xjax._src import lax
from xjax._src.numpy.util import promote_args_inexact
from xjax._src.scipy.stats._util import const
import xjax.numpy as jnp


def _scaled(name, x, b, loc, scale):
    x, b, loc, scale = promote_args_inexact(f"pareto.{name}", x, b, loc, scale)
    return x, b, scale, lax.div(lax.sub(x, loc), scale), lax.lt(x, lax.add(loc, scale))


def logpdf(x, b, loc=0, scale=1):
    """log density: log(b / scale) - (b + 1) log y; -inf below the support."""
    x, b, scale, y, outside = _scaled("logpdf", x, b, loc, scale)
    log_probs = lax.neg(lax.add(lax.log(lax.div(scale, b)), lax.mul(lax.add(b, const(x, 1)), lax.log(y))))
    return jnp.where(outside, -np.inf, log_probs)


def pdf(x, b, loc=0, scale=1):
    """The density."""
    return lax.exp(logpdf(x, b, loc, scale))


def cdf(x, b, loc=0, scale=1):
    """1 - y^-b on the support, 0 below."""
    x, b, _, y, outside = _scaled("cdf", x, b, loc, scale)
    return jnp.where(outside, const(x, 0), lax.sub(const(x, 1), lax.pow(y, lax.neg(b))))


def logcdf(x, b, loc=0, scale=1):
    """log(1 - y^-b)."""
    x, b, _, y, outside = _scaled("logcdf", x, b, loc, scale)
    return jnp.where(outside, -np.inf, lax.log1p(lax.neg(lax.pow(y, lax.neg(b)))))


def logsf(x, b, loc=0, scale=1):
    """-b log y on the support, 0 below."""
    x, b, _, y, outside = _scaled("logsf", x, b, loc, scale)
    return jnp.where(outside, const(x, 0), lax.neg(lax.mul(b, lax.log(y))))


def sf(x, b, loc=0, scale=1):
    """P(X > x)."""
    return lax.exp(logsf(x, b, loc, scale))


def ppf(q, b, loc=0, scale=1):
    """loc + scale (1 - q)^(-1/b); NaN outside [0, 1]."""
    q, b, loc, scale = promote_args_inexact("pareto.ppf", q, b, loc, scale)
    one = const(q, 1)
    value = lax.add(loc, lax.mul(scale, lax.pow(lax.sub(one, q), lax.neg(lax.div(one, b)))))
    return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), np.nan, value)
