"""Sparse arrays (jax.experimental.sparse): BCOO in its plain layout. The operations xjax does not have
raise NotImplementedError naming them."""
from xjax._src import sparse as _sparse
from xjax._src.sparse import (BCOO, JAXSparse, bcoo_fromdense, bcoo_todense, bcoo_transpose,  # noqa: F401
                              sparsify, todense)

globals().update({name: _sparse._not_implemented(name) for name in _sparse.NOT_IMPLEMENTED})
