"""Descriptive statistics of jax.scipy.stats: mode, rankdata and sem."""
import functools
import math
from typing import NamedTuple

import numpy as np

from xjax._src import dtypes
from xjax._src.jit import jit
from xjax._src.numpy import util
from xjax._src.numpy.util import promote_args_inexact
from xjax._src.vmap import vmap
import xjax.numpy as jnp


class ModeResult(NamedTuple):
    mode: object
    count: object


def _check_nan_policy(name, nan_policy):
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of {{'propagate', 'omit', 'raise'}}")
    if nan_policy == "omit":
        raise NotImplementedError(f"Logic for `nan_policy` of {nan_policy} is not implemented")
    if nan_policy == "raise":
        raise NotImplementedError(f"In order to best JIT compile `{name}`, we cannot know whether `x` contains nans. "
                                  f"Please check if nans exist in `x` outside of the `{name}` function.")


def _column_mode(column):
    """(the most frequent value, its count) of a 1-D array; the smallest such value on ties."""
    s = jnp.sort(column)
    counts = jnp.searchsorted(s, s, side="right") - jnp.searchsorted(s, s, side="left")
    i = jnp.argmax(counts)  # the first maximum: s is sorted, so the smallest value
    return s[i], counts[i]


def mode(a, axis=0, nan_policy="propagate", keepdims=False):
    """(mode, count) of a along axis (all of a for axis=None): the most frequent value, the
    smallest on ties, and how often it occurs."""
    util.check_arraylike("mode", a)
    _check_nan_policy("mode", nan_policy)
    return _mode(jnp.atleast_1d(a), axis, keepdims)


@functools.partial(jit, static_argnames=("axis", "keepdims"))
def _mode(x, axis, keepdims):
    shape = x.shape
    if axis is not None:
        axis = util.canonicalize_axis(axis, x.ndim)
    if keepdims:
        out_shape = tuple(1 if axis is None or i == axis else s for i, s in enumerate(shape))
    else:
        out_shape = () if axis is None else tuple(s for i, s in enumerate(shape) if i != axis)
    if axis is None:
        x, axis = jnp.ravel(x), 0
    x = jnp.moveaxis(x, axis, 0)
    n = x.shape[0]
    x = x.reshape(n, math.prod(x.shape[1:]))
    if n == 0:
        nan = jnp.full((x.shape[1],), np.nan, dtypes.default_float_dtype())
        return ModeResult(nan.reshape(out_shape), jnp.zeros_like(nan).reshape(out_shape))
    values, counts = vmap(_column_mode, in_axes=1)(x)
    return ModeResult(values.reshape(out_shape), counts.reshape(out_shape))


def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
    """The ranks (from 1) of a's values, ties resolved by `method` ('average', 'min', 'max',
    'dense', 'ordinal'); of the flattened array, or along `axis`. All NaN if any value is NaN."""
    util.check_arraylike("rankdata", a)
    _check_nan_policy("rankdata", nan_policy)
    if method not in ("average", "min", "max", "dense", "ordinal"):
        raise ValueError(f"unknown method '{method}'")
    if axis is not None:
        return jnp.apply_along_axis(functools.partial(rankdata, method=method), axis, a)
    return _rankdata(jnp.ravel(util.asarray(a)), method)


@functools.partial(jit, static_argnames=("method",))
def _rankdata(a, method):
    out_dtype = dtypes.default_float_dtype()
    order = jnp.argsort(a, stable=True)
    s = a[order]
    if method == "ordinal":
        ranks = jnp.zeros_like(order).at[order].set(jnp.arange(1, a.size + 1, dtype=order.dtype))
    elif method == "dense":
        new_value = jnp.concatenate([jnp.ones(min(a.size, 1), bool), s[1:] != s[:-1]])
        ranks = jnp.zeros_like(order).at[order].set(jnp.cumsum(new_value, dtype=order.dtype))
    else:
        low = jnp.searchsorted(s, a, side="left") + 1  # the first rank of a's value
        high = jnp.searchsorted(s, a, side="right")  # its last
        ranks = {"min": low, "max": high}.get(method)
        if ranks is None:
            ranks = 0.5 * (low + high).astype(out_dtype)
    return jnp.where(jnp.any(jnp.isnan(a)), np.nan, ranks.astype(out_dtype))


def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
    """The standard error of the mean, std(a, ddof) / sqrt(n), along axis (NaNs skipped with
    nan_policy='omit')."""
    (b,) = promote_args_inexact("sem", a)
    if nan_policy == "propagate":
        size = b.size if axis is None else b.shape[axis]
        return jnp.std(b, axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(size).astype(b.dtype)
    if nan_policy == "omit":
        count = jnp.sum(~jnp.isnan(b), axis, keepdims=keepdims)
        return jnp.nanstd(b, axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(count).astype(b.dtype)
    raise ValueError(f"{nan_policy} is not supported")
