"""Grads of scans whose carry holds many leaves: the residuals are stored and read through windows of
fused kernels (tests/test_compiler_windows.py), so the loop bodies have no per-leaf steps; the grads
are checked in x64 and their bits do not depend on the thread count."""
import pytest

import xjax as jax
import xjax.numpy as jnp
from isolated import digests_by_thread_count
from xjax import _core
from xjax._src.interpreters.graph_lowering import lower_closed_jaxpr
from xjax.test_util import check_grads


def many_leaves_loss(ws, length=20, reverse=False):
    def body(carry, x):
        new = tuple(jnp.sin(c) * w + x for c, w in zip(carry, ws))
        return new, carry[0] * x
    init = tuple(jnp.ones((), ws[0].dtype) * (1 + 0.1 * j) for j in range(len(ws)))
    carry, ys = jax.lax.scan(body, init, jnp.linspace(0.0, 1.0, length, dtype=ws[0].dtype), reverse=reverse)
    return sum(jnp.tanh(c) for c in carry) + jnp.sum(ys * ys)


def plan_text(f, *args):
    graph, outs, _, _ = lower_closed_jaxpr(jax.make_jaxpr(f)(*args))
    graph.set_outputs(list(dict.fromkeys(outs)))
    return _core.compile(graph).plan_text()


@pytest.mark.parametrize("reverse", [False, True])
def test_grad_of_a_scan_with_many_leaves(x64, reverse):
    ws = tuple(jnp.float64(0.5 + 0.01 * i) for i in range(12))
    check_grads(lambda *w: many_leaves_loss(w, reverse=reverse), ws, order=1, modes=["rev"])


def test_grad_of_a_scan_with_many_leaves_has_no_step_per_leaf():
    k = 32
    ws = tuple(jnp.float32(0.5 + 0.01 * i) for i in range(k))
    text = plan_text(jax.grad(lambda *w: many_leaves_loss(w)), *ws)
    loops = text.split("subplan 1:")[1:]
    assert len(loops) == 2, text  # the forward scan, then its transpose
    for body in loops:
        steps = [ln for ln in body.split("subplan 0:")[0].splitlines() if ln.strip().startswith("step ")]
        assert len(steps) < 10, steps  # (were more than k: a dynamic_update_slice or view per leaf)
        assert not any("kernel [dynamic_update_slice" in s or "view [" in s for s in steps), steps
    assert "window(out" in loops[0] and "window(in" in loops[1], text


def test_grad_of_a_scan_has_the_same_bits_for_any_thread_count():
    code = """
        import hashlib
        import numpy as np
        import xjax as jax, xjax.numpy as jnp
        rng = np.random.default_rng(2)
        wh = jnp.asarray((rng.normal(size=(64, 64)) * 0.1).astype(np.float32))
        wx = jnp.asarray((rng.normal(size=(32, 64)) * 0.1).astype(np.float32))
        xs = jnp.asarray(rng.normal(size=(30, 16, 32)).astype(np.float32))
        def loss(wh, wx, xs):
            def cell(h, x):
                h = jnp.tanh(h @ wh + x @ wx)
                return h, jnp.sum(h * h)
            h, ys = jax.lax.scan(cell, jnp.zeros((16, 64)), xs)
            return jnp.sum(ys) + jnp.sum(h)
        def many(ws):
            def body(carry, x):
                return tuple(c * w + x for c, w in zip(carry, ws)), None
            carry, _ = jax.lax.scan(body, tuple(jnp.float32(1.0) for _ in ws), jnp.linspace(0.0, 1.0, 200))
            return sum(jnp.tanh(c) for c in carry)
        out = list(jax.jit(jax.grad(loss, argnums=(0, 1)))(wh, wx, xs))
        out += list(jax.jit(jax.grad(many))(tuple(jnp.float32(0.5 + 0.001 * i) for i in range(64))))
        print(hashlib.sha1(b"".join(np.asarray(o).tobytes() for o in out)).hexdigest())
    """
    one, three = digests_by_thread_count(code)
    assert one == three
