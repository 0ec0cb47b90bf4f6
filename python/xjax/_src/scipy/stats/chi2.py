"""The chi-squared distribution with df degrees of freedom, location loc and scale `scale`."""
import numpy as np

from xjax._src import lax
from xjax._src.numpy.util import promote_args_inexact
from xjax._src.scipy.special import gammainc, gammaincc
from xjax._src.scipy.stats._util import const
import xjax.numpy as jnp


def logpdf(x, df, loc=0, scale=1):
    """log density; -inf below loc."""
    x, df, loc, scale = promote_args_inexact("chi2.logpdf", x, df, loc, scale)
    one, two = const(x, 1), const(x, 2)
    y = lax.div(lax.sub(x, loc), scale)
    df_on_two = lax.div(df, two)
    kernel = lax.sub(lax.mul(lax.sub(df_on_two, one), lax.log(y)), lax.div(y, two))
    nrml_cnst = lax.neg(lax.add(lax.lgamma(df_on_two), lax.div(lax.mul(lax.log(two), df), two)))
    log_probs = lax.add(lax.sub(nrml_cnst, lax.log(scale)), kernel)
    return jnp.where(lax.lt(x, loc), -np.inf, log_probs)


def pdf(x, df, loc=0, scale=1):
    """The density exp(logpdf)."""
    return lax.exp(logpdf(x, df, loc, scale))


def _half_y(x, loc, scale):
    return lax.clamp(const(x, 0), lax.div(lax.sub(x, loc), lax.mul(scale, const(scale, 2))), const(x, np.inf))


def cdf(x, df, loc=0, scale=1):
    """P(X <= x) = gammainc(df / 2, y / 2)."""
    x, df, loc, scale = promote_args_inexact("chi2.cdf", x, df, loc, scale)
    return gammainc(lax.div(df, const(scale, 2)), _half_y(x, loc, scale))


def logcdf(x, df, loc=0, scale=1):
    """log cdf."""
    return lax.log(cdf(x, df, loc, scale))


def sf(x, df, loc=0, scale=1):
    """P(X > x) = gammaincc(df / 2, y / 2)."""
    x, df, loc, scale = promote_args_inexact("chi2.sf", x, df, loc, scale)
    return gammaincc(lax.div(df, const(scale, 2)), _half_y(x, loc, scale))


def logsf(x, df, loc=0, scale=1):
    """log sf."""
    return lax.log(sf(x, df, loc, scale))
