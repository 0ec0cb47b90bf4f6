"""Depthwise convolutions (feature_group_count equal to the input features), which the CPU computes
directly (cpu/conv_depthwise.cpp): against the NumPy definition over spatial ranks, windows, strides,
dilations, paddings, layouts and dtypes; padding times an infinite weight as in JAX; gradients in
x64; bits that do not depend on the thread count."""

import numpy as np
import pytest
from conv_reference import ref_conv
from hypothesis import given, settings
from hypothesis import strategies as st
from isolated import digests_by_thread_count

import xjax
from xjax import lax
from xjax.test_util import check_grads

LAYOUTS = {1: [("NWC", "WIO", "NWC"), ("NCW", "OIW", "NCW")],
           2: [("NHWC", "HWIO", "NHWC"), ("NCHW", "OIHW", "NCHW"), ("NHWC", "OIHW", "NCHW")],
           3: [("NDHWC", "DHWIO", "NDHWC"), ("NCDHW", "OIDHW", "NCDHW")]}


@pytest.fixture
def x64():
    xjax.config.update("jax_enable_x64", True)
    yield
    xjax.config.update("jax_enable_x64", False)


def operands(rng, dn, batch, channels, multiplier, sizes, windows, dtype):
    """x and w in the layouts of dn, for a depthwise convolution with `multiplier` outputs per feature."""
    lhs_s, rhs_s, _ = dn
    spatial = [c for c in rhs_s if c not in "OI"]
    x_dims = {"N": batch, "C": channels, **dict(zip(spatial, sizes))}
    w_dims = {"O": channels * multiplier, "I": 1, **dict(zip(spatial, windows))}
    x = rng.standard_normal([x_dims[c] for c in lhs_s])
    w = rng.standard_normal([w_dims[c] for c in rhs_s])
    return x.astype(dtype), w.astype(dtype)


@st.composite
def cases(draw):
    nsp = draw(st.integers(1, 3))
    sizes = draw(st.lists(st.integers(1, 7), min_size=nsp, max_size=nsp))
    windows = draw(st.lists(st.integers(1, 4), min_size=nsp, max_size=nsp))
    strides = draw(st.lists(st.integers(1, 3), min_size=nsp, max_size=nsp))
    dilations = draw(st.lists(st.integers(1, 2), min_size=nsp, max_size=nsp))
    low = [-1 if n >= 3 else 0 for n in sizes]  # (negative pads crop; at most to one element)
    pads = [draw(st.tuples(st.integers(lo, 3), st.integers(lo, 3))) for lo in low]
    return dict(dn=draw(st.sampled_from(LAYOUTS[nsp])), batch=draw(st.integers(1, 3)),
                channels=draw(st.sampled_from([2, 3, 16, 21, 37])), multiplier=draw(st.sampled_from([1, 1, 2])),
                sizes=sizes, windows=windows, strides=strides, dilations=dilations, pads=pads,
                seed=draw(st.integers(0, 2**16)))


def run_case(c, dtype):
    rng = np.random.default_rng(c["seed"])
    x, w = operands(rng, c["dn"], c["batch"], c["channels"], c["multiplier"], c["sizes"], c["windows"], dtype)
    got = lax.conv_general_dilated(x, w, c["strides"], c["pads"], rhs_dilation=c["dilations"],
                                   dimension_numbers=c["dn"], feature_group_count=c["channels"])
    want = ref_conv(x.astype(np.float64), w.astype(np.float64), c["strides"], c["pads"], [1] * len(c["sizes"]),
                    c["dilations"], c["dn"], fgc=c["channels"])
    return np.asarray(got), want


@settings(max_examples=60, deadline=None)
@given(cases())
def test_matches_numpy_in_float64(c):
    with xjax.enable_x64(True):
        got, want = run_case(c, np.float64)
    assert got.dtype == np.float64 and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(cases(), st.sampled_from([np.float32, np.float16, xjax.numpy.bfloat16]))
def test_matches_numpy_in_lower_precision(c, dtype):
    got, want = run_case(c, dtype)
    tol = {np.float32: 1e-5}.get(dtype, 2e-2)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=tol * 4)


def test_integers_are_exact():
    rng = np.random.default_rng(3)
    x = rng.integers(-50, 50, (2, 9, 8, 19)).astype(np.int32)
    w = rng.integers(-5, 5, (3, 2, 1, 19)).astype(np.int32)
    dn = ("NHWC", "HWIO", "NHWC")
    got = lax.conv_general_dilated(x, w, (2, 1), [(1, 1), (0, 1)], dimension_numbers=dn, feature_group_count=19)
    want = ref_conv(x.astype(np.int64), w.astype(np.int64), (2, 1), [(1, 1), (0, 1)], (1, 1), (1, 1), dn, fgc=19)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, want)


def test_padding_times_an_infinite_weight_is_nan_as_in_jax():
    # Recorded from JAX 0.10.2: a tap on padding contributes 0 * w, so an infinite weight there gives NaN.
    x = np.ones((1, 4, 4, 3), np.float32)
    w = np.ones((3, 3, 1, 3), np.float32)
    w[0, 0, 0, 1] = np.inf
    got = np.asarray(lax.conv_general_dilated(x, w, (1, 1), "SAME", feature_group_count=3,
                                              dimension_numbers=("NHWC", "HWIO", "NHWC")))
    nan_at = np.zeros((4, 4), bool)
    nan_at[0, :] = nan_at[:, 0] = True
    np.testing.assert_array_equal(np.isnan(got[0, :, :, 1]), nan_at)
    assert np.all(got[0, 1:, 1:, 1] == np.inf)
    np.testing.assert_array_equal(got[0, :, :, 0], got[0, :, :, 2])
    assert got[0, 1, 1, 0] == 9 and got[0, 0, 0, 0] == 4


def test_gradients(x64):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 5, 6, 4))
    w = rng.standard_normal((3, 2, 1, 4))

    def f(x, w):
        return lax.conv_general_dilated(x, w, (2, 1), "SAME", rhs_dilation=(1, 2), feature_group_count=4,
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))

    check_grads(f, (x, w), order=2, modes=["fwd", "rev"])


_HASH_SCRIPT = """
import hashlib
import numpy as np
import xjax
rng = np.random.default_rng(11)
h = hashlib.sha1()
for shape, window, strides in [((4, 33, 40, 48), (3, 3), (1, 1)), ((2, 17, 19, 21), (5, 2), (2, 1))]:
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal(window + (1, shape[-1])).astype(np.float32)
    y = xjax.jit(lambda x, w: xjax.lax.conv_general_dilated(x, w, strides, "SAME", feature_group_count=shape[-1],
                 dimension_numbers=("NHWC", "HWIO", "NHWC")))(x, w)
    h.update(np.asarray(y).tobytes())
print(h.hexdigest())
"""


def test_bits_do_not_depend_on_the_thread_count():
    first, second = digests_by_thread_count(_HASH_SCRIPT)
    assert first == second
