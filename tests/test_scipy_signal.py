"""jax.scipy.signal against scipy.signal in float64: convolutions (direct and FFT, every mode, hypothesis
over shapes), detrend, welch, csd, stft and istft; gradients, jit, vmap and JAX's errors."""
import numpy as np
import pytest
import scipy.signal as ss
from hypothesis import given, settings, strategies as st

import xjax
import xjax.numpy as jnp
from xjax.scipy import signal
from xjax.test_util import check_grads

RNG = np.random.default_rng(2711)
MODES = ["full", "same", "valid"]


def _close(got, want, tol=1e-12):
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@settings(max_examples=30, deadline=None)
@given(shapes=st.integers(1, 3).flatmap(
    lambda d: st.tuples(st.lists(st.integers(1, 6), min_size=d, max_size=d),
                        st.lists(st.integers(1, 6), min_size=d, max_size=d))),
       mode=st.sampled_from(MODES), method=st.sampled_from(["direct", "fft"]), seed=st.integers(0, 2 ** 16))
def test_convolve_correlate_hypothesis(shapes, mode, method, seed):
    s1, s2 = shapes
    if not (all(a >= b for a, b in zip(s1, s2)) or all(a <= b for a, b in zip(s1, s2))):
        s2 = s1  # one operand must be at least as large as the other everywhere
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=s1), rng.normal(size=s2)
    with xjax.enable_x64(True):
        got = signal.convolve(a, b, mode, method), signal.correlate(a, b, mode, method)
    _close(got[0], ss.convolve(a, b, mode, method))
    _close(got[1], ss.correlate(a, b, mode, method))


@pytest.mark.parametrize("mode", MODES)
def test_2d_and_complex(x64, mode):
    a = RNG.normal(size=(5, 6)) + 1j * RNG.normal(size=(5, 6))
    b = RNG.normal(size=(2, 3)) - 0.5j * RNG.normal(size=(2, 3))
    for x, y in [(a, b), (b, a), (a, a.real)]:
        _close(signal.convolve2d(x, y, mode), ss.convolve2d(x, y, mode))
        _close(signal.correlate2d(x, y, mode), ss.correlate2d(x, y, mode))
        _close(signal.correlate(x, y, mode), ss.correlate(x, y, mode))
        _close(signal.fftconvolve(x, y, mode), ss.fftconvolve(x, y, mode))


@pytest.mark.parametrize("mode", MODES)
def test_fftconvolve_axes(x64, mode):
    a, b = RNG.normal(size=(3, 9, 4)), RNG.normal(size=(3, 5, 4))
    _close(signal.fftconvolve(a, b, mode, axes=1), ss.fftconvolve(a, b, mode, axes=1))
    c = RNG.normal(size=(2, 9, 3))  # mapped axis 1 agrees with a's
    _close(signal.fftconvolve(a, c, mode, axes=[0, 2]), ss.fftconvolve(a, c, mode, axes=[0, 2]))


@pytest.mark.parametrize("kw", [dict(), dict(bp=[3, 11]), dict(axis=0), dict(type="constant", axis=0)])
def test_detrend(x64, kw):
    x = RNG.normal(size=(17, 3)).T if "axis" not in kw else RNG.normal(size=(17, 3))
    _close(signal.detrend(x, **kw), ss.detrend(x, **kw))


@pytest.mark.parametrize("kw", [dict(nperseg=16), dict(nperseg=16, noverlap=5, nfft=20, scaling="spectrum"),
                                dict(window="hamming", nperseg=15, detrend="linear", average="median"),
                                dict(nperseg=16, return_onesided=False, fs=3.0), dict(window=np.ones(10))])
def test_welch_csd(x64, kw):
    x, y = RNG.normal(size=(2, 90)), RNG.normal(size=(2, 90))
    for got, want in [(signal.welch(x, **kw), ss.welch(x, **kw)), (signal.csd(x, y, **kw), ss.csd(x, y, **kw))]:
        _close(got[0], want[0])
        _close(got[1], want[1])
    # axis and JAX's default nperseg (the whole signal; SciPy's is 256).
    _close(signal.welch(x.T, axis=0)[1], ss.welch(x.T, axis=0, nperseg=90)[1])


@pytest.mark.parametrize("kw", [dict(nperseg=16), dict(nperseg=15, noverlap=10, nfft=17),
                                dict(nperseg=16, boundary="even", padded=False), dict(nperseg=8, boundary="odd"),
                                dict(nperseg=8, boundary=None, window="hamming"), dict(nperseg=8, boundary="constant")])
def test_stft(x64, kw):
    x = RNG.normal(size=(2, 61))
    for got, want in zip(signal.stft(x, **kw), ss.stft(x, **kw)):
        _close(got, want)


@pytest.mark.parametrize("kw", [dict(nperseg=16), dict(nperseg=16, noverlap=12), dict(nperseg=16, nfft=20)])
def test_istft(x64, kw):
    x = RNG.normal(size=(2, 64))
    _, _, z = ss.stft(x, **kw)
    for got, want in zip(signal.istft(z, **kw), ss.istft(z, **kw)):
        _close(got, want)
    # The round trip recovers the signal.
    _close(signal.istft(signal.stft(x, **kw)[2], **kw)[1][:, :64], x)
    # Non-default axes: frequencies last, times first.
    zt = np.moveaxis(z, [1, 2], [2, 0])
    _close(signal.istft(zt, time_axis=0, freq_axis=2, **kw)[1], ss.istft(zt, time_axis=0, freq_axis=2, **kw)[1])


def test_jit_vmap_and_grads(x64):
    a, b = RNG.normal(size=(9,)), RNG.normal(size=(4,))
    f = xjax.jit(lambda a, b: signal.convolve(a, b, "same"))
    _close(f(a, b), ss.convolve(a, b, "same"))
    batch = RNG.normal(size=(3, 40))
    _close(xjax.vmap(lambda r: signal.welch(r, nperseg=8)[1])(batch), ss.welch(batch, nperseg=8)[1])
    check_grads(lambda a, b: signal.convolve(a, b, "valid"), (a, b), order=2)
    check_grads(lambda a, b: signal.fftconvolve(a, b, "same"), (a, b), order=1)
    check_grads(lambda a, b: signal.correlate2d(a, b), (a.reshape(3, 3), b.reshape(2, 2) + 1j), order=1)
    check_grads(lambda x: signal.detrend(x, bp=[4]), (a,), order=1)
    check_grads(lambda x: signal.welch(x, nperseg=8)[1], (batch[0],), order=1, modes=["rev"])
    check_grads(lambda x: signal.stft(x, nperseg=8)[2], (batch[0],), order=1)


def test_errors():
    x = jnp.ones(8)
    with pytest.raises(ValueError, match="mode must be one of"):
        signal.convolve(x, x, "middle")
    with pytest.raises(ValueError, match="expected 'auto', 'fft', or 'direct'"):
        signal.convolve(x, x, method="slow")
    with pytest.raises(ValueError, match="same number of dimensions"):
        signal.convolve(x, jnp.ones((2, 2)))
    with pytest.raises(ValueError, match="smaller than the other in every dimension"):
        signal.convolve(jnp.ones((2, 5)), jnp.ones((3, 4)))
    with pytest.raises(ValueError, match="zero-size arrays"):
        signal.convolve(x, jnp.ones(0))
    with pytest.raises(NotImplementedError, match="boundary='fill', fillvalue=0"):
        signal.convolve2d(jnp.ones((3, 3)), jnp.ones((2, 2)), boundary="wrap")
    with pytest.raises(ValueError, match="only supports 2-dimensional inputs"):
        signal.correlate2d(x, x)
    with pytest.raises(ValueError, match="should have the same dimensionality"):
        signal.fftconvolve(x, jnp.ones((2, 2)))
    with pytest.raises(ValueError, match="mapped axes must have same shape"):
        signal.fftconvolve(jnp.ones((2, 5)), jnp.ones((3, 4)), axes=1)
    with pytest.raises(ValueError, match="Trend type must be"):
        signal.detrend(x, type="quadratic")
    with pytest.raises(ValueError, match="Breakpoints must be non-negative"):
        signal.detrend(x, bp=[9])
    with pytest.raises(ValueError, match="noverlap must be less than nperseg"):
        signal.welch(x, nperseg=4, noverlap=4)
    with pytest.raises(ValueError, match="nfft must be greater than or equal to nperseg"):
        signal.stft(x, nperseg=4, nfft=3)
    with pytest.raises(ValueError, match="Unknown boundary option"):
        signal.stft(x, nperseg=4, boundary="wrap")
    with pytest.raises(ValueError, match="Unknown scaling"):
        signal.welch(x, scaling="power")
    with pytest.raises(ValueError, match='average must be "median" or "mean"'):
        signal.welch(jnp.ones((2, 8)), nperseg=4, average="mode")
    with pytest.raises(ValueError, match="Input stft must be at least 2d"):
        signal.istft(x)
    with pytest.raises(ValueError, match="differing time and frequency axes"):
        signal.istft(jnp.ones((3, 4)), time_axis=0, freq_axis=0)


def test_public_module():
    import xjax.scipy.signal as by_import

    assert xjax.scipy.signal is by_import and "signal" in dir(xjax.scipy)
