"""The Cauchy distribution with location loc and scale `scale`."""
import numpy as np

from xjax._src import lax
from xjax._src.numpy.util import promote_args_inexact
from xjax._src.scipy.stats._util import const
import xjax.numpy as jnp


def logpdf(x, loc=0, scale=1):
    """-log(pi scale) - log1p(y^2), y = (x - loc) / scale."""
    x, loc, scale = promote_args_inexact("cauchy.logpdf", x, loc, scale)
    scaled_x = lax.div(lax.sub(x, loc), scale)
    normalize_term = lax.log(lax.mul(const(x, np.pi), scale))
    return lax.neg(lax.add(normalize_term, lax.log1p(lax.mul(scaled_x, scaled_x))))


def pdf(x, loc=0, scale=1):
    """The density exp(logpdf)."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """1/2 + atan((x - loc) / scale) / pi."""
    x, loc, scale = promote_args_inexact("cauchy.cdf", x, loc, scale)
    scaled_x = lax.div(lax.sub(x, loc), scale)
    return lax.add(const(x, 0.5), lax.mul(lax.div(const(x, 1.0), const(x, np.pi)), jnp.arctan(scaled_x)))


def logcdf(x, loc=0, scale=1):
    """log cdf."""
    return lax.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    """P(X > x) = cdf(-x, -loc, scale)."""
    x, loc, scale = promote_args_inexact("cauchy.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x, loc=0, scale=1):
    """log sf."""
    x, loc, scale = promote_args_inexact("cauchy.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def isf(q, loc=0, scale=1):
    """loc + scale * tan(pi/2 - pi q)."""
    q, loc, scale = promote_args_inexact("cauchy.isf", q, loc, scale)
    unscaled = lax.tan(lax.sub(const(q, np.pi / 2), lax.mul(const(q, np.pi), q)))
    return lax.add(lax.mul(unscaled, scale), loc)


def ppf(q, loc=0, scale=1):
    """loc + scale * tan(pi q - pi/2)."""
    q, loc, scale = promote_args_inexact("cauchy.ppf", q, loc, scale)
    unscaled = lax.tan(lax.sub(lax.mul(const(q, np.pi), q), const(q, np.pi / 2)))
    return lax.add(lax.mul(unscaled, scale), loc)
