"""jax.scipy.ndimage.map_coordinates against scipy.ndimage.map_coordinates in float64 (JAX's
'constant' and 'wrap' are SciPy's 'grid-constant' and 'grid-wrap'), integer inputs as JAX rounds
them, gradients, jit, vmap and JAX's errors."""
import numpy as np
import pytest
import scipy.ndimage as sn
from hypothesis import given, settings, strategies as st

import xjax
import xjax.numpy as jnp
from xjax.scipy import ndimage
from xjax.test_util import check_grads

RNG = np.random.default_rng(2701)
MODES = {"constant": "grid-constant", "nearest": "nearest", "wrap": "grid-wrap", "mirror": "mirror",
         "reflect": "reflect"}


@pytest.fixture
def x64():
    with xjax.enable_x64(True):
        yield


@pytest.mark.parametrize("order", [0, 1])
@pytest.mark.parametrize("mode", sorted(MODES))
def test_against_scipy(x64, order, mode):
    x = RNG.normal(size=(5, 7))
    coords = [RNG.uniform(-13, 13, 300), RNG.uniform(-15, 15, 300)]
    got = ndimage.map_coordinates(x, coords, order, mode, cval=-1.5)
    want = sn.map_coordinates(x, np.array(coords), order=order, mode=MODES[mode], cval=-1.5)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-14)


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3), order=st.sampled_from([0, 1]),
       mode=st.sampled_from(sorted(MODES)), seed=st.integers(0, 2 ** 16))
def test_shapes_hypothesis(shape, order, mode, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=shape)
    coords = [rng.uniform(-2 * n - 1, 2 * n + 1, (3, 2)) for n in shape]
    if order == 0:  # stay off the halves, where SciPy and JAX round differently
        coords = [np.round(c) + rng.uniform(-0.4, 0.4, c.shape) for c in coords]
    with xjax.enable_x64(True):
        got = ndimage.map_coordinates(x, coords, order, mode)
    want = sn.map_coordinates(x, np.array(coords), order=order, mode=MODES[mode])
    assert got.shape == (3, 2)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


def test_integer_input_rounds_half_away_from_zero():
    x = jnp.array([[0, 1, 2], [3, 4, 5]], dtype=np.int32)
    got = ndimage.map_coordinates(x, [jnp.array([0.5, 0.5, 0.0]), jnp.array([0.0, 0.5, 1.5])], order=1)
    assert got.dtype == np.int32
    # 1.5 -> 2, 2.0 -> 2, 1.5 -> 2 (half away from zero), as JAX.
    np.testing.assert_array_equal(got, [2, 2, 2])
    # Order 0 rounds the coordinate itself half away from zero.
    np.testing.assert_array_equal(
        ndimage.map_coordinates(x, [jnp.array([0.5, -0.5]), jnp.array([1.5, 0.0])], order=0, cval=9), [5, 9])


def test_float32_and_docstring_example():
    x = jnp.arange(12.0).reshape(3, 4)
    got = ndimage.map_coordinates(x, [jnp.array([0.5, 1.5]), jnp.array([1.5, 2.5])], order=1)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, [3.5, 8.5])


def test_gradients(x64):
    x = RNG.normal(size=(4, 5))
    coords = (RNG.uniform(0.1, 2.9, 6) + 0.05, RNG.uniform(-1.3, 5.3, 6))
    for mode in ("constant", "reflect"):
        check_grads(lambda x, c0, c1: ndimage.map_coordinates(x, [c0, c1], 1, mode), (x,) + coords, order=1)
    check_grads(lambda x: ndimage.map_coordinates(x, list(coords), 0, "wrap"), (x,), order=2)


def test_jit_and_vmap(x64):
    xs = RNG.normal(size=(3, 6))
    c = RNG.uniform(-1, 7, 4)
    jitted = xjax.jit(lambda x, c: ndimage.map_coordinates(x, [c], 1, "mirror"))
    np.testing.assert_allclose(jitted(xs[0], c), sn.map_coordinates(xs[0], c[None], order=1, mode="mirror"),
                               rtol=1e-14)
    batched = xjax.vmap(lambda x: ndimage.map_coordinates(x, [c], 1, "nearest"))(xs)
    want = np.stack([sn.map_coordinates(x, c[None], order=1, mode="nearest") for x in xs])
    np.testing.assert_allclose(batched, want, rtol=1e-14)


def test_errors():
    x = jnp.ones((3, 4))
    with pytest.raises(ValueError, match="coordinates must be a sequence of length input.ndim"):
        ndimage.map_coordinates(x, [jnp.zeros(2)], 1)
    with pytest.raises(NotImplementedError, match="does not yet support mode grid-mirror"):
        ndimage.map_coordinates(x, [jnp.zeros(2)] * 2, 1, "grid-mirror")
    with pytest.raises(NotImplementedError, match="requires order<=1"):
        ndimage.map_coordinates(x, [jnp.zeros(2)] * 2, 3)
