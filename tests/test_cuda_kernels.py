"""The generated CUDA kernels of the ops outside fused groups (src/core/cuda), run without a GPU:
each plan's source compiled as host C++ under the emulation header and compared with the CPU core
running the same op; and every source compiled with nvcc for sm_80 and sm_90."""
import ml_dtypes
import numpy as np
import pytest

import cuda_emulation as emu
import nvrtc
from core_util import _NP_DTYPES, to_numpy
from test_core_index import random_dnums
from xjax import _core

RNG = np.random.default_rng(1234)


def sample(shape, dtype, nan=False, lo=-20, hi=20):
    dt = _NP_DTYPES[dtype]
    if dt == np.bool_:
        return RNG.integers(0, 2, shape).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return RNG.integers(max(lo, info.min), min(hi, info.max) + 1, shape).astype(dt)
    x = RNG.standard_normal(shape).astype(np.float32)
    if nan and x.size:
        x.reshape(-1)[RNG.integers(0, x.size, max(1, x.size // 50))] = np.nan
    return x.astype(dt)


def run_cpu(op, inputs, attrs):
    arrays = []
    for x in inputs:
        x = np.array(x, order="C", copy=True)
        arrays.append(_core.Array.from_buffer(x.reshape(-1).view(np.uint8), x.shape, x.dtype.name))
    exe = _core.compile_op(op, [(a.shape, a.dtype) for a in arrays], attrs)
    return [to_numpy(r) for r in exe.run(arrays)]


CASES = []  # (id, op, inputs, attrs, rtol)


def case(op, inputs, rtol=0, name="", **attrs):
    CASES.append((f"{op}-{len(CASES)}{'-' + name if name else ''}", op, inputs, attrs, rtol))


# ---- layout
for shape, perm in [((5, 7), (1, 0)), ((3, 40, 33), (2, 0, 1)), ((3, 40, 33), (0, 2, 1)), ((3, 4, 5), (1, 0, 2)),
                    ((2, 3, 4, 5), (3, 1, 0, 2)), ((70,), (0,)), ((), ())]:
    for dt in ["float32", "int8", "float16", "float64", "bool"]:
        case("transpose", [sample(shape, dt)], permutation=list(perm))
case("reshape", [sample((6, 4), "int32")], new_sizes=[3, 8])
case("broadcast_in_dim", [sample((3, 1), "bfloat16")], shape=[2, 3, 5], broadcast_dimensions=[1, 2])
case("broadcast_in_dim", [sample((), "uint16")], shape=[4], broadcast_dimensions=[])
case("slice", [sample((10, 12), "float32")], start_indices=[1, 2], limit_indices=[9, 12], strides=[2, 3])
case("slice", [sample((10, 12), "int64")], start_indices=[0, 5], limit_indices=[10, 5])
for dt in ["float32", "bool", "int16"]:
    case("pad", [sample((4, 5), dt), sample((), dt)], padding_config=[1, 2, 0, -1, 3, 2])
case("pad", [sample((0, 3), "float32"), sample((), "float32")], padding_config=[1, 1, 1, 0, 0, 0])
case("concatenate", [sample((2, 3), "float16"), sample((2, 0), "float16"), sample((2, 5), "float16")], dimension=1)
case("concatenate", [sample((1, 4), "uint8"), sample((3, 4), "uint8")], dimension=0)
case("rev", [sample((4, 5, 6), "float32")], dimensions=[0, 2])
for idx_dt, starts in [("int32", (3, -2)), ("int64", (100, 1)), ("uint32", (2, 4000000000)), ("int8", (-128, 127))]:
    case("dynamic_slice", [sample((10, 8), "float32")] + [np.array(s, idx_dt) for s in starts], slice_sizes=[4, 3])
    case("dynamic_update_slice", [sample((10, 8), "int16"), sample((3, 4), "int16")]
         + [np.array(s, idx_dt) for s in starts])
for dt, shape, dim in [("int32", (3, 5), 1), ("float16", (2, 3000), 1), ("uint8", (300,), 0), ("float64", (4, 2), 0),
                       ("bfloat16", (600,), 0)]:
    case("iota", [], dtype=dt, shape=list(shape), dimension=dim)

# ---- reductions: inner-reduced and kept layouts, one and two stages, NaN, empty axes
RED_SHAPES = [((3, 5000), [1]), ((5000, 3), [0]), ((4, 6, 8), [0, 2]), ((4, 6, 8), [1]), ((2, 3), []),
              ((0, 5), [0]), ((7, 1, 3), [1]), ((20000,), [0])]
for op, dts in [("reduce_sum", ["float32", "int32", "float16", "int8", "uint64"]),
                ("reduce_max", ["float32", "int16", "bool", "bfloat16"]), ("reduce_min", ["float64", "uint8", "bool"]),
                ("reduce_prod", ["int32", "float32"]), ("reduce_and", ["bool", "int32"]), ("reduce_or", ["uint16"]),
                ("reduce_xor", ["int64"])]:
    for i, (shape, axes) in enumerate(RED_SHAPES):
        dt = dts[i % len(dts)]
        x = sample(shape, dt, nan=op in ("reduce_max", "reduce_min") and i % 2 == 0)
        if op == "reduce_prod" and dt == "float32":
            x = (1 + 0.001 * x).astype(np.float32)
        tol = {"float32": 1e-4, "float16": 1e-2, "bfloat16": 1e-2, "float64": 1e-12}.get(dt, 0)
        case(op, [x], rtol=tol if op in ("reduce_sum", "reduce_prod") else 0, axes=axes)
for op in ["argmax", "argmin"]:
    for shape, axis, dt, idx in [((7, 3000), 1, "float32", "int32"), ((3000, 5), 0, "int8", "int64"),
                                 ((4, 9, 6), 1, "float16", "int32"), ((50000,), 0, "uint8", "int32"),
                                 ((5, 3), 0, "bool", "int64"), ((6, 1), 1, "float64", "int32")]:
        case(op, [sample(shape, dt, nan=shape[0] != 3000, lo=-3, hi=3)], axes=[axis], index_dtype=idx)

# ---- seeded random shapes: transposes, slices, reductions
for seed in range(16):
    rng = np.random.default_rng(100 + seed)
    shape = tuple(int(d) for d in rng.integers(1, 7, rng.integers(1, 5)))
    dt = ["float32", "int32", "float16", "uint8"][seed % 4]
    case("transpose", [sample(shape, dt)], name=f"rand{seed}", permutation=rng.permutation(len(shape)).tolist())
    start = [int(rng.integers(0, d + 1)) for d in shape]
    limit = [int(rng.integers(s, d + 1)) for s, d in zip(start, shape)]
    case("slice", [sample(shape, dt)], name=f"rand{seed}", start_indices=start, limit_indices=limit,
         strides=[int(v) for v in rng.integers(1, 4, len(shape))])
    axes = sorted(rng.choice(len(shape), int(rng.integers(0, len(shape) + 1)), replace=False).tolist())
    op = ["reduce_sum", "reduce_max", "reduce_min", "reduce_prod"][seed % 4]
    x = sample(shape, dt, lo=0, hi=3) if op == "reduce_prod" else sample(shape, dt, nan=True)
    case(op, [x], rtol=2e-3 if op == "reduce_sum" and dt[0] == "f" else 0, name=f"rand{seed}", axes=axes)

# ---- scans
for op, dts in [("cumsum", ["float32", "int8", "float16"]), ("cumprod", ["int32", "float64"]),
                ("cummax", ["float32", "bool", "uint16"]), ("cummin", ["bfloat16", "int64"]),
                ("cumlogsumexp", ["float32", "float16", "float64"])]:
    for i, (shape, axis, rev) in enumerate([((6, 50), 1, False), ((40, 7), 0, True), ((3, 4, 5), 1, False),
                                            ((1000,), 0, True)]):
        dt = dts[i % len(dts)]
        x = sample(shape, dt, nan=op in ("cummax", "cumlogsumexp") and i == 2, lo=-3, hi=4)
        if op == "cumprod" and dt == "float64":
            x = 1 + 0.01 * x
        tol = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 1e-2, "float64": 1e-12}.get(dt, 0)
        case(op, [x], rtol=tol if op == "cumlogsumexp" else 0, axis=axis, reverse=rev)
# Few long lines: the three-launch block scan (tiles of 2048). Integers, max and min exact; float sums
# group their terms otherwise than the CPU's sequential order: equal up to rounding (rtol of the largest
# magnitude: float32 1e-5, float16 2e-3).
for op, dt, shape, axis, rev, tol in [
        ("cumsum", "int32", (9000,), 0, False, 0), ("cumsum", "int8", (9000,), 0, True, 0),
        ("cumsum", "uint16", (3, 4096, 2), 1, False, 0), ("cumsum", "float32", (2, 5000), 1, False, 1e-5),
        ("cumsum", "float16", (4100,), 0, True, 2e-3), ("cummax", "float32", (4500, 3), 0, False, 0),
        ("cummax", "bool", (5000,), 0, False, 0), ("cummin", "bfloat16", (4097,), 0, True, 0),
        ("cumprod", "int32", (4200,), 0, False, 0), ("cumlogsumexp", "float32", (2, 4500), 1, True, 1e-5),
        ("cumsum", "int32", (2048 * 300 + 5,), 0, True, 0)]:  # over 256 tiles: the carries' chunks carry
    x = sample(shape, dt, nan=op == "cummax", lo=1 if op == "cumprod" else -3, hi=4)
    case(op, [x], rtol=tol, name="long", axis=axis, reverse=rev)

# ---- gather and scatter: common patterns, then random dimension numbers (as test_core_index.py)
ROWS = dict(offset_dims=[1], collapsed_slice_dims=[0], start_index_map=[0])
for dt, idx_dt, mode in [("float32", "int32", "fill"), ("float16", "int64", "clip"), ("int8", "uint8", "fill"),
                         ("bool", "int16", "promise_in_bounds")]:
    rows = RNG.integers(-3, 13, (17, 1)).astype(idx_dt) if idx_dt[0] == "i" else RNG.integers(0, 14, (17, 1)).astype(idx_dt)
    case("gather", [sample((10, 6), dt), rows], slice_sizes=[1, 6], mode=mode, **ROWS)
case("gather", [sample((10, 6), "float32"), np.array([[2], [40], [-1]], np.int32)], slice_sizes=[1, 6], mode="fill",
     fill_value=-7.5, **ROWS)
UPD = dict(update_window_dims=[1], inserted_window_dims=[0], scatter_dims_to_operand_dims=[0])
# Atomics combine the updates of one element in no fixed order: floating sums and products of
# duplicates agree with the CPU's up to rounding.
UNORDERED_RTOL = {"float32": 1e-6, "float16": 1e-2}
for op in ["scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max"]:
    for dt, mode in [("float32", "fill"), ("int8", "clip"), ("float16", "fill"), ("uint64", "promise_in_bounds")]:
        idx = RNG.integers(-2, 12, (40, 1)).astype(np.int32)  # duplicates and out-of-range rows
        upd = sample((40, 3), dt, lo=-3, hi=4)
        rtol = UNORDERED_RTOL.get(dt, 0) if op in ("scatter_add", "scatter_mul") else 0
        case(op, [sample((10, 3), dt, lo=-3, hi=4), idx, upd], rtol=rtol, mode=mode, **UPD)
case("scatter_max", [sample((6,), "bool"), RNG.integers(0, 6, (9, 1)).astype(np.int64), sample((9,), "bool")],
     update_window_dims=[], inserted_window_dims=[0], scatter_dims_to_operand_dims=[0])
for seed in range(12):
    rng = np.random.default_rng(seed)
    shape, window, offset, collapsed, index_map, batching, index_batching, indices = random_dnums(rng)
    mode = ["clip", "fill"][seed % 2]
    case("gather", [rng.integers(-50, 50, shape).astype(np.float32), indices], name=f"dnums{seed}",
         offset_dims=offset, collapsed_slice_dims=collapsed, start_index_map=index_map,
         operand_batching_dims=batching, start_indices_batching_dims=index_batching, slice_sizes=window, mode=mode)
    window_dims = [d for d in range(len(shape)) if d not in collapsed and d not in batching]
    upd_rank = indices.ndim - 1 + len(offset)
    scatter_pos = [i for i in range(upd_rank) if i not in offset]
    upd_shape = [0] * upd_rank
    for i, p in enumerate(scatter_pos):
        upd_shape[p] = indices.shape[i]
    for p, d in zip(offset, window_dims):
        upd_shape[p] = window[d]
    op = ["scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max"][seed % 5]
    case(op, [rng.integers(-5, 6, shape).astype(np.float64), indices, rng.integers(-5, 6, upd_shape).astype(np.float64)],
         name=f"dnums{seed}", update_window_dims=offset, inserted_window_dims=collapsed,
         scatter_dims_to_operand_dims=index_map, operand_batching_dims=batching,
         scatter_indices_batching_dims=index_batching, mode=mode)

# ---- windows (pooling and its derivatives)
POOL = dict(window_dimensions=[1, 2, 2, 1], window_strides=[1, 2, 2, 1])
OVERLAP = dict(window_dimensions=[1, 3, 3, 1], window_strides=[1, 2, 2, 1], padding=[0, 0, 1, 1, 1, 1, 0, 0])
DILATED = dict(window_dimensions=[2, 3], window_strides=[1, 2], padding=[1, 0, 2, 1], base_dilation=[2, 1],
               window_dilation=[1, 2])
for op in ["reduce_window_max", "reduce_window_sum", "reduce_window_min"]:
    for dt, geo, shape in [("float32", POOL, (2, 8, 8, 3)), ("int16", OVERLAP, (2, 7, 9, 2)),
                           ("float16", DILATED, (5, 11)), ("bool", POOL, (1, 4, 6, 2))]:
        if op == "reduce_window_sum" and dt == "bool":
            continue
        case(op, [sample(shape, dt, nan=op == "reduce_window_max", lo=-5, hi=5)], **geo)
for dt, geo, shape in [("float32", POOL, (2, 8, 8, 3)), ("float32", OVERLAP, (2, 7, 9, 2)),
                       ("int32", OVERLAP, (1, 5, 5, 1)), ("bfloat16", POOL, (1, 6, 4, 2))]:
    for prim in ["ge", "le"]:
        x = sample(shape, dt, lo=-3, hi=3)  # ties: the first selected, as XLA
        out_shape = run_cpu("reduce_window_max", [x], geo)[0].shape
        case("select_and_scatter_add", [sample(out_shape, dt, lo=-3, hi=3), x], select_prim=prim, **geo)
        case("select_and_gather_add", [sample(shape, dt), x], select_prim=prim, **geo)
case("select_and_gather_add", [sample((5, 11), "float32"), sample((5, 11), "float32")], select_prim="ge", **DILATED)

# ---- im2col (+ a NumPy GEMM) against conv_general_dilated
CONVS = [
    ((2, 8, 8, 3), (3, 3, 3, 4), dict(lhs_spec=[0, 3, 1, 2], rhs_spec=[3, 2, 0, 1], out_spec=[0, 3, 1, 2],
                                      window_strides=[1, 1], padding=[1, 1, 1, 1])),
    ((2, 4, 9, 7), (6, 2, 3, 2), dict(lhs_spec=[0, 1, 2, 3], rhs_spec=[0, 1, 2, 3], out_spec=[0, 1, 2, 3],
                                      window_strides=[2, 1], padding=[0, 1, 2, 0], lhs_dilation=[1, 2],
                                      rhs_dilation=[2, 1], feature_group_count=2)),
    ((3, 5, 10), (4, 5, 3), dict(lhs_spec=[0, 1, 2], rhs_spec=[0, 1, 2], out_spec=[0, 2, 1], window_strides=[3],
                                 padding=[2, 2])),
    # batch groups: group g reads the g-th run of lhs batch entries (a grouped conv's weight gradient)
    ((4, 2, 5), (4, 2, 3), dict(lhs_spec=[0, 1, 2], rhs_spec=[0, 1, 2], out_spec=[0, 1, 2], batch_group_count=2)),
    ((2, 6, 7, 5), (6, 2, 3, 3), dict(lhs_spec=[1, 0, 2, 3], rhs_spec=[0, 1, 2, 3], out_spec=[1, 0, 3, 2],
                                      window_strides=[2, 1], padding=[1, 1, 0, 2], rhs_dilation=[1, 2],
                                      batch_group_count=3)),
]

OPS_WITHOUT_KERNEL = ["sort", "top_k", "dot_general", "add", "cholesky", "while", "conv_general_dilated"]


@pytest.fixture(scope="module")
def batch():
    b = emu.Batch()
    ids = {}
    for cid, op, inputs, attrs, _ in CASES:
        ids[cid] = b.add(emu.plan(op, [(x.shape, x.dtype.name) for x in inputs], attrs))
    for k, (lhs, rhs, attrs) in enumerate(CONVS):
        ids[f"im2col-{k}"] = b.add(emu.plan("im2col", [(lhs, "float32"), (rhs, "float32")], attrs))
    b.build()
    b.ids = ids
    return b


def same(got, want, rtol):
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    if got.dtype.kind == "f" or got.dtype == np.dtype(ml_dtypes.bfloat16):
        got, want = got.astype(np.float64), want.astype(np.float64)
        if rtol:
            scale = np.nanmax(np.abs(want)) if want.size and not np.all(np.isnan(want)) else 1.0
            np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale)
            return
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("order", emu.ORDERS)
@pytest.mark.parametrize("cid,op,inputs,attrs,rtol", CASES, ids=[c[0] for c in CASES])
def test_emulated_kernel_matches_cpu(batch, cid, op, inputs, attrs, rtol, order):
    got = batch.run(batch.ids[cid], inputs, order)
    want = run_cpu(op, inputs, attrs)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        same(g, w, rtol)


@pytest.mark.parametrize("k", range(len(CONVS)))
def test_im2col_gemm_matches_conv(batch, k):
    lhs_shape, rhs_shape, attrs = CONVS[k]
    lhs = sample(lhs_shape, "float32")
    rhs = sample(rhs_shape, "float32")
    (patches,) = batch.run(batch.ids[f"im2col-{k}"], [lhs, rhs])
    g = attrs.get("feature_group_count", 1) * attrs.get("batch_group_count", 1)
    w = np.transpose(rhs, attrs["rhs_spec"])  # (O, I, spatial...)
    w = w.reshape(g, w.shape[0] // g, -1)
    res = np.einsum("gpk,gok->pgo", patches.astype(np.float64), w.astype(np.float64))  # (N*P, G, Og)
    want = run_cpu("conv_general_dilated", [lhs, rhs], attrs)[0]
    out_spec = attrs["out_spec"]
    canon_shape = [want.shape[d] for d in out_spec]  # (N, F, spatial...)
    n, f, spatial = canon_shape[0], canon_shape[1], canon_shape[2:]
    canon = res.reshape([n] + spatial + [f])
    canon = np.moveaxis(canon, -1, 1)
    got = np.transpose(canon, np.argsort(out_spec))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("op", OPS_WITHOUT_KERNEL)
def test_ops_without_kernel_name_the_op(op):
    with pytest.raises(NotImplementedError, match=rf"no GPU kernel for op '{op}'"):
        emu.plan(op, [((2, 2), "float32")], {})
    assert not _core.cuda_has_kernel(op)


def test_bad_operands_raise_the_ops_error():
    with pytest.raises(ValueError, match=r"\[transpose\] permutation"):
        emu.plan("transpose", [((2, 3), "float32")], dict(permutation=[0, 0]))
    with pytest.raises(ValueError, match=r"\[reduce_sum\] axis 3"):
        emu.plan("reduce_sum", [((2, 3), "float32")], dict(axes=[3]))
    with pytest.raises(ValueError, match="batch_group_count must divide"):
        emu.plan("im2col", [((3, 2, 5), "float32"), ((4, 2, 3), "float32")],
                 dict(lhs_spec=[0, 1, 2], rhs_spec=[0, 1, 2], out_spec=[0, 1, 2], batch_group_count=2))


def test_plan_layout():
    """A two-stage reduction: two launches, partials in scratch, 32-bit index math."""
    p = emu.plan("reduce_sum", [((3, 100000), "float32")], dict(axes=[1]))
    assert [launch["name"] for launch in p["launches"]] == ["xjax_reduce_sum_partial", "xjax_reduce_sum_final"]
    assert p["launches"][0]["params"] == ["in0", "tmp0"] and p["launches"][1]["params"] == ["tmp0", "out0"]
    assert p["launches"][0]["block"] == (256, 1, 1) and p["scratch"][0] > 0
    assert "typedef int ix;" in p["source"] and p["outputs"] == [((3,), "float32")]
    big = emu.plan("reduce_sum", [((3, 2 ** 30), "int8")], dict(axes=[1]))
    assert "typedef long long ix;" in big["source"]
    empty = emu.plan("transpose", [((0, 3), "float32")], dict(permutation=[1, 0]))
    assert empty["launches"] == []


def all_plans():
    plans = [emu.plan(op, [(x.shape, x.dtype.name) for x in inputs], attrs) for _, op, inputs, attrs, _ in CASES]
    plans += [emu.plan("im2col", [(lhs, "float32"), (rhs, "float32")], attrs) for lhs, rhs, attrs in CONVS]
    unique = {p["source"]: p for p in plans if p["launches"]}
    return list(unique.values())


@pytest.mark.skipif(not nvrtc.available(), reason="NVRTC is not installed")
def test_nvrtc_compiles_every_kernel_as_the_executor_does():
    """Each source on its own, as RawModule gets it (no include path, the executor's options)."""
    from xjax._src.gpu import cuda

    ptxs = nvrtc.compile_all([p["source"] for p in all_plans()], cuda._NVRTC_OPTIONS + ("-arch=compute_90",))
    assert len(ptxs) > 200 and all(".entry" in p for p in ptxs)


@pytest.mark.skipif(emu.nvcc_path() is None, reason="nvcc is not installed")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_nvcc_compiles_every_kernel(arch):
    assert emu.nvcc_compile(all_plans(), arch).stat().st_size > 0
