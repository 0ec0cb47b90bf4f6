"""Adafactor's second-moment estimate: per-row and per-column averages for large matrices.

For a parameter whose two largest dimensions are at least min_dim_size_to_factor, the moving
average of g**2 is kept as its mean over each of those dimensions (O(n + m) memory, not O(nm)) and
the full estimate is rebuilt as their outer product over the mean of the rows.
"""
from typing import Any, NamedTuple

import numpy as np

from xjax._src import tree_util
from xjax._src.optim import base
from xjax._src.optim.tree_math import safe_increment
import xjax.numpy as jnp


def _decay_rate_pow(i, exponent=0.8):
    """1 - (i + 1)**(-exponent): the second-moment decay at step i."""
    t = jnp.array(i + 1, jnp.float32)
    return 1.0 - t ** (-exponent)


def _factored_dims(shape, factored, min_dim_size_to_factor):
    """(second largest, largest) dimension indices if the parameter is factored, else None."""
    if not factored or len(shape) < 2:
        return None
    order = sorted(range(len(shape)), key=lambda i: shape[i])  # stable, as NumPy's argsort on short shapes
    if shape[order[-2]] < min_dim_size_to_factor:
        return None
    return order[-2], order[-1]


class FactoredState(NamedTuple):
    count: Any
    v_row: Any
    v_col: Any
    v: Any


class _Parts(NamedTuple):  # one parameter's results, split into the state's trees afterwards
    update: Any
    v_row: Any
    v_col: Any
    v: Any


def _without_axis(shape, axis):
    return tuple(d for i, d in enumerate(shape) if i != axis)


def scale_by_factored_rms(factored=True, decay_rate=0.8, step_offset=0, min_dim_size_to_factor=128,
                          epsilon=1e-30, decay_rate_fn=_decay_rate_pow):
    """Scales updates by the inverse root of Adafactor's (factored) second-moment estimate."""
    def to_state(count, parts):
        is_parts = lambda x: isinstance(x, _Parts)  # noqa: E731
        pick = lambda name: tree_util.tree_map(lambda o: getattr(o, name), parts, is_leaf=is_parts)  # noqa: E731
        return FactoredState(count=count, v_row=pick("v_row"), v_col=pick("v_col"), v=pick("v"))

    def init_fn(params):
        def init_one(p):
            shape, dtype = np.shape(p), p.dtype
            one = jnp.zeros((1,), dtype=dtype)
            dims = _factored_dims(shape, factored, min_dim_size_to_factor)
            if dims is None:
                return _Parts(one, one, one, jnp.zeros_like(p))
            d1, d0 = dims
            return _Parts(one, jnp.zeros(_without_axis(shape, d0), dtype), jnp.zeros(_without_axis(shape, d1), dtype),
                          one)

        return to_state(jnp.zeros([], jnp.int32), tree_util.tree_map(init_one, params))

    def update_fn(grads, state, params):
        if params is None:
            raise ValueError(base.NO_PARAMS_MSG)

        def update_one(g, v_row, v_col, v, p):
            shape, dtype = np.shape(p), p.dtype
            rate = decay_rate_fn(state.count - step_offset, decay_rate)
            one = jnp.zeros((1,), dtype=dtype)
            g_sq = jnp.square(g) + epsilon
            dims = _factored_dims(shape, factored, min_dim_size_to_factor)
            if dims is None:
                new_v = (rate * v + (1.0 - rate) * g_sq).astype(dtype)
                return _Parts(g * new_v ** (-0.5), one, one, new_v)
            d1, d0 = dims
            new_row = (rate * v_row + (1.0 - rate) * jnp.mean(g_sq, axis=d0)).astype(dtype)
            new_col = (rate * v_col + (1.0 - rate) * jnp.mean(g_sq, axis=d1)).astype(dtype)
            row_axis = d1 - 1 if d1 > d0 else d1  # d1's position once d0 is gone
            row_factor = (new_row / jnp.mean(new_row, axis=row_axis, keepdims=True)) ** (-0.5)
            col_factor = new_col ** (-0.5)
            update = g * jnp.expand_dims(row_factor, axis=d0) * jnp.expand_dims(col_factor, axis=d1)
            return _Parts(update, new_row, new_col, one)

        parts = tree_util.tree_map(update_one, grads, state.v_row, state.v_col, state.v, params)
        updates = tree_util.tree_map(lambda o: o.update, parts, is_leaf=lambda x: isinstance(x, _Parts))
        return updates, to_state(safe_increment(state.count), parts)

    return base.GradientTransformation(init_fn, update_fn)
