"""The von Mises distribution on the circle with concentration kappa > 0 (NaN otherwise)."""
import numpy as np

from xjax._src import lax
from xjax._src.numpy.util import promote_args_inexact
from xjax._src.scipy.stats._util import const
import xjax.numpy as jnp


def logpdf(x, kappa):
    """kappa (cos x - 1) - log(2 pi i0e(kappa)): exp(kappa cos x) / (2 pi I0(kappa)) without overflow."""
    x, kappa = promote_args_inexact("vonmises.logpdf", x, kappa)
    value = kappa * (jnp.cos(x) - 1) - jnp.log(2 * np.pi * lax.bessel_i0e(kappa))
    return jnp.where(lax.gt(kappa, const(kappa, 0)), value, np.nan)


def pdf(x, kappa):
    """The density."""
    return lax.exp(logpdf(x, kappa))
