"""jax.experimental.sparse.BCOO in its plain layout (no batch or dense dimensions): conversions, transpose,
and their composition with jit and grad. Expected values recorded from JAX 0.10.2."""
import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax.experimental import sparse

M = np.array([[0., 2., 0.], [3., 0., 4.]], np.float32)


def test_fromdense_pads_as_jax_does():
    b = sparse.BCOO.fromdense(M, nse=5)
    np.testing.assert_array_equal(b.data, [2., 3., 4., 0., 0.])
    np.testing.assert_array_equal(b.indices, [[0, 1], [1, 0], [1, 2], [2, 3], [2, 3]])  # padding: the shape
    assert b.indices.dtype == np.int32 and b.dtype == np.float32
    assert (b.shape, b.nse, b.ndim, b.size, len(b)) == ((2, 3), 5, 2, 6, 2)
    assert repr(b) == "BCOO(float32[2, 3], nse=5)"
    exact = sparse.bcoo_fromdense(M)
    np.testing.assert_array_equal(exact.indices, [[0, 1], [1, 0], [1, 2]])
    np.testing.assert_array_equal(exact.todense(), M)
    assert isinstance(exact, sparse.JAXSparse)


def test_transpose_and_todense():
    b = sparse.BCOO.fromdense(M, nse=5)
    np.testing.assert_array_equal(b.T.todense(), M.T)
    np.testing.assert_array_equal(b.T.indices, [[1, 0], [0, 1], [2, 1], [3, 2], [3, 2]])
    np.testing.assert_array_equal(sparse.todense(b), M)
    np.testing.assert_array_equal(sparse.todense(M), M)  # a dense array is returned as it is


def test_jit_and_grad_through_bcoo():
    np.testing.assert_array_equal(jax.jit(lambda m: sparse.bcoo_fromdense(m, nse=4).todense())(M), M)
    np.testing.assert_array_equal(jax.jit(lambda b: b.todense() * 2)(sparse.BCOO.fromdense(M)), 2 * M)
    g = jax.grad(lambda m: (sparse.BCOO.fromdense(m, nse=3).todense() ** 2).sum())(M)
    np.testing.assert_array_equal(g, [[0., 4., 0.], [6., 0., 8.]])
    indices = sparse.BCOO.fromdense(M).indices
    g = jax.grad(lambda d: (sparse.BCOO((d, indices), shape=(2, 3)).todense() * jnp.arange(6.).reshape(2, 3)).sum())
    np.testing.assert_array_equal(g(jnp.array([2., 3., 4.])), [1., 3., 5.])


def test_unknown_nse_under_jit_and_missing_operations_raise():
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(lambda m: sparse.bcoo_fromdense(m))(M)
    with pytest.raises(NotImplementedError, match="batch or dense dimensions"):
        sparse.bcoo_fromdense(M, n_batch=1)
    with pytest.raises(NotImplementedError, match="bcoo_reduce_sum"):
        sparse.bcoo_reduce_sum(sparse.BCOO.fromdense(M), axes=(0,))
    with pytest.raises(NotImplementedError, match="sparse arguments"):
        sparse.sparsify(jnp.sum)(sparse.BCOO.fromdense(M))
    assert sparse.sparsify(jnp.sum)(M) == 9.0  # dense arguments: the function itself
