"""lax.reduce: monoids become reduce_* primitives, other computations (variadic ones included) fold
pairwise with the init value once; values recorded from JAX 0.10.2."""
import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax import lax

X = jnp.arange(12.0).reshape(3, 4)


def test_monoids_are_primitives():
    np.testing.assert_array_equal(lax.reduce(X, 0.0, lax.add, (0,)), [12, 15, 18, 21])
    np.testing.assert_array_equal(lax.reduce(X, -jnp.inf, lax.max, (1,)), [3, 7, 11])
    assert float(lax.reduce(X, 1.0, lax.mul, (0, 1))) == 0.0
    text = str(jax.make_jaxpr(lambda x: lax.reduce(x, 0.0, lax.add, (0,)))(X))
    assert "reduce_sum[axes=(0,)" in text  # as in JAX 0.10.2's jaxpr
    np.testing.assert_array_equal(jax.grad(lambda x: lax.reduce(x, 0.0, lax.add, (0, 1)))(X), np.ones((3, 4)))


def test_general_computations():
    # Recorded from JAX 0.10.2: the init value enters once.
    np.testing.assert_array_equal(lax.reduce(X, 1.0, lambda a, b: a + b, (0,)), [13, 16, 19, 22])
    assert float(lax.reduce(X, 1.0, lambda a, b: a + b, (0, 1))) == 67.0
    np.testing.assert_array_equal(lax.reduce(jnp.ones((0, 3)), 2.0, lambda a, b: a + b, (0,)), [2, 2, 2])
    assert float(lax.reduce(jnp.arange(7.0), 0.0, lambda a, b: a + b, (0,))) == 21.0
    ints = jnp.array([[1, 2], [4, 8], [16, 0]])
    np.testing.assert_array_equal(jax.jit(lambda x: lax.reduce(x, 0, lambda a, b: a | b, (0,)))(ints), [21, 10])
    # variadic: argmax as a reduction of (value, index) pairs
    vals, idx = lax.reduce((X, jnp.arange(12).reshape(3, 4)), (-jnp.inf, 0),
                           lambda a, b: (jnp.maximum(a[0], b[0]), jnp.where(a[0] >= b[0], a[1], b[1])), (1,))
    np.testing.assert_array_equal(vals, [3, 7, 11])
    np.testing.assert_array_equal(idx, [3, 7, 11])


def test_errors():
    with pytest.raises(ValueError, match="Operands must have the same tree structure as init_values"):
        lax.reduce(X, (0.0,), lax.add, (0,))
