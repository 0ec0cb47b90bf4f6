"""jax.scipy.fft (dct, idct, dctn, idctn; type 2, as JAX) against scipy.fft in float64, with
hypothesis over shapes, n/s and axes, complex input, float32, gradients, jit, vmap and JAX's errors."""
import numpy as np
import pytest
import scipy.fft as sf
from hypothesis import given, settings, strategies as st

import xjax
import xjax.numpy as jnp
from xjax.scipy import fft
from xjax.test_util import check_grads

RNG = np.random.default_rng(2707)
NORMS = [None, "backward", "ortho"]


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 16, 17, 30])
def test_1d_against_scipy(x64, n, norm):
    x = RNG.normal(size=(3, n))
    for ours, theirs in [(fft.dct, sf.dct), (fft.idct, sf.idct)]:
        got = ours(x, norm=norm)
        assert got.dtype == np.float64 and got.shape == x.shape
        np.testing.assert_allclose(got, theirs(x, norm=norm), rtol=1e-12, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=3), data=st.data(),
       norm=st.sampled_from(NORMS), seed=st.integers(0, 2 ** 16))
def test_1d_n_and_axis_hypothesis(shape, data, norm, seed):
    x = np.random.default_rng(seed).normal(size=shape)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = data.draw(st.none() | st.integers(1, 9))
    with xjax.enable_x64(True):
        got_dct = fft.dct(x, n=n, axis=axis, norm=norm)
        got_idct = fft.idct(x, n=n, axis=axis, norm=norm)
    np.testing.assert_allclose(got_dct, sf.dct(x, n=n, axis=axis, norm=norm), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got_idct, sf.idct(x, n=n, axis=axis, norm=norm), rtol=1e-12, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=4), data=st.data(),
       norm=st.sampled_from(NORMS), seed=st.integers(0, 2 ** 16))
def test_nd_hypothesis(shape, data, norm, seed):
    x = np.random.default_rng(seed).normal(size=shape)
    axes = data.draw(st.none() | st.lists(st.integers(0, len(shape) - 1), min_size=1, max_size=len(shape),
                                          unique=True))
    k = len(axes) if axes is not None else data.draw(st.integers(0, len(shape)))
    s = data.draw(st.none() | st.lists(st.integers(1, 6), min_size=k, max_size=k)) if k else None
    with xjax.enable_x64(True):
        got = fft.dctn(x, s=s, axes=axes, norm=norm), fft.idctn(x, s=s, axes=axes, norm=norm)
    np.testing.assert_allclose(got[0], sf.dctn(x, s=s, axes=axes, norm=norm), rtol=1e-12, atol=1e-11)
    np.testing.assert_allclose(got[1], sf.idctn(x, s=s, axes=axes, norm=norm), rtol=1e-12, atol=1e-12)


def test_round_trip_and_complex(x64):
    x = RNG.normal(size=(4, 6)) + 1j * RNG.normal(size=(4, 6))
    for norm in NORMS:
        got = fft.dctn(x, norm=norm)
        assert got.dtype == np.complex128
        np.testing.assert_allclose(got, sf.dctn(x, norm=norm), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(fft.idct(fft.dct(x, norm=norm), norm=norm), x, rtol=1e-12, atol=1e-12)


def test_dtypes():
    # float32 stays float32; integers become the default float, as JAX.
    x = RNG.normal(size=(5,)).astype(np.float32)
    got = fft.dct(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, sf.dct(x.astype(np.float64)), rtol=1e-5, atol=1e-5)
    assert fft.idctn(jnp.arange(6).reshape(2, 3)).dtype == np.float32


def test_jit_vmap_and_grads(x64):
    x = RNG.normal(size=(3, 6))
    f = xjax.jit(lambda x: fft.dctn(x, norm="ortho"))
    np.testing.assert_allclose(f(x), sf.dctn(x, norm="ortho"), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(xjax.vmap(lambda r: fft.idct(r, n=8))(x), sf.idct(x, n=8), rtol=1e-12, atol=1e-12)
    check_grads(lambda x: fft.dct(x, n=5, axis=0), (x,), order=2)
    check_grads(lambda x: fft.idctn(x, norm="ortho"), (x,), order=1)
    check_grads(lambda z: fft.dct(z), (x + 1j * RNG.normal(size=x.shape),), order=1)


def test_errors():
    x = jnp.ones((3, 4))
    with pytest.raises(NotImplementedError, match="Only DCT type 2"):
        fft.dct(x, type=1)
    with pytest.raises(NotImplementedError, match="Only DCT type 2"):
        fft.idctn(x, type=3)
    with pytest.raises(ValueError, match="norm='forward' is not implemented"):
        fft.idct(x, norm="forward")
    with pytest.raises(ValueError, match=r"s must have at most x.ndim \(2\) elements, got 3"):
        fft.dctn(x, s=[1, 2, 3])
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        fft.dct(x, axis=2)
    with pytest.raises(TypeError, match="dct requires ndarray or scalar arguments"):
        fft.dct([1.0, 2.0])
    with pytest.raises(ValueError, match="invalid number of data points"):
        fft.dct(x, n=0)
