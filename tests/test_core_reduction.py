"""Tests of the C++ core's reductions (reduce_*, argmax, argmin) and scans (cum*) against NumPy."""
import itertools

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from core_util import ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, _NP_DTYPES, to_numpy
from xjax import _core

NUMERIC = INT_DTYPES + FLOAT_DTYPES
REDUCE_DTYPES = {
    "reduce_sum": NUMERIC, "reduce_prod": NUMERIC, "reduce_max": ALL_DTYPES, "reduce_min": ALL_DTYPES,
    "reduce_and": ["bool"] + INT_DTYPES, "reduce_or": ["bool"] + INT_DTYPES, "reduce_xor": ["bool"] + INT_DTYPES,
}
CUM_DTYPES = {
    "cumsum": NUMERIC, "cumprod": NUMERIC, "cummax": ALL_DTYPES, "cummin": ALL_DTYPES,
    "cumlogsumexp": FLOAT_DTYPES,
}
# Relative tolerance of a float sum/product, relative to the sum of magnitudes.
RTOL = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 2e-6, "float64": 1e-13}
SETTINGS = settings(max_examples=60, deadline=None, derandomize=True)

rng = np.random.default_rng(0)


def run(op, x, **attrs):
    """Runs one op on one array. (core_util.to_core turns 0-d arrays into shape (1,), so not used.)"""
    x = np.asarray(x)
    flat = np.ascontiguousarray(x).reshape(-1)
    a = _core.Array.from_buffer(flat.view(np.uint8), x.shape, x.dtype.name)
    exe = _core.compile_op(op, [(a.shape, a.dtype)], attrs)
    return to_numpy(exe.run([a])[0])


def sample(dtype, shape, op="reduce_sum", special=False):
    """Random values of dtype: full-range integers (wrap-around happens), floats with some NaN/inf."""
    dt = _NP_DTYPES[dtype]
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in INT_DTYPES:
        info = np.iinfo(dt)
        if op in ("reduce_prod", "cumprod"):
            return rng.integers(-3 if info.min < 0 else 0, 4, shape).astype(dt)
        if op in ("argmax", "argmin"):  # small range: many ties
            return rng.integers(0, 4, shape).astype(dt)
        return rng.integers(info.min, info.max, shape, dtype=dt, endpoint=True)
    if op in ("reduce_prod", "cumprod"):
        x = rng.uniform(0.8, 1.25, shape)
    elif op in ("argmax", "argmin"):
        x = rng.integers(-3, 3, shape).astype(np.float64)
    else:
        x = rng.normal(0, 10, shape)
    if special and x.size:
        flat = x.reshape(-1)
        for v in (np.nan, np.inf, -np.inf):
            flat[rng.integers(0, flat.size, max(1, flat.size // 20))] = v
    return x.astype(dt)


def f64(x):
    return np.asarray(x).astype(np.float64)


# ---------------------------------------------------------------- references

def ref_reduce(op, x, axes):
    dtype = x.dtype.name
    axes = tuple(axes)
    if op in ("reduce_sum", "reduce_prod"):
        fn = np.sum if op == "reduce_sum" else np.prod
        if dtype in INT_DTYPES:
            return fn(x, axis=axes, dtype=x.dtype)  # NumPy wraps too
        return fn(f64(x), axis=axes)
    if op in ("reduce_max", "reduce_min"):
        if dtype == "bool":
            fn = np.logical_or if op == "reduce_max" else np.logical_and
            return fn.reduce(x, axis=axes)
        big = np.inf if dtype in FLOAT_DTYPES else np.iinfo(x.dtype).max
        small = -np.inf if dtype in FLOAT_DTYPES else np.iinfo(x.dtype).min
        xx = f64(x) if dtype in FLOAT_DTYPES else x
        if op == "reduce_max":
            return np.max(xx, axis=axes, initial=small)
        return np.min(xx, axis=axes, initial=big)
    name = op[len("reduce_"):]
    if dtype == "bool":
        return getattr(np, "logical_" + name).reduce(x, axis=axes)
    ident = np.array(-1 if name == "and" else 0).astype(x.dtype)
    return getattr(np, "bitwise_" + name).reduce(x, axis=axes, initial=ident)


def check_reduce(op, x, axes):
    res = run(op, x, axes=list(axes))
    ref = ref_reduce(op, x, axes)
    assert res.dtype == x.dtype and res.shape == np.shape(ref), (res.dtype, res.shape, np.shape(ref))
    dtype = x.dtype.name
    if dtype in FLOAT_DTYPES and op in ("reduce_sum", "reduce_prod"):
        r = f64(res)
        if op == "reduce_sum":
            scale = np.sum(np.abs(f64(x)), axis=tuple(axes))
        else:
            scale = np.abs(ref)
        finite = np.isfinite(ref)
        assert np.all(np.isnan(r) == np.isnan(ref)), (r, ref)
        assert np.all(r[~finite & ~np.isnan(ref)] == ref[~finite & ~np.isnan(ref)])
        tol = RTOL[dtype] * scale + 1e-300
        assert np.all(np.abs(r - ref)[finite] <= tol[finite] + np.abs(ref)[finite] * RTOL[dtype]), (r, ref)
    elif dtype in FLOAT_DTYPES:
        np.testing.assert_array_equal(f64(res), ref)  # max/min are exact; NaN == NaN here
    else:
        np.testing.assert_array_equal(res, ref)


@st.composite
def shape_and_axes(draw, max_rank=4, max_dim=6):
    shape = tuple(draw(st.lists(st.integers(0, max_dim), min_size=0, max_size=max_rank)))
    axes = draw(st.permutations(range(len(shape))))
    axes = axes[: draw(st.integers(0, len(shape)))]
    return shape, list(axes)


# ---------------------------------------------------------------- reduce_*

@SETTINGS
@given(sa=shape_and_axes(), op=st.sampled_from(sorted(REDUCE_DTYPES)), data=st.data())
def test_reduce_matches_numpy(sa, op, data):
    shape, axes = sa
    dtype = data.draw(st.sampled_from(REDUCE_DTYPES[op]))
    check_reduce(op, sample(dtype, shape, op, special=data.draw(st.booleans())), axes)


@pytest.mark.parametrize("op", sorted(REDUCE_DTYPES))
def test_reduce_every_dtype(op):
    for dtype in REDUCE_DTYPES[op]:
        x = sample(dtype, (3, 5, 4), op)
        for axes in ([], [0], [1], [2], [0, 2], [2, 0], [1, 2], [0, 1, 2]):
            check_reduce(op, x, axes)


@pytest.mark.parametrize("op", sorted(REDUCE_DTYPES))
def test_reduce_empty_gives_identity(op):
    for dtype in REDUCE_DTYPES[op]:
        for shape, axes in [((0,), [0]), ((0, 3), [0]), ((3, 0), [1]), ((2, 0, 3), [0, 1]), ((0, 4), [0, 1]),
                            ((4, 0), [0]), ((), [])]:
            check_reduce(op, sample(dtype, shape, op), axes)


def test_reduce_identities_exact():
    z = np.zeros((0, 2))
    assert run("reduce_max", z.astype(np.float32), axes=[0]).tolist() == [-np.inf, -np.inf]
    assert run("reduce_min", z.astype(np.float16), axes=[0]).tolist() == [np.inf, np.inf]
    assert run("reduce_max", z.astype(np.int16), axes=[0]).tolist() == [-32768] * 2
    assert run("reduce_min", z.astype(np.uint32), axes=[0]).tolist() == [2**32 - 1] * 2
    assert run("reduce_max", z.astype(bool), axes=[0]).tolist() == [False] * 2
    assert run("reduce_min", z.astype(bool), axes=[0]).tolist() == [True] * 2
    assert run("reduce_and", z.astype(bool), axes=[0]).tolist() == [True] * 2
    assert run("reduce_and", z.astype(np.uint8), axes=[0]).tolist() == [255] * 2
    assert run("reduce_and", z.astype(np.int64), axes=[0]).tolist() == [-1] * 2
    assert run("reduce_prod", z.astype(np.float32), axes=[0]).tolist() == [1, 1]
    assert run("reduce_sum", z.astype(ml_dtypes.bfloat16), axes=[0]).astype(float).tolist() == [0, 0]


def test_reduce_scalar_and_no_axes_copy():
    for op, dtypes in REDUCE_DTYPES.items():
        for dtype in dtypes:
            x = sample(dtype, (), op)
            check_reduce(op, x, [])
            x = sample(dtype, (2, 3), op)
            assert np.array_equal(run(op, x, axes=[]), x, equal_nan=dtype in FLOAT_DTYPES)


def test_high_rank_interleaved_axes():
    x = sample("float32", (2, 3, 1, 4, 2, 3, 2))
    for axes in ([0, 2, 4, 6], [1, 3, 5], [6, 0], [5, 4, 3], list(range(7))):
        check_reduce("reduce_sum", x, axes)
        check_reduce("reduce_min", x, axes)
        check_reduce("reduce_or", sample("uint16", x.shape, "reduce_or"), axes)


def test_size_one_axes():
    x = sample("float32", (1, 5, 1, 3))
    for axes in ([0], [2], [0, 2], [0, 1, 2], [3, 0]):
        check_reduce("reduce_sum", x, axes)
        check_reduce("reduce_max", x, axes)


def test_integer_sums_and_products_wrap():
    x = np.full(300, 100, np.int8)
    assert run("reduce_sum", x, axes=[0]) == np.int8(np.int64(30000).astype(np.int8))
    x = np.full((7, 3), 2**62, np.int64)
    np.testing.assert_array_equal(run("reduce_sum", x, axes=[0]), np.sum(x, axis=0))
    x = np.full(40, 3, np.uint32)
    assert run("reduce_prod", x, axes=[0]) == np.uint32(pow(3, 40, 2**32))
    x = np.full((50, 2), -7, np.int16)
    np.testing.assert_array_equal(run("reduce_prod", x, axes=[0]), np.prod(x, axis=0, dtype=np.int16))
    x = np.full(10**5, 255, np.uint8)
    assert run("reduce_sum", x, axes=[0]) == np.uint8((255 * 10**5) % 256)


def test_half_floats_accumulate_in_float32():
    # A float16 accumulator would stop at 2048; float32 gets the exact 4096.
    x = np.ones(4096, np.float16)
    assert run("reduce_sum", x, axes=[0]) == 4096
    assert run("reduce_sum", x.reshape(4096, 1), axes=[0])[0] == 4096
    y = np.ones(4096, ml_dtypes.bfloat16)
    assert float(run("reduce_sum", y, axes=[0])) == 4096
    assert float(run("reduce_sum", y.reshape(64, 64), axes=[0, 1])) == 4096


def test_float_sums_are_accurate():
    x = rng.random(3 * 10**6, dtype=np.float32) + 1
    ref = np.sum(x.astype(np.float64))
    assert abs(float(run("reduce_sum", x, axes=[0])) - ref) <= 1e-6 * ref
    # The same data reduced over an outer axis, and as many inner rows.
    m = x.reshape(3000, 1000)
    np.testing.assert_allclose(run("reduce_sum", m, axes=[0]), m.astype(np.float64).sum(0), rtol=1e-6)
    np.testing.assert_allclose(run("reduce_sum", m, axes=[1]), m.astype(np.float64).sum(1), rtol=1e-6)
    t = x.reshape(-1, 3)
    np.testing.assert_allclose(run("reduce_sum", t, axes=[0]), t.astype(np.float64).sum(0), rtol=1e-6)
    d = x.astype(np.float64) * 1.1
    assert abs(float(run("reduce_sum", d, axes=[0])) - np.sum(d)) <= 1e-12 * np.sum(d)


@pytest.mark.parametrize("shape, axes", [
    ((1 << 20,), [0]), ((300, 5000), [0]), ((5000, 300), [1]), ((3, 20000), [0]), ((20000, 3), [1]),
    ((20000, 3), [0]), ((2, 9000, 7), [1]), ((4, 50, 3, 400), [1, 3]), ((4, 50, 3, 400), [0, 2]),
    ((64, 4, 4096), [0, 2]), ((7, 130000), [1]), ((2, 3, 40000), [0, 1]),
])
@pytest.mark.parametrize("op", ["reduce_sum", "reduce_max", "reduce_min", "reduce_xor"])
def test_large_reductions_every_path(shape, axes, op):
    x = sample("int32" if op == "reduce_xor" else "float32", shape, op)
    check_reduce(op, x, axes)
    if op == "reduce_sum":
        check_reduce(op, sample("float16", shape, op), axes)
        check_reduce(op, sample("int8", shape, op), axes)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_max_min_propagate_nan(dtype):
    dt = _NP_DTYPES[dtype]
    for n in (1, 7, 64, 100, 5000):
        for where in {0, n // 2, n - 1}:
            x = rng.normal(size=n).astype(dt)
            x[where] = np.nan
            for op in ("reduce_max", "reduce_min"):
                assert np.isnan(float(run(op, x, axes=[0])))
                assert np.isnan(float(run(op, x.reshape(n, 1), axes=[0])[0]))
    # Infinities of both signs (no NaN) must not be taken for a NaN.
    x = rng.normal(size=5000).astype(dt)
    x[::7] = np.inf
    x[3::7] = -np.inf
    assert float(run("reduce_max", x, axes=[0])) == np.inf
    assert float(run("reduce_min", x, axes=[0])) == -np.inf
    x[1::7] = np.nan
    assert np.isnan(float(run("reduce_max", x, axes=[0])))
    y = np.array([-np.inf, -np.inf], dt)
    assert float(run("reduce_max", y, axes=[0])) == -np.inf


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_max_min_over_outer_axis_with_nan(dtype):
    x = rng.normal(size=(501, 37)).astype(dtype)
    x[::5, 3] = np.inf
    x[1::5, 3] = -np.inf  # a false alarm for the NaN probe: column 3 stays finite-max inf
    x[17, 5] = np.nan
    x[500, 36] = np.nan
    x[0, 0] = np.nan
    for op in ("reduce_max", "reduce_min"):
        check_reduce(op, x, [0])
        check_reduce(op, x.reshape(501, 37, 1), [0])
        check_reduce(op, x[:, :4], [0])


def test_sum_with_infinities():
    x = np.array([1, np.inf, 2], np.float32)
    assert run("reduce_sum", x, axes=[0]) == np.inf
    x = np.array([np.inf, -np.inf], np.float32)
    assert np.isnan(run("reduce_sum", x, axes=[0]))


# ---------------------------------------------------------------- argmax / argmin

def ref_arg(op, x, axis):
    xx = x.astype(np.float32) if x.dtype.name in ("float16", "bfloat16") else x
    return (np.argmax if op == "argmax" else np.argmin)(xx, axis=axis)


def check_arg(op, x, axis, index_dtype="int32"):
    res = run(op, x, axes=[axis], index_dtype=index_dtype)
    ref = ref_arg(op, x, axis)
    assert res.dtype == np.dtype(index_dtype) and res.shape == ref.shape
    np.testing.assert_array_equal(res, ref)


@SETTINGS
@given(shape=st.lists(st.integers(0, 6), min_size=1, max_size=4), op=st.sampled_from(["argmax", "argmin"]),
       dtype=st.sampled_from(ALL_DTYPES), special=st.booleans(), data=st.data())
def test_arg_matches_numpy(shape, op, dtype, special, data):
    axis = data.draw(st.integers(0, len(shape) - 1))
    shape[axis] = max(shape[axis], 1)
    x = sample(dtype, tuple(shape), op, special=special)
    check_arg(op, x, axis, data.draw(st.sampled_from(["int32", "int64"])))


@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_arg_ties_nan_and_long_lines(op):
    assert run(op, np.array([3, 1, 3, 1], np.int32), axes=[0], index_dtype="int32") == (0 if op == "argmax" else 1)
    assert run(op, np.array([0.0, -0.0]), axes=[0], index_dtype="int64") == 0
    assert run(op, np.array([1.0, np.nan, 5, np.nan], np.float32), axes=[0], index_dtype="int32") == 1
    assert run(op, np.array([True, False, True]), axes=[0], index_dtype="int32") == (0 if op == "argmax" else 1)
    for dtype in ("float32", "float16", "float64", "int8", "uint16", "int64", "bool", "bfloat16"):
        x = sample(dtype, (3, 3000), op)
        check_arg(op, x, 1)
        check_arg(op, x, 0)
        check_arg(op, x.reshape(3, 3, 1000), 1, "int64")
        check_arg(op, x.reshape(3, 1, 3000), 1)
        if dtype in FLOAT_DTYPES:
            x[1, 2500] = np.nan
            x[1, 2900] = np.nan
            x[2, 0] = np.nan
            check_arg(op, x, 1)
            check_arg(op, np.ascontiguousarray(x.T), 0)
            x[0, :] = np.inf if op == "argmax" else -np.inf
            check_arg(op, x, 1)


def test_arg_large_parallel():
    x = rng.normal(size=(256, 4096)).astype(np.float32)
    for op in ("argmax", "argmin"):
        check_arg(op, x, 1)
        check_arg(op, x, 0, "int64")
        # Rows split into segments: ties across segments keep the first index; NaNs win.
        t = sample("int8", (2000, 700), op)
        check_arg(op, t, 0)
        f = sample("float16", (2000, 700), op)
        f[1500, :350] = np.nan
        f[700, 100:200] = np.nan
        check_arg(op, f, 0)
        check_arg(op, f.astype(np.float64), 0)
    x = rng.normal(size=1 << 20).astype(np.float32)
    check_arg("argmax", x, 0)


# ---------------------------------------------------------------- scans

def ref_cum(op, x, axis, reverse):
    dtype = x.dtype.name
    if reverse:
        return np.flip(ref_cum(op, np.flip(x, axis), axis, False), axis)
    if op == "cumlogsumexp":
        with np.errstate(invalid="ignore"):
            return np.logaddexp.accumulate(f64(x), axis=axis)
    if dtype in ("float16", "bfloat16"):  # accumulated in float32, each result rounded
        with np.errstate(over="ignore"):
            return ref_cum(op, x.astype(np.float32), axis, False).astype(x.dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        if op == "cumsum":
            return np.cumsum(x, axis=axis, dtype=x.dtype)
        if op == "cumprod":
            return np.cumprod(x, axis=axis, dtype=x.dtype)
        if dtype == "bool":
            return (np.logical_or if op == "cummax" else np.logical_and).accumulate(x, axis=axis)
        return (np.maximum if op == "cummax" else np.minimum).accumulate(x, axis=axis)


def check_cum(op, x, axis, reverse):
    res = run(op, x, axis=axis, reverse=reverse)
    ref = ref_cum(op, x, axis, reverse)
    assert res.dtype == x.dtype and res.shape == x.shape
    if op == "cumlogsumexp":
        tol = {"float16": 3e-3, "bfloat16": 2e-2, "float32": 1e-5, "float64": 1e-12}[x.dtype.name]
        np.testing.assert_allclose(f64(res), ref, rtol=tol, atol=tol)
    elif x.dtype.name in FLOAT_DTYPES:
        np.testing.assert_array_equal(f64(res), f64(ref))  # same sequential order: exact
    else:
        np.testing.assert_array_equal(res, ref)


@SETTINGS
@given(shape=st.lists(st.integers(0, 6), min_size=1, max_size=4), op=st.sampled_from(sorted(CUM_DTYPES)),
       reverse=st.booleans(), special=st.booleans(), data=st.data())
def test_cum_matches_numpy(shape, op, reverse, special, data):
    axis = data.draw(st.integers(0, len(shape) - 1))
    dtype = data.draw(st.sampled_from(CUM_DTYPES[op]))
    check_cum(op, sample(dtype, tuple(shape), op, special=special), axis, int(reverse))


@pytest.mark.parametrize("op", sorted(CUM_DTYPES))
def test_cum_every_dtype_and_long_lines(op):
    for dtype in CUM_DTYPES[op]:
        x = sample(dtype, (3, 1500, 2), op)
        for axis, reverse in itertools.product(range(3), (0, 1)):
            check_cum(op, x, axis, reverse)
    x = sample("float32", (40, 3000), op)
    check_cum(op, x, 1, 1)
    check_cum(op, x, 0, 0)


def test_cum_special_values():
    x = np.array([1, np.nan, 2, 3], np.float32)
    assert np.isnan(run("cummax", x, axis=0, reverse=0)[1:]).all()
    assert run("cummax", x, axis=0, reverse=1)[2:].tolist() == [3, 3]
    x = np.array([-np.inf, -np.inf, 0, np.inf, np.inf, 1], np.float64)
    np.testing.assert_array_equal(run("cumlogsumexp", x, axis=0, reverse=0),
                                  [-np.inf, -np.inf, 0, np.inf, np.inf, np.inf])
    x = np.array([1000, 1000, -5], np.float32)  # no overflow: the running max is factored out
    np.testing.assert_allclose(run("cumlogsumexp", x, axis=0, reverse=0), [1000, 1000 + np.log(2), 1000 + np.log(2)], rtol=1e-6)
    x = np.full(300, 100, np.int8)
    np.testing.assert_array_equal(run("cumsum", x, axis=0, reverse=0), np.cumsum(x, dtype=np.int8))
    assert run("cumsum", np.zeros((0, 3), np.float32), axis=0, reverse=0).shape == (0, 3)
    assert run("cumsum", np.zeros((3, 0), np.float32), axis=0, reverse=1).shape == (3, 0)


# ---------------------------------------------------------------- bad input

def infer(op, shape, dtype, **attrs):
    return _core.infer(op, [(shape, dtype)], attrs)


def test_shape_rules():
    assert infer("reduce_sum", (2, 3, 4), "float32", axes=[0, 2]) == [((3,), "float32")]
    assert infer("reduce_max", (2, 3), "bool", axes=[1, 0]) == [((), "bool")]
    assert infer("reduce_or", (2, 3), "uint8", axes=[]) == [((2, 3), "uint8")]
    assert infer("argmax", (2, 3, 4), "float16", axes=[1], index_dtype="int64") == [((2, 4), "int64")]
    assert infer("argmin", (5,), "bool", axes=[0], index_dtype="int32") == [((), "int32")]
    assert infer("cumsum", (2, 3), "int8", axis=1, reverse=1) == [((2, 3), "int8")]
    assert infer("cumlogsumexp", (4,), "bfloat16", axis=0, reverse=0) == [((4,), "bfloat16")]


@pytest.mark.parametrize("op, shape, dtype, attrs, err, match", [
    ("reduce_sum", (2, 3), "float32", dict(axes=[2]), ValueError, r"\[reduce_sum\].*axis 2.*out of range"),
    ("reduce_sum", (2, 3), "float32", dict(axes=[-1]), ValueError, r"\[reduce_sum\].*out of range"),
    ("reduce_max", (2, 3), "float32", dict(axes=[1, 1]), ValueError, r"\[reduce_max\].*duplicate axis 1"),
    ("reduce_min", (), "float32", dict(axes=[0]), ValueError, r"\[reduce_min\].*out of range"),
    ("reduce_prod", (2,), "float32", dict(), ValueError, r"\[reduce_prod\].*missing attribute 'axes'"),
    ("reduce_prod", (2,), "float32", dict(axes=0), TypeError, r"\[reduce_prod\].*sequence of ints"),
    ("reduce_sum", (2,), "bool", dict(axes=[0]), TypeError, r"\[reduce_sum\].*bool"),
    ("reduce_prod", (2,), "bool", dict(axes=[0]), TypeError, r"\[reduce_prod\].*bool"),
    ("reduce_and", (2,), "float32", dict(axes=[0]), TypeError, r"\[reduce_and\].*bool or integer"),
    ("reduce_or", (2,), "float16", dict(axes=[0]), TypeError, r"\[reduce_or\]"),
    ("reduce_xor", (2,), "bfloat16", dict(axes=[0]), TypeError, r"\[reduce_xor\]"),
    ("argmax", (2, 0), "float32", dict(axes=[1], index_dtype="int32"), ValueError, r"\[argmax\].*empty axis 1"),
    ("argmin", (0,), "int8", dict(axes=[0], index_dtype="int64"), ValueError, r"\[argmin\].*empty"),
    ("argmax", (2, 3), "float32", dict(axes=[0, 1], index_dtype="int32"), ValueError, r"\[argmax\].*exactly one"),
    ("argmax", (2, 3), "float32", dict(axes=[], index_dtype="int32"), ValueError, r"\[argmax\].*exactly one"),
    ("argmax", (2, 3), "float32", dict(axes=[2], index_dtype="int32"), ValueError, r"\[argmax\].*out of range"),
    ("argmin", (2, 3), "float32", dict(axes=[1], index_dtype="float32"), TypeError, r"\[argmin\].*index_dtype"),
    ("argmin", (2, 3), "float32", dict(axes=[1], index_dtype=3), TypeError, r"\[argmin\].*'index_dtype' must be a dtype name"),
    ("argmin", (2, 3), "float32", dict(axes=[1]), ValueError, r"\[argmin\].*missing attribute 'index_dtype'"),
    ("cumsum", (2, 3), "float32", dict(axis=2, reverse=0), ValueError, r"\[cumsum\].*axis 2.*out of range"),
    ("cumsum", (2, 3), "float32", dict(axis=-1, reverse=0), ValueError, r"\[cumsum\].*out of range"),
    ("cumprod", (), "float32", dict(axis=0, reverse=0), ValueError, r"\[cumprod\].*out of range"),
    ("cummax", (2,), "float32", dict(reverse=0), ValueError, r"\[cummax\].*missing attribute 'axis'"),
    ("cummax", (2,), "float32", dict(axis=[0], reverse=0), TypeError, r"\[cummax\].*must be an int"),
    ("cummin", (2,), "float32", dict(axis=0, reverse=2), ValueError, r"\[cummin\].*reverse"),
    ("cumsum", (2,), "bool", dict(axis=0, reverse=0), TypeError, r"\[cumsum\].*bool"),
    ("cumprod", (2,), "bool", dict(axis=0, reverse=0), TypeError, r"\[cumprod\].*bool"),
    ("cumlogsumexp", (2,), "int32", dict(axis=0, reverse=0), TypeError, r"\[cumlogsumexp\].*floating"),
    ("cumlogsumexp", (2,), "bool", dict(axis=0, reverse=0), TypeError, r"\[cumlogsumexp\]"),
])
def test_bad_input(op, shape, dtype, attrs, err, match):
    with pytest.raises(err, match=match):
        infer(op, shape, dtype, **attrs)
    with pytest.raises(err, match=match):
        _core.compile_op(op, [(shape, dtype)], attrs)


def test_bool_max_min_and_logical_ops():
    x = np.array([[True, False], [True, True], [False, False]])
    for op, ref in [("reduce_max", x.any(0)), ("reduce_min", x.all(0)), ("reduce_and", x.all(0)),
                    ("reduce_or", x.any(0)), ("reduce_xor", np.logical_xor.reduce(x, 0))]:
        np.testing.assert_array_equal(run(op, x, axes=[0]), ref)
    np.testing.assert_array_equal(run("cummax", x, axis=0, reverse=0), np.logical_or.accumulate(x, 0))
