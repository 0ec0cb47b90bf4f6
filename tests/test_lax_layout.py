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
