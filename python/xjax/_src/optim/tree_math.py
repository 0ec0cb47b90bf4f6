"""Arithmetic over pytrees used by the transformations: moments, bias correction, norms, safe counters.

A leaf may be None (an update that a wrapper left out); the moment updates pass it through.
"""
import operator

import numpy as np

from xjax._src import dtypes, tree_util
import xjax.numpy as jnp

_is_none = lambda x: x is None  # noqa: E731


def tree_zeros_like(tree, dtype=None):
    """Zeros shaped like each leaf (of `dtype` if given)."""
    return tree_util.tree_map(lambda x: jnp.zeros_like(x, dtype=dtype), tree)


def tree_full_like(tree, fill_value, dtype=None):
    """`fill_value` shaped like each leaf."""
    return tree_util.tree_map(lambda x: jnp.full_like(x, fill_value, dtype=dtype), tree)


def tree_cast(tree, dtype):
    """Each leaf cast to dtype (unchanged when dtype is None)."""
    return tree if dtype is None else tree_util.tree_map(lambda t: t.astype(dtype), tree)


def tree_cast_like(tree, other):
    """Each leaf cast to the dtype of the matching leaf of `other`."""
    return tree_util.tree_map(lambda t, o: t.astype(o.dtype) if hasattr(o, "dtype") else t, tree, other)


def tree_update_moment(updates, moments, decay, order):
    """(1 - decay) * g**order + decay * moment, leaf by leaf: an exponential moving average."""
    return tree_util.tree_map(lambda g, t: None if g is None else (1 - decay) * g ** order + decay * t,
                              updates, moments, is_leaf=_is_none)


def tree_update_moment_per_elem_norm(updates, moments, decay, order):
    """The moving average of |g|**order (real arrays: g**order)."""
    return tree_update_moment(updates, moments, decay, order)


def tree_bias_correction(moment, decay, count):
    """moment / (1 - decay**count): removes the pull towards the zero initial value."""
    correction = 1 - decay ** count
    return tree_util.tree_map(lambda t: t / correction.astype(t.dtype), moment)


def tree_sum(tree):
    """The sum of every element of every leaf."""
    return tree_util.tree_reduce(operator.add, tree_util.tree_map(jnp.sum, tree), 0)


def tree_norm(tree, squared=False):
    """The 2-norm of all leaves taken as one vector."""
    sq = tree_sum(tree_util.tree_map(jnp.square, tree))
    return jnp.asarray(sq if squared else jnp.sqrt(sq))


def global_norm(updates):
    """The 2-norm of all leaves of `updates` taken as one vector."""
    return tree_norm(updates)


def tree_dtype_highest(tree):
    """The leaf dtype every other leaf dtype promotes to (the default float type for an empty tree)."""
    found = [jnp.asarray(x).dtype for x in tree_util.tree_leaves(tree)]
    if not found:
        return dtypes.default_float_dtype()
    best = found[0]
    for d in found[1:]:
        joined = jnp.promote_types(best, d)
        if joined == d:
            best = d
        elif joined != best:
            raise ValueError(f"the dtypes {best} and {d} of the tree's leaves cannot be ordered by promotion")
    return best


def safe_increment(count):
    """count + 1, saturating at the dtype's maximum instead of wrapping around."""
    count = jnp.asarray(count)
    dtype = count.dtype
    if np.issubdtype(dtype, np.integer):
        top = np.iinfo(dtype).max
    elif np.issubdtype(dtype, np.floating):
        top = np.finfo(dtype).max
    else:
        raise ValueError(f'Cannot safely increment count with dtype {dtype}, valid dtypes are subdtypes of '
                         '"jnp.integer" or "jnp.floating".')
    top = jnp.array(top, dtype)
    return jnp.where(count < top, count + jnp.array(1, dtype), top)


def safe_norm(x, min_norm):
    """max(|x|_2, min_norm), with a finite gradient where |x| is at or below min_norm."""
    norm = jnp.sqrt(jnp.sum(jnp.square(x)))
    x = jnp.where(norm <= min_norm, jnp.ones_like(x), x)
    return jnp.where(norm <= min_norm, min_norm, jnp.sqrt(jnp.sum(jnp.square(x))))


def safe_root_mean_squares(x, min_rms):
    """max(rms(x), min_rms), with a finite gradient where rms(x) is at or below min_rms."""
    rms = jnp.sqrt(jnp.mean(jnp.square(x)))
    x = jnp.where(rms <= min_rms, jnp.ones_like(x), x)
    return jnp.where(rms <= min_rms, min_rms, jnp.sqrt(jnp.mean(jnp.square(x))))
