"""The graph compiler: each pass alone, fusion (counted in kernels), buffer reuse, the fused engine
against the reference interpreter, control flow and host callbacks."""
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core_util import to_core, to_numpy
from xjax import _core


class B:
    """A terse graph builder over _core.Graph."""

    def __init__(self):
        self.g = _core.Graph()

    def param(self, shape, dtype="float32"):
        return self.g.parameter(tuple(shape), dtype)

    def const(self, value, dtype="float32", shape=()):
        if isinstance(value, np.ndarray):
            return self.g.add("constant", [], {"dtype": dtype, "shape": list(value.shape),
                                               "data": np.ascontiguousarray(value.astype(dtype)).tobytes()})[0]
        return self.g.add("constant", [], {"value": value, "dtype": dtype, "shape": list(shape)})[0]

    def __getattr__(self, op):
        def add(*inputs, **attrs):
            out = self.g.add(op, list(inputs), attrs)
            return out[0] if len(out) == 1 else out
        return add

    def bcast(self, x, shape, dims):
        return self.g.add("broadcast_in_dim", [x], {"shape": list(shape), "broadcast_dimensions": list(dims)})[0]

    def done(self, *outs):
        self.g.set_outputs(list(outs))
        return self.g


def run(g, *args, **options):
    exe = _core.compile(g, **options)
    return [to_numpy(r) for r in exe.run([to_core(np.asarray(a)) for a in args])], exe


def selu_graph(n):
    b = B()
    x = b.param((n,))
    alpha, lam, zero = b.const(1.6732632423543772), b.const(1.0507009873554805), b.const(0.0)
    neg = b.sub(b.mul(alpha, b.exp(x)), alpha)
    return b.done(b.mul(lam, b.select_n(b.gt(x, zero), neg, x)))


def selu_np(x):
    x = x.astype(np.float64)
    return 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.exp(x) - 1.6732632423543772)


# ---- the passes, one at a time ----------------------------------------------------------------

def test_verify_accepts_built_and_optimised_graphs():
    g = selu_graph(4)
    g.verify()
    g.optimized(["simplify", "fold", "cse", "dce", "verify"]).verify()


def test_dce_removes_unused_nodes_keeps_params_and_effects():
    b = B()
    x, y = b.param((3,)), b.param((3,))
    b.sin(x)  # dead
    b.cos(b.exp(y))  # dead chain
    cb = _core.register_callback(lambda args: None)
    b.g.add("host_callback", [x], {"callback_id": cb})
    g = b.done(b.neg(x))
    assert g.optimized(["dce"]).ops() == ["parameter", "parameter", "host_callback", "neg"]


def test_cse_merges_identical_nodes():
    b = B()
    x = b.param((5,))
    e1, e2 = b.exp(x), b.exp(x)
    r1, r2 = b.reshape(x, new_sizes=[5, 1]), b.reshape(x, new_sizes=[5, 1])
    c1, c2 = b.const(2.0), b.const(2.0)
    g = b.done(b.add(e1, e2), b.mul(c1, e2), b.neg(b.reshape(r1, new_sizes=[5])), r2, c2)
    ops = g.optimized(["cse", "dce"]).ops()
    assert ops.count("exp") == 1 and ops.count("constant") == 1 and ops.count("reshape") == 2


def test_fold_elementwise_and_broadcast_of_constants():
    b = B()
    x = b.param((4,))
    six = b.mul(b.const(2.0), b.const(3.0))
    big = b.bcast(six, (1000, 4), ())  # a splat: folded without materialising it
    arr = b.add(b.const(np.arange(4.0)), b.bcast(six, (4,), ()))
    g = b.done(b.add(x, arr), big)
    opt = g.optimized(["fold", "dce"])
    assert sorted(opt.ops()) == ["add", "constant", "constant", "parameter"]
    (r, rb), _ = run(g, np.ones(4, np.float32))
    np.testing.assert_array_equal(r, 1 + np.arange(4) + 6)
    assert rb.shape == (1000, 4) and (rb == 6).all()


def test_fold_integer_wraps_like_the_kernel():
    b = B()
    c = b.mul(b.const(200, "uint8"), b.const(2, "uint8"))
    (r,), _ = run(b.done(c))
    assert r == np.uint8(144)


@pytest.mark.parametrize("case", ["mul1", "add0", "sub0", "div1", "negneg", "convert", "pow1", "reshape2",
                                  "transpose2", "bcast_same", "select_const", "select_same", "reduce_none"])
def test_simplify_identities(case):
    b = B()
    x = b.param((2, 3))
    one = b.bcast(b.const(1.0), (2, 3), ())
    zero = b.const(0.0)
    y = {
        "mul1": lambda: b.mul(x, one),
        "add0": lambda: b.add(zero, x) if False else b.add(x, b.bcast(zero, (2, 3), ())),
        "sub0": lambda: b.sub(x, b.bcast(zero, (2, 3), ())),
        "div1": lambda: b.div(x, one),
        "negneg": lambda: b.neg(b.neg(x)),
        "convert": lambda: b.convert_element_type(x, new_dtype="float32"),
        "pow1": lambda: b.integer_pow(x, y=1),
        "reshape2": lambda: b.reshape(b.reshape(x, new_sizes=[6]), new_sizes=[2, 3]),
        "transpose2": lambda: b.transpose(b.transpose(x, permutation=[1, 0]), permutation=[1, 0]),
        "bcast_same": lambda: b.bcast(x, (2, 3), (0, 1)),
        "select_const": lambda: b.select_n(b.const(True, "bool"), b.neg(x), x),
        "select_same": lambda: b.select_n(b.gt(x, x), x, x),
        "reduce_none": lambda: b.reduce_sum(x, axes=[]),
    }[case]()
    g = b.done(y)
    opt = g.optimized(["simplify", "fold", "simplify", "dce"])
    assert opt.ops() == ["parameter"], opt
    xv = np.arange(6, dtype=np.float32).reshape(2, 3)
    (r,), exe = run(g, xv)
    np.testing.assert_array_equal(r, xv)
    assert exe.num_kernels == 0


def test_simplify_composes_chains():
    b = B()
    x = b.param((2, 3, 4))
    t = b.transpose(b.transpose(x, permutation=[1, 0, 2]), permutation=[0, 2, 1])
    r = b.reshape(b.reshape(x, new_sizes=[6, 4]), new_sizes=[24])
    bb = b.bcast(b.bcast(b.param((3,)), (2, 3), (1,)), (5, 2, 3), (1, 2))
    g = b.done(t, r, bb)
    opt = g.optimized(["simplify", "dce"])
    assert opt.ops().count("transpose") == 1 and opt.ops().count("reshape") == 1
    assert opt.ops().count("broadcast_in_dim") == 1
    xv = np.random.rand(2, 3, 4).astype(np.float32)
    yv = np.random.rand(3).astype(np.float32)
    (rt, rr, rb), _ = run(g, xv, yv)
    np.testing.assert_array_equal(rt, xv.transpose(1, 0, 2).transpose(0, 2, 1))
    np.testing.assert_array_equal(rr, xv.reshape(-1))
    np.testing.assert_array_equal(rb, np.broadcast_to(yv, (5, 2, 3)))


def _dot(b, x, y, lc, rc, lb=(), rb=()):
    return b.dot_general(x, y, lhs_contracting_dimensions=list(lc), rhs_contracting_dimensions=list(rc),
                         lhs_batch_dimensions=list(lb), rhs_batch_dimensions=list(rb))


@pytest.mark.parametrize("xs, ys, lc, rc, lb, rb, perm, folds, spec", [
    ((16, 32), (16, 64), [0], [0], [], [], [1, 0], True, "ki,kj->ji"),  # a matmul operand's cotangent
    ((4, 5), (5, 6), [1], [0], [], [], [1, 0], True, "ik,kj->ji"),
    ((3, 4, 5), (3, 5, 6), [2], [1], [0], [0], [0, 2, 1], True, "bik,bkj->bji"),
    ((3, 4, 5), (3, 5, 6), [2], [1], [0], [0], [1, 0, 2], False, "bik,bkj->ibj"),  # moves the batch dim
    ((2, 3, 4), (4, 5), [2], [0], [], [], [2, 0, 1], True, "abk,kc->cab"),
    ((2, 3, 4), (4, 5), [2], [0], [], [], [0, 2, 1], False, "abk,kc->acb"),  # splits the lhs free dims
])
def test_simplify_transpose_of_dot_swaps_the_operands(xs, ys, lc, rc, lb, rb, perm, folds, spec):
    b = B()
    x, y = b.param(xs), b.param(ys)
    g = b.done(b.transpose(_dot(b, x, y, lc, rc, lb, rb), permutation=perm))
    ops = g.optimized(["simplify", "dce"]).ops()
    assert ops.count("transpose") == (0 if folds else 1) and ops.count("dot_general") == 1, ops
    rng = np.random.default_rng(0)
    xv, yv = rng.standard_normal(xs).astype(np.float32), rng.standard_normal(ys).astype(np.float32)
    (r,), _ = run(g, xv, yv)
    np.testing.assert_allclose(r, np.einsum(spec, xv, yv), rtol=1e-5, atol=1e-5)


def test_simplify_keeps_the_transpose_of_a_dot_used_elsewhere():
    b = B()
    x, y = b.param((4, 5)), b.param((5, 6))
    d = _dot(b, x, y, [1], [0])
    g = b.done(b.transpose(d, permutation=[1, 0]), d)
    ops = g.optimized(["simplify", "dce"]).ops()
    assert ops.count("transpose") == 1 and ops.count("dot_general") == 1


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("order", ["acc_first", "dot_first"])
@pytest.mark.parametrize("lc, xs", [(1, (5, 7)), (0, (7, 5))])
def test_simplify_accumulates_a_product_onto_its_addend(dtype, order, lc, xs):
    b = B()
    x, w, acc = b.param(xs, dtype), b.param((7, 6), dtype), b.param((5, 6), dtype)
    d = _dot(b, x, w, [lc], [0])
    g = b.done(b.add(acc, d) if order == "acc_first" else b.add(d, acc))
    ops = g.optimized(["simplify", "dce"]).ops()
    assert "dot_general_add" in ops and "add" not in ops and "dot_general" not in ops, ops
    rng = np.random.default_rng(1)
    xv, wv, av = (rng.standard_normal(s).astype(dtype) for s in (xs, (7, 6), (5, 6)))
    (r,), _ = run(g, xv, wv, av)
    np.testing.assert_allclose(r, av + (xv if lc == 1 else xv.T) @ wv, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", ["dot_used_twice", "bias_broadcast", "constant", "vector", "batched", "int"])
def test_simplify_keeps_other_sums_of_products(case):
    b = B()
    dt = "int32" if case == "int" else "float32"
    x, w = b.param((4, 5), dt), b.param((5, 3), dt)
    d = _dot(b, x, w, [1], [0])
    outs = {
        "dot_used_twice": lambda: [b.add(b.param((4, 3)), d), d],
        "bias_broadcast": lambda: [b.add(d, b.bcast(b.param((3,)), (4, 3), (1,)))],
        "constant": lambda: [b.add(d, b.const(np.ones((4, 3), np.float32)))],
        "vector": lambda: [b.add(_dot(b, x, b.param((5,)), [1], [0]), b.param((4,)))],
        "batched": lambda: [b.add(_dot(b, b.param((2, 4, 5)), b.param((2, 5, 3)), [2], [1], [0], [0]),
                                  b.param((2, 4, 3)))],
        "int": lambda: [b.add(d, b.param((4, 3), "int32"))],
    }[case]()
    ops = b.done(*outs).optimized(["simplify", "dce"]).ops()
    assert "dot_general_add" not in ops and "add" in ops, ops


def test_accumulating_products_in_a_loop_update_the_sum_in_place():
    # acc += x[i]^T g[i]: the gradient of a weight in a scan's backward pass.
    n = 5
    ta, tx = ((3, 4), "float32"), ((n, 6, 3), "float32")
    cond = _branch(lambda b, i, acc, xs: [b.lt(i, b.const(n, "int32"))], ((), "int32"), ta, tx)

    def body(b, i, acc, xs):
        zero = b.const(0, "int32")
        xi = b.reshape(b.dynamic_slice(xs, i, zero, zero, slice_sizes=[1, 6, 3]), new_sizes=[6, 3])
        return [b.add(i, b.const(1, "int32")), b.add(acc, _dot(b, xi, b.bcast(b.const(1.0), (6, 4), ()), [0], [0])), xs]
    b = B()
    i0, a0, x0 = b.param((), "int32"), b.param(*ta), b.param(*tx)
    g = b.done(*b.g.add_subgraph_op("while", [i0, a0, x0], {}, [cond, _branch(body, ((), "int32"), ta, tx)]))
    xv = np.arange(n * 18, dtype=np.float32).reshape(n, 6, 3) / 10
    (_, r, _), exe = run(g, np.int32(0), np.ones((3, 4), np.float32), xv)
    np.testing.assert_allclose(r, 1 + np.einsum("nkj,kl->jl", xv, np.ones((6, 4))), rtol=1e-5)
    body_plan = exe.plan_text()[exe.plan_text().index("subplan 1:"):]
    line = next(ln for ln in body_plan.splitlines() if "dot_general_add" in ln)
    out = line.split("out(")[1].split(")")[0]
    assert f"value {out}: output in-place" in body_plan, body_plan


def test_unknown_pass_is_an_error():
    with pytest.raises(ValueError, match="unknown pass 'nope'"):
        selu_graph(3).optimized(["nope"])


# ---- fusion, counted in kernels ---------------------------------------------------------------

def test_selu_is_one_kernel_and_correct():
    for n in [0, 1, 7, 1000, 100_003]:
        x = np.random.randn(n).astype(np.float32) * 3
        (r,), exe = run(selu_graph(n), x)
        assert exe.num_kernels == 1, exe.plan_text()
        np.testing.assert_allclose(r, selu_np(x), rtol=2e-6, atol=1e-6)


def test_sum_of_squares_is_one_pass():
    for n in [1, 5000, 1 << 20]:
        b = B()
        x = b.param((n,))
        g = b.done(b.reduce_sum(b.integer_pow(x, y=2), axes=[0]))
        xv = np.random.randn(n).astype(np.float32)
        (r,), exe = run(g, xv)
        assert exe.num_kernels == 1 and exe.num_buffers == 0
        np.testing.assert_allclose(r, np.sum(xv.astype(np.float64) ** 2), rtol=1e-5)


def test_softmax_pieces_fuse_into_three_kernels():
    b = B()
    x = b.param((64, 100))
    m = b.reduce_max(x, axes=[1])
    e = b.exp(b.sub(x, b.bcast(m, (64, 100), (0,))))
    s = b.reduce_sum(e, axes=[1])
    g = b.done(b.div(e, b.bcast(s, (64, 100), (0,))))
    xv = np.random.randn(64, 100).astype(np.float32) * 4
    (r,), exe = run(g, xv)
    assert exe.num_kernels == 3, exe.plan_text()
    ref = np.exp(xv - xv.max(1, keepdims=True))
    np.testing.assert_allclose(r, ref / ref.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int16"])
def test_select_of_a_comparison_is_one_step(dtype):
    b = B()
    x, y = b.param((3000,), dtype), b.param((3000,), dtype)
    w1 = b.select_n(b.gt(x, b.const(0, dtype)), b.neg(x), x)  # where(x > 0, x, -x)
    cmp = b.le(x, y)
    w2 = b.select_n(cmp, x, y)  # the comparison is also an output: stays a step of its own
    g = b.done(w1, w2, cmp)
    rng = np.random.default_rng(0)
    xv, yv = (rng.integers(-5, 5, 3000).astype(dtype) for _ in range(2))
    if dtype.startswith("float"):
        xv[::7] = np.nan
    (r1, r2, rc), exe = run(g, xv, yv)
    merged = dtype in ("float32", "float64", "int32")
    assert ("select_gt" in exe.plan_text()) == merged and "select_le" not in exe.plan_text()
    np.testing.assert_array_equal(r1, np.where(xv > 0, xv, -xv))
    np.testing.assert_array_equal(r2, np.where(xv <= yv, yv, xv))
    np.testing.assert_array_equal(rc, xv <= yv)


def test_broadcast_operands_fuse_as_loads():
    b = B()
    x, row, col = b.param((300, 70)), b.param((70,)), b.param((300, 1))
    y = b.mul(b.add(x, b.bcast(row, (300, 70), (1,))), b.bcast(col, (300, 70), (0, 1)))
    z = b.reduce_sum(b.tanh(y), axes=[0])
    g = b.done(y, z)
    xv, rv, cv = (np.random.randn(*s).astype(np.float32) for s in [(300, 70), (70,), (300, 1)])
    (ry, rz), exe = run(g, xv, rv, cv)
    assert exe.num_kernels == 1, exe.plan_text()
    np.testing.assert_allclose(ry, (xv + rv) * cv, rtol=1e-6)
    np.testing.assert_allclose(rz, np.tanh((xv + rv) * cv).sum(0), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape,axes", [((1000, 37), [0]), ((37, 1000), [1]), ((3, 4000, 5), [1]),
                                        ((6, 5, 4, 3), [0, 1]), ((6, 5, 4, 3), [2, 3]), ((2, 3, 4), [0, 1, 2]),
                                        ((40, 1, 5000), [2]), ((0, 5), [0]), ((5, 0), [1]), ((200000,), [0])])
@pytest.mark.parametrize("op", ["reduce_sum", "reduce_max", "reduce_min", "reduce_prod"])
def test_fused_reductions_over_leading_trailing_and_middle_axes(shape, axes, op):
    b = B()
    x = b.param(shape)
    y = b.add(b.mul(x, b.bcast(b.const(0.01), shape, ())), b.bcast(b.const(1.0), shape, ()))
    g = b.done(getattr(b, op)(y, axes=axes))
    xv = np.random.randn(*shape).astype(np.float32)
    (r,), exe = run(g, xv)
    assert exe.num_kernels == 1
    yv = xv.astype(np.float64) * np.float32(0.01) + 1
    ref = {"reduce_sum": np.sum, "reduce_max": np.max, "reduce_min": np.min, "reduce_prod": np.prod}[op]
    if 0 in shape and op in ("reduce_max", "reduce_min"):
        want = np.full([d for i, d in enumerate(shape) if i not in axes], -np.inf if op == "reduce_max" else np.inf)
    else:
        want = ref(yv, axis=tuple(axes))
    np.testing.assert_allclose(r, want, rtol=2e-5 if op != "reduce_prod" else 1e-3)


@pytest.mark.parametrize("dtype,op", [("bool", "reduce_or"), ("bool", "reduce_and"), ("bool", "reduce_max"),
                                      ("int32", "reduce_sum"), ("int8", "reduce_prod"), ("uint16", "reduce_xor"),
                                      ("int64", "reduce_min"), ("float16", "reduce_sum"), ("bfloat16", "reduce_max"),
                                      ("float64", "reduce_sum")])
@pytest.mark.parametrize("axes", [[0], [1], [0, 1]])
def test_fused_reductions_over_dtypes_match_reference(dtype, op, axes):
    b = B()
    x = b.param((37, 1500), "int32")
    y = b.convert_element_type(b.mul(x, x), new_dtype=dtype) if dtype != "bool" else b.gt(x, b.const(-3, "int32"))
    g = b.done(getattr(b, op)(y, axes=axes))
    xv = np.random.default_rng(3).integers(-4, 5, size=(37, 1500)).astype(np.int32)
    (r,), exe = run(g, xv)
    (want,), _ = run(g, xv, reference=True, passes=[])
    assert exe.num_kernels == 1
    if dtype in ("float16", "bfloat16"):
        np.testing.assert_allclose(r.astype(np.float64), want.astype(np.float64), rtol=2e-2)
    else:
        np.testing.assert_array_equal(r, want)


def test_interleaved_reduction_axes_still_correct():
    b = B()
    x = b.param((4, 5, 6, 7))
    g = b.done(b.reduce_sum(b.exp(x), axes=[0, 2]))
    xv = np.random.randn(4, 5, 6, 7).astype(np.float32)
    (r,), exe = run(g, xv)
    np.testing.assert_allclose(r, np.exp(xv.astype(np.float64)).sum((0, 2)), rtol=1e-5)


@pytest.mark.parametrize("shape,dim", [((100_000,), 0), ((300, 70), 0), ((300, 70), 1), ((4, 5, 6), 1)])
def test_iota_is_generated_inside_fused_kernels(shape, dim):
    b = B()
    x = b.param(shape, "int32")
    i = b.iota(dtype="int32", shape=list(shape), dimension=dim)
    y = b.mul(b.add(i, x), b.const(3, "int32"))
    n = int(np.prod(shape))
    flat = b.reshape(b.iota(dtype="uint32", shape=[n], dimension=0), new_sizes=list(shape))  # read through a reshape
    z = b.convert_element_type(b.add(flat, b.const(1, "uint32")), new_dtype="float32")
    g = b.done(y, z)
    xv = np.random.default_rng(0).integers(-9, 9, shape).astype(np.int32)
    (ry, rz), exe = run(g, xv)
    siblings_merge = n <= 1 << 15  # two independent groups over one small space run as one kernel
    assert exe.num_kernels == (1 if siblings_merge else 2) and "iota(" not in exe.plan_text(), exe.plan_text()
    np.testing.assert_array_equal(ry, (np.indices(shape)[dim] + xv) * 3)
    np.testing.assert_array_equal(rz, np.arange(1, n + 1, dtype=np.float32).reshape(shape))


def test_iota_read_in_memory_is_still_computed():
    b = B()
    i = b.iota(dtype="float32", shape=[6, 4], dimension=0)
    t = b.transpose(i, permutation=[1, 0])  # not fusible: needs the iota in memory
    g = b.done(t, b.add(i, b.const(1.0)))
    (rt, ra), exe = run(g)
    np.testing.assert_array_equal(rt, np.indices((6, 4))[0].T)
    np.testing.assert_array_equal(ra, np.indices((6, 4))[0] + 1)


def test_group_values_needed_outside_are_stored_once():
    b = B()
    x = b.param((1000,))
    e = b.exp(x)
    s = b.reduce_sum(e, axes=[0])
    t = b.transpose(b.reshape(e, new_sizes=[10, 100]), permutation=[1, 0])  # a non-fusible reader of e
    g = b.done(s, t)
    xv = np.random.randn(1000).astype(np.float32)
    (rs, rt), exe = run(g, xv)
    assert exe.num_kernels == 2
    np.testing.assert_allclose(rs, np.exp(xv).sum(), rtol=1e-5)
    np.testing.assert_allclose(rt, np.exp(xv).reshape(10, 100).T, rtol=1e-6)


def test_unfusable_nodes_run_their_own_kernels():
    b = B()
    x = b.param((8,))
    y = b.integer_pow(x, y=11)  # no tile loop for |y| > 8
    z = b.add(b.sin(y), x)
    g = b.done(z)
    xv = np.linspace(-1.2, 1.2, 8).astype(np.float32)
    (r,), exe = run(g, xv)
    assert exe.num_kernels == 2
    np.testing.assert_allclose(r, np.sin(xv.astype(np.float64) ** 11) + xv, rtol=1e-5)


def test_fusion_off_gives_one_kernel_per_op():
    g = selu_graph(100)
    x = np.random.randn(100).astype(np.float32)
    (r1,), e1 = run(g, x)
    (r2,), e2 = run(g, x, fuse=False)
    assert e1.num_kernels == 1 and e2.num_kernels == 5  # (exp, fma: alpha * exp(x) - alpha, gt, select_n, mul)
    np.testing.assert_allclose(r1, r2, rtol=1e-6)


def test_outputs_that_are_inputs_views_or_constants():
    b = B()
    x = b.param((2, 3))
    g = b.done(x, b.reshape(x, new_sizes=[3, 2]), b.const(5, "int32"), b.neg(x), b.neg(x))
    xv = np.arange(6, dtype=np.float32).reshape(2, 3)
    (a, r, c, n1, n2), exe = run(g, xv)
    np.testing.assert_array_equal(a, xv)
    np.testing.assert_array_equal(r, xv.reshape(3, 2))
    assert c == 5 and c.dtype == np.int32
    np.testing.assert_array_equal(n1, -xv)
    np.testing.assert_array_equal(n2, -xv)


# ---- buffers ----------------------------------------------------------------------------------

def _chain(n, steps):
    """Alternating transposes (kernels) and elementwise ops (fused): every value is materialised."""
    b = B()
    x = b.param((n, n))
    y = x
    for i in range(steps):
        y = b.transpose(y, permutation=[1, 0])
        y = b.sin(y) if i % 2 else b.cos(y)
    return b.done(y)


def test_buffers_are_reused_after_their_last_reader():
    g = _chain(64, 6)
    xv = np.random.rand(64, 64).astype(np.float32)
    (r1,), e1 = run(g, xv)
    (r2,), e2 = run(g, xv, reuse_buffers=False)
    np.testing.assert_array_equal(r1, r2)
    assert e2.num_buffers == 11 and e1.num_buffers <= 3, e1.plan_text()


def test_fused_kernel_writes_in_place_over_a_dying_operand():
    b = B()
    x = b.param((128, 128))
    t = b.transpose(x, permutation=[1, 0])
    y = b.exp(b.sin(t))      # reads t element for element, t dies here: written over t's buffer
    z = b.transpose(y, permutation=[1, 0])
    g = b.done(z)
    xv = np.random.rand(128, 128).astype(np.float32)
    (r,), exe = run(g, xv)
    assert "in-place" in exe.plan_text(), exe.plan_text()
    np.testing.assert_allclose(r, np.exp(np.sin(xv)), rtol=1e-6)


def test_no_in_place_when_the_operand_is_read_after_the_write():
    b = B()
    x = b.param((64,))
    t = b.reshape(b.transpose(b.reshape(x, new_sizes=[8, 8]), permutation=[1, 0]), new_sizes=[64])
    y = b.add(b.exp(t), t)  # the result is written by the last step: safe; and stays correct
    g = b.done(b.reshape(b.transpose(b.reshape(y, new_sizes=[8, 8]), permutation=[1, 0]), new_sizes=[64]))
    xv = np.random.rand(64).astype(np.float32)
    (r,), exe = run(g, xv)
    np.testing.assert_allclose(r, np.exp(xv) + xv, rtol=1e-6)


# ---- fused execution against the reference interpreter ----------------------------------------

FLOAT_UNARY = ["neg", "sin", "tanh", "abs", "logistic", "exp", "square", "floor", "cos"]
INT_UNARY = ["neg", "abs", "square", "sign"]
BINARY = ["add", "sub", "mul", "max", "min"]
INT_BINARY = ["bitwise_xor", "bitwise_and", "bitwise_or", "shift_left", "shift_right_logical",
              "shift_right_arithmetic"]
REDUCE = ["reduce_sum", "reduce_max", "reduce_min"]
DTYPES = ["float32", "float64", "float16", "int32", "int8", "uint16", "uint32", "int64"]


@st.composite
def random_graphs(draw):
    dtype = draw(st.sampled_from(DTYPES))
    floating = dtype.startswith("float")
    rank = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank)))
    if draw(st.booleans()) and rank:
        shape = shape[:-1] + (draw(st.sampled_from([7, 300, 1100])),)  # several tiles
    b = B()
    params, args = [], []

    def new_param(s):
        params.append(b.param(s, dtype))
        data = np.random.default_rng(len(args)).uniform(-2, 2, size=s)
        args.append(data.astype(dtype) if floating else np.round(data * 20).astype(dtype))
        return params[-1]

    vals = [new_param(shape)]
    if rank and draw(st.booleans()):  # an operand broadcast along some dims
        keep = [d for d in range(rank) if draw(st.booleans())]
        small = tuple(shape[d] if draw(st.booleans()) else 1 for d in keep)
        vals.append(b.bcast(new_param(small), shape, keep))
    vals.append(b.bcast(b.const(draw(st.sampled_from([0.5, 2.0, -1.0])) if floating else 3, dtype), shape, ()))
    outs = []
    for _ in range(draw(st.integers(1, 7))):
        kind = draw(st.sampled_from(["unary", "binary", "binary", "select", "reduce"]))
        a = draw(st.sampled_from(vals))
        if kind == "unary":
            op = draw(st.sampled_from(FLOAT_UNARY if floating else INT_UNARY))
            if op in ("exp", "square"):
                a = b.tanh(a) if floating else a
            vals.append(getattr(b, op)(a))
        elif kind == "binary":
            ops = BINARY if floating else BINARY + INT_BINARY
            vals.append(getattr(b, draw(st.sampled_from(ops)))(a, draw(st.sampled_from(vals))))
        elif kind == "select":
            c = draw(st.sampled_from(vals))
            vals.append(b.select_n(b.lt(a, c), a, c))
        elif rank:
            axes = sorted(draw(st.sets(st.integers(0, rank - 1), min_size=1)))
            r = getattr(b, draw(st.sampled_from(REDUCE)))(a, axes=axes)
            outs.append(r)
            keep = [d for d in range(rank) if d not in axes]
            vals.append(b.bcast(r, shape, keep))
    outs += draw(st.lists(st.sampled_from(vals[1:] or vals), min_size=1, max_size=3))
    return b.done(*outs), args, dtype


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_graphs())
def test_fused_matches_reference_on_random_graphs(case):
    g, args, dtype = case
    got, exe = run(g, *args)
    want, _ = run(g, *args, reference=True, passes=[])
    tol = {"float16": 2e-2, "float32": 2e-4, "float64": 1e-10}.get(dtype, 0)
    for a, w in zip(got, want):
        assert a.dtype == w.dtype and a.shape == w.shape
        if tol:
            np.testing.assert_allclose(a.astype(np.float64), w.astype(np.float64), rtol=tol, atol=tol)
        else:
            np.testing.assert_array_equal(a, w)


def _deep_graph(seed, n):
    """Long random chains mixing fused ops, reductions broadcast back, matmuls and transposes."""
    b = B()
    x, w = b.param((64, 32)), b.param((32, 32))
    vals = [x]
    rng = np.random.default_rng(seed)
    for _ in range(n):
        k = rng.integers(0, 7)
        a, c = (vals[rng.integers(max(0, len(vals) - 10), len(vals))] for _ in range(2))
        vals.append([
            lambda: b.tanh(a),
            lambda: b.add(a, c),
            lambda: b.mul(b.tanh(a), c),
            lambda: b.bcast(b.reduce_max(a, axes=[1]), (64, 32), (0,)),
            lambda: b.tanh(b.dot_general(a, w, lhs_contracting_dimensions=[1], rhs_contracting_dimensions=[0])),
            lambda: b.transpose(b.reshape(a, new_sizes=[32, 64]), permutation=[1, 0]),
            lambda: b.sub(a, b.bcast(b.const(1.0), (64, 32), ())),
        ][k]())
    return b.done(*[vals[i] for i in rng.integers(0, len(vals), 5)])


@pytest.mark.parametrize("seed", range(6))
def test_deep_random_graphs_fused_equals_unfused(seed):
    g = _deep_graph(seed, 150)
    xs = [np.random.default_rng(1).uniform(-1, 1, (64, 32)).astype(np.float32),
          np.random.default_rng(2).uniform(-.3, .3, (32, 32)).astype(np.float32)]
    fused, exe = run(g, *xs)
    unfused, _ = run(g, *xs, fuse=False, reuse_buffers=False)
    unfused_reuse, _ = run(g, *xs, fuse=False)  # kernels written over dying operands
    want, _ = run(g, *xs, reference=True, passes=[])
    assert exe.num_kernels < len([op for op in g.ops() if op not in ("parameter", "constant")])
    for f, u, ur, r in zip(fused, unfused, unfused_reuse, want):
        np.testing.assert_array_equal(f, u)
        np.testing.assert_array_equal(ur, u)
        np.testing.assert_allclose(f, r, rtol=1e-5, atol=1e-5)


def test_reference_interpreter_matches_numpy():
    g = selu_graph(50)
    x = np.random.randn(50).astype(np.float32)
    (r,), exe = run(g, x, reference=True)
    np.testing.assert_allclose(r, selu_np(x), rtol=1e-6, atol=1e-6)


# ---- control flow and callbacks ---------------------------------------------------------------

def _branch(fn, *types):
    b = B()
    ps = [b.param(s, d) for s, d in types]
    return b.done(*fn(b, *ps))


def test_cond_picks_the_clamped_branch():
    t = ((3,), "float32")
    branches = [_branch(lambda b, x, y: [b.add(x, y)], t, t), _branch(lambda b, x, y: [b.mul(x, y)], t, t),
                _branch(lambda b, x, y: [x], t, t)]
    b = B()
    i, x, y = b.param((), "int32"), b.param((3,)), b.param((3,))
    (out,) = b.g.add_subgraph_op("cond", [i, x, y], {}, branches)
    g = b.done(b.neg(out))
    xv, yv = np.array([1, 2, 3], np.float32), np.array([4, 5, 6], np.float32)
    exe = _core.compile(g)
    for k, want in [(-5, xv + yv), (0, xv + yv), (1, xv * yv), (2, xv), (9, xv)]:
        (r,) = exe.run([to_core(np.int32(k)), to_core(xv), to_core(yv)])
        np.testing.assert_array_equal(to_numpy(r), -want)


def test_cond_checks_branch_signatures():
    t = ((3,), "float32")
    b = B()
    i, x = b.param((), "int32"), b.param((3,))
    with pytest.raises(TypeError, match="branch 1 returns"):
        b.g.add_subgraph_op("cond", [i, x], {}, [_branch(lambda b, x: [x], t),
                                                  _branch(lambda b, x: [b.reduce_sum(x, axes=[0])], t)])
    with pytest.raises(TypeError, match="index must be a 0-d int32"):
        b.g.add_subgraph_op("cond", [x, x], {}, [_branch(lambda b, x: [x], t)])
    with pytest.raises(ValueError, match="add_subgraph_op"):
        b.g.add("cond", [i, x], {})


def test_while_loop_counts_and_accumulates():
    ti, tf = ((), "int32"), ((4,), "float32")
    cond = _branch(lambda b, i, x: [b.lt(i, b.const(10, "int32"))], ti, tf)
    body = _branch(lambda b, i, x: [b.add(i, b.const(1, "int32")), b.add(b.mul(x, b.bcast(b.const(0.5), (4,), ())),
                                                                         b.bcast(b.const(1.0), (4,), ()))], ti, tf)
    b = B()
    i0, x0 = b.param((), "int32"), b.param((4,))
    i, x = b.g.add_subgraph_op("while", [i0, x0], {}, [cond, body])
    g = b.done(i, x, b.add(x, x))
    for start in [0, 7, 10, 20]:
        xv = np.arange(4, dtype=np.float32)
        (ri, rx, r2), _ = run(g, np.int32(start), xv)
        want = xv.astype(np.float64)
        for _ in range(max(0, 10 - start)):
            want = want * 0.5 + 1
        assert ri == max(start, 10)
        np.testing.assert_allclose(rx, want, rtol=1e-6)
        np.testing.assert_allclose(r2, 2 * want, rtol=1e-6)
        (qi, qx, _), _ = run(g, np.int32(start), xv, reference=True)
        assert qi == ri
        np.testing.assert_allclose(qx, rx, rtol=1e-6)


def _scan_graph(n, width):
    """while i < n: ys[i] = xs_row * i; x = x * 0.5 -- a scan's shape: updates in place."""
    ti, ty, tx = ((), "int32"), ((n, width), "float32"), ((width,), "float32")
    cond = _branch(lambda b, i, ys, x: [b.lt(i, b.const(n, "int32"))], ti, ty, tx)

    def body(b, i, ys, x):
        row = b.mul(b.reshape(x, new_sizes=[1, width]), b.bcast(b.convert_element_type(i, new_dtype="float32"),
                                                                 (1, width), ()))
        ys2 = b.dynamic_update_slice(ys, row, i, b.const(0, "int32"))
        half = b.bcast(b.const(0.5), (width,), ())
        return [b.add(i, b.const(1, "int32")), ys2, b.mul(x, half)]
    b = B()
    i0, y0, x0 = b.param((), "int32"), b.param((n, width)), b.param((width,))
    outs = b.g.add_subgraph_op("while", [i0, y0, x0], {}, [cond, _branch(body, ti, ty, tx)])
    return b.done(*outs, y0)


def test_while_body_updates_carried_buffers_in_place():
    n, width = 60, 8
    g = _scan_graph(n, width)
    exe = _core.compile(g)
    body_plan = exe.plan_text()
    y0 = np.full((n, width), -1, np.float32)
    x0 = np.ones(width, np.float32)
    (ri, ry, rx, ry0), _ = run(g, np.int32(0), y0, x0)
    want = np.arange(n, dtype=np.float64)[:, None] * 0.5 ** np.arange(n)[:, None] * np.ones(width)
    assert ri == n
    np.testing.assert_allclose(ry, want, rtol=1e-6)
    np.testing.assert_allclose(rx, 0.5 ** n * np.ones(width), rtol=1e-6)
    np.testing.assert_array_equal(ry0, y0)  # the initial value is untouched
    (qi, qy, qx, _), _ = run(g, np.int32(0), y0, x0, reference=True)
    np.testing.assert_allclose(ry, qy, rtol=1e-6)
    body = body_plan[body_plan.index("subplan 1:"):]
    # ys[i] is stored by the kernel computing the row, into its window of the carried buffer
    assert "window(out" in body and "kernel [dynamic_update_slice" not in body, body_plan


def test_callback_arrays_survive_in_place_updates():
    kept = []
    cb = _core.register_callback(lambda args: kept.append(args[0]))  # keeps the Array, not a copy
    ti, ty = ((), "int32"), ((3,), "float32")
    cond = _branch(lambda b, i, y: [b.lt(i, b.const(3, "int32"))], ti, ty)

    def body(b, i, y):
        b.g.add("host_callback", [y], {"callback_id": cb})
        one = b.reshape(b.convert_element_type(b.add(i, b.const(1, "int32")), new_dtype="float32"), new_sizes=[1])
        return [b.add(i, b.const(1, "int32")), b.dynamic_update_slice(y, one, i)]
    b = B()
    i0, y0 = b.param((), "int32"), b.param((3,))
    g = b.done(*b.g.add_subgraph_op("while", [i0, y0], {}, [cond, _branch(body, ti, ty)]))
    (ri, ry), _ = run(g, np.int32(0), np.zeros(3, np.float32))
    np.testing.assert_array_equal(ry, [1, 2, 3])
    np.testing.assert_array_equal([to_numpy(a) for a in kept], [[0, 0, 0], [1, 0, 0], [1, 2, 0]])
    _core.unregister_callback(cb)


def test_while_checks_signatures():
    ti = ((), "int32")
    b = B()
    i0 = b.param((), "int32")
    with pytest.raises(TypeError, match="cond must return one 0-d bool"):
        b.g.add_subgraph_op("while", [i0], {}, [_branch(lambda b, i: [i], ti), _branch(lambda b, i: [i], ti)])


def test_host_callbacks_run_in_program_order_with_ready_arrays():
    seen = []
    cb1 = _core.register_callback(lambda args: seen.append(("a", [to_numpy(a).copy() for a in args])))
    cb2 = _core.register_callback(lambda args: seen.append(("b", [to_numpy(a).copy() for a in args])))
    b = B()
    x = b.param((1000,))
    y = b.exp(x)
    b.g.add("host_callback", [y], {"callback_id": cb1})
    z = b.sin(y)
    b.g.add("host_callback", [x, z], {"callback_id": cb2})
    g = b.done(b.add(z, x))
    xv = np.random.rand(1000).astype(np.float32)
    (r,), _ = run(g, xv)
    assert [s[0] for s in seen] == ["a", "b"]
    np.testing.assert_allclose(seen[0][1][0], np.exp(xv), rtol=1e-6)
    np.testing.assert_allclose(seen[1][1][1], np.sin(np.exp(xv)), rtol=1e-5)
    np.testing.assert_allclose(r, np.sin(np.exp(xv)) + xv, rtol=1e-5)
    _core.unregister_callback(cb1)
    _core.unregister_callback(cb2)


def test_callback_inside_a_while_body_runs_every_iteration():
    count = []
    cb = _core.register_callback(lambda args: count.append(int(to_numpy(args[0]))))
    ti = ((), "int32")
    cond = _branch(lambda b, i: [b.lt(i, b.const(3, "int32"))], ti)

    def body(b, i):
        b.g.add("host_callback", [i], {"callback_id": cb})
        return [b.add(i, b.const(1, "int32"))]
    b = B()
    i0 = b.param((), "int32")
    b.g.add_subgraph_op("while", [i0], {}, [cond, _branch(body, ti)])  # results unused: kept for its effect
    g = b.done()
    exe = _core.compile(g)
    exe.run([to_core(np.int32(0))])
    _core.synchronize()
    assert count == [0, 1, 2]


def test_callback_errors_surface_at_wait():
    def boom(args):
        raise KeyError("nope")
    cb = _core.register_callback(boom)
    b = B()
    x = b.param((3,))
    b.g.add("host_callback", [x], {"callback_id": cb})
    g = b.done(b.neg(x))
    with pytest.raises(RuntimeError, match="host_callback.*nope"):
        (r,) = _core.compile(g).run([to_core(np.zeros(3, np.float32))])
        r.wait()


def test_run_releases_the_gil_and_is_thread_safe():
    g = selu_graph(2000)
    exe = _core.compile(g)
    xv = np.random.randn(2000).astype(np.float32)
    results = []

    def work():
        for _ in range(50):
            (r,) = exe.run([to_core(xv)])
            results.append(to_numpy(r))
    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        np.testing.assert_allclose(r, selu_np(xv), rtol=2e-6, atol=1e-6)


def test_brief_runs_are_small_and_never_wait():
    # The C++ call path keeps the GIL across a brief run (Executable.brief): a plan of at most
    # 2**14 elements with no loop, collective or host callback, outside the reference interpreter
    # (which waits for its inputs). Everything else releases it.
    assert _core.compile(selu_graph(1 << 14)).brief  # (one fused kernel over 2**14 elements)
    assert _core.compile(selu_graph((1 << 14) + 1)).brief is False
    assert _core.compile(selu_graph(2000), reference=True).brief is False
    b = B()
    x = b.param((3,))
    cb = _core.register_callback(lambda args: None)
    try:
        b.g.add("host_callback", [x], {"callback_id": cb})
        assert _core.compile(b.done(b.neg(x))).brief is False
    finally:
        _core.unregister_callback(cb)
    ti, tf = ((), "int32"), ((4,), "float32")
    cond = _branch(lambda b, i, x: [b.lt(i, b.const(10, "int32"))], ti, tf)
    body = _branch(lambda b, i, x: [b.add(i, b.const(1, "int32")), x], ti, tf)
    b = B()
    i0, x0 = b.param((), "int32"), b.param((4,))
    assert _core.compile(b.done(*b.g.add_subgraph_op("while", [i0, x0], {}, [cond, body]))).brief is False


def test_constant_rules():
    b = B()
    with pytest.raises(ValueError, match="exactly one of"):
        b.g.add("constant", [], {"dtype": "float32"})
    with pytest.raises(ValueError, match="needs 8"):
        b.g.add("constant", [], {"dtype": "float32", "shape": [2], "data": b"abc"})
    with pytest.raises(ValueError, match="not a dtype"):
        b.g.add("constant", [], {"dtype": "float33", "value": 1})
