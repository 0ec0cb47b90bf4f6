"""xjax.numpy array creation against NumPy, with dtypes and weak types recorded from JAX."""
import warnings

import ml_dtypes
import numpy as np
import pytest

import xjax.numpy as jnp


def check(got, want, dtype=None, rtol=1e-6):
    got_np = np.asarray(got)
    want = np.asarray(want)
    assert got_np.shape == want.shape, (got_np.shape, want.shape)
    np.testing.assert_allclose(got_np.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=1e-6)
    if dtype is not None:
        assert got.dtype == np.dtype(dtype), (got.dtype, dtype)


# (expression, repr recorded from JAX 0.10.2)
JAX_REPRS = [
    (lambda: jnp.arange(3), "Array([0, 1, 2], dtype=int32)"),
    (lambda: jnp.arange(5.0), "Array([0., 1., 2., 3., 4.], dtype=float32)"),
    (lambda: jnp.arange(2, 5, dtype=jnp.uint8), "Array([2, 3, 4], dtype=uint8)"),
    (lambda: jnp.arange(0, 1, 0.3), "Array([0.        , 0.3       , 0.6       , 0.90000004], dtype=float32)"),
    (lambda: jnp.arange(5, 1), "Array([], shape=(0,), dtype=int32)"),
    (lambda: jnp.arange(5, 1, -1), "Array([5, 4, 3, 2], dtype=int32)"),
    (lambda: jnp.arange(jnp.int8(5)), "Array([0, 1, 2, 3, 4], dtype=int8)"),
    (lambda: jnp.asarray(2.0), "Array(2., dtype=float32, weak_type=True)"),
    (lambda: jnp.array(2.0), "Array(2., dtype=float32, weak_type=True)"),
    (lambda: jnp.asarray(2), "Array(2, dtype=int32, weak_type=True)"),
    (lambda: jnp.asarray([1, 2.0]), "Array([1., 2.], dtype=float32)"),
    (lambda: jnp.asarray([1, 2]), "Array([1, 2], dtype=int32)"),
    (lambda: jnp.asarray(np.float64(2.0)), "Array(2., dtype=float32)"),
    (lambda: jnp.asarray(True), "Array(True, dtype=bool)"),
    (lambda: jnp.asarray([True, False]), "Array([ True, False], dtype=bool)"),
    (lambda: jnp.asarray(np.uint8(3)), "Array(3, dtype=uint8)"),
    (lambda: jnp.asarray(3, dtype=jnp.uint8), "Array(3, dtype=uint8)"),
    (lambda: jnp.asarray(np.arange(3)), "Array([0, 1, 2], dtype=int32)"),
    (lambda: jnp.array([jnp.asarray(1.0), 2]), "Array([1., 2.], dtype=float32)"),
    (lambda: jnp.array([jnp.asarray(1), jnp.asarray(2.5)]), "Array([1. , 2.5], dtype=float32)"),
    (lambda: jnp.array((1, 2.5)), "Array([1. , 2.5], dtype=float32)"),
    (lambda: jnp.asarray([1, 2], dtype=jnp.bfloat16), "Array([1, 2], dtype=bfloat16)"),
    (lambda: jnp.asarray([1, 2], dtype=jnp.float16), "Array([1., 2.], dtype=float16)"),
    (lambda: jnp.asarray([[1.5, 2], [3, 4]]), "Array([[1.5, 2. ],\n       [3. , 4. ]], dtype=float32)"),
    (lambda: jnp.asarray([], dtype=jnp.int32), "Array([], shape=(0,), dtype=int32)"),
    (lambda: jnp.zeros((2, 0)), "Array([], shape=(2, 0), dtype=float32)"),
    (lambda: jnp.zeros(3), "Array([0., 0., 0.], dtype=float32)"),
    (lambda: jnp.zeros((2,), int), "Array([0, 0], dtype=int32)"),
    (lambda: jnp.full(3, 2), "Array([2, 2, 2], dtype=int32, weak_type=True)"),
    (lambda: jnp.full(3, 2.0), "Array([2., 2., 2.], dtype=float32, weak_type=True)"),
    (lambda: jnp.full((2,), jnp.int8(3)), "Array([3, 3], dtype=int8)"),
    (lambda: jnp.ones_like(jnp.arange(3)), "Array([1, 1, 1], dtype=int32)"),
    (lambda: jnp.full_like(jnp.arange(3), 2.7), "Array([2, 2, 2], dtype=int32)"),
    (lambda: jnp.zeros_like(2.0), "Array(0., dtype=float32, weak_type=True)"),
    (lambda: jnp.linspace(0, 1, 5), "Array([0.  , 0.25, 0.5 , 0.75, 1.  ], dtype=float32)"),
    (lambda: jnp.linspace(0, 10, 5, dtype=int), "Array([ 0,  2,  5,  7, 10], dtype=int32)"),
    (lambda: jnp.linspace(0, 1, 5, endpoint=False), "Array([0. , 0.2, 0.4, 0.6, 0.8], dtype=float32)"),
    (lambda: jnp.linspace(0, 1, 0), "Array([], shape=(0,), dtype=float32)"),
    (lambda: jnp.linspace(0, 1, 1), "Array([0.], dtype=float32)"),
    (lambda: jnp.linspace(jnp.asarray([0, 1]), 2, 3),
     "Array([[0. , 1. ],\n       [1. , 1.5],\n       [2. , 2. ]], dtype=float32)"),
    (lambda: jnp.logspace(0, 2, 3), "Array([  1.,  10., 100.], dtype=float32)"),
    (lambda: jnp.geomspace(1, 100, 3), "Array([  1.,  10., 100.], dtype=float32)"),
    (lambda: jnp.eye(2), "Array([[1., 0.],\n       [0., 1.]], dtype=float32)"),
    (lambda: jnp.eye(2, 3, k=1, dtype=int), "Array([[0, 1, 0],\n       [0, 0, 1]], dtype=int32)"),
    (lambda: jnp.identity(2, dtype=jnp.int8), "Array([[1, 0],\n       [0, 1]], dtype=int8)"),
    (lambda: jnp.tri(2, 3, -1), "Array([[0., 0., 0.],\n       [1., 0., 0.]], dtype=float32)"),
    (lambda: jnp.empty((2,)), "Array([0., 0.], dtype=float32)"),
]


@pytest.mark.parametrize("k", range(len(JAX_REPRS)))
def test_matches_jax_repr(k):
    fn, want = JAX_REPRS[k]
    assert repr(fn()) == want


def test_arange_values():
    check(jnp.arange(0.0, 1.0, 0.1), np.arange(0, 10, dtype=np.float32) * np.float32(0.1))
    check(jnp.arange(-3, 10, 4), np.arange(-3, 10, 4), np.int32)
    check(jnp.arange(10, -3, -4), np.arange(10, -3, -4), np.int32)
    check(jnp.arange(2.5, -1, -0.5), np.arange(2.5, -1, -0.5), np.float32)
    with pytest.raises(ZeroDivisionError):
        jnp.arange(0, 10, 0)


def test_asarray_passthrough_and_copy():
    x = jnp.arange(3)
    assert jnp.asarray(x) is x
    assert jnp.array(x, copy=False) is x
    y = jnp.array(x)
    assert y is not x and np.array_equal(np.asarray(y), np.asarray(x))
    assert jnp.asarray(x, dtype=jnp.float32).dtype == np.float32
    assert jnp.copy(x) is not x
    wa = jnp.full(3, 2.0)
    assert jnp.array(wa).weak_type


def test_array_nested_and_ndmin():
    check(jnp.array([[1, 2], [3, 4]]), [[1, 2], [3, 4]], np.int32)
    check(jnp.array([np.arange(2), np.arange(2)]), [[0, 1], [0, 1]], np.int32)
    check(jnp.array([jnp.arange(2), jnp.arange(2)]), [[0, 1], [0, 1]], np.int32)
    assert jnp.array(1.0, ndmin=2).shape == (1, 1)
    assert jnp.array([], dtype=jnp.float32).shape == (0,)
    assert jnp.array([[]]).shape == (1, 0)


def test_array_errors():
    with pytest.raises(ValueError, match="inhomogeneous"):
        jnp.array([[1, 2], [3]])
    with pytest.raises(TypeError, match="not a valid JAX array type"):
        jnp.array("a")


def test_x64_dtype_request_warns_and_truncates():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        x = jnp.zeros(3, dtype=jnp.int64)
    assert x.dtype == np.int32
    assert any("Explicitly requested dtype int64" in str(m.message) for m in w)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        assert jnp.array([1, 2], dtype=np.float64).dtype == np.float32


def test_shapes_as_int_or_tuple_and_errors():
    assert jnp.ones(3).shape == (3,)
    assert jnp.ones((2, 3), dtype=jnp.bool_).dtype == np.bool_
    assert jnp.ones(np.int64(2)).shape == (2,)
    with pytest.raises(TypeError, match="nonnegative"):
        jnp.zeros(-1)
    with pytest.raises(TypeError, match="Shapes must be 1D sequences of concrete values of integer type"):
        jnp.zeros((2.0,))


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int32, np.float16, ml_dtypes.bfloat16,
                                   np.float32])
def test_filled_dtypes(dtype):
    for fn, val in ((jnp.zeros, 0), (jnp.ones, 1)):
        x = fn((2, 3), dtype=dtype)
        assert x.dtype == np.dtype(dtype)
        check(x, np.full((2, 3), val, np.float64))
    x = jnp.full((2,), 1, dtype=dtype)
    assert x.dtype == np.dtype(dtype) and not x.weak_type
    like = jnp.zeros_like(jnp.ones(3, dtype=dtype))
    assert like.dtype == np.dtype(dtype)


def test_like_functions_with_shape_and_dtype():
    x = jnp.arange(6).reshape(2, 3)
    assert jnp.zeros_like(x, shape=(4,)).shape == (4,)
    assert jnp.ones_like(x, dtype=jnp.float16).dtype == np.float16
    check(jnp.full_like(x, 7), np.full((2, 3), 7))
    check(jnp.empty_like(x), np.zeros((2, 3)))
    check(jnp.full((2, 3), jnp.asarray([1, 2, 3])), np.broadcast_to([1, 2, 3], (2, 3)))


@pytest.mark.parametrize("num,endpoint", [(5, True), (5, False), (2, True), (1, False), (7, True)])
def test_linspace_matches_numpy(num, endpoint):
    check(jnp.linspace(-2.0, 3.0, num, endpoint=endpoint), np.linspace(-2, 3, num, endpoint=endpoint), rtol=1e-6)
    out, step = jnp.linspace(0, 10, num, endpoint=endpoint, retstep=True)
    want, wstep = np.linspace(0, 10, num, endpoint=endpoint, retstep=True)
    check(out, want, rtol=1e-6)
    if num > 1:
        np.testing.assert_allclose(float(step), wstep, rtol=1e-6)


def test_linspace_axis_and_logspace():
    got = jnp.linspace(jnp.asarray([0.0, 1.0]), jnp.asarray([1.0, 3.0]), 4, axis=1)
    check(got, np.linspace([0.0, 1.0], [1.0, 3.0], 4, axis=1))
    check(jnp.logspace(0, 3, 4, base=2.0), np.logspace(0, 3, 4, base=2.0), rtol=1e-6)
    check(jnp.geomspace(2, 32, 5), np.geomspace(2, 32, 5), rtol=1e-5)


@pytest.mark.parametrize("k", [-2, -1, 0, 1, 3])
def test_eye_tri_tril_triu(k):
    check(jnp.eye(3, 4, k=k), np.eye(3, 4, k=k))
    check(jnp.tri(3, 4, k=k), np.tri(3, 4, k=k))
    m = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    check(jnp.tril(jnp.asarray(m), k), np.tril(m, k))
    check(jnp.triu(jnp.asarray(m), k), np.triu(m, k))


@pytest.mark.parametrize("k", [-2, -1, 0, 1, 2])
def test_diag_diagonal(k):
    v = np.arange(1, 4, dtype=np.int32)
    check(jnp.diag(jnp.asarray(v), k), np.diag(v, k), np.int32)
    m = np.arange(12, dtype=np.float32).reshape(3, 4)
    check(jnp.diag(jnp.asarray(m), k), np.diag(m, k))
    check(jnp.diagonal(jnp.asarray(m), k), np.diagonal(m, k))
    t = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    check(jnp.diagonal(jnp.asarray(t), k, 1, 2), np.diagonal(t, k, 1, 2))
    check(jnp.diagonal(jnp.asarray(t), k, 2, 0), np.diagonal(t, k, 2, 0))
    check(jnp.diagflat(jnp.asarray(v), k), np.diagflat(v, k))


def test_meshgrid_indices():
    a, b = np.arange(2), np.arange(3)
    for indexing in ("xy", "ij"):
        for got, want in zip(jnp.meshgrid(jnp.asarray(a), jnp.asarray(b), indexing=indexing),
                             np.meshgrid(a, b, indexing=indexing)):
            check(got, want)
        for got, want in zip(jnp.meshgrid(jnp.asarray(a), jnp.asarray(b), sparse=True, indexing=indexing),
                             np.meshgrid(a, b, sparse=True, indexing=indexing)):
            check(got, want)
    check(jnp.indices((2, 3)), np.indices((2, 3)), np.int32)
    for got, want in zip(jnp.indices((2, 3), sparse=True), np.indices((2, 3), sparse=True)):
        check(got, want)
    check(jnp.fromfunction(lambda i, j: i + 2 * j, (2, 3)), np.fromfunction(lambda i, j: i + 2 * j, (2, 3)))
