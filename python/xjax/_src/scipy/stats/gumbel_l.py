"""The left-skewed Gumbel distribution: cdf 1 - exp(-exp(z)), z = (x - loc) / scale; NaN for scale <= 0
(JAX's gumbel_l, its formulas)."""
import numpy as np

from xjax._src import lax
from xjax._src.numpy.util import promote_args_inexact
from xjax._src.scipy.stats._util import const
import xjax.numpy as jnp


def _z(name, x, loc, scale):
    x, loc, scale = promote_args_inexact(f"gumbel_l.{name}", x, loc, scale)
    return lax.div(lax.sub(x, loc), scale), lax.gt(scale, const(scale, 0)), scale


def logpdf(x, loc=0, scale=1):
    """-log(scale) + z - exp(z). (JAX writes -log(scale) as xlogy(-1, scale), the same values, whose
    derivative rule fails on the integer -1: JAX cannot differentiate its gumbel_l.logpdf; xjax can.)"""
    z, ok, scale = _z("logpdf", x, loc, scale)
    return jnp.where(ok, -lax.log(scale) + (z - lax.exp(z)), np.nan)


def pdf(x, loc=0, scale=1):
    """The density."""
    return lax.exp(logpdf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    """log(-expm1(-exp(z))), stable where log1p is not."""
    z, ok, _ = _z("logcdf", x, loc, scale)
    return jnp.where(ok, lax.log(-lax.expm1(-lax.exp(z))), np.nan)


def cdf(x, loc=0, scale=1):
    """1 - exp(-exp(z))."""
    return lax.exp(logcdf(x, loc, scale))


def logsf(x, loc=0, scale=1):
    """-exp(z)."""
    z, ok, _ = _z("logsf", x, loc, scale)
    return jnp.where(ok, -lax.exp(z), np.nan)


def sf(x, loc=0, scale=1):
    """exp(-exp(z))."""
    return jnp.exp(logsf(x, loc, scale))


def ppf(p, loc=0, scale=1):
    """loc + scale log(-log(1 - p)) for 0 < p < 1, NaN elsewhere (JAX's -log1p(-p) is xlog1py(-1, -p), as in logpdf)."""
    p, loc, scale = promote_args_inexact("gumbel_l.ppf", p, loc, scale)
    ok = lax.gt(p, const(p, 0)) & lax.lt(p, const(p, 1))
    return jnp.where(ok, loc + scale * lax.log(-lax.log1p(-p)), np.nan)
