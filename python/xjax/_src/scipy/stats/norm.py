"""The normal distribution N(loc, scale^2)."""
import numpy as np

from xjax._src import lax
from xjax._src.numpy import util
from xjax._src.numpy.util import promote_args_inexact
from xjax._src.scipy import special_normal
from xjax._src.scipy.stats._util import const
import xjax.numpy as jnp


def logpdf(x, loc=0, scale=1):
    """log density: -((x - loc) / scale)^2 / 2 - log(sqrt(2 pi) scale)."""
    x, loc, scale = promote_args_inexact("norm.logpdf", x, loc, scale)
    scale_sqrd = lax.square(scale)
    log_normalizer = lax.log(lax.mul(const(x, 2 * np.pi), scale_sqrd))
    quadratic = lax.div(lax.square(lax.sub(x, loc)), scale_sqrd)
    return lax.div(lax.add(log_normalizer, quadratic), const(x, -2))


def pdf(x, loc=0, scale=1):
    """The density exp(logpdf)."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """P(X <= x) = ndtr((x - loc) / scale)."""
    x, loc, scale = promote_args_inexact("norm.cdf", x, loc, scale)
    return special_normal.ndtr(lax.div(lax.sub(x, loc), scale))


def logcdf(x, loc=0, scale=1):
    """log P(X <= x), accurate in the left tail (log_ndtr)."""
    x, loc, scale = promote_args_inexact("norm.logcdf", x, loc, scale)
    return special_normal.log_ndtr(lax.div(lax.sub(x, loc), scale))


def ppf(q, loc=0, scale=1):
    """The quantile function: loc + scale * ndtri(q)."""
    return jnp.asarray(special_normal.ndtri(q) * scale + loc, float)


def logsf(x, loc=0, scale=1):
    """log P(X > x)."""
    x, loc, scale = promote_args_inexact("norm.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def sf(x, loc=0, scale=1):
    """P(X > x)."""
    x, loc, scale = promote_args_inexact("norm.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def isf(q, loc=0, scale=1):
    """The inverse of sf: ppf(1 - q)."""
    q = util.asarray(q)
    return ppf(lax.sub(const(q, 1), q), loc, scale)
