"""The executor's loops and the ops that serve them: the buffers a while loop reuses from one
iteration to the next or takes over from its caller, `empty` buffers, and `optimization_barrier`
(an identity no pass sees through, free at run time)."""
import numpy as np
import pytest

from test_compiler import B, _branch, run
from xjax import _core

TI, TV = ((), "int32"), ((5,), "float32")


def _loop_graph(n):
    """while i < n: (i + 1, x, 2 y + x, z - z / 2 - x, the same value again): a value passed through,
    fresh results every iteration, and one value returned twice."""
    cond = _branch(lambda b, i, x, y, z1, z2: [b.lt(i, b.const(n, "int32"))], TI, TV, TV, TV, TV)

    def body(b, i, x, y, z1, z2):
        y2 = b.add(b.mul(y, b.bcast(b.const(2.0), (5,), ())), x)
        z = b.sub(b.sub(z1, b.mul(z2, b.bcast(b.const(0.5), (5,), ()))), x)
        return [b.add(i, b.const(1, "int32")), x, y2, z, z]
    b = B()
    ins = [b.param(*TI), *[b.param(*TV) for _ in range(4)]]
    outs = b.g.add_subgraph_op("while", ins, {}, [cond, _branch(body, TI, TV, TV, TV, TV)])
    return b.done(*outs, b.add(outs[3], outs[4]))


@pytest.mark.parametrize("n", [0, 1, 2, 3, 17])
def test_loop_results_reusing_buffers_across_iterations(n):
    rng = np.random.default_rng(n)
    x, y, z1, z2 = (rng.standard_normal(5).astype(np.float32) for _ in range(4))
    args = [np.int32(0), x, y.copy(), z1.copy(), z2.copy()]
    got, _ = run(_loop_graph(n), *args)
    want_y, want_z1, want_z2 = y.astype(np.float64), z1.astype(np.float64), z2.astype(np.float64)
    for _ in range(n):
        want_y, want_z1 = 2 * want_y + x, want_z1 - want_z2 / 2 - x
        want_z2 = want_z1
    assert got[0] == n
    for r, w in zip(got[1:], [x, want_y, want_z1, want_z2, want_z1 + want_z2]):
        np.testing.assert_allclose(r, w, rtol=1e-5, atol=1e-5)
    ref, _ = run(_loop_graph(n), *args, reference=True)
    for r, q in zip(got, ref):
        np.testing.assert_allclose(r, q, rtol=1e-6)
    np.testing.assert_array_equal(args[2], y)  # the caller's arrays are untouched
    np.testing.assert_array_equal(args[3], z1)


def _fill_rows_graph(n, width):
    """ys = empty; while i < n: ys[i] = i * (0, 1, ..., width - 1): every row written once."""
    cond = _branch(lambda b, i, ys: [b.lt(i, b.const(n, "int32"))], TI, ((n, width), "float32"))

    def body(b, i, ys):
        row = b.mul(b.convert_element_type(b.iota(dtype="float32", shape=[1, width], dimension=1), new_dtype="float32"),
                    b.bcast(b.convert_element_type(i, new_dtype="float32"), (1, width), ()))
        return [b.add(i, b.const(1, "int32")), b.dynamic_update_slice(ys, row, i, b.const(0, "int32"))]
    b = B()
    i0 = b.param((), "int32")
    ys0 = b.empty(shape=[n, width], dtype="float32")
    outs = b.g.add_subgraph_op("while", [i0, ys0], {}, [cond, _branch(body, TI, ((n, width), "float32"))])
    return b.done(*outs)


def test_loop_takes_over_an_empty_buffer_and_fills_it_in_place():
    n, width = 40, 6
    g = _fill_rows_graph(n, width)
    (ri, ry), exe = run(g, np.int32(0))
    assert ri == n
    np.testing.assert_array_equal(ry, np.arange(n)[:, None] * np.arange(width)[None, :])
    text = exe.plan_text()
    top = text[:text.index("subplan")]
    assert "takes(" in top, text  # the loop owns the empty buffer: no copy before updating it
    body = text[text.index("subplan 1:"):]
    assert "window(out" in body and "kernel [dynamic_update_slice" not in body  # stored into its row in place
    (qi, qy), _ = run(g, np.int32(0), reference=True)
    np.testing.assert_array_equal(qy, ry)


def test_empty_buffers_are_never_merged_and_have_their_type():
    b = B()
    e1, e2 = b.empty(shape=[3, 2], dtype="int32"), b.empty(shape=[3, 2], dtype="int32")
    g = b.done(e1, e2)
    assert g.optimized(["cse", "dce"]).ops().count("empty") == 2
    (r1, r2), _ = run(g)
    assert r1.shape == r2.shape == (3, 2) and r1.dtype == np.int32
    with pytest.raises(ValueError, match=r"\[empty\] missing attribute 'shape'"):
        b.empty(dtype="float32")


def test_barrier_is_an_identity_that_cse_does_not_see_through():
    b = B()
    x, y = b.param((4,)), b.param((4,), "int32")
    bx, by = b.optimization_barrier(x, y)
    g = b.done(b.add(b.sin(x), b.sin(bx)), by, bx)
    ops = g.optimized(["simplify", "fold", "simplify", "cse", "dce"]).ops()
    assert ops.count("sin") == 2 and ops.count("optimization_barrier") == 1, ops
    xv, yv = np.linspace(-1, 1, 4).astype(np.float32), np.arange(4, dtype=np.int32)
    (r, ry, rx), exe = run(g, xv, yv)
    np.testing.assert_allclose(r, 2 * np.sin(xv), rtol=1e-6)
    np.testing.assert_array_equal(ry, yv)
    np.testing.assert_array_equal(rx, xv)
    assert exe.num_kernels == 1  # the barrier runs nothing: its results are its operands' buffers
    (q, qy, qx), _ = run(g, xv, yv, reference=True)
    np.testing.assert_allclose(q, r, rtol=1e-6)
    np.testing.assert_array_equal(qy, yv)


def test_barrier_keeps_types_and_checks_nothing_else():
    types = _core.infer("optimization_barrier", [((2, 3), "float32"), ((), "bool")], {})
    assert [tuple(s) for s, _ in types] == [(2, 3), ()] and [d for _, d in types] == ["float32", "bool"]


@pytest.mark.parametrize("dtype", ["float32", "int8", "float64"])
def test_row_windows_of_dynamic_slice_and_update_clamp_as_xla(dtype):
    # A scan reads and writes whole rows: one contiguous run, starts clamped into range.
    from core_util import run_op
    x = (np.arange(4 * 3 * 5) % 100).astype(dtype).reshape(4, 3, 5)
    for t in [0, 2, 3, 7, -2]:
        idx = [np.array(t, np.int32), np.array(1, np.int32), np.array(-4, np.int32)]
        (row,) = run_op("dynamic_slice", x, *idx, slice_sizes=[1, 3, 5])
        np.testing.assert_array_equal(row, x[min(max(t, 0), 3)][None])
        (part,) = run_op("dynamic_slice", x, *idx, slice_sizes=[1, 1, 5])  # (1, 1, full): contiguous too
        np.testing.assert_array_equal(part, x[min(max(t, 0), 3), 1][None, None])
        u = np.full((1, 3, 5), 7, dtype)
        (y,) = run_op("dynamic_update_slice", x, u, *idx)
        want = x.copy()
        want[min(max(t, 0), 3)] = 7
        np.testing.assert_array_equal(y, want)


def _i32(v):
    return np.int32(v)


def test_contiguous_dynamic_slices_are_read_in_place():
    b = B()
    x, i = b.param((4, 3)), b.param((), "int32")
    row = b.reshape(b.dynamic_slice(x, i, b.const(0, "int32"), slice_sizes=[1, 3]), new_sizes=[3])
    col = b.dynamic_slice(x, b.const(0, "int32"), i, slice_sizes=[4, 1])  # strided: copied
    g = b.done(b.mul(row, row), b.neg(col), b.dynamic_slice(x, i, b.const(0, "int32"), slice_sizes=[2, 3]))
    xv = np.arange(12, dtype=np.float32).reshape(4, 3)
    for t in [0, 2, 3, 9, -1]:
        (r, c, out), exe = run(g, xv, _i32(t))
        k = min(max(t, 0), 3)
        np.testing.assert_array_equal(r, xv[k] ** 2)
        np.testing.assert_array_equal(c, -xv[:, min(max(t, 0), 2)][:, None])
        np.testing.assert_array_equal(out, xv[min(max(t, 0), 2):min(max(t, 0), 2) + 2])  # an output: its own buffer
    text = exe.plan_text()
    assert text.count("window(in") == 1 and ": view [" not in text, text  # the row: read in place by mul


def test_a_view_keeps_its_operand_from_being_overwritten():
    # y * row(y): y dies there, but that kernel must not write over y while reading its row (a view).
    b = B()
    x, i = b.param((4, 3)), b.param((), "int32")
    y = b.exp(b.dot_general(x, b.const(np.eye(3, dtype=np.float32)), lhs_contracting_dimensions=[1],
                            rhs_contracting_dimensions=[0], lhs_batch_dimensions=[], rhs_batch_dimensions=[]))
    row = b.reshape(b.dynamic_slice(y, i, b.const(0, "int32"), slice_sizes=[1, 3]), new_sizes=[3])
    z = b.mul(y, b.bcast(row, (4, 3), (1,)))  # a pooled value: it could take y's buffer, were row not read
    g = b.done(b.dot_general(z, b.const(np.eye(3, dtype=np.float32)), lhs_contracting_dimensions=[1],
                             rhs_contracting_dimensions=[0], lhs_batch_dimensions=[], rhs_batch_dimensions=[]))
    xv = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
    (r,), exe = run(g, xv, _i32(1))
    np.testing.assert_allclose(r, np.exp(xv) * np.exp(xv[1]), rtol=1e-6)
    text = exe.plan_text()
    assert "window(in" in text and text.count("in-place") == 1, text  # exp over the product only


def test_loop_reading_a_row_and_writing_the_next_in_place():
    # ys[i + 1] = 2 ys[i] + 1: a view of the carried buffer, then an in-place update of that buffer.
    n = 6
    ty = ((n, 4), "float32")
    cond = _branch(lambda b, i, ys: [b.lt(i, b.const(n - 1, "int32"))], TI, ty)

    def body(b, i, ys):
        row = b.dynamic_slice(ys, i, b.const(0, "int32"), slice_sizes=[1, 4])
        new = b.add(b.mul(row, b.bcast(b.const(2.0), (1, 4), ())), b.bcast(b.const(1.0), (1, 4), ()))
        i1 = b.add(i, b.const(1, "int32"))
        return [i1, b.dynamic_update_slice(ys, new, i1, b.const(0, "int32"))]
    b = B()
    i0, y0 = b.param(*TI), b.param(*ty)
    g = b.done(*b.g.add_subgraph_op("while", [i0, y0], {}, [cond, _branch(body, TI, ty)]))
    y = np.zeros((n, 4), np.float32)
    y[0] = np.arange(4)
    (ri, ry), _ = run(g, _i32(0), y)
    want = y.astype(np.float64).copy()
    for k in range(1, n):
        want[k] = 2 * want[k - 1] + 1
    np.testing.assert_array_equal(ry, want)
    (_, qy), _ = run(g, _i32(0), y, reference=True)
    np.testing.assert_array_equal(qy, ry)
