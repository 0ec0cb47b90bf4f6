"""ravel_pytree: a pytree of arrays as one flat vector, and the function that rebuilds the tree."""
import functools

import numpy as np

from xjax import lax, tree_util
from xjax._src import dtypes


def ravel_pytree(pytree):
    """(flat, unravel): the leaves of `pytree` raveled and concatenated into one 1-D array of their
    promoted dtype, and the function mapping such a vector back to a tree of the same structure,
    shapes and dtypes. A tree without leaves gives an empty float32 vector."""
    leaves, treedef = tree_util.tree_flatten(pytree)
    flat, unravel_leaves = _ravel_leaves(leaves)
    return flat, functools.partial(_unravel_pytree, treedef, unravel_leaves)


def _unravel_pytree(treedef, unravel_leaves, flat):
    return tree_util.tree_unflatten(treedef, unravel_leaves(flat))


def _leaf_dtype(x):
    dtype = getattr(x, "dtype", None)
    return dtypes.canonicalize_dtype(np.result_type(x) if dtype is None else dtype)


def _ravel_leaves(leaves):
    if not leaves:
        return lax.full([0], 0, "float32"), lambda _: []
    from_dtypes = tuple(_leaf_dtype(x) for x in leaves)
    to_dtype = dtypes.result_type(*from_dtypes)
    sizes = tuple(int(np.size(x)) for x in leaves)
    shapes = tuple(np.shape(x) for x in leaves)
    if all(d == to_dtype for d in from_dtypes):
        # One dtype: no conversion, so unravel keeps whatever dtype it is given (as JAX's does).
        flat = lax.concatenate([lax.reshape(x, (n,)) for x, n in zip(leaves, sizes)], 0)
        return flat, functools.partial(_split, sizes, shapes)
    flat = lax.concatenate([lax.reshape(lax.convert_element_type(x, to_dtype), (n,)) for x, n in zip(leaves, sizes)],
                           0)
    return flat, functools.partial(_split_and_convert, sizes, shapes, from_dtypes, to_dtype)


def _split(sizes, shapes, flat):
    if np.shape(flat) != (sum(sizes),):
        raise ValueError(f"The unravel function expected an array of shape {(sum(sizes),)}, got shape "
                         f"{np.shape(flat)}.")
    return [lax.reshape(chunk, shape) for chunk, shape in zip(lax.split(flat, sizes), shapes)]


def _split_and_convert(sizes, shapes, from_dtypes, to_dtype, flat):
    if flat.dtype != to_dtype:
        raise TypeError(f"unravel function given array of dtype {flat.dtype}, but expected dtype {to_dtype}")
    return [lax.convert_element_type(chunk, d) for chunk, d in zip(_split(sizes, shapes, flat), from_dtypes)]
