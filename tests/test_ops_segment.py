"""jax.ops segment reductions, against values recorded from JAX 0.10.2."""
import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax import ops

inf = float("inf")
D = jnp.arange(12.0).reshape(6, 2)
IDS = jnp.array([0, 0, 2, 1, -1, 7])  # -1 is dropped, not wrapped

# Recorded from JAX 0.10.2: f(D, IDS) and f(D, IDS, 4, bucket_size=2).
RECORDED = {
    "segment_sum": ([[2, 4], [6, 7], [4, 5], [0, 0], [0, 0], [0, 0], [0, 0], [10, 11]],
                    [[2, 4], [6, 7], [4, 5], [0, 0]]),
    "segment_max": ([[2, 3], [6, 7], [4, 5], [-inf, -inf], [-inf, -inf], [-inf, -inf], [-inf, -inf], [10, 11]],
                    [[2, 3], [6, 7], [4, 5], [-inf, -inf]]),
    "segment_min": ([[0, 1], [6, 7], [4, 5], [inf, inf], [inf, inf], [inf, inf], [inf, inf], [10, 11]],
                    [[0, 1], [6, 7], [4, 5], [inf, inf]]),
    "segment_prod": ([[0, 3], [6, 7], [4, 5], [1, 1], [1, 1], [1, 1], [1, 1], [10, 11]],
                     [[0, 3], [6, 7], [4, 5], [1, 1]]),
}


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_segment_reductions(name):
    f = getattr(ops, name)
    whole, bucketed = RECORDED[name]
    out = f(D, IDS)
    assert out.dtype == jnp.float32
    np.testing.assert_array_equal(out, np.array(whole, np.float32))
    np.testing.assert_array_equal(f(D, IDS, 4, bucket_size=2), np.array(bucketed, np.float32))


def test_integer_and_bool_identities():
    # Recorded from JAX 0.10.2.
    ids = jnp.array([0, 1, 1, 3, 3])
    np.testing.assert_array_equal(ops.segment_sum(jnp.arange(5), ids), [0, 3, 0, 7])
    np.testing.assert_array_equal(ops.segment_max(jnp.arange(5), ids), [0, 2, -2147483648, 4])
    np.testing.assert_array_equal(ops.segment_min(jnp.array([True, False, True]), jnp.array([0, 0, 2])),
                                  [False, True, True])


def test_under_jit_and_grad():
    # Recorded from JAX 0.10.2.
    np.testing.assert_array_equal(jax.jit(lambda d, i: ops.segment_max(d, i, num_segments=3))(D, IDS),
                                  [[2, 3], [6, 7], [4, 5]])
    np.testing.assert_array_equal(jax.grad(lambda d: (ops.segment_max(d, IDS, 3) ** 2).sum())(D),
                                  [[0, 0], [4, 6], [8, 10], [12, 14], [0, 0], [0, 0]])
    np.testing.assert_array_equal(jax.grad(lambda d: (ops.segment_sum(d, IDS, 3) ** 2).sum())(D),
                                  [[4, 8], [4, 8], [8, 10], [12, 14], [0, 0], [0, 0]])


def test_bad_arguments():
    with pytest.raises(Exception, match="num_segments"):
        jax.jit(lambda d, i: ops.segment_sum(d, i))(D, IDS)
    with pytest.raises(ValueError, match="one id per row"):
        ops.segment_sum(D, jnp.array([0, 1]))
    with pytest.raises(TypeError, match="integer dtype"):
        ops.segment_sum(D, jnp.zeros(6))
    with pytest.raises(ValueError, match="non-negative"):
        ops.segment_sum(D, IDS, -1)
