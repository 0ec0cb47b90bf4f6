"""xjax.nn's pooling helpers (Flax's signatures) against NumPy loops, their gradients and errors."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import nn
from xjax.test_util import check_grads


def _pool_np(x, window, strides, pads, reduce, fill):
    """Loops over output positions of (batch, h, w, c) input padded with `fill`."""
    xp = np.pad(x, ((0, 0), pads[0], pads[1], (0, 0)), constant_values=fill)
    oh = (xp.shape[1] - window[0]) // strides[0] + 1
    ow = (xp.shape[2] - window[1]) // strides[1] + 1
    out = np.empty((x.shape[0], oh, ow, x.shape[3]), np.float64)
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, i * strides[0]:i * strides[0] + window[0], j * strides[1]:j * strides[1] + window[1]]
            out[:, i, j] = reduce(patch, axis=(1, 2))
    return out


CASES = [((2, 2), None, "VALID", ((0, 0), (0, 0))), ((3, 3), (2, 2), "VALID", ((0, 0), (0, 0))),
         ((2, 3), (1, 2), ((1, 0), (1, 1)), ((1, 0), (1, 1))), ((3, 3), (1, 1), "SAME", ((1, 1), (1, 1)))]


@pytest.mark.parametrize("window,strides,padding,pads", CASES)
def test_max_min_avg_pool_match_loops(window, strides, padding, pads):
    x = np.random.default_rng(0).normal(size=(2, 7, 6, 3)).astype(np.float32)
    s = strides or (1, 1)
    np.testing.assert_allclose(nn.max_pool(x, window, strides, padding), _pool_np(x, window, s, pads, np.max, -np.inf),
                               rtol=1e-6)
    np.testing.assert_allclose(nn.min_pool(x, window, strides, padding), _pool_np(x, window, s, pads, np.min, np.inf),
                               rtol=1e-6)
    np.testing.assert_allclose(nn.avg_pool(x, window, strides, padding),
                               _pool_np(x, window, s, pads, np.sum, 0) / np.prod(window), rtol=1e-5, atol=1e-6)
    counts = _pool_np(np.ones_like(x), window, s, pads, np.sum, 0)
    np.testing.assert_allclose(nn.avg_pool(x, window, strides, padding, count_include_pad=False),
                               _pool_np(x, window, s, pads, np.sum, 0) / counts, rtol=1e-5, atol=1e-6)


def test_pools_differentiate_and_batch():
    x = np.random.default_rng(1).normal(size=(2, 5, 4, 2))
    with xjax.enable_x64(True):
        xx = jnp.asarray(x)
        check_grads(lambda v: nn.max_pool(v, (2, 2), (1, 1)), (xx,), order=1)
        check_grads(lambda v: nn.avg_pool(v, (2, 2), (2, 1), "SAME", count_include_pad=False), (xx,), order=2)
    per_example = xjax.vmap(lambda v: nn.max_pool(v[None], (2, 2))[0])(x.astype(np.float32))
    np.testing.assert_allclose(per_example, nn.max_pool(x.astype(np.float32), (2, 2)), rtol=1e-6)


def test_bad_arguments_name_the_function():
    x = np.zeros((2, 4, 4, 1), np.float32)
    with pytest.raises(ValueError, match="max_pool.*strides"):
        nn.max_pool(x, (2, 2), (1,))
    with pytest.raises(ValueError, match="avg_pool.*padding"):
        nn.avg_pool(x, (2, 2), padding=((1, 1),))
    with pytest.raises(ValueError, match="min_pool.*dimensions"):
        nn.min_pool(np.zeros((4,), np.float32), (2, 2))
    with pytest.raises(TypeError):
        nn.max_pool([[1.0]], (1,))
