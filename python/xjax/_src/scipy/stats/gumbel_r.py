"""The right-skewed Gumbel distribution: cdf exp(-exp(-z)), z = (x - loc) / scale; NaN for scale <= 0."""
import numpy as np

from xjax._src import lax
from xjax._src.nn.activations_extra import log1mexp
from xjax._src.numpy.util import promote_args_inexact
from xjax._src.scipy.stats._util import const
import xjax.numpy as jnp


def _z(name, x, loc, scale):
    x, loc, scale = promote_args_inexact(f"gumbel_r.{name}", x, loc, scale)
    return x, lax.div(lax.sub(x, loc), scale), lax.gt(scale, const(scale, 0)), scale


def logpdf(x, loc=0, scale=1):
    """-log(scale) - (z + exp(-z))."""
    x, z, ok, scale = _z("logpdf", x, loc, scale)
    return jnp.where(ok, -lax.log(scale) - (z + lax.exp(-z)), np.nan)


def pdf(x, loc=0, scale=1):
    """The density."""
    return lax.exp(logpdf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    """-exp(-z)."""
    x, z, ok, _ = _z("logcdf", x, loc, scale)
    return jnp.where(ok, -lax.exp(-z), np.nan)


def cdf(x, loc=0, scale=1):
    """exp(-exp(-z))."""
    return lax.exp(logcdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    """1 - exp(-exp(-z))."""
    x, z, ok, _ = _z("sf", x, loc, scale)
    return jnp.where(ok, const(x, 1) - lax.exp(-lax.exp(-z)), np.nan)


def logsf(x, loc=0, scale=1):
    """log(1 - exp(-exp(-z))), accurate in both tails (log1mexp)."""
    x, z, ok, _ = _z("logsf", x, loc, scale)
    return jnp.where(ok, log1mexp(lax.exp(-z)), np.nan)


def ppf(p, loc=0, scale=1):
    """loc - scale log(-log p) for 0 < p < 1, NaN elsewhere."""
    p, loc, scale = promote_args_inexact("gumbel_r.ppf", p, loc, scale)
    ok = lax.gt(p, const(p, 0)) & lax.lt(p, const(p, 1))
    return jnp.where(ok, loc - scale * lax.log(-lax.log(p)), np.nan)
