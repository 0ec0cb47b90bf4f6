"""The multinomial distribution of n trials over the categories of probabilities p (last axis)."""
import numpy as np

from xjax._src import dtypes, lax
from xjax._src.numpy import util
from xjax._src.numpy.util import promote_args_inexact
from xjax._src.scipy.special import gammaln, xlogy
import xjax.numpy as jnp


def logpmf(x, n, p):
    """log n! + sum_i (x_i log p_i - log x_i!) where sum(x) == n, -inf otherwise (x, n integers)."""
    (p,) = promote_args_inexact("multinomial.logpmf", p)
    util.check_arraylike("multinomial.logpmf", x, n)
    x, n = util.promote_dtypes(util.asarray(x), util.asarray(n))
    if not dtypes.issubdtype(x.dtype, np.integer):
        raise ValueError(f"x and n must be of integer type; got x.dtype={x.dtype}, n.dtype={n.dtype}")
    x, n = x.astype(p.dtype), n.astype(p.dtype)
    log_probs = gammaln(n + 1) + jnp.sum(xlogy(x, p) - gammaln(x + 1), axis=-1)
    # The counts of each sample (last axis) must add up to n (JAX sums all of x: the same for one sample).
    return jnp.where(jnp.equal(jnp.sum(x, axis=-1), n), log_probs, -np.inf)


def pmf(x, n, p):
    """P(X = x)."""
    return lax.exp(logpmf(x, n, p))
