"""The logistic distribution with location loc and scale `scale`."""
from xjax._src import lax
from xjax._src.numpy.util import promote_args_inexact
from xjax._src.scipy.special import expit, logit
from xjax._src.scipy.stats._util import const
import xjax.numpy as jnp


def logpdf(x, loc=0, scale=1):
    """-2 logaddexp(y / 2, -y / 2) - log(scale), y = (x - loc) / scale."""
    x, loc, scale = promote_args_inexact("logistic.logpdf", x, loc, scale)
    x = lax.div(lax.sub(x, loc), scale)
    two = const(x, 2)
    half_x = lax.div(x, two)
    return lax.sub(lax.mul(lax.neg(two), jnp.logaddexp(half_x, lax.neg(half_x))), lax.log(scale))


def pdf(x, loc=0, scale=1):
    """The density exp(logpdf)."""
    return lax.exp(logpdf(x, loc, scale))


def ppf(x, loc=0, scale=1):
    """loc + scale * logit(q)."""
    x, loc, scale = promote_args_inexact("logistic.ppf", x, loc, scale)
    return lax.add(lax.mul(logit(x), scale), loc)


def sf(x, loc=0, scale=1):
    """expit(-(x - loc) / scale)."""
    x, loc, scale = promote_args_inexact("logistic.sf", x, loc, scale)
    return expit(lax.neg(lax.div(lax.sub(x, loc), scale)))


def isf(x, loc=0, scale=1):
    """loc - scale * logit(q)."""
    x, loc, scale = promote_args_inexact("logistic.isf", x, loc, scale)
    return lax.add(lax.mul(lax.neg(logit(x)), scale), loc)


def cdf(x, loc=0, scale=1):
    """expit((x - loc) / scale)."""
    x, loc, scale = promote_args_inexact("logistic.cdf", x, loc, scale)
    return expit(lax.div(lax.sub(x, loc), scale))
