"""The pack_loops pass (src/core/compiler/pack_carries.cpp): a loop's carries of one type computed alike
become the lanes of one carried array, computed by array ops over all lanes. Each result keeps its bits
(against the same graph compiled without the pass, and any thread count), the plans lose their per-leaf
work, and grads of such scans are checked in x64 and against Python loops."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xjax as jax
import xjax.numpy as jnp
from core_util import to_core, to_numpy
from isolated import digests_by_thread_count
from xjax import _core
from xjax._src.interpreters.graph_lowering import lower_closed_jaxpr
from xjax.test_util import check_grads

WITHOUT = ["simplify", "dot_reduce", "fold", "simplify", "cse", "dce", "contract", "fold", "dce"]  # the default passes but pack_loops


def graph_of(f, *args):
    graph, outs, ext, _ = lower_closed_jaxpr(jax.make_jaxpr(f)(*args))
    assert not ext
    graph.set_outputs(list(outs))
    return graph


def run(graph, args, **options):
    exe = _core.compile(graph, **options)
    flat = [np.asarray(a) for a in jax.tree_util.tree_leaves(args)]
    return [to_numpy(r) for r in exe.run([to_core(a) for a in flat])], exe


def assert_same_bits(f, *args):
    """f's graph compiled with pack_loops against it compiled without (bit for bit), and against the
    reference interpreter running the unoptimised graph."""
    g = graph_of(f, *args)
    got, exe = run(g, args)
    plain, _ = run(g, args, passes=WITHOUT)
    ref, _ = run(g, args, reference=True, passes=[])
    for a, b, c in zip(got, plain, ref):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), (a, b)
        wide = np.complex128 if np.iscomplexobj(a) else np.float64
        # (the reference rounds every multiply-add twice, the compiled graph once: mixed_loss's
        # d * d * 0.5 + c squares the difference through 9 steps, up to 2^9 ulp)
        np.testing.assert_allclose(a.astype(wide), c.astype(wide), rtol=3e-5, atol=1e-6)
    return got, exe


def loop_inputs(exe):
    """The operand count of each while step of the plan (the outer plan's, in order)."""
    return [ln.split(" in(")[1].split(")")[0].count("%") for ln in exe.plan_text().splitlines()
            if ln.startswith("step ") and "while [" in ln]


def body_steps(exe):
    """The steps of each loop body in the plan."""
    bodies = []
    for part in exe.plan_text().split("  subplan 1:\n")[1:]:
        lines = []
        for ln in part.splitlines():
            if not ln.startswith("    "):
                break
            lines.append(ln.strip())
        bodies.append([ln for ln in lines if ln.startswith("step ")])
    return bodies


def many_scalars_loss(ws):
    def body(carry, x):
        return tuple(c * w + x for c, w in zip(carry, ws)), None
    carry, _ = jax.lax.scan(body, tuple(jnp.float32(1.0) for _ in ws), jnp.linspace(0.0, 1.0, 200))
    return sum(jnp.tanh(c) for c in carry)


def test_a_scan_over_many_scalars_carries_one_array_per_group():
    ws = tuple(jnp.float32(0.5 + 0.001 * i) for i in range(64))
    got, exe = assert_same_bits(jax.grad(many_scalars_loss), ws)
    # forward: counter, ws, cs, xs, residuals; backward: counter, ws, cotangents, grads, residuals
    assert loop_inputs(exe) == [5, 5], exe.plan_text()
    for steps in body_steps(exe):
        assert len(steps) <= 2 and not any("concatenate" in s or "kernel [slice" in s for s in steps), steps
        assert any("n=64 " in s for s in steps), steps  # one kernel over all the lanes
    # eager: each op on its own (no loop packing; and outside the loop no multiply-add contracted,
    # as in JAX's eager ops)
    want = jax.grad(many_scalars_loss)(ws)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


def mixed_loss(ws, vs, reverse=False, unroll=1, length=9):
    """Carries of several types: float32 scalars (two groups computed differently), float32 vectors, int32
    counters passed through or counted, and per-step ys of one leaf."""
    def body(carry, x):
        cs, ds, vcs, ks = carry
        cs = tuple(jnp.sin(c) * w + x for c, w in zip(cs, ws))
        ds = tuple(d * d * 0.5 + c for d, c in zip(ds, cs))
        vcs = tuple(jnp.tanh(v * vc) + x for v, vc in zip(vs, vcs))
        ks = tuple(k + 1 for k in ks)
        return (cs, ds, vcs, ks), cs[0] * x + jnp.sum(vcs[1])
    dt = ws[0].dtype
    init = (tuple(jnp.asarray(0.1 * j, dt) for j in range(len(ws))), tuple(jnp.asarray(0.2, dt) for _ in ws),
            tuple(jnp.ones_like(v) for v in vs), tuple(jnp.int32(j) for j in range(5)))
    xs = jnp.linspace(0.0, 1.0, length, dtype=ws[0].dtype)
    (cs, ds, vcs, ks), ys = jax.lax.scan(body, init, xs, reverse=reverse, unroll=unroll)
    out = sum(jnp.tanh(c) + d for c, d in zip(cs, ds)) + sum(jnp.sum(v) for v in vcs) + jnp.sum(ys * ys)
    return out + sum(ks).astype(out.dtype)


def mixed_args(dtype=np.float32, k=6):
    ws = tuple(jnp.asarray(dtype(0.5 + 0.05 * j)) for j in range(k))
    vs = tuple(jnp.asarray(np.linspace(0.1, 0.9, 3).astype(dtype) + j) for j in range(5))
    return ws, vs


@pytest.mark.parametrize("reverse,unroll", [(False, 1), (True, 1), (False, 2), (True, 3)])
def test_loops_over_mixed_carries_keep_their_bits(reverse, unroll):
    ws, vs = mixed_args()
    assert_same_bits(lambda ws, vs: mixed_loss(ws, vs, reverse, unroll), ws, vs)
    _, exe = assert_same_bits(jax.grad(lambda ws, vs: mixed_loss(ws, vs, reverse, unroll), argnums=(0, 1)), ws, vs)
    assert all(n < 20 for n in loop_inputs(exe)), exe.plan_text()  # (56 and more per leaf)


@pytest.mark.parametrize("reverse", [False, True])
def test_grads_of_scans_over_mixed_carries(x64, reverse):
    ws, vs = mixed_args(np.float64)
    check_grads(lambda ws, vs: mixed_loss(ws, vs, reverse, 2), (ws, vs), order=1, modes=["rev"])


def python_loop_loss(ws, vs, length=9):
    """mixed_loss with the scan written out as a Python loop (nothing for pack_loops to pack)."""
    cs, ds = tuple(jnp.float64(0.1 * j) for j in range(len(ws))), tuple(jnp.float64(0.2) for _ in ws)
    vcs, total = tuple(jnp.ones_like(v) for v in vs), 0.0
    for x in np.linspace(0.0, 1.0, length):
        cs = tuple(jnp.sin(c) * w + x for c, w in zip(cs, ws))
        ds = tuple(d * d * 0.5 + c for d, c in zip(ds, cs))
        vcs = tuple(jnp.tanh(v * vc) + x for v, vc in zip(vs, vcs))
        y = cs[0] * x + jnp.sum(vcs[1])
        total = total + y * y
    return sum(jnp.tanh(c) + d for c, d in zip(cs, ds)) + sum(jnp.sum(v) for v in vcs) + total


def test_grad_of_a_packed_scan_matches_a_python_loop(x64):
    ws, vs = mixed_args(np.float64)
    got = jax.jit(jax.grad(mixed_loss, argnums=(0, 1)))(ws, vs)
    want = jax.grad(python_loop_loss, argnums=(0, 1))(ws, vs)
    for a, b in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12)


def test_lanes_that_differ_stay_apart():
    """Carries whose new values are not computed alike in every lane (deeper than their last op), swapped
    carries, and carries the condition reads: results as without the pass."""
    def f(a, b):
        def body(carry):
            i, cs, sw = carry
            cs = tuple(c * (0.5 if j % 2 else 0.25) + 1.0 for j, c in enumerate(cs))  # constants differ
            return i + 1, cs, sw[1:] + sw[:1]
        def cond(carry):
            return carry[0] < 7
        return jax.lax.while_loop(cond, body, (jnp.int32(0), a, b))
    a = tuple(jnp.float32(j) for j in range(6))
    b = tuple(jnp.float32(-j) for j in range(5))
    got, exe = assert_same_bits(f, a, b)
    np.testing.assert_array_equal(np.stack(got[7:]), np.float32([-2, -3, -4, 0, -1]))


def test_complex_and_integer_lanes():
    def f(zs, ns):
        def body(carry, x):
            zs, ns = carry
            return (tuple(z * z * 0.5 + x for z in zs), tuple(n * 3 + 1 for n in ns)), None
        (zs, ns), _ = jax.lax.scan(body, (zs, ns), jnp.arange(4, dtype=jnp.float32))
        return zs, ns
    zs = tuple(jnp.complex64(0.1 * j + 0.2j) for j in range(5))
    ns = tuple(jnp.int32(j) for j in range(7))
    got, exe = assert_same_bits(f, zs, ns)
    assert loop_inputs(exe) == [4], exe.plan_text()  # counter, xs and two packed groups


def test_few_carries_are_left_alone():
    def f(cs):
        return jax.lax.fori_loop(0, 5, lambda i, cs: tuple(c * 1.5 for c in cs), cs)
    _, exe = assert_same_bits(f, tuple(jnp.float32(j) for j in range(3)))
    assert loop_inputs(exe) == [5], exe.plan_text()


def test_the_pass_alone_gives_a_valid_graph():
    ws = tuple(jnp.float32(0.5 + 0.01 * i) for i in range(8))
    g = graph_of(jax.grad(many_scalars_loss), ws)
    packed = g.optimized(["pack_loops", "verify"])
    got, _ = run(packed, ws, reference=True, passes=[])
    assert "concatenate" in packed.text()  # the ws packed once before the loops
    want, _ = run(g, ws, reference=True, passes=[])
    np.testing.assert_array_equal(np.stack(got), np.stack(want))


def test_packed_loops_have_the_same_bits_for_any_thread_count():
    code = """
        import hashlib
        import numpy as np
        import xjax as jax, xjax.numpy as jnp
        def loss(ws, vs):
            def body(carry, x):
                cs, vcs = carry
                cs = tuple(jnp.sin(c) * w + x for c, w in zip(cs, ws))
                vcs = tuple(jnp.tanh(v * vc) + x for v, vc in zip(vs, vcs))
                return (cs, vcs), cs[0] * x
            (cs, vcs), ys = jax.lax.scan(body, (tuple(jnp.float32(0.3) for _ in ws), vs), jnp.linspace(0, 1, 50))
            return sum(jnp.tanh(c) for c in cs) + sum(jnp.sum(v) for v in vcs) + jnp.sum(ys)
        ws = tuple(jnp.float32(0.5 + 0.01 * i) for i in range(40))
        vs = tuple(jnp.asarray(np.linspace(0, 1, 3000).astype(np.float32) + i) for i in range(6))
        out = jax.tree_util.tree_leaves(jax.jit(jax.grad(loss, argnums=(0, 1)))(ws, vs))
        print(hashlib.sha1(b"".join(np.asarray(o).tobytes() for o in out)).hexdigest())
    """
    one, three = digests_by_thread_count(code)
    assert one == three


def test_large_carries_are_left_alone():
    """Lanes of more than 2^16 elements stay carries of their own (a lane read elsewhere would be read strided)."""
    def f(cs):
        return jax.lax.fori_loop(0, 2, lambda i, cs: tuple(c * 1.5 + 1.0 for c in cs), cs)
    big = tuple(jnp.full((300, 300), float(j), jnp.float32) for j in range(4))
    _, exe = assert_same_bits(f, big)
    assert loop_inputs(exe) == [6], exe.plan_text()
    small = tuple(jnp.full((30, 30), float(j), jnp.float32) for j in range(4))
    _, exe = assert_same_bits(f, small)
    assert loop_inputs(exe) == [3], exe.plan_text()


@settings(max_examples=12, derandomize=True, database=None, deadline=None)
@given(k=st.integers(4, 9), shape=st.sampled_from([(), (2,), (2, 3)]), dtype=st.sampled_from(["float32", "int32"]),
       kinds=st.integers(1, 3), reverse=st.booleans(), unroll=st.integers(1, 3))
def test_random_loops_over_many_leaves_keep_their_bits(k, shape, dtype, kinds, reverse, unroll):
    """Leaves computed in `kinds` different ways (leaf j by way j % kinds), read back by ys and passed
    through: the packed plan's bits are the unpacked one's."""
    def f(cs, ws):
        def body(carry, x):
            cs, ws = carry
            x = x.astype(dtype)
            ways = [lambda c, w: c * w + x, lambda c, w: jnp.maximum(c, w) - x, lambda c, w: (c + 1) * (w - x)]
            new = tuple(ways[j % kinds](c, w) for j, (c, w) in enumerate(zip(cs, ws)))
            return (new, ws), new[j_y] + x
        j_y = k // 2
        return jax.lax.scan(body, (cs, ws), jnp.arange(5), reverse=reverse, unroll=unroll)
    rng = np.random.default_rng(k)
    cs = tuple(jnp.asarray(rng.integers(-3, 4, shape).astype(dtype)) for _ in range(k))
    ws = tuple(jnp.asarray(rng.integers(-2, 3, shape).astype(dtype)) for _ in range(k))
    assert_same_bits(f, cs, ws)
