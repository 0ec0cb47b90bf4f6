"""The CPU's fused programs: fma with one-value operands reads them once (fused_loops.cpp), a bitcast
between types of one size is no step (its readers read its operand's tile; fused_lower.cpp), and a
select of a comparison, times one value, is one step. All must give the bits of the op-by-op kernels
(fuse=False)."""
import itertools

import numpy as np
import pytest

from core_util import to_core, to_numpy
from xjax import _core

N = 5003  # a few tiles and a partial one


def _run(build, inputs, fuse):
    g = _core.Graph()
    params = [g.parameter(x.shape, str(x.dtype)) for x in inputs]
    g.set_outputs(build(g, *params))
    exe = _core.compile(g, fuse=fuse)
    return [to_numpy(r) for r in exe.run([to_core(x) for x in inputs])], exe


def _fused_and_alone(build, inputs):
    fused, exe = _run(build, inputs, True)
    alone, _ = _run(build, inputs, False)
    assert exe.num_kernels == 1, exe.plan_text()
    return fused, alone, exe.plan_text()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("scalars", [s for s in itertools.product([False, True], repeat=3) if not all(s)])
def test_fma_with_one_value_operands_is_the_kernels(dtype, scalars):
    rng = np.random.default_rng(3)
    vals = [rng.standard_normal(N).astype(dtype) * 1e3 for _ in range(3)]
    vals[0][:4] = [np.nan, np.inf, 1e-40, -0.0]  # (a subnormal reads as zero)
    ops = [v[:1].reshape(()) if s else v for v, s in zip(vals, scalars)]

    def build(g, a, b, c):
        # neg(fma(...)): fused with a step after it; one-value operands broadcast inside the kernel
        args = [g.add("broadcast_in_dim", [x], {"shape": [N], "broadcast_dimensions": []})[0] if s else x
                for x, s in zip((a, b, c), scalars)]
        return g.add("neg", g.add("fma", args, {}), {})

    fused, alone, _ = _fused_and_alone(build, ops)
    np.testing.assert_array_equal(fused[0].view(f"uint{8 * np.dtype(dtype).itemsize}"),
                                  alone[0].view(f"uint{8 * np.dtype(dtype).itemsize}"))
    a, b, c = (np.broadcast_to(v, N).astype(np.float64) for v in ops)
    want, scale = -(a * b + c), np.abs(a * b) + np.abs(c)
    ok = np.isfinite(want) & (np.abs(a) > 1e-30)
    eps = np.finfo(dtype).eps
    assert (np.abs(fused[0][ok] - want[ok]) <= eps * scale[ok]).all()


def test_bitcast_is_no_step_and_keeps_the_bits():
    x = np.arange(N, dtype=np.uint32) * np.uint32(2654435761)

    def build(g, u):
        def const(v):
            c = g.add("constant", [], {"value": v, "dtype": "uint32", "shape": []})[0]
            return g.add("broadcast_in_dim", [c], {"shape": [N], "broadcast_dimensions": []})[0]
        nine, one = const(9), const(0x3F800000)
        bits = g.add("bitwise_or", [g.add("shift_right_logical", [u, nine], {})[0], one], {})[0]
        f = g.add("bitcast_convert_type", [bits], {"new_dtype": "float32"})[0]
        back = g.add("bitcast_convert_type", [g.add("neg", [f], {})[0]], {"new_dtype": "int32"})[0]
        return [f, g.add("add", [back, back], {})[0], bits]  # the bitcast stored, read, and its operand stored

    fused, alone, plan = _fused_and_alone(build, [x])
    assert "bitcast" not in plan.split("{", 1)[1], plan
    for f, a in zip(fused, alone):
        np.testing.assert_array_equal(f.view(np.uint32), a.view(np.uint32))
    want = ((x >> 9) | np.uint32(0x3F800000)).view(np.float32)
    np.testing.assert_array_equal(fused[0], want)
    np.testing.assert_array_equal(fused[1], (-want).view(np.int32) * 2)


def test_bitcast_of_a_wider_type_is_unchanged():
    x = np.arange(N, dtype=np.uint64)

    def build(g, u):
        return [g.add("neg", [g.add("bitcast_convert_type", [u], {"new_dtype": "float64"})[0]], {})[0]]

    fused, alone, _ = _fused_and_alone(build, [x])
    np.testing.assert_array_equal(fused[0].view(np.uint64), alone[0].view(np.uint64))
    np.testing.assert_array_equal(fused[0], -x.view(np.float64))


def test_merged_steps_leave_no_dead_loads():
    # random bits: threefry2x32's packed words split by a shift by 32 (a filled constant) and xor-ed,
    # merged into one step that no longer reads the constant
    import re
    import xjax

    f = xjax.jit(lambda k: xjax.random.normal(k, (N,)))
    key = xjax.random.PRNGKey(1)
    f(key)
    plan = f.lower(key).compile()._entry.call.program.exe.plan_text()
    body = plan.split("{", 1)[1].split("}", 1)[0]
    loaded = set(re.findall(r"(\$\d+)=(?:fill|load|iota|gather)", body))
    read = set(re.findall(r"[(,](\$\d+)", body)) | set(re.findall(r"out\d+=(\$\d+)", body))
    assert "threefry2x32_xor" in body and loaded and loaded <= read, plan


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("cmp", ["eq", "ne", "lt", "le", "gt", "ge"])
@pytest.mark.parametrize("scalar_b,factor_first", [(True, True), (False, True), (True, False), (False, False)])
def test_a_scaled_select_is_one_step_with_the_kernels_bits(dtype, cmp, scalar_b, factor_first):
    """selu's `scale * where(x > 0, x, y)`: the multiply by one value folds into the select's step."""
    rng = np.random.default_rng(11)
    x, b, y = (rng.standard_normal(N).astype(dtype) for _ in range(3))
    x[:6] = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-40]
    y[6:9] = [np.nan, -np.inf, -0.0]
    b[::7] = x[::7]  # ties for eq / le / ge
    bv = b[:1].reshape(()) if scalar_b else b

    def build(g, x, b, y):
        def one(v):
            c = g.add("constant", [], {"value": v, "dtype": dtype, "shape": []})[0]
            return g.add("broadcast_in_dim", [c], {"shape": [N], "broadcast_dimensions": []})[0]
        bb = g.add("broadcast_in_dim", [b], {"shape": [N], "broadcast_dimensions": []})[0] if scalar_b else b
        sel = g.add("select_n", [g.add(cmp, [x, bb], {})[0], y, x], {})[0]
        k = one(1.0507009873554805)
        return [g.add("mul", [k, sel] if factor_first else [sel, k], {})[0]]

    fused, alone, plan = _fused_and_alone(build, [x, bv, y])
    assert "_scaled(" in plan and "mul" not in plan.split("{", 1)[1], plan
    u = f"uint{8 * np.dtype(dtype).itemsize}"
    np.testing.assert_array_equal(fused[0].view(u), alone[0].view(u))
    ops = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
           "ge": np.greater_equal}
    want = np.where(ops[cmp](x, np.broadcast_to(bv, N)), x, y) * np.array(1.0507009873554805, dtype)
    want = np.where(np.abs(want) < np.finfo(dtype).tiny, np.copysign(0, want), want)  # (the CPU flushes subnormals)
    np.testing.assert_array_equal(fused[0], want.astype(dtype))


def test_a_select_read_elsewhere_keeps_its_multiply():
    x = np.linspace(-3, 3, N).astype(np.float32)

    def build(g, x):
        zero = g.add("broadcast_in_dim", [g.add("constant", [], {"value": 0.0, "dtype": "float32", "shape": []})[0]],
                     {"shape": [N], "broadcast_dimensions": []})[0]
        sel = g.add("select_n", [g.add("gt", [x, zero], {})[0], zero, x], {})[0]
        return [g.add("mul", [zero, sel], {})[0], sel]  # the select is an output too

    fused, alone, plan = _fused_and_alone(build, [x])
    assert "_scaled" not in plan and "mul" in plan.split("{", 1)[1], plan
    for f, a in zip(fused, alone):
        np.testing.assert_array_equal(f, a)
