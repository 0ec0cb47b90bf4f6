"""lax.fft and jnp.fft against numpy.fft: accuracy (complex128 within 1e-12 relative, float32 within
a few ulps times log n), every jnp.fft function with n / s / axes / norm, gradients, vmap, jit,
independence of the thread count, and errors."""
import hashlib
import math
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax.test_util import check_grads

RNG = np.random.default_rng(0)


@pytest.fixture
def x64():
    with xjax.enable_x64(True):
        yield


def _cplx(shape, dtype=np.complex128):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def _rel(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if b.size == 0:
        assert a.shape == b.shape
        return 0.0
    return np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300)


LENGTHS = [1, 2, 3, 4, 5, 7, 8, 12, 16, 30, 97, 128, 243, 360, 1000, 1009, 1024, 4096, 6561]


@pytest.mark.parametrize("n", LENGTHS)
def test_complex128_1d(x64, n):
    x = _cplx((3, n))
    assert _rel(lax.fft(x, "FFT", (n,)), np.fft.fft(x)) < 1e-12
    assert _rel(lax.fft(x, lax.FftType.IFFT, (n,)), np.fft.ifft(x)) < 1e-12
    assert _rel(lax.fft(x.real, "RFFT", (n,)), np.fft.rfft(x.real)) < 1e-12
    half = x[:, : n // 2 + 1]
    assert _rel(lax.fft(half, "IRFFT", (n,)), np.fft.irfft(half, n)) < 1e-12


@pytest.mark.parametrize("n", [2 ** 20, 100003])
def test_complex128_large(x64, n):
    x = _cplx((n,))
    assert _rel(lax.fft(x, "FFT", (n,)), np.fft.fft(x)) < 1e-12
    assert _rel(lax.fft(x.real, "RFFT", (n,)), np.fft.rfft(x.real)) < 1e-12


@pytest.mark.parametrize("n", [7, 64, 97, 360, 1009, 4096, 100003])
def test_float32_accuracy(n):
    x = _cplx((2, n), np.complex64)
    bound = 8 * np.finfo(np.float32).eps * max(1.0, math.log2(n))
    ref = np.fft.fft(x.astype(np.complex128))
    assert _rel(lax.fft(x, "FFT", (n,)), ref) < bound
    assert _rel(lax.fft(x.real, "RFFT", (n,)), np.fft.rfft(x.real.astype(np.float64))) < bound
    out = np.asarray(lax.fft(x, "FFT", (n,)))
    assert out.dtype == np.complex64


@pytest.mark.parametrize("shape,k", [((3, 4, 5, 6), 3), ((2, 7, 9), 2), ((5, 8, 10), 2), ((4, 6, 33), 3),
                                     ((2, 67, 3), 2), ((40, 17), 1)])
def test_multidimensional(x64, shape, k):
    x = _cplx(shape)
    axes = tuple(range(len(shape) - k, len(shape)))
    lengths = shape[-k:]
    assert _rel(lax.fft(x, "FFT", lengths), np.fft.fftn(x, axes=axes)) < 1e-12
    assert _rel(lax.fft(x, "IFFT", lengths), np.fft.ifftn(x, axes=axes)) < 1e-12
    assert _rel(lax.fft(x.real, "RFFT", lengths), np.fft.rfftn(x.real, axes=axes)) < 1e-12
    spec = np.fft.rfftn(x.real, axes=axes) + 0.25j  # imaginary DC / Nyquist parts are ignored
    assert _rel(lax.fft(spec, "IRFFT", lengths), np.fft.irfftn(spec, s=lengths, axes=axes)) < 1e-12


def test_zero_sizes():
    assert np.asarray(lax.fft(np.zeros((2, 0, 4), np.complex64), "FFT", (0, 4))).shape == (2, 0, 4)
    assert np.asarray(lax.fft(np.zeros((0, 8), np.float32), "RFFT", (8,))).shape == (0, 5)
    # an RFFT over no samples still has its zero frequency: 0
    out = np.asarray(lax.fft(np.zeros((3, 0), np.float32), "RFFT", (0,)))
    assert out.shape == (3, 1) and not out.any()
    assert np.asarray(lax.fft(np.ones((3, 1), np.complex64), "IRFFT", (0,))).shape == (3, 0)
    assert np.asarray(jnp.fft.irfft(jnp.ones(1, jnp.complex64))).shape == (0,)
    np.testing.assert_array_equal(lax.fft(np.array([2 + 1j], np.complex64), "FFT", (1,)), [2 + 1j])


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 24), min_size=1, max_size=4), st.integers(1, 3), st.sampled_from(
    ["fft", "ifft", "rfft", "irfft"]))
def test_hypothesis_shapes(shape, k, kind):
    k = min(k, len(shape))
    with xjax.enable_x64(True):
        x = _cplx(tuple(shape))
        axes = tuple(range(len(shape) - k, len(shape)))
        lengths = tuple(shape[-k:])
        if kind == "fft":
            got, want = lax.fft(x, "FFT", lengths), np.fft.fftn(x, axes=axes)
        elif kind == "ifft":
            got, want = lax.fft(x, "IFFT", lengths), np.fft.ifftn(x, axes=axes)
        elif kind == "rfft":
            got, want = lax.fft(x.real, "RFFT", lengths), np.fft.rfftn(x.real, axes=axes)
        else:
            spec = x[..., : lengths[-1] // 2 + 1]
            got, want = lax.fft(spec, "IRFFT", lengths), np.fft.irfftn(spec, s=lengths, axes=axes)
        assert _rel(got, want) < 1e-12


NORMS = [None, "backward", "ortho", "forward"]


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"])
@pytest.mark.parametrize("n", [None, 5, 12])
@pytest.mark.parametrize("axis", [-1, 0])
def test_jnp_1d(x64, name, norm, n, axis):
    x = _cplx((9, 10))
    if name in ("rfft", "ihfft"):
        x = x.real
    got = getattr(jnp.fft, name)(x, n=n, axis=axis, norm=norm)
    want = getattr(np.fft, name)(x, n=n, axis=axis, norm=norm)
    assert got.shape == want.shape
    assert _rel(got, want) < 1e-12


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", ["fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"])
@pytest.mark.parametrize("s,axes", [(None, None), ((4, 6), (0, 2)), ((5, 3), None), (None, (1, 0))])
def test_jnp_nd(x64, name, norm, s, axes):
    x = _cplx((6, 5, 8))
    if name.startswith("rfft"):
        x = x.real
    kwargs = {"s": s, "norm": norm}
    if axes is not None:
        kwargs["axes"] = axes
    elif name.endswith("2"):
        kwargs["axes"] = (-2, -1)
    got = getattr(jnp.fft, name)(x, **kwargs)
    if s is not None and "axes" not in kwargs:  # NumPy 2 wants the axes spelled out
        kwargs["axes"] = tuple(range(x.ndim - len(s), x.ndim))
    want = getattr(np.fft, name)(x, **kwargs)
    assert got.shape == want.shape
    assert _rel(got, want) < 1e-12


def test_jnp_more_than_three_axes(x64):
    x = _cplx((3, 4, 2, 5, 3))
    assert _rel(jnp.fft.fftn(x), np.fft.fftn(x)) < 1e-12
    assert _rel(jnp.fft.ifftn(x), np.fft.ifftn(x)) < 1e-12
    assert _rel(jnp.fft.rfftn(x.real), np.fft.rfftn(x.real)) < 1e-12
    assert _rel(jnp.fft.irfftn(x), np.fft.irfftn(x)) < 1e-12


def test_freqs_and_shifts(x64):
    for n in (1, 4, 7):
        np.testing.assert_allclose(jnp.fft.fftfreq(n, 0.5), np.fft.fftfreq(n, 0.5))
        np.testing.assert_allclose(jnp.fft.rfftfreq(n, 0.5), np.fft.rfftfreq(n, 0.5))
    assert jnp.fft.fftfreq(4, dtype=jnp.float32).dtype == jnp.float32
    x = np.arange(24.0).reshape(4, 6)
    for axes in (None, 0, (1,), (0, 1)):
        np.testing.assert_array_equal(jnp.fft.fftshift(x, axes), np.fft.fftshift(x, axes))
        np.testing.assert_array_equal(jnp.fft.ifftshift(x, axes), np.fft.ifftshift(x, axes))


def test_jnp_dtypes():
    assert jnp.fft.fft(jnp.ones(4, jnp.float32)).dtype == jnp.complex64
    assert jnp.fft.rfft(jnp.ones(4, jnp.int32)).dtype == jnp.complex64
    assert jnp.fft.irfft(jnp.ones(3, jnp.complex64)).dtype == jnp.float32


@pytest.mark.parametrize("kind,n", [("FFT", 6), ("IFFT", 7), ("RFFT", 6), ("RFFT", 7), ("IRFFT", 6),
                                    ("IRFFT", 7)])
def test_grads(x64, kind, n):
    if kind == "RFFT":
        x = RNG.standard_normal((2, n))
    elif kind == "IRFFT":
        x = _cplx((2, n // 2 + 1))
    else:
        x = _cplx((2, n))
    check_grads(lambda x: lax.fft(x, kind, (n,)), (x,), order=2, modes=["fwd", "rev"])


def test_grads_2d(x64):
    check_grads(lambda x: lax.fft(x, "RFFT", (4, 6)), (RNG.standard_normal((4, 6)),), order=1, modes=["rev"])
    check_grads(lambda x: lax.fft(x, "IRFFT", (4, 6)), (_cplx((4, 4)),), order=1, modes=["rev"])


def test_grad_matches_jax():
    jax = pytest.importorskip("jax")
    x = RNG.standard_normal(8).astype(np.float32)
    for f in ("rfft", "fft", "ihfft"):
        want = jax.grad(lambda x, f=f: jax.numpy.sum(jax.numpy.abs(getattr(jax.numpy.fft, f)(x) * (1 + 2j)) ** 2))(x)
        got = xjax.grad(lambda x, f=f: jnp.sum(jnp.abs(getattr(jnp.fft, f)(x) * (1 + 2j)) ** 2))(x)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    y = (RNG.standard_normal(5) + 1j * RNG.standard_normal(5)).astype(np.complex64)
    want = jax.grad(lambda y: jax.numpy.sum(jax.numpy.fft.irfft(y, 8) ** 3))(y)
    got = xjax.grad(lambda y: jnp.sum(jnp.fft.irfft(y, 8) ** 3))(y)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_vmap_and_jit(x64):
    x = _cplx((4, 3, 8))
    for kind, arg, n in [("FFT", x, 8), ("RFFT", x.real, 8), ("IRFFT", x[..., :5], 8)]:
        f = lambda v, kind=kind, n=n: lax.fft(v, kind, (n,))  # noqa: E731
        loop = np.stack([f(arg[:, i]) for i in range(3)], axis=1)
        assert _rel(xjax.vmap(f, in_axes=1, out_axes=1)(arg), loop) < 1e-13
        assert _rel(xjax.jit(f)(arg), f(arg)) == 0


_HASH_SCRIPT = r"""
import hashlib, numpy as np
import xjax.numpy as jnp
rng = np.random.default_rng(1)
h = hashlib.sha256()
for shape, f in [((64, 360), jnp.fft.fft), ((2, 1009), jnp.fft.fft), ((8, 96, 130), jnp.fft.rfft2),
                 ((6, 40, 50), jnp.fft.ifftn), ((5, 33, 64), jnp.fft.irfft2)]:
    x = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)
    h.update(np.asarray(f(x.real if f is jnp.fft.rfft2 else x)).tobytes())
print(h.hexdigest())
"""


def test_thread_count_independent():
    def run(threads):
        env = dict(os.environ, XJAX_NUM_THREADS=str(threads))
        out = subprocess.run([sys.executable, "-c", _HASH_SCRIPT], env=env, capture_output=True, text=True,
                             check=True)
        return out.stdout.strip()

    assert run(1) == run(3)


def _transforms_digest():
    """sha256 of the bits of transforms over every kind of plan (radix 4/2/3/5, a generic odd
    radix, Bluestein), rows as lanes and strided columns, float32 and float64."""
    rng = np.random.default_rng(5)
    h = hashlib.sha256()
    with xjax.enable_x64(True):
        for real, cplx in ((np.float32, np.complex64), (np.float64, np.complex128)):
            for shape in [(3, 512), (5, 96, 40), (7, 1000), (2, 97, 31), (4, 6, 64), (9, 60)]:
                x = rng.standard_normal(shape).astype(real)
                z = (x + 1j * rng.standard_normal(shape)).astype(cplx)
                for r in (jnp.fft.rfft(x), jnp.fft.irfft(jnp.fft.rfft(x)), jnp.fft.fft(z),
                          jnp.fft.ifft(z, axis=-2), jnp.fft.fftn(z), jnp.fft.irfft2(jnp.fft.rfft2(x))):
                    h.update(np.asarray(r).tobytes())
    return h.hexdigest()


def test_bits_do_not_depend_on_the_cpu():
    # Recorded from the baseline x86-64 code (no AVX clones); the AVX2 clones of the passes, and
    # any other CPU, must give these bits.
    assert _transforms_digest() == "0dfba28c3c26bff3200d89fd409def07dbf1541e762527643e661a4a2401ab28"


def test_errors():
    with pytest.raises(ValueError, match="minor dimensions must be equal to fft_lengths"):
        lax.fft(np.ones((2, 3), np.complex64), "FFT", (4,))
    with pytest.raises(ValueError, match="at least as many input dimensions"):
        lax.fft(np.ones((3,), np.complex64), "FFT", (1, 3))
    with pytest.raises(ValueError, match="1 to 3 entries"):
        lax.fft(np.ones((1, 1, 1, 3), np.complex64), "FFT", (1, 1, 1, 3))
    with pytest.raises(ValueError, match="fft_lengths\\[-1\\] // 2 \\+ 1 = 5"):
        lax.fft(np.ones((3,), np.complex64), "IRFFT", (8,))
    with pytest.raises(ValueError, match="only real valued inputs supported for rfft"):
        lax.fft(np.ones((3,), np.complex64), "RFFT", (3,))
    with pytest.raises(ValueError, match="Unknown FFT type 'bogus'"):
        lax.fft(np.ones((3,), np.complex64), "bogus", (3,))
    with pytest.raises(TypeError, match="Unknown FFT type value"):
        lax.fft(np.ones((3,), np.complex64), 7.5, (3,))
    with pytest.raises(ValueError, match="Shape should be positive"):
        jnp.fft.fft(jnp.ones(3), n=0)
    with pytest.raises(ValueError, match="Invalid norm value"):
        jnp.fft.fft(jnp.ones(3), norm="bogus")
    with pytest.raises(ValueError, match="does not support multiple axes"):
        jnp.fft.fft(jnp.ones((3, 3)), axis=(0, 1))
    with pytest.raises(ValueError, match="repeated axes"):
        jnp.fft.fftn(jnp.ones((3, 3)), axes=(0, 0))


def test_core_checks_attributes():
    """The core's shape rule (which also rebuilds graphs read from .xjx files) refuses bad attributes."""
    from xjax import _core
    with pytest.raises(ValueError, match="fft_type must be one of"):
        _core.infer("fft", [((4,), "complex64")], {"fft_type": "DCT", "fft_lengths": [4]})
    with pytest.raises(ValueError, match="fft_lengths must lie in"):
        _core.infer("fft", [((4,), "complex64")], {"fft_type": "FFT", "fft_lengths": [-4]})
    with pytest.raises(ValueError, match="missing attribute 'fft_lengths'"):
        _core.infer("fft", [((4,), "complex64")], {"fft_type": "FFT"})
    with pytest.raises(ValueError, match="FFT input must be complex64 or complex128, got float32"):
        _core.infer("fft", [((4,), "float32")], {"fft_type": "FFT", "fft_lengths": [4]})
    with pytest.raises(ValueError, match="RFFT input must be float32 or float64, got int32"):
        _core.infer("fft", [((4,), "int32")], {"fft_type": "RFFT", "fft_lengths": [4]})


def test_export_round_trip(tmp_path):
    from xjax import export
    f = xjax.jit(lambda x: jnp.fft.irfft(jnp.fft.rfft(x) * 2))
    x = RNG.standard_normal((3, 10)).astype(np.float32)
    exp = export.export(f)(x)
    back = export.deserialize(exp.serialize())
    np.testing.assert_allclose(back.call(x), 2 * x, rtol=1e-5, atol=1e-5)
    assert hashlib.sha256(np.asarray(back.call(x)).tobytes()).digest() == \
        hashlib.sha256(np.asarray(f(x)).tobytes()).digest()
