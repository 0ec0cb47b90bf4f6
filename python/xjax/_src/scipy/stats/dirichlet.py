"""The Dirichlet distribution with concentrations alpha (x along the first axis)."""
import numpy as np

from xjax._src import lax
from xjax._src.numpy.util import promote_dtypes_inexact
from xjax._src.scipy.special import gammaln, xlogy
from xjax._src.scipy.stats._util import const
import xjax.numpy as jnp


def _is_simplex(x):
    x_sum = jnp.sum(x, axis=0)
    return jnp.all(x > 0, axis=0) & (abs(x_sum - 1) < 1e-6)


def logpdf(x, alpha):
    """log density of x (K or K - 1 entries along axis 0) under Dirichlet(alpha); -inf off the simplex."""
    x, alpha = promote_dtypes_inexact(x, alpha)
    if alpha.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
    if x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ValueError("`x` must have either the same number of entries as `alpha` or one entry fewer; "
                         f"got x.shape={x.shape}, alpha.shape={alpha.shape}")
    one = const(x, 1)
    if x.shape[0] != alpha.shape[0]:
        x = jnp.concatenate([x, lax.sub(one, x.sum(0, keepdims=True))], axis=0)
    normalize_term = jnp.sum(gammaln(alpha)) - gammaln(jnp.sum(alpha))
    if x.ndim > 1:
        alpha = lax.broadcast_in_dim(alpha, alpha.shape + (1,) * (x.ndim - 1), (0,))
    log_probs = lax.sub(jnp.sum(xlogy(lax.sub(alpha, one), x), axis=0), normalize_term)
    return jnp.where(_is_simplex(x), log_probs, -np.inf)


def pdf(x, alpha):
    """The density exp(logpdf)."""
    return lax.exp(logpdf(x, alpha))
