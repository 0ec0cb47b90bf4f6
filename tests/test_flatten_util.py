"""jax.flatten_util.ravel_pytree, against values recorded from JAX 0.10.2."""
import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax.flatten_util import ravel_pytree


def test_mixed_dtypes_promote_and_unravel_back():
    tree = {"a": jnp.ones(3), "b": (2.0, jnp.arange(2))}
    flat, unravel = ravel_pytree(tree)
    assert flat.dtype == jnp.float32  # recorded from JAX 0.10.2: [1 1 1 2 0 1] float32
    np.testing.assert_array_equal(flat, [1, 1, 1, 2, 0, 1])
    back = unravel(flat)
    assert jax.tree.structure(back) == jax.tree.structure(tree)
    assert back["b"][1].dtype == jnp.int32 and back["b"][0].dtype == jnp.float32
    np.testing.assert_array_equal(back["b"][1], [0, 1])
    with pytest.raises(TypeError, match="expected dtype float32"):
        ravel_pytree({"a": jnp.ones(3), "b": jnp.arange(2)})[1](jnp.ones(5, jnp.int32))


def test_one_dtype_unravel_keeps_the_given_dtype():
    flat, unravel = ravel_pytree([jnp.ones((2, 2), jnp.float16), jnp.zeros(1, jnp.float16)])
    assert flat.dtype == jnp.float16
    back = unravel(flat.astype(jnp.float32))  # as in JAX 0.10.2: float32 leaves come back
    assert [x.dtype for x in back] == [jnp.float32, jnp.float32] and back[0].shape == (2, 2)


def test_empty_tree_and_grad():
    flat, unravel = ravel_pytree({})
    assert flat.shape == (0,) and flat.dtype == jnp.float32 and unravel(flat) == {}
    g = jax.grad(lambda t: (ravel_pytree(t)[0] ** 2).sum())({"a": jnp.array([1.0, 2.0]), "b": jnp.array(3.0)})
    np.testing.assert_array_equal(g["a"], [2, 4])  # recorded from JAX 0.10.2
    np.testing.assert_array_equal(g["b"], 6)
    flat, unravel = jax.jit(lambda t: ravel_pytree(t)[0])({"x": jnp.ones((2, 3))}), None
    assert flat.shape == (6,)
