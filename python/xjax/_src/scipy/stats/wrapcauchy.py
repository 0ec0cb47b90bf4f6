"""The wrapped Cauchy distribution on [0, 2 pi]: density (1 - c^2) / (2 pi (1 + c^2 - 2 c cos x));
-inf outside [0, 2 pi], NaN unless 0 < c < 1 (JAX's wrapcauchy)."""
import numpy as np

from xjax._src import lax
from xjax._src.numpy.util import promote_args_inexact
from xjax._src.scipy.stats._util import const
import xjax.numpy as jnp


def logpdf(x, c):
    """log(1 - c^2) - log(2 pi) - log(1 + c^2 - 2 c cos x)."""
    x, c = promote_args_inexact("wrapcauchy.logpdf", x, c)
    inside = lax.ge(x, const(x, 0)) & lax.le(x, const(x, 2 * np.pi))
    value = jnp.log(1 - c * c) - jnp.log(2 * np.pi) - jnp.log(1 + c * c - 2 * c * jnp.cos(x))
    return jnp.where(lax.gt(c, const(c, 0)) & lax.lt(c, const(c, 1)), jnp.where(inside, value, -np.inf), np.nan)


def pdf(x, c):
    """The density."""
    return lax.exp(logpdf(x, c))
