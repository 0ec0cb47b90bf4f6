"""The normal distribution N(loc, scale^2) truncated to [a, b] (a, b in standard deviations from loc)."""
import numpy as np

from xjax._src import lax
from xjax._src.nn.normalize import logsumexp
from xjax._src.numpy.util import promote_args_inexact
from xjax._src.scipy import special_normal
from xjax._src.scipy.stats import norm
import xjax.numpy as jnp


def _log_diff(x, y):
    """log(exp(x) - exp(y)) for x >= y."""
    return logsumexp(jnp.stack([x, y]), b=jnp.stack([jnp.ones_like(x), -jnp.ones_like(y)]), axis=0)


def _log_gauss_mass(a, b):
    """log P(a <= Z <= b) for a standard normal Z: from the tail both bounds lie in (reflected to
    the left tail when both are positive), or log1p of the two tails when [a, b] straddles 0."""
    a, b = jnp.broadcast_arrays(a, b)
    left, right = b <= 0, a > 0
    central = ~(left | right)
    a_tail = jnp.where(right, -b, a)
    b_tail = jnp.where(right, -a, b)
    tail = _log_diff(special_normal.log_ndtr(b_tail), special_normal.log_ndtr(a_tail))
    middle = jnp.log1p(-special_normal.ndtr(a) - special_normal.ndtr(-b))
    return jnp.where(central, middle, tail)


def logpdf(x, a, b, loc=0, scale=1):
    """The normal log density less log of the mass in [a, b]; -inf outside, NaN where a >= b."""
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logpdf", x, a, b, loc, scale)
    value = lax.sub(norm.logpdf(x, loc, scale), _log_gauss_mass(a, b))
    z = lax.div(lax.sub(x, loc), scale)
    value = jnp.where((z < a) | (z > b), -np.inf, value)
    return jnp.where(a >= b, np.nan, value)


def pdf(x, a, b, loc=0, scale=1):
    """The density."""
    return lax.exp(logpdf(x, a, b, loc, scale))


def logcdf(x, a, b, loc=0, scale=1):
    """log P(X <= x): the mass in [a, z] over that in [a, b], from the other side near 1."""
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logcdf", x, a, b, loc, scale)
    x, a, b = jnp.broadcast_arrays(x, a, b)
    z = lax.div(lax.sub(x, loc), scale)
    total = _log_gauss_mass(a, b)
    log_cdf = _log_gauss_mass(a, z) - total
    log_sf = _log_gauss_mass(z, b) - total
    out = jnp.select([z >= b, z <= a, log_cdf > -0.1, z > a],
                     [0, -np.inf, jnp.log1p(-jnp.exp(log_sf)), log_cdf])
    return jnp.where(a >= b, np.nan, out)


def cdf(x, a, b, loc=0, scale=1):
    """P(X <= x)."""
    return lax.exp(logcdf(x, a, b, loc, scale))


def logsf(x, a, b, loc=0, scale=1):
    """log P(X > x), the cdf of the reflected distribution."""
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logsf", x, a, b, loc, scale)
    return logcdf(-x, -b, -a, -loc, scale)


def sf(x, a, b, loc=0, scale=1):
    """P(X > x)."""
    return lax.exp(logsf(x, a, b, loc, scale))
