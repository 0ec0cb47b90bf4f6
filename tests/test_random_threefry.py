"""The threefry2x32 lax primitive: both result words as the NumPy model gives them, lax broadcasting,
jit, vmap (broadcasting batch rule) and zero derivatives."""
import numpy as np

import xjax
import xjax.numpy as jnp
from test_core_threefry import threefry_np
from xjax._src.random.threefry import iota_2x32_shape, threefry2x32


def _u32(rng, shape):
    return rng.integers(0, 2**32, shape, dtype=np.uint32)


def test_words_and_broadcasting():
    rng = np.random.default_rng(0)
    k0, k1 = np.uint32(5), _u32(rng, (3, 1))
    x0, x1 = _u32(rng, (3, 4)), _u32(rng, (1, 4))
    y0, y1 = threefry2x32(k0, k1, x0, x1)
    w0, w1 = threefry_np(k0, k1, x0, x1)
    assert y0.dtype == np.uint32 and y0.shape == (3, 4)
    np.testing.assert_array_equal(y0, w0)
    np.testing.assert_array_equal(y1, w1)
    j0, j1 = xjax.jit(threefry2x32)(k0, k1, x0, x1)
    np.testing.assert_array_equal(j0, w0)
    np.testing.assert_array_equal(j1, w1)


def test_vmap_uses_the_broadcasting_rule():
    rng = np.random.default_rng(1)
    keys, xs = _u32(rng, (5, 2)), _u32(rng, (7,))
    y0, y1 = xjax.vmap(lambda k: threefry2x32(*k, xs, xs + 1))(jnp.asarray(keys))  # *k: one unstack op
    for i in range(5):
        w0, w1 = threefry_np(keys[i, 0], keys[i, 1], xs, xs + np.uint32(1))
        np.testing.assert_array_equal(y0[i], w0)
        np.testing.assert_array_equal(y1[i], w1)


def test_zero_tangents_and_iota_words():
    from xjax._src.interpreters.ad import float0

    x = jnp.arange(4, dtype=jnp.uint32)
    (y0, y1), (t0, t1) = xjax.jvp(lambda x: threefry2x32(x, x, x, x), (x,), (np.zeros(4, float0),))
    assert t0.dtype == float0 and t1.shape == (4,)
    hi, lo = iota_2x32_shape((3, 5))
    np.testing.assert_array_equal(hi, np.zeros((3, 5)))
    np.testing.assert_array_equal(lo, np.arange(15).reshape(3, 5))
