"""The geometric distribution (trials up to the first success, probability p), shifted by loc."""
import numpy as np

from xjax._src import lax
from xjax._src.numpy.util import promote_args_inexact
from xjax._src.scipy.special import xlog1py
from xjax._src.scipy.stats._util import const
import xjax.numpy as jnp


def logpmf(k, p, loc=0):
    """log P(X = k) = (k - loc - 1) log(1 - p) + log p; -inf for k - loc <= 0."""
    k, p, loc = promote_args_inexact("geom.logpmf", k, p, loc)
    x = lax.sub(k, loc)
    log_probs = xlog1py(lax.sub(x, const(k, 1)), -p) + lax.log(p)
    return jnp.where(lax.le(x, const(k, 0)), -np.inf, log_probs)


def pmf(k, p, loc=0):
    """P(X = k)."""
    return jnp.exp(logpmf(k, p, loc))
