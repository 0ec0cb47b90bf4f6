"""jnp.poly, mask_indices, place, fromstring, fromfile and ComplexWarning against NumPy (JAX's conventions where
they differ: poly of a scalar, complex coefficients of a matrix's polynomial, place's inplace=False)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xjax
import xjax.numpy as jnp


@settings(max_examples=15, deadline=None)
@given(roots=st.lists(st.integers(-4, 4), min_size=0, max_size=6))
def test_poly_of_roots(roots):
    r = np.array(roots, np.float64)
    with xjax.enable_x64(True):
        np.testing.assert_allclose(jnp.poly(r), np.poly(r), rtol=1e-12, atol=1e-12)


def test_poly_conventions():
    np.testing.assert_allclose(jnp.poly(np.float32(2.0)), [1.0, -2.0])  # a scalar is one root (NumPy raises)
    m = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    got = jnp.poly(m)
    assert got.dtype == np.complex64  # a matrix's eigenvalues are complex in JAX
    np.testing.assert_allclose(got, np.poly(m), rtol=1e-5, atol=1e-5)
    assert jnp.poly(np.zeros((0,), np.float32)).shape == ()
    with pytest.raises(ValueError, match="square"):
        jnp.poly(np.ones((2, 3)))
    np.testing.assert_allclose(xjax.jit(jnp.poly)(np.array([1.0, 2.0], np.float32)), [1, -3, 2])


def test_mask_indices():
    for n, func, k in [(3, jnp.triu, 0), (4, jnp.tril, -1), (5, jnp.triu, 2)]:
        want = np.mask_indices(n, getattr(np, func.__name__), k)
        got = jnp.mask_indices(n, func, k)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    i, j = jnp.mask_indices(3, jnp.triu, size=8)
    assert i.shape == (8,) and j.shape == (8,)


def test_place():
    x = np.zeros((3, 5), np.int32)
    mask = (np.arange(15) % 4 == 0).reshape(3, 5)
    for vals in [np.array([1, 3, 5], np.int32), np.array([7], np.int32), np.arange(10, dtype=np.int32)]:
        want = x.copy()
        np.place(want, mask, vals)
        np.testing.assert_array_equal(jnp.place(x, mask, vals, inplace=False), want)
    with pytest.raises(ValueError, match="in-place"):
        jnp.place(x, mask, np.array([1]))
    with pytest.raises(ValueError, match="empty"):
        jnp.place(x, mask, np.array([], np.int32), inplace=False)


def test_host_readers_and_warning():
    np.testing.assert_array_equal(jnp.fromstring("1 2 3", dtype=np.int32, sep=" "), [1, 2, 3])
    with pytest.raises(NotImplementedError, match="fromfile"):
        jnp.fromfile("data.bin")
    assert jnp.ComplexWarning is np.exceptions.ComplexWarning
