"""What unrolled per-element code (vmapped, or loops in Python) compiles to. Static slices are
views: fused consumers read a slice's operand through an offset and strides instead of a slice
kernel copying it first. Independent fused groups over one small index space (siblings) run as
one kernel."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from test_compiler import B, run


def _slice(b, x, start, limit, strides=None):
    attrs = {"start_indices": list(start), "limit_indices": list(limit)}
    if strides is not None:
        attrs["strides"] = list(strides)
    return b.slice(x, **attrs)


def test_sliced_operands_are_read_in_place_by_sibling_kernels():
    b = B()
    x, w = b.param((64, 10)), b.param((64, 3))
    outs = [b.reduce_sum(b.mul(_slice(b, x, (0, i), (64, i + 3)), w), axes=[1]) for i in range(8)]
    g = b.done(*outs)
    xv, wv = np.random.randn(64, 10).astype(np.float32), np.random.randn(64, 3).astype(np.float32)
    got, exe = run(g, xv, wv)
    assert "slice" not in exe.plan_text() and exe.num_kernels == 1, exe.plan_text()
    assert "in0+7" in exe.plan_text()
    for i, r in enumerate(got):
        np.testing.assert_allclose(r, (xv[:, i:i + 3] * wv).sum(1), rtol=1e-5, atol=1e-6)


def test_strided_slice_of_a_row_block_and_a_contiguous_run():
    b = B()
    x = b.param((40, 30))
    y = b.add(_slice(b, x, (3, 2), (40, 29), (2, 3)), b.bcast(b.const(1.0), (19, 9), ()))
    z = b.tanh(_slice(b, x, (10, 0), (20, 30)))  # whole rows: one contiguous run
    g = b.done(y, z)
    xv = np.random.randn(40, 30).astype(np.float32)
    (ry, rz), exe = run(g, xv)
    assert "slice" not in exe.plan_text(), exe.plan_text()
    assert "load in0+300" in exe.plan_text()  # the run is read in place, not gathered
    np.testing.assert_allclose(ry, xv[3:40:2, 2:29:3] + 1, rtol=1e-6)
    np.testing.assert_allclose(rz, np.tanh(xv[10:20]), rtol=1e-6)


def test_slices_compose_with_broadcasts_and_reshapes():
    b = B()
    x = b.param((6, 8))
    row = _slice(b, x, (4, 0), (5, 8))                               # x[4:5], broadcast over rows
    a = b.mul(x, b.bcast(row, (6, 8), (0, 1)))
    col = b.bcast(_slice(b, b.reshape(x, new_sizes=[6, 1, 8]), (1, 0, 2), (4, 1, 7)), (3, 2, 5), (0, 1, 2))
    c = b.neg(col)                                                    # slice of a reshape, broadcast
    d = b.add(_slice(b, b.bcast(x, (2, 6, 8), (1, 2)), (1, 2, 1), (2, 6, 8), (1, 2, 3)), b.bcast(b.const(2.0), (1, 2, 3), ()))
    g = b.done(a, c, d)
    xv = np.random.randn(6, 8).astype(np.float32)
    (ra, rc, rd), exe = run(g, xv)
    np.testing.assert_allclose(ra, xv * xv[4:5], rtol=1e-6)
    np.testing.assert_allclose(rc, -np.broadcast_to(xv[1:4, None, 2:7], (3, 2, 5)), rtol=1e-6)
    np.testing.assert_allclose(rd, xv[None, 2:6:2, 1:8:3] + 2, rtol=1e-6)
    assert "slice" not in exe.plan_text(), exe.plan_text()


def test_a_slice_used_whole_is_still_materialised():
    b = B()
    x, w = b.param((20, 12)), b.param((5, 4))
    s = _slice(b, x, (2, 3), (7, 8))
    prod = b.dot_general(s, w, lhs_contracting_dimensions=[1], rhs_contracting_dimensions=[0])
    g = b.done(s, prod, b.exp(s))
    xv, wv = np.random.randn(20, 12).astype(np.float32), np.random.randn(5, 4).astype(np.float32)
    (rs, rp, re), exe = run(g, xv, wv)
    np.testing.assert_array_equal(rs, xv[2:7, 3:8])
    np.testing.assert_allclose(rp, xv[2:7, 3:8] @ wv, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(re, np.exp(xv[2:7, 3:8]), rtol=1e-6)


def test_one_operand_read_at_two_offsets():
    # t dies in the step that reads it twice, shifted: its buffer must not take the result early.
    n = 100_000
    b = B()
    x = b.param((n + 1,))
    t = b.tanh(b.reduce_sum(b.bcast(x, (2, n + 1), (1,)), axes=[0]))
    y = b.add(_slice(b, t, (1,), (n + 1,)), _slice(b, t, (0,), (n,)))
    g = b.done(y)
    xv = np.random.randn(n + 1).astype(np.float32)
    (ry,), exe = run(g, xv)
    tv = np.tanh(2 * xv)
    np.testing.assert_allclose(ry, tv[1:] + tv[:-1], rtol=1e-5, atol=1e-6)


@st.composite
def sliced_graphs(draw):
    dtype = draw(st.sampled_from(["float32", "int32", "float64"]))
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 6), min_size=rank, max_size=rank)))
    if draw(st.booleans()):
        shape = shape[:-1] + (draw(st.sampled_from([300, 1100])),)
    b = B()
    args, vals = [], []
    for k in range(draw(st.integers(1, 3))):  # operands sliced out of bigger parameters
        strides = [draw(st.integers(1, 3)) for _ in shape]
        starts = [draw(st.integers(0, 2)) for _ in shape]
        big = tuple(s0 + (n - 1) * s + 1 + draw(st.integers(0, 2)) for s0, n, s in zip(starts, shape, strides))
        data = np.random.default_rng(k).uniform(-2, 2, size=big)
        args.append(data.astype(dtype) if dtype != "int32" else np.round(data * 20).astype(dtype))
        limits = [s0 + (n - 1) * s + 1 for s0, n, s in zip(starts, shape, strides)]
        vals.append(_slice(b, b.param(big, dtype), starts, limits, strides))
    outs = []
    for _ in range(draw(st.integers(1, 5))):
        a, c = draw(st.sampled_from(vals)), draw(st.sampled_from(vals))
        op = draw(st.sampled_from(["add", "mul", "max", "reduce"]))
        if op == "reduce":
            axes = sorted(draw(st.sets(st.integers(0, rank - 1), min_size=1)))
            outs.append(b.reduce_sum(b.mul(a, c), axes=axes))
        else:
            vals.append(getattr(b, op)(a, c))
    outs += draw(st.lists(st.sampled_from(vals), min_size=1, max_size=2))
    return b.done(*outs), args, dtype


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sliced_graphs())
def test_sliced_graphs_match_the_reference(case):
    g, args, dtype = case
    got, _ = run(g, *args)
    want, _ = run(g, *args, reference=True, passes=[])
    for a, w in zip(got, want):
        assert a.dtype == w.dtype and a.shape == w.shape
        if dtype == "int32":
            np.testing.assert_array_equal(a, w)
        else:
            np.testing.assert_allclose(a, w, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("fuse", [True, False])
def test_fused_and_unfused_slices_agree(fuse):
    b = B()
    x = b.param((50, 40))
    y = b.mul(_slice(b, x, (1, 1), (49, 39), (2, 2)), _slice(b, x, (0, 0), (48, 38), (2, 2)))
    g = b.done(b.reduce_max(y, axes=[1]), y)
    xv = np.random.randn(50, 40).astype(np.float32)
    (rm, ry), _ = run(g, xv, fuse=fuse)
    want = xv[1:49:2, 1:39:2] * xv[0:48:2, 0:38:2]
    np.testing.assert_allclose(ry, want, rtol=1e-6)
    np.testing.assert_allclose(rm, want.max(1), rtol=1e-6)


def _mul_sum(b, x, w, i):
    return b.reduce_sum(b.mul(_slice(b, x, (0, i), (64, i + 3)), w), axes=[1])


def test_siblings_that_depend_on_each_other_stay_apart():
    b = B()
    x, w = b.param((64, 10)), b.param((64, 3))
    first = _mul_sum(b, x, w, 0)
    # a kernel between them: the second group reads the first's finished result through a product
    scale = b.dot_general(first, first, lhs_contracting_dimensions=[0], rhs_contracting_dimensions=[0])
    second = b.mul(_mul_sum(b, x, w, 1), b.bcast(scale, (64,), ()))
    third = _mul_sum(b, x, w, 2)  # independent of both: joins the first
    g = b.done(first, second, third)
    xv, wv = np.random.randn(64, 10).astype(np.float32), np.random.randn(64, 3).astype(np.float32)
    (r1, r2, r3), exe = run(g, xv, wv)
    f = (xv[:, 0:3] * wv).sum(1)
    np.testing.assert_allclose(r1, f, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(r2, (xv[:, 1:4] * wv).sum(1) * (f @ f), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(r3, (xv[:, 2:5] * wv).sum(1), rtol=1e-5, atol=1e-5)
    assert exe.num_kernels == 3, exe.plan_text()  # {first, third}, the product, second


def test_large_or_differently_reduced_siblings_stay_apart():
    b = B()
    big = b.param((300, 200))
    small = b.param((40, 30))
    g = b.done(b.exp(big), b.tanh(big), b.reduce_sum(small, axes=[0]), b.reduce_sum(small, axes=[1]))
    bv, sv = np.random.randn(300, 200).astype(np.float32), np.random.randn(40, 30).astype(np.float32)
    (e, t, s0, s1), exe = run(g, bv, sv)
    assert exe.num_kernels == 4, exe.plan_text()
    np.testing.assert_allclose(e, np.exp(bv), rtol=1e-6)
    np.testing.assert_allclose(t, np.tanh(bv), rtol=1e-6)
    np.testing.assert_allclose(s0, sv.sum(0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(s1, sv.sum(1), rtol=1e-5, atol=1e-5)
