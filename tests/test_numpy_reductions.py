"""xjax.numpy reductions against NumPy, with result dtypes recorded from JAX."""
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xjax.numpy as jnp

R = np.random.default_rng(0)
M = (R.standard_normal((3, 4)) * 3).astype(np.float32)
T = (R.standard_normal((2, 3, 4))).astype(np.float32)
I = np.arange(12, dtype=np.int32).reshape(3, 4) - 5


def check(got, want, dtype=None, rtol=1e-5, atol=1e-5):
    got_np = np.asarray(got)
    want = np.asarray(want)
    assert got_np.shape == want.shape, (got_np.shape, want.shape)
    if got_np.dtype.kind == "f" or want.dtype.kind == "f" or got_np.dtype == ml_dtypes.bfloat16:
        np.testing.assert_allclose(got_np.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(got_np, want)
    if dtype is not None:
        assert got.dtype == np.dtype(dtype), (got.dtype, dtype)


AXES = [None, 0, 1, -1, (0, 1), ()]


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean", "var", "std", "all", "any", "ptp"])
@pytest.mark.parametrize("axis", AXES)
def test_reductions_float(name, axis):
    x = M if name != "prod" else M / 3
    got = getattr(jnp, name)(jnp.asarray(x), axis=axis)
    want = getattr(np, name)(x.astype(np.float64), axis=axis)
    check(got, want, dtype=np.bool_ if name in ("all", "any") else np.float32)


@pytest.mark.parametrize("name", ["sum", "max", "min", "mean", "prod"])
def test_keepdims_and_negative_axes(name):
    got = getattr(jnp, name)(jnp.asarray(T), axis=(-1, 0), keepdims=True)
    check(got, getattr(np, name)(T.astype(np.float64), axis=(-1, 0), keepdims=True))


def test_integer_accumulation_dtypes_from_jax():
    assert repr(jnp.sum(jnp.asarray([True, True]))) == "Array(2, dtype=int32)"
    assert repr(jnp.sum(jnp.arange(3, dtype=jnp.uint8))) == "Array(3, dtype=uint32)"
    assert repr(jnp.sum(jnp.arange(3, dtype=jnp.int8))) == "Array(3, dtype=int32)"
    assert repr(jnp.sum(jnp.arange(3, dtype=jnp.float16))) == "Array(3., dtype=float16)"
    assert repr(jnp.sum(jnp.asarray(2.0))) == "Array(2., dtype=float32)"
    assert repr(jnp.sum(2)) == "Array(2, dtype=int32)"
    assert repr(jnp.prod(jnp.arange(1, 4, dtype=jnp.int16))) == "Array(6, dtype=int32)"
    assert repr(jnp.mean(jnp.arange(4))) == "Array(1.5, dtype=float32)"
    assert repr(jnp.mean(jnp.arange(4, dtype=jnp.float16))) == "Array(1.5, dtype=float16)"
    assert repr(jnp.mean(jnp.asarray([True, False]))) == "Array(0.5, dtype=float32)"
    assert repr(jnp.var(jnp.arange(4))) == "Array(1.25, dtype=float32)"
    assert repr(jnp.std(jnp.arange(4), ddof=1)) == "Array(1.2909944, dtype=float32)"
    assert repr(jnp.max(jnp.arange(4, dtype=jnp.int8))) == "Array(3, dtype=int8)"
    assert repr(jnp.max(jnp.asarray([True, False]))) == "Array(True, dtype=bool)"
    assert repr(jnp.sum(jnp.arange(4, dtype=jnp.int8), promote_integers=False)) == "Array(6, dtype=int8)"
    assert repr(jnp.mean(jnp.arange(4), dtype=jnp.int32)) == "Array(1, dtype=int32)"
    assert repr(jnp.mean(jnp.asarray([1, 2], jnp.bfloat16))) == "Array(1.5, dtype=bfloat16)"
    assert repr(jnp.sum(jnp.arange(3, dtype=jnp.uint32))) == "Array(3, dtype=uint32)"
    wa = jnp.full(3, 2.0)
    for out in (jnp.max(wa), jnp.prod(wa), jnp.mean(wa), jnp.var(wa), jnp.cumsum(wa), jnp.sum(wa)):
        assert not out.weak_type


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.uint32, np.bool_, np.float16])
def test_sum_prod_int_dtypes(dtype):
    x = (np.arange(12) % 5).astype(dtype).reshape(3, 4)
    check(jnp.sum(jnp.asarray(x), axis=1), x.astype(np.int64).sum(axis=1))
    check(jnp.max(jnp.asarray(x), axis=0), x.max(axis=0), dtype=dtype)
    check(jnp.min(jnp.asarray(x)), x.min(), dtype=dtype)


def test_integer_sum_wraps():
    x = np.full(3, 2**30, np.int32)
    check(jnp.sum(jnp.asarray(x)), np.array(-(2**30), np.int32))


def test_sum_dtype_initial_where():
    x = jnp.asarray(I)
    check(jnp.sum(x, dtype=jnp.float32), I.sum(), np.float32)
    check(jnp.sum(x, initial=10), I.sum() + 10)
    check(jnp.sum(x, where=I > 0), I.sum(where=I > 0))
    check(jnp.max(x, where=I < 2, initial=-100), I.max(where=I < 2, initial=-100))
    check(jnp.mean(x, where=I > 0), I.mean(where=I > 0))
    check(jnp.var(jnp.asarray(M), axis=1, where=M > 0), np.var(M.astype(np.float64), axis=1, where=M > 0))
    check(jnp.max(jnp.zeros(0), initial=3.0), 3.0)
    check(jnp.all(jnp.asarray(I), where=I > 0), np.all(I, where=I > 0))


def test_reduction_errors():
    m = jnp.asarray(I)
    with pytest.raises(ValueError, match="axis 3 is out of bounds for array of dimension 2"):
        jnp.sum(m, axis=3)
    with pytest.raises(ValueError, match=r"duplicate value in 'axis': \(0, 0\)"):
        jnp.sum(m, axis=(0, 0))
    with pytest.raises(ValueError, match="zero-size array to reduction operation max which has no identity"):
        jnp.max(jnp.zeros(0))
    with pytest.raises(ValueError, match="attempt to get argmin of an empty sequence"):
        jnp.argmin(jnp.zeros(0))
    with pytest.raises(ValueError, match="to use a where mask one has to specify 'initial'"):
        jnp.max(m, where=I > 0)
    with pytest.raises(TypeError, match="sum requires ndarray or scalar arguments"):
        jnp.sum([1, 2])


def test_empty_reductions():
    e = jnp.zeros((0, 3))
    check(jnp.sum(e, axis=0), np.zeros(3))
    check(jnp.prod(e, axis=0), np.ones(3))
    check(jnp.max(e, axis=1), np.zeros(0))
    check(jnp.all(jnp.ones(0)), True)
    assert np.isnan(float(jnp.mean(jnp.zeros(0))))
    assert np.isnan(float(jnp.var(jnp.arange(4.0), ddof=4)))
    assert np.isnan(float(jnp.std(jnp.ones(1), ddof=1)))


def test_nan_propagation_and_nan_functions():
    x = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan], [4.0, 5.0, 6.0]], np.float32)
    check(jnp.max(jnp.asarray(x), axis=1), np.max(x, axis=1))
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
        for name in ("nanmax", "nanmin", "nanmean", "nanvar", "nanstd"):
            check(getattr(jnp, name)(jnp.asarray(x), axis=1), getattr(np, name)(x, axis=1))
    for name in ("nansum", "nanprod", "nancumsum", "nancumprod"):
        check(getattr(jnp, name)(jnp.asarray(x), axis=1), getattr(np, name)(x, axis=1))
    clean = np.array([1.0, np.nan, 3.0, 0.5], np.float32)
    check(jnp.nanargmax(jnp.asarray(clean)), np.nanargmax(clean))
    check(jnp.nanargmin(jnp.asarray(clean)), np.nanargmin(clean))
    check(jnp.argmax(jnp.asarray([1.0, np.nan, 3.0])), 1)  # JAX: the first NaN wins
    check(jnp.argmin(jnp.asarray([1.0, np.nan, -1.0])), 1)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_argmax_argmin(axis):
    x = np.array([[3, 7, 7, 1], [9, 2, 9, 0], [4, 4, 4, 4]], np.int32)
    for name in ("argmax", "argmin"):
        got = getattr(jnp, name)(jnp.asarray(x), axis=axis)
        check(got, getattr(np, name)(x, axis=axis), np.int32)
        got = getattr(jnp, name)(jnp.asarray(x), axis=axis, keepdims=True)
        check(got, getattr(np, name)(x, axis=axis, keepdims=True))


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_cumulative(axis):
    check(jnp.cumsum(jnp.asarray(I), axis=axis), np.cumsum(I, axis=axis), np.int32)
    check(jnp.cumprod(jnp.asarray(M / 3), axis=axis), np.cumprod(M.astype(np.float64) / 3, axis=axis))
    check(jnp.asarray(I).cumsum(axis), np.cumsum(I, axis))


def test_cumulative_dtypes_from_jax():
    assert repr(jnp.cumsum(jnp.asarray([True, True]))) == "Array([1, 2], dtype=int32)"
    assert repr(jnp.cumsum(jnp.arange(3, dtype=jnp.int8))) == "Array([0, 1, 3], dtype=int8)"
    assert repr(jnp.cumprod(jnp.arange(1, 4, dtype=jnp.uint8))) == "Array([1, 2, 6], dtype=uint8)"
    assert repr(jnp.cumsum(jnp.arange(4, dtype=jnp.uint8), dtype=jnp.int32)) == "Array([0, 1, 3, 6], dtype=int32)"
    assert repr(jnp.cumulative_sum(jnp.arange(3), include_initial=True)) == "Array([0, 0, 1, 3], dtype=int32)"
    check(jnp.cumulative_prod(jnp.asarray([[1, 2], [3, 4]]), axis=1), [[1, 2], [3, 12]])
    with pytest.raises(ValueError, match="axis argument is only optional for one-dimensional arrays"):
        jnp.cumulative_sum(jnp.ones((2, 2)))


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "nearest", "midpoint"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_quantile_methods(method, axis):
    q = np.array([0.0, 0.3, 0.5, 1.0], np.float32)
    got = jnp.quantile(jnp.asarray(M), jnp.asarray(q), axis=axis, method=method)
    want = np.quantile(M.astype(np.float64), q, axis=axis, method=method)
    check(got, want, np.float32)
    check(jnp.quantile(jnp.asarray(M), 0.25, axis=axis, method=method, keepdims=True),
          np.quantile(M.astype(np.float64), 0.25, axis=axis, method=method, keepdims=True))


def test_median_percentile_average():
    check(jnp.median(jnp.asarray([3.0, 1.0, 2.0, 4.0])), 2.5)
    assert repr(jnp.median(jnp.asarray([3, 1, 2]))) == "Array(2., dtype=float32)"
    check(jnp.median(jnp.asarray(T), axis=(0, 2)), np.median(T, axis=(0, 2)))
    check(jnp.median(jnp.asarray(M), axis=1, keepdims=True), np.median(M, axis=1, keepdims=True))
    assert np.isnan(float(jnp.median(jnp.asarray([1.0, np.nan]))))
    check(jnp.nanmedian(jnp.asarray([2.0, np.nan, 3.0])), 2.5)
    check(jnp.percentile(jnp.asarray(M), 30, axis=1), np.percentile(M.astype(np.float64), 30, axis=1))
    check(jnp.percentile(jnp.arange(5), jnp.asarray([10, 90])), np.percentile(np.arange(5), [10, 90]))
    w = np.array([1, 1, 1, 5], np.float32)
    check(jnp.average(jnp.arange(4), weights=jnp.asarray(w)), 2.25)
    avg, wsum = jnp.average(jnp.asarray(M), axis=1, weights=jnp.asarray(w), returned=True)
    wa, ws = np.average(M, axis=1, weights=w, returned=True)
    check(avg, wa)
    check(wsum, ws)
    check(jnp.average(jnp.asarray(M), axis=0), np.average(M, axis=0))


def test_count_nonzero_ptp():
    check(jnp.count_nonzero(jnp.asarray(I)), np.count_nonzero(I), np.int32)
    check(jnp.count_nonzero(jnp.asarray(I), axis=0), np.count_nonzero(I, axis=0))
    check(jnp.count_nonzero(jnp.asarray([1.0, 0.0, 2.0]), keepdims=True), [2])
    check(jnp.ptp(jnp.asarray(I), axis=1), np.ptp(I, axis=1))


def test_array_methods_reduce():
    x = jnp.asarray(M)
    check(x.sum(axis=0), M.sum(axis=0))
    check(x.mean(), M.mean())
    check(x.max(1), M.max(1))
    check(x.min(axis=0, keepdims=True), M.min(axis=0, keepdims=True))
    check(x.argmax(), M.argmax())
    check(x.std(ddof=1), M.astype(np.float64).std(ddof=1))
    check(x.var(axis=1), M.astype(np.float64).var(axis=1))
    check(x.prod(), M.astype(np.float64).prod(), rtol=1e-4)
    check(x.all(), M.all())
    check((x > 0).any(axis=1), (M > 0).any(axis=1))


@settings(max_examples=20, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), data=st.data())
def test_sum_max_hypothesis(shape, data):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) - 3
    nd = len(shape)
    axes = data.draw(st.lists(st.integers(-nd, nd - 1), unique_by=lambda v: v % nd, max_size=nd))
    axis = tuple(axes) if axes else None
    check(jnp.sum(jnp.asarray(a), axis=axis), a.sum(axis=axis))
    check(jnp.max(jnp.asarray(a), axis=axis), a.max(axis=axis))
    check(jnp.mean(jnp.asarray(a), axis=axis, keepdims=True), a.mean(axis=axis, keepdims=True))
