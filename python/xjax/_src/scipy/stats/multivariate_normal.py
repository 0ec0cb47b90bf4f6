"""The multivariate normal distribution N(mean, cov) over the last axis."""
import functools

import numpy as np

import xjax.numpy as jnp
from xjax._src import lax
from xjax._src.lax import linalg
from xjax._src.numpy.util import promote_dtypes_inexact


def _lax_linalg():
    """lax.linalg (cholesky, triangular_solve), which full covariance matrices need."""
    try:
        return linalg.cholesky, linalg.triangular_solve
    except (ImportError, AttributeError):
        raise NotImplementedError("multivariate_normal.logpdf with a covariance matrix needs lax.linalg.cholesky and "
                                  "lax.linalg.triangular_solve, which xjax does not have yet (a scalar covariance "
                                  "works)") from None


def logpdf(x, mean, cov, allow_singular=None):
    """log density of x (..., n) under N(mean, cov); cov a scalar (times the identity) or (..., n, n)."""
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = promote_dtypes_inexact(x, mean, cov)
    if not mean.shape:
        return (-1 / 2 * jnp.square(x - mean) / cov - 1 / 2 * (jnp.log(2 * np.pi) + jnp.log(cov)))
    n = mean.shape[-1]
    if not np.shape(cov):
        y = x - mean
        return (-1 / 2 * jnp.einsum("...i,...i->...", y, y) / cov - n / 2 * (jnp.log(2 * np.pi) + jnp.log(cov)))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    cholesky, triangular_solve = _lax_linalg()
    L = cholesky(cov)  # noqa: N806
    solve = jnp.vectorize(functools.partial(triangular_solve, lower=True, transpose_a=True),
                          signature="(n,n),(n)->(n)")
    y = solve(L, x - mean)
    return (-1 / 2 * jnp.einsum("...i,...i->...", y, y) - n / 2 * jnp.log(2 * np.pi)
            - jnp.log(L.diagonal(axis1=-1, axis2=-2)).sum(-1))


def pdf(x, mean, cov):
    """The density exp(logpdf)."""
    return lax.exp(logpdf(x, mean, cov))
