"""jax.nn.initializers that need no randomness: zeros, ones, constant.

An initializer is called as init(key, shape, dtype) and returns a new array. The random ones
(normal, uniform, glorot_*, he_*, lecun_*, variance_scaling, truncated_normal, orthogonal) come
with xjax.random.
"""
from xjax._src import dtypes
import xjax.numpy as jnp


def _dtype(dtype):
    return dtypes.default_float_dtype() if dtype is None else dtype


def zeros(key, shape, dtype=None, out_sharding=None):
    """An initializer returning an array of zeros (the key is ignored)."""
    del key, out_sharding
    return jnp.zeros(shape, _dtype(dtype))


def ones(key, shape, dtype=None, out_sharding=None):
    """An initializer returning an array of ones (the key is ignored)."""
    del key, out_sharding
    return jnp.ones(shape, _dtype(dtype))


def constant(value, dtype=None):
    """Builds an initializer returning an array filled with `value`."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        del key, out_sharding
        return jnp.full(shape, value, dtype=_dtype(dtype))

    return init
