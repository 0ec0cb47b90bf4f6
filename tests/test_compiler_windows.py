"""Dynamic windows of fused steps in loop bodies: a dynamic_update_slice of a carried buffer becomes a
store of a fused kernel into the buffer's window, and a dynamic_slice read in place a load of one. The
plans lose their per-leaf steps (counted in the plan text); the results keep their bits (against the
unfused plan and the reference interpreter)."""
import numpy as np
import pytest

from core_util import to_core, to_numpy
from xjax import _core

from test_compiler import B, _branch


# The windows of each leaf: without pack_loops, which would carry these leaves as the lanes of one
# array (tests/test_pack_loops.py).
PER_LEAF = ["simplify", "dot_reduce", "fold", "simplify", "cse", "dce"]


def run(g, *args, **options):
    options.setdefault("passes", PER_LEAF)
    exe = _core.compile(g, **options)
    return [to_numpy(r) for r in exe.run([to_core(np.asarray(a)) for a in args])], exe


def body_plan(exe):
    text = exe.plan_text()
    sub = text[text.index("subplan 1:"):]
    return [ln.strip() for ln in sub.splitlines() if ln.strip().startswith("step ")]


def assert_same_bits(g, *args):
    """The fused plan's results against the unfused plan's (bit for bit) and the reference interpreter's."""
    got, exe = run(g, *args)
    plain, _ = run(g, *args, fuse=False)
    ref, _ = run(g, *args, reference=True)
    for a, b, c in zip(got, plain, ref):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), (a, b)
        np.testing.assert_allclose(a.astype(np.float64), c.astype(np.float64), rtol=1e-6)
    return got, exe


def _forward_graph(n, k, reverse=False):
    """A scan forward pass over k scalar leaves: res_j[t] = c_j; c_j = c_j * w_j + 1 (t = i or n-1-i)."""
    ti, ts, tr = ((), "int32"), ((), "float32"), ((n,), "float32")
    types = [ti] + [ts] * k + [tr] * k

    def body(b, i, *rest):
        cs, rs = rest[:k], rest[k:]
        t = b.sub(b.const(n - 1, "int32"), i) if reverse else i
        new_c = [b.add(b.mul(c, b.const(0.5 + 0.01 * j)), b.const(1.0)) for j, c in enumerate(cs)]
        new_r = [b.dynamic_update_slice(r, b.reshape(c, new_sizes=[1]), t) for r, c in zip(rs, cs)]
        return [b.add(i, b.const(1, "int32")), *new_c, *new_r]
    cond = _branch(lambda b, i, *rest: [b.lt(i, b.const(n, "int32"))], *types)
    b = B()
    ps = [b.param(s, d) for s, d in types]
    return b.done(*b.g.add_subgraph_op("while", ps, {}, [cond, _branch(body, *types)]))


@pytest.mark.parametrize("reverse", [False, True])
def test_updates_of_many_scalar_leaves_are_stores_of_one_kernel(reverse):
    n, k = 30, 40
    g = _forward_graph(n, k, reverse)
    args = [np.int32(0)] + [np.float32(1 + j / 7) for j in range(k)] + [np.full(n, -1, np.float32)] * k
    got, exe = assert_same_bits(g, *args)
    steps = body_plan(exe)
    assert not any("kernel [dynamic_update_slice" in s for s in steps), steps
    assert sum(s.count("window(out") for s in steps) == k, steps
    assert len(steps) <= 3 + reverse, steps  # (was k + 1 or more: a kernel per leaf)
    for j in range(k):  # res_j[t] is c_j before step t
        c, want = np.float32(1 + j / 7), np.zeros(n, np.float32)
        for t in range(n):
            want[n - 1 - t if reverse else t] = c
            c = np.float32(c * np.float32(0.5 + 0.01 * j) + np.float32(1.0))
        np.testing.assert_array_equal(got[1 + k + j], want)
        assert got[1 + j] == c


def _backward_graph(n, k, shape=()):
    """A scan backward pass reading k stacked residuals: acc_j += res_j[n-1-i] * 2."""
    ti, ta, tr = ((), "int32"), (shape, "float32"), ((n, *shape), "float32")
    types = [ti] + [ta] * k + [tr] * k
    zeros = [0] * len(shape)

    def body(b, i, *rest):
        accs, rs = rest[:k], rest[k:]
        t = b.sub(b.const(n - 1, "int32"), i)
        z = b.const(0, "int32")
        rows = [b.reshape(b.dynamic_slice(r, t, *[z for _ in zeros], slice_sizes=[1, *shape]), new_sizes=list(shape))
                for r in rs]
        two = b.bcast(b.const(2.0), shape, ()) if shape else b.const(2.0)
        return [b.add(i, b.const(1, "int32")), *[b.add(a, b.mul(r, two)) for a, r in zip(accs, rows)], *rs]
    cond = _branch(lambda b, i, *rest: [b.lt(i, b.const(n, "int32"))], *types)
    b = B()
    ps = [b.param(s, d) for s, d in types]
    return b.done(*b.g.add_subgraph_op("while", ps, {}, [cond, _branch(body, *types)]))


@pytest.mark.parametrize("shape", [(), (3, 5)])
def test_dynamic_slices_fold_into_the_reads_of_one_kernel(shape):
    n, k = 25, 33
    g = _backward_graph(n, k, shape)
    rng = np.random.default_rng(0)
    res = [rng.standard_normal((n, *shape)).astype(np.float32) for _ in range(k)]
    got, exe = assert_same_bits(g, np.int32(0), *[np.zeros(shape, np.float32)] * k, *res)
    steps = body_plan(exe)
    assert not any("view [" in s for s in steps), steps
    assert sum(s.count("window(in") for s in steps) == k, steps
    for j in range(k):
        want = np.zeros(shape, np.float32)
        for t in reversed(range(n)):
            want = want + res[j][t] * np.float32(2)
        np.testing.assert_array_equal(got[1 + j], want)
        np.testing.assert_array_equal(got[1 + k + j], res[j])


def test_a_buffer_read_elsewhere_keeps_its_update_kernel():
    # ys is also summed in the body: writing it in place would change what the sum reads.
    n = 6
    ti, ty, ts = ((), "int32"), ((n,), "float32"), ((), "float32")

    def body(b, i, ys, s):
        y = b.reshape(b.convert_element_type(i, new_dtype="float32"), new_sizes=[1])
        return [b.add(i, b.const(1, "int32")), b.dynamic_update_slice(ys, b.exp(y), i),
                b.add(s, b.reduce_sum(ys, axes=[0]))]
    cond = _branch(lambda b, i, ys, s: [b.lt(i, b.const(n, "int32"))], ti, ty, ts)
    b = B()
    ps = [b.param(*t) for t in (ti, ty, ts)]
    g = b.done(*b.g.add_subgraph_op("while", ps, {}, [cond, _branch(body, ti, ty, ts)]))
    (ri, ry, rs), exe = assert_same_bits(g, np.int32(0), np.zeros(n, np.float32), np.float32(0))
    assert any("kernel [dynamic_update_slice" in s for s in body_plan(exe))
    np.testing.assert_allclose(ry, np.exp(np.arange(n, dtype=np.float64)), rtol=1e-6)


def test_a_window_that_is_not_contiguous_keeps_its_update_kernel():
    # A column of a (n, 4) buffer is not one run of memory: no window.
    n = 5
    ti, ty = ((), "int32"), ((4, n), "float32")

    def body(b, i, ys):
        col = b.bcast(b.exp(b.convert_element_type(i, new_dtype="float32")), (4, 1), ())
        return [b.add(i, b.const(1, "int32")), b.dynamic_update_slice(ys, col, b.const(0, "int32"), i)]
    cond = _branch(lambda b, i, ys: [b.lt(i, b.const(n, "int32"))], ti, ty)
    b = B()
    ps = [b.param(*t) for t in (ti, ty)]
    g = b.done(*b.g.add_subgraph_op("while", ps, {}, [cond, _branch(body, ti, ty)]))
    (_, ry), exe = assert_same_bits(g, np.int32(0), np.zeros((4, n), np.float32))
    assert any("kernel [dynamic_update_slice" in s for s in body_plan(exe))
    np.testing.assert_allclose(ry, np.exp(np.arange(n, dtype=np.float64))[None].repeat(4, 0), rtol=1e-6)


def test_start_indices_out_of_range_are_clamped_in_windows():
    # Starts past the end write (and read) the last window, as the kernels and XLA do.
    n = 4
    ti, ty, tx = ((), "int32"), ((n, 3), "float32"), ((3,), "float32")

    def body(b, i, ys, x):
        far = b.mul(i, b.const(5, "int32"))  # 0, 5, 10, ...: clamped to row n-1
        z = b.const(0, "int32")
        row = b.reshape(b.dynamic_slice(ys, far, z, slice_sizes=[1, 3]), new_sizes=[3])
        new = b.reshape(b.add(b.mul(x, b.bcast(b.convert_element_type(i, new_dtype="float32"), (3,), ())), row),
                        new_sizes=[1, 3])
        return [b.add(i, b.const(1, "int32")), b.dynamic_update_slice(ys, new, far, z), b.add(x, row)]
    cond = _branch(lambda b, i, ys, x: [b.lt(i, b.const(n, "int32"))], ti, ty, tx)
    b = B()
    ps = [b.param(*t) for t in (ti, ty, tx)]
    g = b.done(*b.g.add_subgraph_op("while", ps, {}, [cond, _branch(body, ti, ty, tx)]))
    ys0 = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
    assert_same_bits(g, np.int32(0), ys0, np.ones(3, np.float32))


def test_a_buffer_carried_twice_is_copied_before_its_window_is_written():
    # The loop gets one buffer as two carried values: writing rows of the first leaves the second.
    n = 5
    ti, ty = ((), "int32"), ((n, 2), "float32")

    def body(b, i, ys, keep):
        row = b.bcast(b.exp(b.convert_element_type(i, new_dtype="float32")), (1, 2), ())
        return [b.add(i, b.const(1, "int32")), b.dynamic_update_slice(ys, row, i, b.const(0, "int32")), keep]
    cond = _branch(lambda b, i, ys, keep: [b.lt(i, b.const(n, "int32"))], ti, ty, ty)
    b = B()
    i0, y0 = b.param(*ti), b.param(*ty)
    g = b.done(*b.g.add_subgraph_op("while", [i0, y0, y0], {}, [cond, _branch(body, ti, ty, ty)]), y0)
    y_init = np.full((n, 2), -3, np.float32)
    (_, ry, rkeep, ry0), exe = assert_same_bits(g, np.int32(0), y_init)
    assert any("window(out" in s for s in body_plan(exe))
    np.testing.assert_allclose(ry, np.exp(np.arange(n, dtype=np.float64))[:, None].repeat(2, 1), rtol=1e-6)
    np.testing.assert_array_equal(rkeep, y_init)
    np.testing.assert_array_equal(ry0, y_init)
