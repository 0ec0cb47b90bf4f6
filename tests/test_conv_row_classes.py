"""Convolutions of an lhs with holes (conv_transpose, input gradients of strided convolutions): the CPU
kernel computes every class of output positions in one set of tasks and writes each row block in place
(conv_blocks.cpp: conv_classes)."""
import numpy as np
import pytest
from conv_reference import ref_conv
from isolated import digests_by_thread_count

import xjax
from xjax import lax

DN = ("NHWC", "HWIO", "NHWC")


@pytest.fixture
def x64():
    xjax.config.update("jax_enable_x64", True)
    yield
    xjax.config.update("jax_enable_x64", False)


def test_conv_transpose_of_the_benchmark_shape_matches_numpy():
    """Many row blocks per class, classes of 1, 2 and 4 taps, rows placed with a period of 2."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((8, 32, 32, 32)).astype(np.float32)
    w = rng.standard_normal((3, 3, 32, 32)).astype(np.float32)
    got = xjax.jit(lambda x, w: lax.conv_transpose(x, w, (2, 2), "SAME", dimension_numbers=DN))(x, w)
    # conv_transpose with SAME padding is a convolution of the dilated input, padded by (2, 1) here.
    want = ref_conv(x.astype(np.float64), w.astype(np.float64), (1, 1), ((2, 1), (2, 1)), (2, 2), (1, 1), DN)
    assert got.shape == (8, 64, 64, 32)
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-5, atol=2e-4)


@pytest.mark.parametrize("lhs_dil,window,pads", [
    ((3, 3), (1, 1), ((0, 0), (0, 0))),  # classes 1 and 2 of each dim have no tap: zero rows
    ((2, 4), (1, 2), ((1, 2), (0, 3))),  # some classes with and some without taps
    ((5, 1), (2, 3), ((4, 4), (1, 1))),  # padding wider than the holes
])
def test_classes_without_taps_are_zero_rows(x64, lhs_dil, window, pads):
    rng = np.random.default_rng(sum(lhs_dil) + sum(window))
    x = rng.standard_normal((3, 6, 5, 4))
    w = rng.standard_normal(window + (4, 5))
    got = lax.conv_general_dilated(x, w, (1, 1), pads, lhs_dil, (1, 1), DN)
    want = ref_conv(x, w, (1, 1), pads, lhs_dil, (1, 1), DN)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert np.count_nonzero(np.asarray(got) == 0) == np.count_nonzero(want == 0)


def test_input_gradient_of_a_strided_convolution_matches_numpy(x64):
    """The input gradient of a stride-2 convolution is a convolution of the cotangent with holes."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 9, 10, 6))
    w = rng.standard_normal((3, 3, 6, 7))
    ct = rng.standard_normal((2, 5, 5, 7))
    f = lambda x: lax.conv_general_dilated(x, w, (2, 2), "SAME", dimension_numbers=DN)  # noqa: E731
    got = xjax.vjp(f, x)[1](ct)[0]
    eps = 1e-6
    probe = rng.standard_normal(x.shape)
    numeric = (np.sum(np.asarray(f(x + eps * probe)) * ct) - np.sum(np.asarray(f(x - eps * probe)) * ct)) / (2 * eps)
    np.testing.assert_allclose(np.sum(np.asarray(got) * probe), numeric, rtol=1e-7)


@pytest.mark.parametrize("dtype", ["int32", "float64"])
def test_conv_transpose_of_other_dtypes_matches_numpy(x64, dtype):
    """Integer (the unsigned compute type) and double products placed in their rows."""
    rng = np.random.default_rng(5)
    x = rng.integers(-9, 10, (2, 7, 6, 5)).astype(dtype)
    w = rng.integers(-9, 10, (3, 2, 5, 6)).astype(dtype)
    got = lax.conv_general_dilated(x, w, (1, 1), ((2, 1), (1, 1)), (2, 3), (1, 1), DN)
    want = ref_conv(x.astype(np.int64), w.astype(np.int64), (1, 1), ((2, 1), (1, 1)), (2, 3), (1, 1), DN)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(got), want.astype(dtype))


_HASH_SCRIPT = """
import hashlib
import numpy as np
import xjax
rng = np.random.default_rng(12)
h = hashlib.sha1()
for shape, window, strides in [((8, 32, 32, 32), (3, 3), (2, 2)), ((3, 17, 13, 5), (4, 3), (3, 2))]:
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal(window + (shape[-1], 24)).astype(np.float32)
    y = xjax.jit(lambda x, w: xjax.lax.conv_transpose(x, w, strides, "SAME",
                 dimension_numbers=("NHWC", "HWIO", "NHWC")))(x, w)
    h.update(np.asarray(y).tobytes())
print(h.hexdigest())
"""


def test_bits_do_not_depend_on_the_thread_count():
    first, second = digests_by_thread_count(_HASH_SCRIPT)
    assert first == second
