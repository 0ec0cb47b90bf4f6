"""The negative binomial distribution: k failures before the n-th success, success probability p."""
import numpy as np

from xjax._src import lax
from xjax._src.numpy.util import promote_args_inexact
from xjax._src.scipy.special import gammaln, xlogy
from xjax._src.scipy.stats._util import const
import xjax.numpy as jnp


def logpmf(k, n, p, loc=0):
    """log C(k + n - 1, k) + n log p + k log(1 - p), with k shifted by loc; -inf below loc."""
    k, n, p, loc = promote_args_inexact("nbinom.logpmf", k, n, p, loc)
    one = const(k, 1)
    y = lax.sub(k, loc)
    comb = gammaln(y + n) - gammaln(n) - gammaln(y + one)
    log_probs = comb + xlogy(n, p) + xlogy(y, one - p)
    return jnp.where(lax.lt(k, loc), -np.inf, log_probs)


def pmf(k, n, p, loc=0):
    """P(X = k)."""
    return lax.exp(logpmf(k, n, p, loc))
