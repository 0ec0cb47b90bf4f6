"""Vector and matrix samplers: multivariate_normal (by a Cholesky, eigh or SVD factor of the
covariance), orthogonal (QR of a normal matrix, signs fixed), ball (generalized normal over a norm)."""
import operator

import numpy as np

import xjax.numpy as jnp
from xjax._src.numpy import util
from xjax._src.random import prng
from xjax._src.random.gamma import generalized_normal_raw
from xjax._src.random.keys import check_key
from xjax._src.random.samplers import exponential_raw, normal_raw
from xjax._src.random.util import canonical_shape, check_shape, float_dtype, staged


def _jnp():
    return jnp


@staged(3, 4, 5)
def _multivariate_normal(key, mean, cov, shape, dtype, method):
    jnp = _jnp()
    if not np.ndim(mean) >= 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == {np.ndim(mean)}")
    if not np.ndim(cov) >= 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == {np.ndim(cov)}")
    n = np.shape(mean)[-1]
    if tuple(np.shape(cov)[-2:]) != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {tuple(np.shape(cov))}.")
    if shape is None:
        shape = util.broadcast_shapes(tuple(np.shape(mean)[:-1]), tuple(np.shape(cov)[:-2]))
    else:
        check_shape("normal", shape, tuple(np.shape(mean)[:-1]), tuple(np.shape(cov)[:-2]))
    if method == "svd":
        u, s, _ = jnp.linalg.svd(cov)
        factor = u * jnp.sqrt(s[..., None, :])
    elif method == "eigh":
        w, v = jnp.linalg.eigh(cov)
        factor = v * jnp.sqrt(w[..., None, :])
    else:
        factor = jnp.linalg.cholesky(cov)
    samples = normal_raw(key, tuple(shape) + tuple(np.shape(mean)[-1:]), dtype)
    return mean + jnp.einsum("...ij,...j->...i", factor, samples)


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """Normal vectors with the given mean and covariance (method: "cholesky", "eigh" or "svd")."""
    data, _ = check_key("multivariate_normal", key)
    dtype = float_dtype("multivariate_normal", dtype)
    if method not in {"svd", "eigh", "cholesky"}:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    mean, cov = util.promote_dtypes_inexact(mean, cov)
    if shape is not None:
        shape = canonical_shape(shape)
    return _multivariate_normal(data, mean, cov, shape, dtype, method)


@staged(1, 2, 3, 4)
def _orthogonal(key, n, m, shape, dtype):
    jnp = _jnp()
    z = normal_raw(key, (*shape, max(n, m), min(n, m)), dtype)
    q, r = jnp.linalg.qr(z)
    d = jnp.diagonal(r, axis1=-2, axis2=-1)
    x = q * jnp.expand_dims(jnp.sign(d), -2)
    return jnp.swapaxes(x, -1, -2) if n < m else x


def orthogonal(key, n, shape=(), dtype=None, m=None):
    """Matrices (n, m) with orthonormal columns or rows, uniform in the Haar sense (m defaults to n)."""
    shape = canonical_shape(shape)
    data, _ = check_key("orthogonal", key)
    dtype = float_dtype("orthogonal", dtype)
    n = operator.index(n)
    m = n if m is None else operator.index(m)
    return _orthogonal(data, n, m, shape, dtype)


@staged(1, 2, 3, 4)
def _ball(key, p, d, shape, dtype):
    jnp = _jnp()
    k1, k2 = prng.split_keys(key, 2)
    g = generalized_normal_raw(k1, p, (*shape, d), dtype)
    e = exponential_raw(k2, shape, dtype)
    return g / (((jnp.abs(g) ** p).sum(-1) + e) ** (1 / p))[..., None]


def ball(key, d, p=2, shape=(), dtype=None):
    """Points uniform in the unit p-norm ball of dimension d."""
    shape = canonical_shape(shape)
    data, _ = check_key("ball", key)
    dtype = float_dtype("ball", dtype)
    d = operator.index(d)
    return _ball(data, p, d, shape, dtype)
