"""The Poisson distribution with mean mu, shifted by loc."""
import numpy as np

from xjax._src import lax
from xjax._src.jit import jit
from xjax._src.numpy import util
from xjax._src.numpy.util import promote_args_inexact, promote_dtypes_inexact
from xjax._src.scipy.special import entr, gammaincc, gammaln, xlogy
from xjax._src.scipy.stats._util import const
import xjax.numpy as jnp


def logpmf(k, mu, loc=0):
    """log P(X = k); -inf below loc and at non-integer k."""
    k, mu, loc = promote_args_inexact("poisson.logpmf", k, mu, loc)
    x = lax.sub(k, loc)
    log_probs = xlogy(x, mu) - gammaln(x + 1) - mu
    return jnp.where(jnp.logical_or(lax.lt(x, const(k, 0)), lax.ne(jnp.round(k), k)), -np.inf, log_probs)


def pmf(k, mu, loc=0):
    """P(X = k)."""
    return jnp.exp(logpmf(k, mu, loc))


def cdf(k, mu, loc=0):
    """P(X <= k) = gammaincc(floor(k - loc) + 1, mu)."""
    k, mu, loc = promote_args_inexact("poisson.logpmf", k, mu, loc)  # JAX's name
    zero = const(k, 0)
    x = lax.sub(k, loc)
    return jnp.where(lax.lt(x, zero), zero, gammaincc(jnp.floor(1 + x), mu))


def _entropy_sum(mu, max_k, upper_bounds):
    k = jnp.arange(max_k, dtype=mu.dtype)[:, None]
    probs = pmf(k, mu, 0)
    probs = jnp.where(k < upper_bounds.astype(k.dtype)[None, :], probs, 0.0)
    return jnp.sum(entr(probs), axis=0)


@jit
def _entropy(mu, loc):
    mu, loc = promote_dtypes_inexact(mu, loc)
    shape = jnp.broadcast_shapes(mu.shape, loc.shape)
    m = jnp.ravel(mu)
    # Direct sums over the support where they are cheap, Stirling's expansion for large mu.
    small = _entropy_sum(m, 35, jnp.ceil(m + 20))
    medium = _entropy_sum(m, 250, jnp.ceil(m + 10 * jnp.sqrt(m) + 20))
    large = 0.5 * jnp.log(2 * np.pi * np.e * m) - 1.0 / (12 * m)
    result = jnp.where(m == 0, jnp.zeros_like(m), jnp.where(m < 10, small, jnp.where(m < 100, medium, large)))
    return jnp.broadcast_to(jnp.reshape(result, mu.shape), shape)


def entropy(mu, loc=0):
    """The entropy of Poisson(mu) (independent of loc)."""
    util.check_arraylike("poisson.entropy", mu, loc)
    return _entropy(mu, loc)
