"""BCOO sparse arrays (jax.experimental.sparse.BCOO): a dense `data` vector and an `indices` matrix of
(nse, n_sparse) coordinates, built from jnp operations so that they jit, differentiate and vmap as
any array code does.

Only the plain layout is implemented (no batch or dense dimensions: n_batch = n_dense = 0); the
other layouts and the sparse operations xjax does not have raise NotImplementedError naming them.
Padding entries are stored as JAX stores them: coordinates equal to the shape (out of bounds, so a
scatter drops them) and data 0.
"""
import abc
import functools
import math
import operator

import numpy as np

from xjax import numpy as jnp, tree_util
from xjax._src import core, errors
from xjax._src.tree_util import register_pytree_node_class


class JAXSparse(abc.ABC):
    """Base class of the sparse array formats."""

    __hash__ = None

    def __init__(self, args, *, shape):
        self.shape = tuple(operator.index(d) for d in shape)

    @property
    @abc.abstractmethod
    def dtype(self): ...

    @property
    @abc.abstractmethod
    def nse(self): ...

    @abc.abstractmethod
    def todense(self): ...

    @abc.abstractmethod
    def transpose(self, axes=None): ...

    @property
    def size(self):
        return math.prod(self.shape)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def T(self):
        return self.transpose()

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        return f"{type(self).__name__}({np.dtype(self.dtype).name}{list(self.shape)}, nse={self.nse})"


def _plain_layout(name, n_batch, n_dense):
    if n_batch or n_dense:
        raise NotImplementedError(f"{name}: BCOO arrays with batch or dense dimensions (n_batch={n_batch}, "
                                  f"n_dense={n_dense}) are not implemented in xjax")


@register_pytree_node_class
class BCOO(JAXSparse):
    """A sparse array in batched-coordinate format: `BCOO((data, indices), shape=shape)`."""

    def __init__(self, args, *, shape, indices_sorted=False, unique_indices=False):
        data, indices = map(jnp.asarray, args)
        super().__init__(args, shape=shape)
        if indices.ndim != 2 or data.ndim != 1 or data.shape[0] != indices.shape[0] \
                or indices.shape[1] != len(self.shape):
            raise NotImplementedError(
                f"BCOO: data of shape {data.shape} and indices of shape {indices.shape} for an array of shape "
                f"{self.shape}: only the layout without batch or dense dimensions is implemented in xjax "
                f"(data (nse,), indices (nse, ndim))")
        self.data, self.indices = data, indices
        self.indices_sorted, self.unique_indices = indices_sorted, unique_indices

    dtype = property(lambda self: self.data.dtype)
    nse = property(lambda self: self.indices.shape[0])
    n_batch = property(lambda self: 0)
    n_dense = property(lambda self: 0)
    n_sparse = property(lambda self: self.indices.shape[1])

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=np.int32, n_dense=0, n_batch=0):
        return bcoo_fromdense(mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense, n_batch=n_batch)

    def todense(self):
        return bcoo_todense(self)

    def transpose(self, axes=None):
        axes = tuple(reversed(range(self.ndim))) if axes is None else tuple(axes)
        return bcoo_transpose(self, permutation=axes)

    def tree_flatten(self):
        return (self.data, self.indices), {"shape": self.shape, "indices_sorted": self.indices_sorted,
                                           "unique_indices": self.unique_indices}

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        # Built without __init__: a pytree's leaves may be placeholders (None, object()) while it is rebuilt.
        obj = object.__new__(cls)
        obj.data, obj.indices = children
        obj.shape = aux_data["shape"]
        obj.indices_sorted, obj.unique_indices = aux_data["indices_sorted"], aux_data["unique_indices"]
        return obj


def bcoo_fromdense(mat, *, nse=None, n_batch=0, n_dense=0, index_dtype=np.int32):
    """The BCOO array holding `mat`'s nonzero entries (`nse` of them, padded; by default as many as there are)."""
    _plain_layout("bcoo_fromdense", n_batch, n_dense)
    mat = jnp.asarray(mat)
    mask = mat != 0
    if nse is None:
        count = core.to_concrete_value(mask.sum())
        if count is None:
            raise errors.ConcretizationTypeError(
                mask, "bcoo_fromdense: the number of stored elements (nse) of a traced array is unknown; pass "
                "nse explicitly inside jit.")
        nse = int(count)
    nse = operator.index(nse)
    if mat.ndim == 0:
        indices = jnp.zeros((nse, 0), index_dtype)
        data = jnp.where(jnp.arange(nse) < mask.sum(), mat, jnp.zeros((), mat.dtype))
    else:
        indices = jnp.stack(jnp.nonzero(mask, size=nse, fill_value=mat.shape), axis=1).astype(index_dtype)
        data = mat.at[tuple(indices.T)].get(mode="fill", fill_value=0)
    return BCOO((data, indices), shape=mat.shape, indices_sorted=True, unique_indices=True)


def bcoo_todense(mat):
    """The dense array of a BCOO array: its entries scattered (added) into zeros; padding is dropped."""
    if mat.ndim == 0:
        return mat.data.sum(dtype=mat.dtype)
    return jnp.zeros(mat.shape, mat.dtype).at[tuple(mat.indices.T)].add(mat.data)


def bcoo_transpose(mat, *, permutation):
    """The BCOO array of the dense array's axes permuted: its index columns permuted."""
    permutation = tuple(operator.index(p) for p in permutation)
    if sorted(permutation) != list(range(mat.ndim)):
        raise ValueError(f"bcoo_transpose: permutation {permutation} is not a permutation of the axes of an "
                         f"array of rank {mat.ndim}")
    shape = tuple(mat.shape[p] for p in permutation)
    return BCOO((mat.data, mat.indices[:, list(permutation)]), shape=shape,
                indices_sorted=mat.indices_sorted and permutation == tuple(range(mat.ndim)),
                unique_indices=mat.unique_indices)


def todense(arr):
    """`arr` as a dense array: a BCOO array's todense(), any other array unchanged."""
    return arr.todense() if isinstance(arr, JAXSparse) else arr


def sparsify(f):
    """`f` made to take sparse arguments. On dense arguments the sparsified function is `f` itself; tracing
    `f` with sparse arguments (JAX's sparsify interpreter) is not implemented in xjax."""
    @functools.wraps(f)
    def sparsified(*args, **kwargs):
        if any(isinstance(leaf, JAXSparse) for leaf in tree_util.tree_leaves(
                (args, kwargs), is_leaf=lambda x: isinstance(x, JAXSparse))):
            raise NotImplementedError(f"jax.experimental.sparse.sparsify({getattr(f, '__name__', f)}) with "
                                      f"sparse arguments is not implemented in xjax")
        return f(*args, **kwargs)

    return sparsified


def _not_implemented(name):
    def missing(*args, **kwargs):
        raise NotImplementedError(f"jax.experimental.sparse.{name} is not implemented in xjax")

    missing.__name__ = missing.__qualname__ = name
    return missing


NOT_IMPLEMENTED = (
    "bcoo_broadcast_in_dim", "bcoo_concatenate", "bcoo_dot_general", "bcoo_dynamic_slice", "bcoo_extract",
    "bcoo_gather", "bcoo_multiply_dense", "bcoo_multiply_sparse", "bcoo_reduce_sum", "bcoo_reshape", "bcoo_rev",
    "bcoo_slice", "bcoo_sort_indices", "bcoo_squeeze", "bcoo_sum_duplicates", "bcoo_update_layout",
)
