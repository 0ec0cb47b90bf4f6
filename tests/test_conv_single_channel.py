"""One-channel 1-D convolutions with long windows (jnp.convolve, jnp.correlate, and any
conv_general_dilated with one input and one output feature, no stride or dilation): the core
computes them as a product over blocks of 64 outputs (src/core/cpu/conv_single_channel.cpp).
Checked against float64 NumPy references over lengths, windows (around the 64 where the path
starts), paddings (negative ones too), batches and dtypes, and for bits that do not depend on the
number of threads."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from isolated import digests_by_thread_count

import xjax
import xjax.numpy as jnp
from xjax import lax


@pytest.fixture
def x64():
    xjax.config.update("jax_enable_x64", True)
    yield
    xjax.config.update("jax_enable_x64", False)


def reference(x, w, pad_lo, pad_hi):
    """out[b, o] = sum_k xp[b, o + k] w[k] over x zero-padded (negative pads crop), in float64."""
    x = np.asarray(x, np.float64)
    if pad_lo < 0:
        x = x[:, -pad_lo:]
    if pad_hi < 0:
        x = x[:, :x.shape[1] + pad_hi]
    x = np.pad(x, ((0, 0), (max(pad_lo, 0), max(pad_hi, 0))))
    if x.shape[1] < len(w):  # no window fits
        return np.zeros((x.shape[0], 0))
    return np.stack([np.correlate(row, np.asarray(w, np.float64), "valid") for row in x])


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 1500), m=st.integers(56, 300), batch=st.integers(1, 3),
       pad_lo=st.integers(-40, 320), pad_hi=st.integers(-40, 320), seed=st.integers(0, 2**31 - 1))
def test_matches_numpy_in_float64(n, m, batch, pad_lo, pad_hi, seed):
    assume(n + min(pad_lo, 0) + min(pad_hi, 0) >= 0)  # (cropping more than the input is an error, as in JAX)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, n))
    w = rng.standard_normal(m)
    want = reference(x, w, pad_lo, pad_hi)
    with xjax.enable_x64(True):
        got = lax.conv_general_dilated(jnp.asarray(x[:, None, :]), jnp.asarray(w[None, None, :]), (1,),
                                       [(pad_lo, pad_hi)])
    assert got.shape == (batch, 1, want.shape[1]) and got.dtype == np.float64
    np.testing.assert_allclose(np.asarray(got)[:, 0], want, rtol=1e-12, atol=1e-12 * np.sqrt(m))


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("n, m", [(100_000, 1000), (1000, 64), (64, 64), (65, 300), (5000, 257)])
def test_jnp_convolve_and_correlate_in_float32(mode, n, m):
    rng = np.random.default_rng(n + m)
    a, v = rng.standard_normal(n), rng.standard_normal(m)
    for fn, np_fn in ((jnp.convolve, np.convolve), (jnp.correlate, np.correlate)):
        got = np.asarray(fn(jnp.asarray(a, np.float32), jnp.asarray(v, np.float32), mode=mode))
        want = np_fn(a.astype(np.float32).astype(np.float64), v.astype(np.float32).astype(np.float64), mode=mode)
        assert got.shape == want.shape and got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=0, atol=2e-6 * np.sqrt(m) * np.abs(want).max())


def test_integers_are_exact():
    rng = np.random.default_rng(3)
    a, v = rng.integers(-9, 9, 4000).astype(np.int32), rng.integers(-9, 9, 200).astype(np.int32)
    np.testing.assert_array_equal(jnp.convolve(a, v), np.convolve(a, v))
    np.testing.assert_array_equal(jnp.correlate(a, v, mode="same"), np.correlate(a, v, mode="same"))


def test_gradients_agree_with_numpy(x64):
    rng = np.random.default_rng(4)
    a, v = jnp.asarray(rng.standard_normal(700)), jnp.asarray(rng.standard_normal(90))
    ga, gv = xjax.grad(lambda a, v: jnp.sum(jnp.convolve(a, v) ** 2), (0, 1))(a, v)
    y = np.convolve(np.asarray(a), np.asarray(v))
    np.testing.assert_allclose(ga, 2 * np.correlate(y, np.asarray(v), "valid"), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(gv, 2 * np.correlate(y, np.asarray(a), "valid"), rtol=1e-10, atol=1e-10)


_HASH_SCRIPT = """
import hashlib
import numpy as np
import xjax.numpy as jnp
rng = np.random.default_rng(7)
h = hashlib.sha1()
for n, m in [(100_000, 1000), (3000, 70), (70_000, 128)]:
    a = jnp.asarray(rng.standard_normal(n).astype(np.float32))
    v = jnp.asarray(rng.standard_normal(m).astype(np.float32))
    h.update(np.asarray(jnp.convolve(a, v)).tobytes())
print(h.hexdigest())
"""


def test_bits_do_not_depend_on_the_thread_count():
    first, second = digests_by_thread_count(_HASH_SCRIPT)
    assert first == second
