"""The binomial distribution of n trials with success probability p, shifted by loc."""
import numpy as np

from xjax._src import lax
from xjax._src.numpy.util import promote_args_inexact
from xjax._src.scipy.special import gammaln, xlog1py, xlogy
import xjax.numpy as jnp


def logpmf(k, n, p, loc=0):
    """log P(X = k); -inf outside [loc, loc + n]."""
    k, n, p, loc = promote_args_inexact("binom.logpmf", k, n, p, loc)
    y = lax.sub(k, loc)
    zero = np.array(0, y.aval.dtype)
    comb_term = lax.sub(gammaln(n + 1), lax.add(gammaln(y + 1), gammaln(n - y + 1)))
    log_linear_term = lax.add(xlogy(y, p), xlog1py(lax.sub(n, y), lax.neg(p)))
    log_probs = lax.add(comb_term, log_linear_term)
    y_n_cond = jnp.logical_or(jnp.logical_and(lax.eq(y, zero), lax.eq(n, zero)), lax.eq(log_linear_term, zero))
    log_probs = jnp.where(y_n_cond, 0.0, log_probs)
    return jnp.where(lax.ge(k, loc) & lax.lt(k, loc + n + 1), log_probs, -np.inf)


def pmf(k, n, p, loc=0):
    """P(X = k)."""
    return lax.exp(logpmf(k, n, p, loc))
