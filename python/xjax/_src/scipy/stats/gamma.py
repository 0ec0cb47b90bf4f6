"""The gamma distribution Gamma(a) with location loc and scale `scale`."""
import numpy as np

from xjax._src import lax
from xjax._src.numpy.util import promote_args_inexact
from xjax._src.scipy.special import gammainc, gammaincc, gammaln, xlogy
from xjax._src.scipy.stats._util import const
import xjax.numpy as jnp


def logpdf(x, a, loc=0, scale=1):
    """log density; -inf below loc."""
    x, a, loc, scale = promote_args_inexact("gamma.logpdf", x, a, loc, scale)
    ok = lax.ge(x, loc)
    one = const(x, 1)
    y = jnp.where(ok, lax.div(lax.sub(x, loc), scale), one)
    log_linear_term = lax.sub(xlogy(lax.sub(a, one), y), y)
    shape_terms = lax.add(gammaln(a), lax.log(scale))
    return jnp.where(ok, lax.sub(log_linear_term, shape_terms), -np.inf)


def pdf(x, a, loc=0, scale=1):
    """The density exp(logpdf)."""
    return lax.exp(logpdf(x, a, loc, scale))


def cdf(x, a, loc=0, scale=1):
    """P(X <= x) = gammainc(a, (x - loc) / scale clipped to [0, inf])."""
    x, a, loc, scale = promote_args_inexact("gamma.cdf", x, a, loc, scale)
    return gammainc(a, lax.clamp(const(x, 0), lax.div(lax.sub(x, loc), scale), const(x, np.inf)))


def logcdf(x, a, loc=0, scale=1):
    """log cdf."""
    return lax.log(cdf(x, a, loc, scale))


def sf(x, a, loc=0, scale=1):
    """P(X > x) = gammaincc(a, (x - loc) / scale); 1 below loc."""
    x, a, loc, scale = promote_args_inexact("gamma.sf", x, a, loc, scale)
    y = lax.div(lax.sub(x, loc), scale)
    return jnp.where(lax.lt(y, const(y, 0)), 1, gammaincc(a, y))


def logsf(x, a, loc=0, scale=1):
    """log sf."""
    return lax.log(sf(x, a, loc, scale))
