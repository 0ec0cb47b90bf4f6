"""lax's data movement functions on top of the core ops (JAX's index conventions)."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax


def test_dynamic_slice_negative_starts_count_from_the_end():
    x = jnp.arange(5)
    np.testing.assert_array_equal(lax.dynamic_slice(x, (-1,), (1,)), [4])
    np.testing.assert_array_equal(lax.dynamic_slice(x, (jnp.int32(-2),), (2,)), [3, 4])
    np.testing.assert_array_equal(xjax.jit(lambda x, i: lax.dynamic_slice(x, (i,), (2,)))(x, -2), [3, 4])
    # Still clamped into range after wrapping (XLA semantics), never out of bounds.
    np.testing.assert_array_equal(lax.dynamic_slice(x, (-9,), (2,)), [0, 1])
    np.testing.assert_array_equal(lax.dynamic_slice(x, (7,), (2,)), [3, 4])


def test_dynamic_update_slice_negative_start():
    x = jnp.arange(5)
    np.testing.assert_array_equal(lax.dynamic_update_slice(x, jnp.array([9]), (-1,)), [0, 1, 2, 3, 9])
    np.testing.assert_array_equal(lax.dynamic_update_slice_in_dim(x, jnp.array([7, 8]), -2, 0), [0, 1, 2, 7, 8])


def test_dynamic_slice_rejects_float_indices():
    with pytest.raises(TypeError, match="must be integers"):
        lax.dynamic_slice(jnp.arange(5), (jnp.float32(1),), (1,))


def test_unstack_and_iteration_are_one_op():
    x = np.arange(24, dtype=np.float32).reshape(4, 3, 2)
    for axis in range(3):
        parts = lax.unstack(jnp.asarray(x), axis)
        assert len(parts) == x.shape[axis]
        for i, p in enumerate(parts):
            np.testing.assert_array_equal(p, np.take(x, i, axis=axis))
    rows = list(jnp.asarray(x))
    assert len(rows) == 4 and all(np.array_equal(r, x[i]) for i, r in enumerate(rows))
    big = np.arange(250 * 2).reshape(250, 2)  # iterated in chunks of 100 rows
    np.testing.assert_array_equal(np.stack([np.asarray(r) for r in jnp.asarray(big)]), big)
    a, b = xjax.jit(lambda x: tuple(x))(jnp.asarray(x[:2]))
    np.testing.assert_array_equal(b, x[1])


def test_unstack_differentiates_and_batches():
    x = jnp.asarray(np.arange(6, dtype=np.float32).reshape(3, 2))
    g = xjax.grad(lambda x: sum(p * (i + 1.0) for i, p in enumerate(lax.unstack(x, 1))).sum())(x)
    np.testing.assert_array_equal(g, np.tile([1.0, 2.0], (3, 1)))
    _, t = xjax.jvp(lambda x: lax.unstack(x, 0)[2], (x,), (jnp.ones_like(x),))
    np.testing.assert_array_equal(t, [1.0, 1.0])
    batched = xjax.vmap(lambda r: lax.unstack(r, 0)[1], in_axes=1)(x)
    np.testing.assert_array_equal(batched, np.asarray(x)[1])
