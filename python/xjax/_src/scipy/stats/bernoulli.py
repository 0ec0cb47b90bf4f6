"""The Bernoulli distribution with success probability p, shifted by loc."""
import numpy as np

from xjax._src import lax
from xjax._src.numpy.util import promote_args_inexact
from xjax._src.scipy.special import xlog1py, xlogy
from xjax._src.scipy.stats._util import const
import xjax.numpy as jnp


def logpmf(k, p, loc=0):
    """log P(X = k): log p at 1, log(1 - p) at 0, -inf outside [0, 1]."""
    k, p, loc = promote_args_inexact("bernoulli.logpmf", k, p, loc)
    zero, one = const(k, 0), const(k, 1)
    x = lax.sub(k, loc)
    log_probs = xlogy(x, p) + xlog1py(lax.sub(one, x), -p)
    return jnp.where(jnp.logical_or(lax.lt(x, zero), lax.gt(x, one)), -np.inf, log_probs)


def pmf(k, p, loc=0):
    """P(X = k)."""
    return jnp.exp(logpmf(k, p, loc))


def cdf(k, p):
    """P(X <= k); NaN for NaN operands or p outside [0, 1]."""
    k, p = promote_args_inexact("bernoulli.cdf", k, p)
    zero, one = const(k, 0), const(k, 1)
    conds = [jnp.isnan(k) | jnp.isnan(p) | (p < zero) | (p > one), lax.lt(k, zero),
             jnp.logical_and(lax.ge(k, zero), lax.lt(k, one)), lax.ge(k, one)]
    return jnp.select(conds, [jnp.nan, zero, one - p, one])


def ppf(q, p):
    """The smallest k with cdf(k) >= q: 0 for q <= 1 - p, else 1."""
    q, p = promote_args_inexact("bernoulli.ppf", q, p)
    zero, one = const(q, 0), const(q, 1)
    bad = jnp.isnan(q) | jnp.isnan(p) | (p < zero) | (p > one) | (q < zero) | (q > one)
    return jnp.where(bad, jnp.nan, jnp.where(lax.le(q, one - p), zero, one))
