"""Scans whose products read a loop-invariant matrix transposed get that matrix transposed once
before the loop (lax/loop_layouts.py): the results against NumPy and a Python loop, grads checked
in x64, and the lowered graph, which must show the transpose outside the loop."""
import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax import lax
from xjax._src.interpreters.graph_text import graph_text
from xjax.test_util import check_grads

RNG = np.random.default_rng(0)


def _arrays(*shapes, dtype=np.float64):
    return [jnp.asarray(RNG.normal(size=s).astype(dtype) * 0.3) for s in shapes]


def rhs_transposed(w, h0, xs, reverse=False):  # h @ w.T: the rhs contracted along its columns
    def cell(h, x):
        h = jnp.tanh((h @ w.T) @ w * 0.5 + x)
        return h, jnp.sum(h)
    return lax.scan(cell, h0, xs, reverse=reverse)


def lhs_transposed(w, h0, xs, reverse=False):  # w.T @ h: the lhs contracted along its rows
    def cell(h, x):
        h = jnp.sin(lax.dot_general(w, h, (((0,), (0,)), ((), ()))) + x)
        return h, h[0]
    return lax.scan(cell, h0, xs, reverse=reverse)


def both_ways(w, h0, xs, reverse=False):  # w read as it is and transposed, in one body
    def cell(h, x):
        h = jnp.tanh(h @ w + (h @ w.T) * 0.5 + x)
        return h, h
    return lax.scan(cell, h0, xs, reverse=reverse)


def python_loop(fn, w, h0, xs, reverse=False):
    """The same body applied step by step in NumPy (float64)."""
    h, ys = np.asarray(h0), []
    w, xs = np.asarray(w), np.asarray(xs)
    order = range(len(xs) - 1, -1, -1) if reverse else range(len(xs))
    for t in order:
        h, y = fn(w, h, xs[t])
        ys.append(y)
    if reverse:
        ys.reverse()
    return h, np.stack(ys)


NUMPY_CELLS = {
    rhs_transposed: lambda w, h, x: (lambda n: (n, n.sum()))(np.tanh((h @ w.T) @ w * 0.5 + x)),
    lhs_transposed: lambda w, h, x: (lambda n: (n, n[0]))(np.sin(w.T @ h + x)),
    both_ways: lambda w, h, x: (lambda n: (n, n))(np.tanh(h @ w + (h @ w.T) * 0.5 + x)),
}
SHAPES = {rhs_transposed: ((6, 5), (3, 5), (7, 3, 5)), lhs_transposed: ((4, 4), (4, 3), (7, 4, 3)),
          both_ways: ((5, 5), (2, 5), (6, 2, 5))}


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("fn", list(NUMPY_CELLS), ids=lambda f: f.__name__)
def test_results_match_a_python_loop(x64, fn, reverse):
    w, h0, xs = _arrays(*SHAPES[fn])
    h, ys = jax.jit(lambda *a: fn(*a, reverse=reverse))(w, h0, xs)
    rh, rys = python_loop(NUMPY_CELLS[fn], w, h0, xs, reverse)
    np.testing.assert_allclose(h, rh, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ys, rys, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("fn", list(NUMPY_CELLS), ids=lambda f: f.__name__)
def test_grads(x64, fn, reverse):
    w, h0, xs = _arrays(*SHAPES[fn])

    def loss(w, h0, xs):
        h, ys = fn(w, h0, xs, reverse=reverse)
        return jnp.sum(h * h) + jnp.sum(jnp.cos(ys))
    check_grads(loss, (w, h0, xs), order=2, modes=["fwd", "rev"])


def test_rnn_grad_float32_matches_float64():
    w, wx, xs = _arrays((16, 16), (8, 16), (20, 4, 8), dtype=np.float32)

    def loss(w, wx, xs):
        def cell(h, x):
            h = jnp.tanh(h @ w + x @ wx)
            return h, jnp.sum(h * h)
        h, ys = lax.scan(cell, jnp.zeros((4, 16), xs.dtype), xs)
        return jnp.sum(ys) + jnp.sum(h)
    got = jax.jit(jax.grad(loss, argnums=(0, 1)))(w, wx, xs)
    with jax.enable_x64(True):
        want = jax.jit(jax.grad(loss, argnums=(0, 1)))(*(jnp.asarray(np.asarray(a, np.float64)) for a in (w, wx, xs)))
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5 * np.abs(b).max())


def test_vmapped_and_nested_scans(x64):
    w, h0, xs = _arrays((6, 5), (3, 2, 5), (4, 6, 2, 5))

    def inner(w, h0, xs):
        return rhs_transposed(w, h0, xs)[0]

    def nested(w, h0, xss):  # an outer scan whose body scans with the const read transposed
        return lax.scan(lambda h, xs: (inner(w, h, xs), jnp.sum(h)), h0, xss)

    batched = jax.jit(jax.vmap(nested, in_axes=(None, 0, None)))(w, h0, xs)
    for b in range(3):
        h, s = nested(w, h0[b], xs)
        np.testing.assert_allclose(batched[0][b], h, rtol=1e-12)
        np.testing.assert_allclose(batched[1][b], s, rtol=1e-12)
        rh = np.asarray(h0[b])
        for t in range(4):
            rh = python_loop(NUMPY_CELLS[rhs_transposed], w, rh, xs[t])[0]
        np.testing.assert_allclose(h, rh, rtol=1e-12)
    check_grads(lambda w, h0: jnp.sum(nested(w, h0, xs)[0]), (w, h0[0]), order=1, modes=["rev"])


def _body_and_outside(text):
    """(the lines of the graph before its first loop, the lines from there on)."""
    before, _, rest = text.partition("func @region")
    return before.splitlines(), rest.splitlines()


def test_the_transpose_is_made_once_before_the_loop():
    w, h0, xs = _arrays((6, 5), (3, 5), (7, 3, 5), dtype=np.float32)
    text = graph_text(jax.make_jaxpr(lambda *a: rhs_transposed(*a))(w, h0, xs), "f")
    outside, inside = _body_and_outside(text)
    assert any("= transpose(" in ln for ln in outside), text
    dots = [ln for ln in inside if "dot_general(" in ln]
    assert len(dots) == 2 and all("rhs_contracting_dimensions=[0]" in ln for ln in dots), text


def test_a_scan_of_one_step_or_per_step_operands_is_left_alone():
    w, h0, xs = _arrays((6, 5), (3, 5), (1, 3, 5), dtype=np.float32)
    text = graph_text(jax.make_jaxpr(lambda *a: rhs_transposed(*a))(w, h0, xs), "f")
    outside, inside = _body_and_outside(text)
    assert not any("transpose(" in ln for ln in outside) and any("transpose(" in ln for ln in inside), text
    # The matrix is scanned (a different one each step): nothing is loop invariant.
    ws = _arrays((4, 5, 5), dtype=np.float32)[0]
    text = graph_text(jax.make_jaxpr(lambda ws, h0: lax.scan(lambda h, w: (h @ w.T, None), h0, ws))(
        ws, jnp.zeros((3, 5), np.float32)), "f")
    assert not any("transpose(" in ln for ln in _body_and_outside(text)[0]), text


def test_both_operands_read_transposed(x64):
    # dot_general(a, b) contracting a's rows and b's columns: both consts get their transposes.
    a, b, h0, xs = _arrays((4, 5), (5, 4), (3, 5), (6, 3, 5))

    def f(a, b, h0, xs):
        def cell(h, x):
            m = lax.dot_general(a, b, (((0,), (1,)), ((), ())))  # a.T @ b.T
            return jnp.tanh(h @ m + x), None
        return lax.scan(cell, h0, xs)[0]
    h = np.asarray(h0)
    for t in range(len(xs)):
        h = np.tanh(h @ (np.asarray(a).T @ np.asarray(b).T) + np.asarray(xs[t]))
    np.testing.assert_allclose(jax.jit(f)(a, b, h0, xs), h, rtol=1e-12, atol=1e-12)
    check_grads(f, (a, b, h0, xs), order=1, modes=["rev"])
    text = graph_text(jax.make_jaxpr(f)(a, b, h0, xs), "f")
    outside, inside = _body_and_outside(text)
    assert sum("= transpose(" in ln for ln in outside) == 2, text
    dot = next(ln for ln in inside if "dot_general(" in ln and "float64[5,5]" in ln.split("=")[0])
    assert "lhs_contracting_dimensions=[1]" in dot and "rhs_contracting_dimensions=[0]" in dot, text
