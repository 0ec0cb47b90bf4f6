"""Tests of the C++ core's gather and scatter ops against NumPy (and a slow reference of XLA's rules)."""
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from core_util import ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, run_op, to_numpy
from xjax import _core

INDEX_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
SCATTER_OPS = ["scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max"]


def np_dtype(name):
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def sample(shape, dtype, rng, lo=-20, hi=20):
    dt = np_dtype(dtype)
    if dt == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dt.kind == "u":
        lo = 0
    return rng.integers(lo, hi, shape).astype(dt)


def run0d(op, *inputs, **attrs):
    """run_op for inputs that may be 0-d (core_util.to_core turns 0-d arrays into shape (1,))."""
    arrays = []
    for x in inputs:
        x = np.array(x, order="C", copy=True)
        arrays.append(_core.Array.from_buffer(x.reshape(-1).view(np.uint8), x.shape, x.dtype.name))
    exe = _core.compile_op(op, [(a.shape, a.dtype) for a in arrays], attrs)
    return [to_numpy(r) for r in exe.run(arrays)]


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
    if a.dtype.kind == "f" or a.dtype == np.dtype(ml_dtypes.bfloat16):
        a, b = a.astype(np.float64), b.astype(np.float64)
    np.testing.assert_array_equal(a, b)


ROWS = dict(offset_dims=[1], collapsed_slice_dims=[0], start_index_map=[0])


def default_fill(dtype):
    dt = np_dtype(dtype)
    if dt == np.bool_:
        return True
    if dt.kind == "i":
        return np.iinfo(dt).min
    if dt.kind == "u":
        return np.iinfo(dt).max
    return np.nan


# ---------------------------------------------------------------- gather


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_gather_rows_all_dtypes(dtype):
    rng = np.random.default_rng(0)
    x = sample((6, 5), dtype, rng)
    idx = np.array([3, 0, 5, 5, 1], np.int32)
    got = run_op("gather", x, idx[:, None], slice_sizes=[1, 5], mode="clip", **ROWS)[0]
    same(got, x[idx])


@pytest.mark.parametrize("idx_dtype", INDEX_DTYPES)
def test_gather_rows_index_dtypes_clip_and_fill(idx_dtype):
    x = np.arange(24, dtype=np.float32).reshape(6, 4)
    raw = np.array([2, 7, 0, 250, 5, -1, -128, 6], np.int64)
    idx = raw.astype(idx_dtype)  # wraps for unsigned types: still out of bounds
    clipped = run_op("gather", x, idx[:, None], slice_sizes=[1, 4], mode="clip", **ROWS)[0]
    signed = idx.astype(np.int64) if np.dtype(idx_dtype).kind == "i" else idx.astype(np.uint64).astype(np.float64)
    same(clipped, x[np.clip(signed, 0, 5).astype(np.int64)])
    filled = run_op("gather", x, idx[:, None], slice_sizes=[1, 4], mode="fill", **ROWS)[0]
    inb = (signed >= 0) & (signed <= 5)
    ref = np.full((len(idx), 4), np.nan, np.float32)
    ref[inb] = x[signed[inb].astype(np.int64)]
    same(filled, ref)


def test_gather_uint64_huge_index_is_out_of_bounds():
    x = np.arange(8, dtype=np.int32).reshape(4, 2)
    idx = np.array([[2**63 + 5], [2**64 - 1], [1]], np.uint64)
    got = run_op("gather", x, idx, slice_sizes=[1, 2], mode="fill", fill_value=-7, **ROWS)[0]
    same(got, np.array([[-7, -7], [-7, -7], [2, 3]], np.int32))
    got = run_op("gather", x, idx, slice_sizes=[1, 2], mode="clip", **ROWS)[0]
    same(got, x[[3, 3, 1]])


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_gather_fill_defaults_and_values(dtype):
    x = sample((3, 2), dtype, np.random.default_rng(1))
    idx = np.array([[1], [3], [-1]], np.int32)
    got = run_op("gather", x, idx, slice_sizes=[1, 2], mode="fill", **ROWS)[0]
    ref = np.empty((3, 2), np_dtype(dtype))
    ref[0] = x[1]
    ref[1:] = default_fill(dtype)
    same(got, ref)
    got = run_op("gather", x, idx, slice_sizes=[1, 2], mode="fill", fill_value=1.0, **ROWS)[0]
    ref[1:] = 1
    same(got, ref)


def test_gather_fill_value_conversions():
    x = np.zeros((2, 1), np.int8)
    idx = np.array([[5]], np.int32)
    for fill, want in [(1e9, 127), (-1e9, -128), (float("nan"), 0), (-3, -3), (300, 44)]:
        got = run_op("gather", x, idx, slice_sizes=[1, 1], mode="fill", fill_value=fill, **ROWS)[0]
        assert got[0, 0] == want, (fill, got)


def test_promise_in_bounds_is_xla_native():
    # A broken promise never touches memory out of bounds: gather clamps, scatter drops.
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    idx = np.array([[1], [10**6], [-10**6]], np.int32)
    got = run_op("gather", x, idx, slice_sizes=[1, 3], mode="promise_in_bounds", **ROWS)[0]
    same(got, x[[1, 3, 0]])
    u = np.ones((3, 3), np.float32)
    got = run_op("scatter_add", x, idx, u, mode="promise_in_bounds", **SCATTER_ROWS)[0]
    same(got, x + np.array([[0], [1], [0], [0]], np.float32))


def test_gather_columns_non_trailing_offset_dims():
    # x[:, idx]: the offset dim comes first in the output.
    x = np.arange(20, dtype=np.int64).reshape(4, 5)
    idx = np.array([4, 0, 2], np.int32)
    got = run_op("gather", x, idx[:, None], offset_dims=[0], collapsed_slice_dims=[1], start_index_map=[1],
                 slice_sizes=[4, 1], mode="clip")[0]
    same(got, x[:, idx])
    # 3-D: x[:, idx, :] with a 2-D index array -> offset dims around the batch dims.
    y = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    ii = np.array([[0, 3], [2, 2]], np.int32)
    got = run_op("gather", y, ii[..., None], offset_dims=[0, 3], collapsed_slice_dims=[1], start_index_map=[1],
                 slice_sizes=[3, 1, 5], mode="clip")[0]
    same(got, y[:, ii, :])


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_gather_take_along_axis_with_batching_dims(axis):
    rng = np.random.default_rng(axis)
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    shape = list(x.shape)
    shape[axis] = 6
    idx = rng.integers(0, x.shape[axis], shape).astype(np.int32)
    batch = [d for d in range(3) if d != axis]
    got = run_op("gather", x, idx[..., None], offset_dims=[], collapsed_slice_dims=[axis], start_index_map=[axis],
                 operand_batching_dims=batch, start_indices_batching_dims=batch, slice_sizes=[1, 1, 1],
                 mode="fill")[0]
    same(got, np.take_along_axis(x, idx, axis))


def test_gather_2d_points_and_permuted_start_index_map():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 7)).astype(np.float64)
    i, j = rng.integers(0, 5, 30), rng.integers(0, 7, 30)
    pts = np.stack([i, j], -1).astype(np.int32).reshape(5, 6, 2)
    attrs = dict(offset_dims=[], collapsed_slice_dims=[0, 1], slice_sizes=[1, 1], mode="clip")
    same(run_op("gather", x, pts, start_index_map=[0, 1], **attrs)[0], x[i, j].reshape(5, 6))
    same(run_op("gather", x, pts[..., ::-1].copy(), start_index_map=[1, 0], **attrs)[0], x[i, j].reshape(5, 6))


def ref_slices(x, starts, size, mode, fill):
    out = []
    for s in starts:
        hi = np.array(x.shape) - np.array(size)
        if mode == "clip":
            s = np.clip(s, 0, hi)
        elif np.any(s < 0) or np.any(s > hi):
            out.append(np.full(size, fill, x.dtype))
            continue
        out.append(x[s[0]:s[0] + size[0], s[1]:s[1] + size[1]])
    return np.stack(out)


@pytest.mark.parametrize("mode", ["clip", "fill"])
@pytest.mark.parametrize("size", [(3, 4), (1, 8), (10, 8), (2, 1), (0, 3)])
def test_gather_dynamic_slices(mode, size):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((10, 8)).astype(np.float32)
    starts = rng.integers(-3, 12, (9, 2)).astype(np.int32)
    starts[0] = [0, 0]
    got = run_op("gather", x, starts, offset_dims=[1, 2], collapsed_slice_dims=[], start_index_map=[0, 1],
                 slice_sizes=list(size), mode=mode, fill_value=-1.5)[0]
    same(got, ref_slices(x, starts, size, mode, -1.5))


def test_gather_window_is_filled_whole_when_partly_out_of_bounds():
    x = np.arange(10, dtype=np.int32)
    starts = np.array([[7], [8], [-1]], np.int32)
    got = run_op("gather", x, starts, offset_dims=[1], collapsed_slice_dims=[], start_index_map=[0],
                 slice_sizes=[3], mode="fill", fill_value=0)[0]
    same(got, np.array([[7, 8, 9], [0, 0, 0], [0, 0, 0]], np.int32))


def test_gather_empty_and_scalar_results():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    none = np.zeros((0, 1), np.int32)
    same(run_op("gather", x, none, slice_sizes=[1, 3], mode="fill", **ROWS)[0], np.zeros((0, 3), np.float32))
    same(run_op("gather", x, np.array([[1]], np.int32), slice_sizes=[1, 0], mode="clip", **ROWS)[0],
         np.zeros((1, 0), np.float32))
    # indices of shape (2,) gather one element: a 0-d result.
    got = run_op("gather", x, np.array([1, 2], np.int32), offset_dims=[], collapsed_slice_dims=[0, 1],
                 start_index_map=[0, 1], slice_sizes=[1, 1], mode="clip")[0]
    same(got, np.float32(5))
    # 0-d operand with empty index vectors.
    got = run0d("gather", np.float32(4), np.zeros((3, 0), np.int32), offset_dims=[], collapsed_slice_dims=[],
                start_index_map=[], slice_sizes=[], mode="clip")[0]
    same(got, np.full(3, 4, np.float32))
    # empty operand, empty slices
    e = np.zeros((0, 3), np.float32)
    same(run_op("gather", e, np.array([[0]], np.int32), offset_dims=[1, 2], collapsed_slice_dims=[],
                start_index_map=[0], slice_sizes=[0, 3], mode="fill")[0], np.zeros((1, 0, 3), np.float32))


def test_gather_large_rows_parallel():
    rng = np.random.default_rng(4)
    table = rng.standard_normal((5000, 64)).astype(np.float32)
    rows = rng.integers(-10, 5010, 20000).astype(np.int32)
    got = run_op("gather", table, rows[:, None], slice_sizes=[1, 64], mode="fill", fill_value=0.0, **ROWS)[0]
    ok = (rows >= 0) & (rows < 5000)
    ref = np.zeros((20000, 64), np.float32)
    ref[ok] = table[rows[ok]]
    same(got, ref)


# ------------------------------------------------ general gather/scatter vs a slow reference


def random_dnums(rng):
    """Random valid dimension numbers: operand shape, per-dim window sizes, and the dim lists."""
    rank = int(rng.integers(1, 4))
    shape = [int(rng.integers(1, 5)) for _ in range(rank)]
    dims = list(range(rank))
    batching = sorted(rng.choice(dims, int(rng.integers(0, min(1, rank - 1) + 1)), replace=False).tolist())
    rest = [d for d in dims if d not in batching]
    index_map = rng.permutation(rest)[:int(rng.integers(0, len(rest) + 1))].tolist()
    collapsed = sorted(rng.choice(rest, int(rng.integers(0, len(rest) + 1)), replace=False).tolist())
    window = [1 if (d in collapsed or d in batching) else int(rng.integers(0, shape[d] + 1)) for d in dims]
    batch_shape = [int(rng.integers(1, 4)) for _ in range(rng.integers(0, 3))]
    index_batching = []
    for b in batching:
        p = int(rng.integers(0, len(batch_shape) + 1))
        batch_shape.insert(p, shape[b])
        index_batching = [q + (q >= p) for q in index_batching] + [p]
    n_offset = rank - len(collapsed) - len(batching)
    offset = sorted(rng.choice(len(batch_shape) + n_offset, n_offset, replace=False).tolist())
    indices = rng.integers(-2, max(shape) + 2, batch_shape + [len(index_map)]).astype(np.int32)
    return shape, window, offset, collapsed, index_map, batching, index_batching, indices


def ref_starts(shape, window, index_map, batching, index_batching, indices, mode):
    """Yields (batch index, operand start or None when dropped) in row-major batch order."""
    for bi in np.ndindex(*indices.shape[:-1]):
        start, drop = [0] * len(shape), False
        for k, d in enumerate(index_map):
            s, hi = int(indices[bi][k]), shape[d] - window[d]
            if mode == "clip":
                s = min(max(s, 0), hi)
            elif s < 0 or s > hi:
                drop = True
            start[d] = s
        for od, idim in zip(batching, index_batching):
            start[od] = bi[idim]
        yield bi, (None if drop else start)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["clip", "fill"]))
def test_gather_random_dimension_numbers(seed, mode):
    rng = np.random.default_rng(seed)
    shape, window, offset, collapsed, index_map, batching, index_batching, indices = random_dnums(rng)
    x = rng.integers(-50, 50, shape).astype(np.float32)
    got = run0d("gather", x, indices, offset_dims=offset, collapsed_slice_dims=collapsed, start_index_map=index_map,
                 operand_batching_dims=batching, start_indices_batching_dims=index_batching, slice_sizes=window,
                 mode=mode, fill_value=-99.0)[0]
    window_dims = [d for d in range(len(shape)) if d not in collapsed and d not in batching]
    out_rank = indices.ndim - 1 + len(offset)
    batch_pos = [i for i in range(out_rank) if i not in offset]
    out_shape = [0] * out_rank
    for i, p in enumerate(batch_pos):
        out_shape[p] = indices.shape[i]
    for p, d in zip(offset, window_dims):
        out_shape[p] = window[d]
    ref = np.empty(out_shape, np.float32)
    for bi, start in ref_starts(shape, window, index_map, batching, index_batching, indices, mode):
        for wi in np.ndindex(*[window[d] for d in window_dims]):
            oi = [0] * out_rank
            for i, p in enumerate(batch_pos):
                oi[p] = bi[i]
            for p, w in zip(offset, wi):
                oi[p] = w
            if start is None:
                ref[tuple(oi)] = -99
            else:
                full = list(start)
                for d, w in zip(window_dims, wi):
                    full[d] += w
                ref[tuple(oi)] = x[tuple(full)]
    same(got, ref)


COMBINE = {"scatter": lambda a, b: b, "scatter_add": np.add, "scatter_mul": np.multiply,
           "scatter_min": np.minimum, "scatter_max": np.maximum}


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["clip", "fill"]), st.sampled_from(SCATTER_OPS))
def test_scatter_random_dimension_numbers(seed, mode, op):
    rng = np.random.default_rng(seed)
    shape, window, update_window, inserted, index_map, batching, index_batching, indices = random_dnums(rng)
    window_dims = [d for d in range(len(shape)) if d not in inserted and d not in batching]
    upd_rank = indices.ndim - 1 + len(update_window)
    scatter_pos = [i for i in range(upd_rank) if i not in update_window]
    upd_shape = [0] * upd_rank
    for i, p in enumerate(scatter_pos):
        upd_shape[p] = indices.shape[i]
    for p, d in zip(update_window, window_dims):
        upd_shape[p] = window[d]
    x = rng.integers(-5, 6, shape).astype(np.float64)
    u = rng.integers(-5, 6, upd_shape).astype(np.float64)
    got = run0d(op, x, indices, u, update_window_dims=update_window, inserted_window_dims=inserted,
                 scatter_dims_to_operand_dims=index_map, operand_batching_dims=batching,
                 scatter_indices_batching_dims=index_batching, mode=mode)[0]
    # Windows apply in index order (so for "scatter" the last write wins, as this kernel does).
    ref = x.copy()
    for bi, start in ref_starts(shape, window, index_map, batching, index_batching, indices, mode):
        if start is None:
            continue
        for wi in np.ndindex(*[window[d] for d in window_dims]):
            ui = [0] * upd_rank
            for i, p in enumerate(scatter_pos):
                ui[p] = bi[i]
            for p, w in zip(update_window, wi):
                ui[p] = w
            full = list(start)
            for d, w in zip(window_dims, wi):
                full[d] += w
            ref[tuple(full)] = COMBINE[op](ref[tuple(full)], u[tuple(ui)])
    same(got, ref)


# ---------------------------------------------------------------- scatter

SCATTER_ROWS = dict(update_window_dims=[1], inserted_window_dims=[0], scatter_dims_to_operand_dims=[0])
SCATTER_POINTS = dict(update_window_dims=[], inserted_window_dims=[0], scatter_dims_to_operand_dims=[0])
UFUNC = {"scatter_add": np.add, "scatter_mul": np.multiply, "scatter_min": np.minimum, "scatter_max": np.maximum}


@pytest.mark.parametrize("op", list(UFUNC))
@pytest.mark.parametrize("dtype", [d for d in ALL_DTYPES if d not in ("bool", "bfloat16")])
def test_scatter_combine_with_duplicates_and_drops(op, dtype):
    rng = np.random.default_rng(5)
    x = sample(10, dtype, rng, -4, 5)
    u = sample(40, dtype, rng, -4, 5)
    idx = rng.integers(-3, 13, 40).astype(np.int32)
    got = run_op(op, x, idx[:, None], u, mode="fill", **SCATTER_POINTS)[0]
    ref = x.copy()
    ok = (idx >= 0) & (idx < 10)
    with np.errstate(over="ignore"):
        UFUNC[op].at(ref, idx[ok], u[ok])
    same(got, ref)
    got = run_op(op, x, idx[:, None], u, mode="clip", **SCATTER_POINTS)[0]
    ref = x.copy()
    with np.errstate(over="ignore"):
        UFUNC[op].at(ref, np.clip(idx, 0, 9), u)
    same(got, ref)


@pytest.mark.parametrize("op", ["scatter", "scatter_min", "scatter_max"])
def test_scatter_bool(op):
    x = np.array([True, False, True, False])
    idx = np.array([[1], [1], [2], [3]], np.int32)
    u = np.array([True, False, False, False])
    got = run_op(op, x, idx, u, mode="fill", **SCATTER_POINTS)[0]
    want = {"scatter": [True, False, False, False], "scatter_min": [True, False, False, False],
            "scatter_max": [True, True, True, False]}[op]
    same(got, np.array(want))


def test_scatter_bfloat16_add():
    x = np.arange(6).astype(ml_dtypes.bfloat16)
    idx = np.array([[0], [0], [5], [9]], np.int32)
    u = np.array([1, 2, 3, 4]).astype(ml_dtypes.bfloat16)
    got = run_op("scatter_add", x, idx, u, mode="fill", **SCATTER_POINTS)[0]
    same(got, np.array([3, 1, 2, 3, 4, 8]).astype(ml_dtypes.bfloat16))


def test_scatter_int_wraparound():
    x = np.array([120, -120, 100], np.int8)
    idx = np.array([[0], [0], [1], [2]], np.int32)
    u = np.array([5, 5, -20, 3], np.int8)
    same(run_op("scatter_add", x, idx, u, **SCATTER_POINTS)[0], np.array([-126, 116, 103], np.int8))
    same(run_op("scatter_mul", x, idx, u, **SCATTER_POINTS)[0], (x.astype(np.int64) * [25, -20, 3]).astype(np.int8))
    big = np.array([2**63 - 1], np.int64)
    same(run_op("scatter_add", big, np.array([[0]], np.int32), np.array([1], np.int64), **SCATTER_POINTS)[0],
         np.array([-2**63], np.int64))
    u16 = np.array([65535], np.uint16)
    same(run_op("scatter_mul", u16, np.array([[0]], np.int32), u16, **SCATTER_POINTS)[0], np.array([1], np.uint16))


@pytest.mark.parametrize("op", ["scatter_min", "scatter_max"])
def test_scatter_min_max_propagate_nan(op):
    x = np.array([1.0, np.nan, 3.0, 0.0], np.float32)
    idx = np.array([[0], [1], [2], [2]], np.int32)
    u = np.array([np.nan, 5.0, -1.0, np.nan], np.float32)
    got = run_op(op, x, idx, u, **SCATTER_POINTS)[0]
    ref = x.copy()
    with np.errstate(invalid="ignore"):
        UFUNC[op].at(ref, idx[:, 0], u)
    same(got, ref)
    assert np.isnan(got[:3]).all()


def test_scatter_set_duplicates_deterministic():
    rng = np.random.default_rng(6)
    x = np.zeros(8, np.float32)
    idx = rng.integers(0, 8, (50000, 1)).astype(np.int32)
    u = rng.standard_normal(50000).astype(np.float32)
    first = run_op("scatter", x, idx, u, **SCATTER_POINTS)[0]
    for _ in range(3):
        same(run_op("scatter", x, idx, u, **SCATTER_POINTS)[0], first)
    for pos in range(8):
        assert first[pos] in u[idx[:, 0] == pos]


@pytest.mark.parametrize("mode", ["clip", "fill"])
def test_scatter_rows(mode):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((6, 3)).astype(np.float32)
    idx = np.array([4, 1, 9, -2], np.int32)
    u = rng.standard_normal((4, 3)).astype(np.float32)
    got = run_op("scatter", x, idx[:, None], u, mode=mode, **SCATTER_ROWS)[0]
    ref = x.copy()
    keep = (idx >= 0) & (idx < 6) if mode == "fill" else np.ones(4, bool)
    ref[np.clip(idx[keep], 0, 5)] = u[keep]
    same(got, ref)


def test_scatter_columns_non_trailing_window_dims():
    # x.at[:, idx].add(u) with u of shape (rows, len(idx)).
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    idx = np.array([3, 0, 3], np.int32)
    u = np.arange(9, dtype=np.int32).reshape(3, 3) * 10
    got = run_op("scatter_add", x, idx[:, None], u, update_window_dims=[0], inserted_window_dims=[1],
                 scatter_dims_to_operand_dims=[1])[0]
    ref = x.copy()
    np.add.at(ref.T, idx, u.T)
    same(got, ref)


def test_scatter_windows_dropped_whole_or_clamped():
    x = np.zeros(8, np.int32)
    starts = np.array([[5], [6], [-1], [2]], np.int32)
    u = np.array([[1, 2, 3]] * 4, np.int32) * np.array([[1], [10], [100], [1000]], np.int32)
    attrs = dict(update_window_dims=[1], inserted_window_dims=[], scatter_dims_to_operand_dims=[0])
    same(run_op("scatter_add", x, starts, u, mode="fill", **attrs)[0],
         np.array([0, 0, 1000, 2000, 3000, 1, 2, 3], np.int32))
    same(run_op("scatter_add", x, starts, u, mode="clip", **attrs)[0],
         np.array([100, 200, 1300, 2000, 3000, 11, 22, 33], np.int32))


def test_scatter_put_along_axis_with_batching_dims():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((4, 6)).astype(np.float64)
    idx = rng.integers(0, 6, (4, 3)).astype(np.int32)
    u = rng.standard_normal((4, 3))
    got = run_op("scatter_add", x, idx[..., None], u, update_window_dims=[], inserted_window_dims=[1],
                 scatter_dims_to_operand_dims=[1], operand_batching_dims=[0], scatter_indices_batching_dims=[0])[0]
    ref = x.copy()
    for r in range(4):
        np.add.at(ref[r], idx[r], u[r])
    np.testing.assert_allclose(got, ref, rtol=1e-12)


def test_scatter_2d_points():
    x = np.zeros((4, 5), np.int64)
    pts = np.array([[0, 0], [3, 4], [3, 4], [4, 0], [1, 2]], np.int32)
    u = np.array([1, 2, 3, 4, 5], np.int64)
    got = run_op("scatter_add", x, pts, u, update_window_dims=[], inserted_window_dims=[0, 1],
                 scatter_dims_to_operand_dims=[0, 1], mode="fill")[0]
    ref = x.copy()
    ref[0, 0], ref[3, 4], ref[1, 2] = 1, 5, 5
    same(got, ref)


@pytest.mark.parametrize("op", list(UFUNC))
def test_scatter_large(op):
    """Large windows take the parallel path (threads own ranges of the result), points the serial one."""
    rng = np.random.default_rng(9)
    x = rng.integers(1, 3, (50, 256)).astype(np.float64)
    idx = rng.integers(-5, 55, 400).astype(np.int32)
    u = rng.integers(1, 3, (400, 256)).astype(np.float64)
    if op == "scatter_mul":
        u = np.where(rng.random(u.shape) < 0.99, 1.0, 2.0)
    got = run_op(op, x, idx[:, None], u, mode="fill", **SCATTER_ROWS)[0]
    ok = (idx >= 0) & (idx < 50)
    ref = x.copy()
    UFUNC[op].at(ref, idx[ok], u[ok])
    same(got, ref)
    pts = rng.integers(0, x.size, (60000, 1)).astype(np.int32)
    up = rng.integers(1, 3, 60000).astype(np.float64)
    if op == "scatter_mul":
        up = np.where(rng.random(up.shape) < 0.99, 1.0, 2.0)
    got = run_op(op, x.reshape(-1), pts, up, **SCATTER_POINTS)[0]
    ref = x.reshape(-1).copy()
    UFUNC[op].at(ref, pts[:, 0], up)
    same(got, ref)


def test_scatter_set_large_windows_last_write_wins():
    rng = np.random.default_rng(10)
    x = np.zeros((20, 512), np.float32)
    idx = rng.integers(0, 20, 300).astype(np.int32)
    u = rng.standard_normal((300, 512)).astype(np.float32)
    got = run_op("scatter", x, idx[:, None], u, **SCATTER_ROWS)[0]
    ref = x.copy()
    for i, r in enumerate(idx):  # in index order: the last duplicate wins
        ref[r] = u[i]
    same(got, ref)


def test_scatter_empty_cases():
    x = np.arange(4, dtype=np.float32)
    same(run_op("scatter_add", x, np.zeros((0, 1), np.int32), np.zeros(0, np.float32), **SCATTER_POINTS)[0], x)
    empty = np.zeros(0, np.float32)
    same(run_op("scatter", empty, np.array([[0], [3]], np.int32), np.ones(2, np.float32), mode="clip",
                **SCATTER_POINTS)[0], empty)
    same(run0d("scatter_add", np.float32(2), np.zeros((3, 0), np.int32), np.ones(3, np.float32),
               update_window_dims=[], inserted_window_dims=[], scatter_dims_to_operand_dims=[])[0], np.float32(5))


# ---------------------------------------------------------------- bad input


def gather_attrs(**over):
    a = dict(offset_dims=[1], collapsed_slice_dims=[0], start_index_map=[0], slice_sizes=[1, 3], mode="clip")
    a.update(over)
    return a


X23 = ((4, 3), "float32")


@pytest.mark.parametrize("idx_type, attrs, match", [
    (((2, 1), "float32"), gather_attrs(), "integer dtype"),
    (((2, 1), "bool"), gather_attrs(), "integer dtype"),
])
def test_gather_bad_dtypes(idx_type, attrs, match):
    with pytest.raises(TypeError, match=r"\[gather\].*" + match):
        _core.infer("gather", [X23, idx_type], attrs)


@pytest.mark.parametrize("idx_shape, attrs, match", [
    ((), gather_attrs(), "rank >= 1"),
    ((2, 1), gather_attrs(offset_dims=[2]), "offset_dims"),
    ((2, 1), gather_attrs(offset_dims=[1, 1], collapsed_slice_dims=[]), "offset_dims"),
    ((2, 2, 1), gather_attrs(offset_dims=[2, 1], collapsed_slice_dims=[]), "sorted"),
    ((2, 2), gather_attrs(), "start_index_map"),
    ((2, 1), gather_attrs(start_index_map=[2]), "start_index_map"),
    ((2, 2), gather_attrs(start_index_map=[0, 0]), "repeat"),
    ((2, 1), gather_attrs(collapsed_slice_dims=[0, 0], offset_dims=[]), "collapsed_slice_dims"),
    ((2, 1), gather_attrs(collapsed_slice_dims=[2], offset_dims=[]), "collapsed_slice_dims"),
    ((2, 1), gather_attrs(slice_sizes=[1, 3, 1]), "slice_sizes"),
    ((2, 1), gather_attrs(slice_sizes=[1, 4]), "slice_sizes"),
    ((2, 1), gather_attrs(slice_sizes=[1, -1]), "slice_sizes"),
    ((2, 1), gather_attrs(slice_sizes=[2, 3]), "slice size 1"),
    ((2, 1), gather_attrs(offset_dims=[]), "offset, collapsed or batching"),
    ((2, 1), gather_attrs(mode="wrap"), "mode"),
    ((4, 1), gather_attrs(offset_dims=[], start_index_map=[1], collapsed_slice_dims=[1], slice_sizes=[1, 1],
                          operand_batching_dims=[0], start_indices_batching_dims=[1]), "out of range"),
    ((3, 1), gather_attrs(offset_dims=[], start_index_map=[1], collapsed_slice_dims=[1], slice_sizes=[1, 1],
                          operand_batching_dims=[0], start_indices_batching_dims=[0]), "equal sizes"),
    ((4, 1), gather_attrs(offset_dims=[], start_index_map=[1], collapsed_slice_dims=[1], slice_sizes=[1, 1],
                          operand_batching_dims=[0], start_indices_batching_dims=[]), "equal lengths"),
    ((4, 1), gather_attrs(offset_dims=[], start_index_map=[0], collapsed_slice_dims=[1], slice_sizes=[1, 1],
                          operand_batching_dims=[0], start_indices_batching_dims=[0]), "disjoint"),
    ((4, 1), gather_attrs(offset_dims=[], start_index_map=[1], collapsed_slice_dims=[0], slice_sizes=[1, 1],
                          operand_batching_dims=[0], start_indices_batching_dims=[0]), "disjoint"),
    ((4, 1), gather_attrs(offset_dims=[1], start_index_map=[1], collapsed_slice_dims=[], slice_sizes=[2, 1],
                          operand_batching_dims=[0], start_indices_batching_dims=[0]), "0 or 1"),
])
def test_gather_bad_dimension_numbers(idx_shape, attrs, match):
    with pytest.raises(ValueError, match=r"\[gather\].*" + match):
        _core.infer("gather", [X23, (idx_shape, "int32")], attrs)


@pytest.mark.parametrize("attrs, match", [
    (gather_attrs(mode=3), "attribute 'mode' must be a string"),
    (gather_attrs(fill_value="x"), "attribute 'fill_value' must be a number"),
    (gather_attrs(offset_dims=7), "attribute 'offset_dims' must be a sequence of ints"),
])
def test_gather_mistyped_attributes(attrs, match):
    with pytest.raises(TypeError, match=r"\[gather\] " + match):
        _core.infer("gather", [X23, ((2, 1), "int32")], attrs)


def test_gather_missing_attribute():
    attrs = gather_attrs()
    del attrs["slice_sizes"]
    with pytest.raises(ValueError, match=r"\[gather\] missing attribute 'slice_sizes'"):
        _core.infer("gather", [X23, ((2, 1), "int32")], attrs)


@pytest.mark.parametrize("op", SCATTER_OPS)
@pytest.mark.parametrize("types, attrs, err, match", [
    ([X23, ((2, 1), "float32"), ((2, 3), "float32")], SCATTER_ROWS, TypeError, "integer dtype"),
    ([X23, ((2, 1), "int32"), ((2, 3), "float64")], SCATTER_ROWS, TypeError, "operand's dtype"),
    ([X23, ((2, 1), "int32"), ((3, 3), "float32")], SCATTER_ROWS, ValueError, "must match indices"),
    ([X23, ((2, 1), "int32"), ((2, 4), "float32")], SCATTER_ROWS, ValueError, "does not fit"),
    ([X23, ((2, 1), "int32"), ((2,), "float32")], SCATTER_ROWS, ValueError, "rank"),
    ([X23, ((2, 1), "int32"), ((2, 3, 1), "float32")], SCATTER_ROWS, ValueError, "rank"),
    ([X23, ((2, 2), "int32"), ((2, 3), "float32")], SCATTER_ROWS, ValueError, "scatter_dims_to_operand_dims"),
    ([X23, ((2, 1), "int32"), ((2, 3), "float32")], dict(SCATTER_ROWS, update_window_dims=[2]), ValueError,
     "update_window_dims"),
    ([X23, ((2, 1), "int32"), ((2, 3), "float32")], dict(SCATTER_ROWS, inserted_window_dims=[]), ValueError,
     "window, inserted or batching"),
    ([X23, ((2, 1), "int32"), ((2, 3), "float32")], dict(SCATTER_ROWS, inserted_window_dims=[5]), ValueError,
     "inserted_window_dims"),
    ([X23, ((2, 1), "int32"), ((2, 3), "float32")], dict(SCATTER_ROWS, scatter_dims_to_operand_dims=[3]),
     ValueError, "scatter_dims_to_operand_dims"),
    ([X23, ((2, 1), "int32"), ((2, 3), "float32")], dict(SCATTER_ROWS, mode="drop"), ValueError, "mode"),
    ([X23, ((), "int32"), ((2, 3), "float32")], SCATTER_ROWS, ValueError, "rank >= 1"),
    ([X23, ((4, 1), "int32"), ((4,), "float32")],
     dict(update_window_dims=[], inserted_window_dims=[1], scatter_dims_to_operand_dims=[1],
          operand_batching_dims=[0], scatter_indices_batching_dims=[1]), ValueError, "out of range"),
    ([X23, ((3, 1), "int32"), ((3,), "float32")],
     dict(update_window_dims=[], inserted_window_dims=[1], scatter_dims_to_operand_dims=[1],
          operand_batching_dims=[0], scatter_indices_batching_dims=[0]), ValueError, "equal sizes"),
])
def test_scatter_bad_input(op, types, attrs, err, match):
    with pytest.raises(err, match=r"\[" + op + r"\].*" + match):
        _core.infer(op, types, attrs)


@pytest.mark.parametrize("op", ["scatter_add", "scatter_mul"])
def test_scatter_add_mul_reject_bool(op):
    with pytest.raises(TypeError, match=r"\[" + op + r"\].*bool"):
        _core.infer(op, [((3,), "bool"), ((2, 1), "int32"), ((2,), "bool")], SCATTER_POINTS)


def test_index_ops_arity():
    with pytest.raises(ValueError, match=r"\[gather\] expects 2 operands"):
        _core.infer("gather", [X23], gather_attrs())
    with pytest.raises(ValueError, match=r"\[scatter\] expects 3 operands"):
        _core.infer("scatter", [X23, ((2, 1), "int32")], SCATTER_ROWS)
