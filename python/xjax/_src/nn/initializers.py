"""jax.nn.initializers: functions init(key, shape, dtype) -> a new array.

The random ones draw from xjax.random as JAX's do, so the same key gives JAX's values.
"""
import math
import typing

import numpy as np

from xjax._src import dtypes
import xjax.numpy as jnp
from xjax import random


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


def normal(stddev=1e-2, dtype=None):
    """Builds an initializer drawing from a normal distribution of standard deviation `stddev`."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        del out_sharding
        return random.normal(key, shape, _dtype(dtype)) * stddev

    return init


def uniform(scale=1e-2, dtype=None):
    """Builds an initializer drawing uniformly from [0, scale)."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        del out_sharding
        return random.uniform(key, shape, _dtype(dtype)) * scale

    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
    """Builds an initializer drawing from a normal truncated to [lower, upper], scaled by `stddev`."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        del out_sharding
        return random.truncated_normal(key, lower, upper, shape, _dtype(dtype)) * stddev

    return init


def _fans(shape, in_axis, out_axis, batch_axis):
    """(fan_in, fan_out): the in and out sizes times the receptive field (all other non-batch dims)."""
    if len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional weights tensor "
                         "with default in_axis. Must be at least 2D or specify in_axis explicitly.")
    ndim = len(shape)
    in_axes = {a % ndim for a in (in_axis if isinstance(in_axis, (tuple, list)) else (in_axis,))}
    out_axes = {a % ndim for a in (out_axis if isinstance(out_axis, (tuple, list)) else (out_axis,))}
    batch = {a % ndim for a in (batch_axis if isinstance(batch_axis, (tuple, list)) else (batch_axis,))}
    in_size = math.prod(shape[a] for a in in_axes)
    out_size = math.prod(shape[a] for a in out_axes)
    receptive = math.prod(shape) / in_size / out_size / math.prod(shape[a] for a in batch)
    return in_size * receptive, out_size * receptive


_FAN_MODES = {
    "fan_in": lambda fi, fo: fi, "fan_out": lambda fi, fo: fo, "fan_avg": lambda fi, fo: (fi + fo) / 2,
    "fan_geo_avg": lambda fi, fo: math.sqrt(fi * fo),
}


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """Builds an initializer whose samples have variance scale / fan (fan chosen by `mode`), from a
    truncated normal, a normal or a uniform distribution, as JAX's."""
    def init(key, shape, dtype=dtype, out_sharding=None):  # checks at call time, as JAX
        del out_sharding
        if mode not in _FAN_MODES:
            raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
        if distribution not in ("truncated_normal", "normal", "uniform"):
            raise ValueError(f"invalid distribution for variance scaling initializer: {distribution}")
        shape, dt = tuple(shape), _dtype(dtype)
        variance = scale / _FAN_MODES[mode](*_fans(shape, in_axis, out_axis, batch_axis))
        if distribution == "truncated_normal":
            # 0.8796...: the standard deviation of a standard normal truncated to [-2, 2].
            stddev = math.sqrt(variance) / 0.87962566103423978
            return random.truncated_normal(key, -2, 2, shape, dt) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dt) * math.sqrt(variance)
        return random.uniform(key, shape, dt, -1, 1) * math.sqrt(3 * variance)

    return init


def _preset(scale, mode, distribution):
    def make(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
        return variance_scaling(scale, mode, distribution, in_axis, out_axis, batch_axis, dtype)

    return make


glorot_normal = xavier_normal = _preset(1.0, "fan_avg", "truncated_normal")
glorot_uniform = xavier_uniform = _preset(1.0, "fan_avg", "uniform")
he_normal = kaiming_normal = _preset(2.0, "fan_in", "truncated_normal")
he_uniform = kaiming_uniform = _preset(2.0, "fan_in", "uniform")
lecun_normal = _preset(1.0, "fan_in", "truncated_normal")
lecun_uniform = _preset(1.0, "fan_in", "uniform")


def orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """Builds an initializer of uniformly distributed (Haar) orthogonal matrices times `scale`: the
    axis column_axis against all other axes flattened, orthonormal along the smaller side."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        if out_sharding is not None:
            raise NotImplementedError("orthogonal initializer: out_sharding is not supported")
        shape, dt = tuple(shape), _dtype(dtype)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if any(d == 0 for d in shape):
            return jnp.zeros(shape, dt)
        n_rows, n_cols = math.prod(shape) // shape[column_axis], shape[column_axis]
        q = random.orthogonal(key, n_rows, (), dt, n_cols)
        q = jnp.reshape(q, tuple(np.delete(shape, column_axis)) + (shape[column_axis],))
        return jnp.array(scale, dt) * jnp.moveaxis(q, -1, column_axis)

    return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """Builds an initializer of convolution kernels (3-5 dims, spatial axes first) that are zero but
    at the spatial centre, where they hold an orthogonal in x out matrix: a delta-orthogonal
    kernel keeps a convolution's input norm (Xiao et al. 2018)."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        shape, dt = tuple(shape), _dtype(dtype)
        if len(shape) not in (3, 4, 5):
            raise ValueError(f"delta_orthogonal initializer requires a 3D, 4D or 5D shape, got {shape}")
        if shape[-1] < shape[-2]:
            raise ValueError(f"delta_orthogonal initializer: fan_in ({shape[-2]}) must be at most fan_out "
                             f"({shape[-1]})")
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        matrix = orthogonal(scale, column_axis, dt)(key, shape[-2:], out_sharding=out_sharding)
        return jnp.zeros(shape, dt).at[centre].set(matrix)

    return init


class Initializer(typing.Protocol):
    """The type of an initializer: init(key, shape, dtype) -> array."""

    def __call__(self, key, shape, dtype=None):
        ...
