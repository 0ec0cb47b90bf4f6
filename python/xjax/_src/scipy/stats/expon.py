"""The exponential distribution with location loc and scale `scale` (rate 1 / scale)."""
import numpy as np

from xjax._src import lax
from xjax._src.numpy.util import promote_args_inexact
import xjax.numpy as jnp


def logpdf(x, loc=0, scale=1):
    """-(x - loc) / scale - log(scale); -inf below loc."""
    x, loc, scale = promote_args_inexact("expon.logpdf", x, loc, scale)
    linear_term = lax.div(lax.sub(x, loc), scale)
    log_probs = lax.neg(lax.add(linear_term, lax.log(scale)))
    return jnp.where(lax.lt(x, loc), -np.inf, log_probs)


def pdf(x, loc=0, scale=1):
    """The density exp(logpdf)."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """1 - exp(-(x - loc) / scale), 0 below loc."""
    x, loc, scale = promote_args_inexact("expon.cdf", x, loc, scale)
    neg_scaled_x = lax.div(lax.sub(loc, x), scale)
    return jnp.where(lax.lt(x, loc), jnp.zeros_like(neg_scaled_x), lax.neg(lax.expm1(neg_scaled_x)))


def logcdf(x, loc=0, scale=1):
    """log1p(-sf)."""
    return lax.log1p(lax.neg(sf(x, loc, scale)))


def logsf(x, loc=0, scale=1):
    """-(x - loc) / scale, 0 below loc."""
    x, loc, scale = promote_args_inexact("expon.sf", x, loc, scale)  # JAX's name
    neg_scaled_x = lax.div(lax.sub(loc, x), scale)
    return jnp.where(lax.lt(x, loc), jnp.zeros_like(neg_scaled_x), neg_scaled_x)


def sf(x, loc=0, scale=1):
    """exp(logsf)."""
    return lax.exp(logsf(x, loc, scale))


def ppf(q, loc=0, scale=1):
    """loc - scale * log1p(-q) for q in [0, 1], NaN outside."""
    q, loc, scale = promote_args_inexact("expon.ppf", q, loc, scale)
    return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), np.nan, lax.sub(loc, lax.mul(scale, lax.log1p(lax.neg(q)))))
