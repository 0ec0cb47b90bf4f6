"""Set operations against NumPy (unsized), and JAX's sized forms under jit: the first `size` results
padded with fill_value, by default the smallest result (0 when there is none; always 0 for
setdiff1d). JAX's results recorded where NumPy has no equivalent (NaNs, sized forms)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xjax
import xjax.numpy as jnp

small_ints = st.lists(st.integers(-4, 6), min_size=0, max_size=12).map(lambda v: np.array(v, np.int32))


def padded(values, size, fill):
    out = np.full(size, fill, values.dtype)
    out[:min(size, len(values))] = values[:size]
    return out


@settings(max_examples=60, deadline=None)
@given(a=small_ints, b=small_ints, size=st.integers(1, 8))
def test_set_operations_against_numpy(a, b, size):
    for name, default_fill in [("intersect1d", None), ("setdiff1d", 0), ("setxor1d", None), ("union1d", None)]:
        want = getattr(np, name)(a, b)
        np.testing.assert_array_equal(getattr(jnp, name)(a, b), want, err_msg=name)
        fill = default_fill if default_fill is not None else (want[0] if len(want) else 0)
        sized = xjax.jit(lambda x, y: getattr(jnp, name)(x, y, size=size))(a, b)
        np.testing.assert_array_equal(sized, padded(want, size, fill), err_msg=f"{name} size={size}")
        filled = getattr(jnp, name)(a, b, size=size, fill_value=-9)
        np.testing.assert_array_equal(filled, padded(want, size, -9), err_msg=f"{name} fill_value")


@settings(max_examples=40, deadline=None)
@given(a=small_ints, b=small_ints)
def test_intersect1d_return_indices_against_numpy(a, b):
    got = jnp.intersect1d(a, b, return_indices=True)
    for g, w in zip(got, np.intersect1d(a, b, return_indices=True)):
        np.testing.assert_array_equal(g, w)
    size = len(got[0]) + 2  # past the results: the arrays' sizes
    vals, ia, ib = xjax.jit(lambda x, y: jnp.intersect1d(x, y, return_indices=True, size=size))(a, b)
    np.testing.assert_array_equal(ia[len(got[0]):], [len(a)] * 2)
    np.testing.assert_array_equal(ib[len(got[0]):], [len(b)] * 2)


def test_assume_unique_forms():
    a, b = np.array([5, 1, 3]), np.array([3, 5])
    np.testing.assert_array_equal(jnp.setdiff1d(a, b, assume_unique=True), [1])
    np.testing.assert_array_equal(jnp.setdiff1d(np.array([5, 1, 3]), np.array([3]), assume_unique=True), [5, 1])
    np.testing.assert_array_equal(jnp.intersect1d(a, b, assume_unique=True, size=4), [3, 5, 3, 3])  # JAX's
    np.testing.assert_array_equal(jnp.setxor1d(a, b, assume_unique=True, size=4), [1, 1, 1, 1])  # JAX's
    for g, w in zip(jnp.intersect1d(a, b, assume_unique=True, return_indices=True),
                    np.intersect1d(a, b, assume_unique=True, return_indices=True)):
        np.testing.assert_array_equal(g, w)


def test_nans_as_jax():
    a = np.array([5.0, 1, np.nan, 3, 3, 9, 7, 1, np.nan])
    b = np.array([3.0, 7, np.nan, 2, 7, 1, 8])
    np.testing.assert_array_equal(jnp.intersect1d(a, b), [1, 3, 7])
    np.testing.assert_array_equal(jnp.setdiff1d(a, b), [5, 9, np.nan])
    np.testing.assert_array_equal(jnp.setxor1d(a, b), [2, 5, 8, 9, np.nan, np.nan])
    np.testing.assert_array_equal(jnp.intersect1d(np.array([5, 1, 3.0]), np.array([3.0, 5]), size=3,
                                                  fill_value=np.nan), [3, 5, np.nan])


def test_empty_operands():
    e, b = np.array([], np.int32), np.array([3, 7, 2])
    np.testing.assert_array_equal(jnp.setdiff1d(e, b, size=3, fill_value=4), [4, 4, 4])
    np.testing.assert_array_equal(jnp.intersect1d(e, b, size=2), [0, 0])
    np.testing.assert_array_equal(jnp.setxor1d(b, e), [2, 3, 7])
    for out in jnp.intersect1d(b, e, return_indices=True):
        assert out.shape == (0,)


def test_compress_and_extract_fill():
    np.testing.assert_array_equal(jnp.compress(np.array([1, 0, 0]), np.array([5, 6, 7]), size=3), [5, 0, 0])
    np.testing.assert_array_equal(jnp.extract(np.array([1, 0, 0]), np.array([5, 6, 7]), size=3, fill_value=-2),
                                  [5, -2, -2])
    np.testing.assert_array_equal(
        jnp.compress(np.array([1, 0, 0]), np.arange(6).reshape(3, 2), axis=0, size=3, fill_value=9),
        [[0, 1], [9, 9], [9, 9]])
    np.testing.assert_array_equal(jnp.compress(np.array([0, 1, 0, 0]), np.arange(6).reshape(3, 2), axis=0),
                                  [[2, 3]])
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.compress(np.array([1, 0, 1, 1]), np.arange(6).reshape(3, 2), axis=0)
    with pytest.raises(ValueError, match="size must be positive"):
        jnp.compress(np.array([1, 0, 1]), np.arange(6).reshape(3, 2), axis=0, size=4)
