"""Tests of the C++ core's sort and top_k ops against NumPy references."""
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from core_util import ALL_DTYPES, FLOAT_DTYPES, run_op
from xjax import _core


def np_dtype(name):
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def sample(shape, dtype, rng, special=True):
    """Values with many ties; floats also get NaN, +-inf and signed zeros."""
    dt = np_dtype(dtype)
    if dt == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        x = rng.integers(-8 if dt.kind == "i" else 0, 8, shape).astype(dt)
        flat = x.reshape(-1)
        if special and flat.size > 4:
            flat[:4] = [info.min, info.max, info.min, 0]
            rng.shuffle(flat)
        return x
    x = rng.integers(-6, 6, shape).astype(np.float32) / 2
    flat = x.reshape(-1)
    if special and flat.size:
        choices = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0], np.float32)
        pick = rng.random(flat.size) < 0.3
        flat[pick] = rng.choice(choices, pick.sum())
    return x.astype(dt)


def exact(a, b):
    """Bitwise equality (so -0.0 vs 0.0 and NaN payloads count)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
    np.testing.assert_array_equal(a.view(f"u{a.dtype.itemsize}"), b.view(f"u{b.dtype.itemsize}"))


def jax_sort_order(x, axis):
    """The stable ascending order along axis: NaNs last (all equal), -0.0 == +0.0, as JAX's sort."""
    if x.dtype.kind == "f" or x.dtype == np.dtype(ml_dtypes.bfloat16):
        x = x.astype(np.float64)
    return np.argsort(x, axis=axis, kind="stable")


# ---------------------------------------------------------------- sort


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("n", [1, 7, 300, 5000])
def test_argsort_style_all_dtypes(dtype, n):
    rng = np.random.default_rng(n)
    x = sample(n, dtype, rng)
    iota = np.arange(n, dtype=np.int32)
    values, perm = run_op("sort", x, iota, dimension=0, is_stable=1, num_keys=1)
    order = jax_sort_order(x, 0)
    exact(perm, order.astype(np.int32))
    exact(values, x[order])


def test_sort_float_special_values():
    x = np.array([0.0, -0.0, np.nan, 1.0, -np.inf, -np.nan, np.inf, -0.0, 0.0, -1.0], np.float32)
    values, perm = run_op("sort", x, np.arange(10, dtype=np.int32), dimension=0, is_stable=1)
    # -0.0 and 0.0 tie (kept in order), NaNs of either sign tie and go last: JAX's order.
    exact(perm, np.array([4, 9, 0, 1, 7, 8, 3, 6, 2, 5], np.int32))
    exact(values, x[perm])


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_sort_along_each_axis(dtype, axis):
    rng = np.random.default_rng(axis)
    x = sample((4, 5, 6), dtype, rng)
    (values,) = run_op("sort", x, dimension=axis, num_keys=1)
    exact(values, np.take_along_axis(x, jax_sort_order(x, axis), axis))


def test_sort_multi_key_lexicographic_with_payload():
    rng = np.random.default_rng(1)
    k1 = rng.integers(0, 3, 2000).astype(np.int8)
    k2 = sample(2000, "float32", rng)
    k3 = rng.integers(0, 4, 2000).astype(np.uint64)
    payload = rng.standard_normal(2000)
    out = run_op("sort", k1, k2, k3, payload, dimension=0, num_keys=3, is_stable=1)
    order = np.lexsort((k3, k2.astype(np.float64), k1))  # lexsort: last key is primary; it is stable
    for got, src in zip(out, (k1, k2, k3, payload)):
        exact(got, src[order])
    # With num_keys=1 the other operands only follow.
    out = run_op("sort", k1, k2, dimension=0, num_keys=1)
    order = np.argsort(k1, kind="stable")
    exact(out[0], k1[order])
    exact(out[1], k2[order])


@pytest.mark.parametrize("shape, axis", [((3, 70000), 1), ((300000,), 0), ((2, 140000, 2), 1)])
def test_sort_large_rows(shape, axis):
    """Long rows take the radix path and, for few rows, the striped parallel radix passes."""
    rng = np.random.default_rng(2)
    x = sample(shape, "float32", rng)
    iota = np.broadcast_to(np.arange(shape[axis], dtype=np.int32).reshape(
        [-1 if d == axis else 1 for d in range(len(shape))]), shape).copy()
    values, perm = run_op("sort", x, iota, dimension=axis)
    order = jax_sort_order(x, axis)
    exact(perm, order.astype(np.int32))
    exact(values, np.take_along_axis(x, order, axis))
    k = rng.integers(0, 1 << 40, shape[axis]).astype(np.int64)
    k2 = rng.integers(0, 5, shape[axis]).astype(np.int16)
    a, b, c = run_op("sort", k2, k, np.arange(shape[axis], dtype=np.int32), dimension=0, num_keys=2)
    order = np.lexsort((k, k2))
    exact(c, order.astype(np.int32))


def test_sort_empty_and_tiny():
    for shape, axis in [((0,), 0), ((3, 0), 1), ((0, 4), 1), ((0, 4), 0), ((1,), 0)]:
        x = np.ones(shape, np.float32)
        (got,) = run_op("sort", x, dimension=axis)
        exact(got, x)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=3), st.data(), st.sampled_from(ALL_DTYPES))
def test_sort_random_shapes(shape, data, dtype):
    axis = data.draw(st.integers(0, len(shape) - 1))
    x = sample(shape, dtype, np.random.default_rng(sum(shape) * 7 + axis))
    idx = np.broadcast_to(np.arange(shape[axis], dtype=np.int32).reshape(
        [-1 if d == axis else 1 for d in range(len(shape))]), shape).copy()
    values, perm = run_op("sort", x, idx, dimension=axis, num_keys=1, is_stable=0)
    order = jax_sort_order(x, axis)
    exact(perm, order.astype(np.int32))
    exact(values, np.take_along_axis(x, order, axis))


@pytest.mark.parametrize("types, attrs, match", [
    ([], dict(dimension=0), "at least one operand"),
    ([((3,), "float32"), ((4,), "int32")], dict(dimension=0), "same shape"),
    ([((), "float32")], dict(dimension=0), "rank >= 1"),
    ([((3, 4), "float32")], dict(dimension=2), "dimension 2 out of range"),
    ([((3, 4), "float32")], dict(dimension=-1), "out of range"),
    ([((3, 4), "float32")], dict(), "missing attribute 'dimension'"),
    ([((3, 4), "float32")], dict(dimension=0, num_keys=0), "num_keys"),
    ([((3, 4), "float32")], dict(dimension=0, num_keys=2), "num_keys"),
    ([((3, 4), "float32")], dict(dimension=0, is_stable=2), "is_stable"),
])
def test_sort_bad_input(types, attrs, match):
    with pytest.raises(ValueError, match=r"\[sort\].*" + match):
        _core.infer("sort", types, attrs)


def test_mistyped_attributes_are_type_errors():
    with pytest.raises(TypeError, match=r"\[sort\] attribute 'dimension' must be an int"):
        _core.infer("sort", [((3, 4), "float32")], dict(dimension=0.5))
    with pytest.raises(TypeError, match=r"\[top_k\] attribute 'k' must be an int"):
        _core.infer("top_k", [((5,), "float32")], dict(k=1.5))


def test_sort_result_types():
    types = [((2, 3), "float16"), ((2, 3), "uint64")]
    assert _core.infer("sort", types, dict(dimension=1, num_keys=2)) == [((2, 3), "float16"), ((2, 3), "uint64")]


# ---------------------------------------------------------------- top_k


def total_order_key(x):
    """An int64 key ordering x as top_k does: NaN (either sign) largest, -0.0 below +0.0."""
    dt = x.dtype
    if dt == np.bool_ or dt.kind in "iu":
        if dt == np.uint64:
            return (x.astype(np.uint64) ^ np.uint64(1 << 63)).view(np.int64)
        return x.astype(np.int64)
    bits = x.view(f"i{dt.itemsize}").astype(np.int64)
    mag_bits = dt.itemsize * 8 - 1
    key = np.where(bits < 0, -(bits & ((1 << mag_bits) - 1)) - 1, bits)
    isnan = np.isnan(x.astype(np.float32)) if dt.itemsize == 2 else np.isnan(x)
    return np.where(isnan, np.iinfo(np.int64).max, key)


def ref_top_k(x, k):
    key = total_order_key(x)
    n = x.shape[-1]
    # Descending by key, ties by ascending position: sort reversed rows stably, then flip.
    order = np.argsort(key[..., ::-1], axis=-1, kind="stable")[..., ::-1]
    idx = (n - 1 - order)[..., :k]
    return np.take_along_axis(x, idx, -1), idx.astype(np.int32)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("n, k", [(1, 1), (10, 0), (10, 3), (10, 10), (100, 7), (100, 40), (100, 99), (2000, 33)])
def test_top_k(dtype, n, k):
    x = sample((3, n), dtype, np.random.default_rng(n + k))
    values, indices = run_op("top_k", x, k=k)
    ref_values, ref_indices = ref_top_k(x, k)
    exact(indices, ref_indices)
    exact(values, ref_values)


def test_top_k_special_values_and_ties():
    x = np.array([1.0, np.nan, -0.0, 3.0, 0.0, 3.0, -np.nan, -np.inf], np.float32)
    values, indices = run_op("top_k", x, k=8)
    exact(indices, np.array([1, 6, 3, 5, 0, 4, 2, 7], np.int32))
    exact(values, x[indices])


def test_top_k_batched_and_empty():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 50)).astype(np.float64)
    values, indices = run_op("top_k", x, k=5)
    ref_values, ref_indices = ref_top_k(x, 5)
    exact(values, ref_values)
    exact(indices, ref_indices)
    values, indices = run_op("top_k", np.zeros((0, 4), np.float32), k=2)
    assert values.shape == (0, 2) and indices.shape == (0, 2) and indices.dtype == np.int32
    values, indices = run_op("top_k", np.zeros((3, 0), np.int8), k=0)
    assert values.shape == (3, 0) and values.dtype == np.int8


@pytest.mark.parametrize("shape, attrs, match", [
    ((5,), dict(k=-1), "k = -1"),
    ((5,), dict(k=6), "k = 6"),
    ((2, 3), dict(k=4), "k = 4"),
    ((5,), dict(), "missing attribute 'k'"),
    ((), dict(k=0), "rank >= 1"),
])
def test_top_k_bad_input(shape, attrs, match):
    with pytest.raises(ValueError, match=r"\[top_k\].*" + match):
        _core.infer("top_k", [(shape, "float32")], attrs)


def test_top_k_result_types():
    assert _core.infer("top_k", [((4, 9), "bfloat16")], dict(k=3)) == [((4, 3), "bfloat16"), ((4, 3), "int32")]
