"""Pooling helpers over (batch, *spatial, features) inputs, with Flax's signatures (`max_pool`,
`avg_pool`, `min_pool`), since JAX itself leaves pooling to lax.reduce_window: each is one
windowed reduction in the core, differentiable and batchable like any lax.reduce_window."""
import numpy as np

from xjax._src import lax
from xjax._src.numpy import util


def _pool(name, inputs, init, computation, window_shape, strides, padding):
    util.check_arraylike(f"nn.{name}", inputs)
    x = util.asarray(inputs)
    window_shape = tuple(int(w) for w in window_shape)
    nspatial = len(window_shape)
    strides = (1,) * nspatial if strides is None else tuple(int(s) for s in strides)
    if len(strides) != nspatial:
        raise ValueError(f"nn.{name}: strides {strides} must have one entry per window dimension {window_shape}")
    if x.ndim < nspatial + 1:
        raise ValueError(f"nn.{name}: inputs of shape {x.shape} need at least {nspatial + 1} dimensions (spatial "
                         f"dimensions {window_shape}, then features)")
    if not isinstance(padding, str):
        padding = tuple(tuple(int(p) for p in pair) for pair in padding)
        if len(padding) != nspatial or any(len(pair) != 2 for pair in padding):
            raise ValueError(f"nn.{name}: padding {padding} must be 'SAME', 'VALID' or one (low, high) pair per "
                             f"window dimension {window_shape}")
        padding = ((0, 0),) * (x.ndim - nspatial - 1) + padding + ((0, 0),)
    lead = x.ndim - nspatial - 1  # batch dims in front, one feature dim last
    dims = (1,) * lead + window_shape + (1,)
    steps = (1,) * lead + strides + (1,)
    return lax.reduce_window(x, init(x.dtype), computation, dims, steps, padding)


def _lowest(dtype):
    return -np.inf if np.issubdtype(dtype, np.floating) else np.iinfo(dtype).min


def _highest(dtype):
    return np.inf if np.issubdtype(dtype, np.floating) else np.iinfo(dtype).max


def max_pool(inputs, window_shape, strides=None, padding="VALID"):
    """The maximum over each window of the spatial dims (all but the first and the last)."""
    return _pool("max_pool", inputs, lambda dt: np.array(_lowest(dt), dt), lax.max, window_shape, strides, padding)


def min_pool(inputs, window_shape, strides=None, padding="VALID"):
    """The minimum over each window of the spatial dims (all but the first and the last)."""
    return _pool("min_pool", inputs, lambda dt: np.array(_highest(dt), dt), lax.min, window_shape, strides, padding)


def avg_pool(inputs, window_shape, strides=None, padding="VALID", count_include_pad=True):
    """The mean over each window; with count_include_pad=False, padded positions do not count."""
    total = _pool("avg_pool", inputs, lambda dt: np.array(0, dt), lax.add, window_shape, strides, padding)
    if count_include_pad:
        return total / np.prod(window_shape)
    x = util.asarray(inputs)
    ones = util.full(x.shape[-len(window_shape) - 1:-1] + (1,), 1, x.dtype)
    counts = _pool("avg_pool", ones[None], lambda dt: np.array(0, dt), lax.add, window_shape, strides, padding)
    return total / counts[0]
