"""jax.scipy.cluster.vq.vq: each observation's nearest code (Euclidean) and its distance."""
import operator

from xjax._src.numpy.util import check_arraylike, promote_dtypes_inexact
from xjax._src.vmap import vmap
import xjax.numpy as jnp


def vq(obs, code_book, check_finite=True):
    """(code, dist): for each row of obs [M, N] (or entry, when 1-D) the index of the nearest row of
    code_book [K, N] (the first on ties) and the distance to it. check_finite is unused, as in JAX."""
    del check_finite
    check_arraylike("scipy.cluster.vq.vq", obs, code_book)
    obs, code_book = promote_dtypes_inexact(jnp.asarray(obs), jnp.asarray(code_book))
    if obs.ndim != code_book.ndim:
        raise ValueError("Observation and code_book should have the same rank")
    if obs.ndim == 1:
        obs, code_book = obs[..., None], code_book[..., None]
    if obs.ndim != 2:
        raise ValueError("ndim different than 1 or 2 are not supported")
    dist = vmap(lambda ob: jnp.linalg.norm(ob[None] - code_book, axis=-1))(obs)
    code = jnp.argmin(dist, axis=-1)
    return code, vmap(operator.getitem)(dist, code)
