"""ravel_pytree (jax.flatten_util): a pytree of arrays as one flat vector, and back."""
import numpy as np

from xjax import lax
from xjax import numpy as jnp
from xjax import tree_util


class _Unravel:
    """Splits a flat vector into the leaves of `treedef` (their shapes, and dtypes when the leaves'
    dtypes differ). Equal when built for the same structure, so jit caches can key on it."""

    def __init__(self, treedef, sizes, shapes, from_dtypes, to_dtype):
        self._key = (treedef, sizes, shapes, from_dtypes, to_dtype)

    def __call__(self, flat):
        treedef, sizes, shapes, from_dtypes, to_dtype = self._key
        if not sizes:
            return tree_util.tree_unflatten(treedef, [])
        if from_dtypes is not None and jnp.result_type(flat) != to_dtype:
            raise TypeError(f"unravel function given array of dtype {jnp.result_type(flat)}, but expected dtype "
                            f"{to_dtype}")
        chunks = jnp.split(flat, np.cumsum(sizes)[:-1])
        leaves = [jnp.reshape(c, s) for c, s in zip(chunks, shapes)]
        if from_dtypes is not None:
            leaves = [lax.convert_element_type(x, dt) for x, dt in zip(leaves, from_dtypes)]
        return tree_util.tree_unflatten(treedef, leaves)

    def __eq__(self, other):
        return isinstance(other, _Unravel) and self._key == other._key

    def __hash__(self):
        return hash(self._key)


def ravel_pytree(pytree):
    """(flat, unravel): the leaves raveled and concatenated in one 1-D array of their promoted dtype
    (float32 and empty for a tree without leaves), and the function mapping such a vector back to
    the tree. With one dtype throughout, `unravel` keeps the vector's dtype; otherwise it casts each
    leaf back to its own."""
    leaves, treedef = tree_util.tree_flatten(pytree)
    if not leaves:
        return jnp.zeros((0,), jnp.float32), _Unravel(treedef, (), (), None, None)
    from_dtypes = tuple(np.dtype(jnp.result_type(x)) for x in leaves)
    to_dtype = np.dtype(jnp.result_type(*from_dtypes))
    sizes = tuple(int(np.size(x)) for x in leaves)
    shapes = tuple(tuple(np.shape(x)) for x in leaves)
    flat = jnp.concatenate([jnp.ravel(lax.convert_element_type(x, to_dtype)) for x in leaves])
    if all(dt == to_dtype for dt in from_dtypes):
        from_dtypes = to_dtype = None  # no casts: unravel keeps whatever dtype it is given
    return flat, _Unravel(treedef, sizes, shapes, from_dtypes, to_dtype)
