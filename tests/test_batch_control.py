"""Batching rules of the primitives that hold jaxprs (jit, cond, while, scan, custom_jvp/custom_vjp,
remat) and of the debug callbacks, each against a Python loop over random shapes, batch axes and
dtypes, eagerly and under jit. Printed outputs were recorded from JAX 0.10.2."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from batching_util import check_batch
from xjax import lax
from xjax._src.interpreters import graph_lowering

SEEDS = range(6)


def _example(rng, shape, dtype):
    if np.issubdtype(dtype, np.floating):
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(-4, 5, shape).astype(dtype)


def _mapped(rng, shape, axis, size, dtype):
    """A value of per-example `shape` with a batch axis of `size` at `axis` (None: unmapped)."""
    if axis is None:
        return _example(rng, shape, dtype)
    a = axis % (len(shape) + 1)
    return _example(rng, shape[:a] + (size,) + shape[a:], dtype)


def _case(seed, n_args, dtypes=(np.float32, np.int32), unmapped_ok=True):
    """(rng, per-example shape, dtype, batch size, one batch axis per argument, the arguments)."""
    rng = np.random.default_rng(seed)
    shape = tuple(int(d) for d in rng.integers(1, 4, rng.integers(0, 3)))
    dtype = dtypes[seed % len(dtypes)]
    size = int(rng.integers(1, 5))
    choices = list(range(-len(shape) - 1, len(shape) + 1)) + ([None] if unmapped_ok else [])
    axes = [choices[rng.integers(len(choices))] for _ in range(n_args)]
    if all(a is None for a in axes):
        axes[0] = 0
    args = [_mapped(rng, shape, a, size, dtype) for a in axes]
    return rng, shape, dtype, size, tuple(axes), args


def _primitives(jaxpr):
    return [e.primitive.name for e in jaxpr.eqns]


# ---- jit ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("jit", [False, True])
def test_vmap_of_jit_against_loop(seed, jit):
    _, _, dtype, _, axes, args = _case(seed, 2)
    inner = xjax.jit(lambda x, y: (x * y + x, y - 1))
    check_batch(inner, args, in_axes=axes, jit=jit)


def test_vmapped_jit_is_one_jit_equation_and_nested_jit_stays_nested():
    g = xjax.jit(lambda x: jnp.sin(x) * 2.0)
    f = xjax.jit(lambda x, y: g(x) + y)
    closed = xjax.make_jaxpr(xjax.vmap(f, in_axes=(0, None)))(np.ones((3, 2), np.float32), np.float32(1))
    assert _primitives(closed.jaxpr) == ["jit"]
    inner = closed.jaxpr.eqns[0].params["jaxpr"].jaxpr
    assert _primitives(inner) == ["jit", "add"]
    assert inner.eqns[0].params["jaxpr"].jaxpr.invars[0].aval.shape == (3, 2)


@pytest.mark.parametrize("jit", [False, True])
def test_vmap_of_jit_closing_over_a_batched_value(jit):
    def f(c, x):
        return xjax.jit(lambda x: x * c + 1.0)(x)

    check_batch(f, [np.arange(6.0, dtype=np.float32).reshape(3, 2), np.float32(2)], in_axes=(1, None), jit=jit)


def test_vmapped_jit_compiles_once():
    f = xjax.jit(lambda x, y: jnp.exp(x) - y)
    vf = xjax.vmap(f, in_axes=(1, None))
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    first = np.asarray(vf(x, 1.0))
    compiles = graph_lowering.cache_info()["compiles"]
    for _ in range(3):
        np.testing.assert_array_equal(vf(x, 1.0), first)
    assert graph_lowering.cache_info()["compiles"] == compiles


# ---- cond and switch ------------------------------------------------------------------------------

def _branches(dtype):
    one = dtype(1)

    def true_fun(x, y):
        return x * y + one, y  # the second output is batched only where y is

    def false_fun(x, y):
        return x - y, x * 0 + one
    return true_fun, false_fun


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("jit", [False, True])
def test_cond_with_unbatched_predicate(seed, jit):
    _, _, dtype, _, axes, args = _case(seed, 2)
    t, f = _branches(dtype)
    for pred in (True, False):
        check_batch(lambda p, x, y: lax.cond(p, t, f, x, y), [np.bool_(pred), *args], in_axes=(None, *axes),
                    jit=jit)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("jit", [False, True])
def test_cond_with_batched_predicate_selects_per_example(seed, jit):
    rng, _, dtype, size, axes, args = _case(seed, 2)
    t, f = _branches(dtype)
    preds = rng.integers(0, 2, size).astype(bool)
    check_batch(lambda p, x, y: lax.cond(p, t, f, x, y), [preds, *args], in_axes=(0, *axes), jit=jit)


@pytest.mark.parametrize("jit", [False, True])
def test_switch_with_batched_index_clamps_per_example(jit):
    branches = [lambda x: x + 1.0, lambda x: x * 3.0, lambda x: -x]
    idx = np.array([-1, 0, 1, 2, 5], np.int32)
    x = np.arange(10.0, dtype=np.float32).reshape(2, 5)
    check_batch(lambda i, x: lax.switch(i, branches, x), [idx, x], in_axes=(0, 1), jit=jit)
    check_batch(lambda i, x: lax.switch(i, branches, x), [np.int32(1), x], in_axes=(None, 1), jit=jit)


def test_cond_with_batched_predicate_runs_every_branch(capsys):
    def f(p, x):
        def t(x):
            xjax.debug.print("true {x}", x=x)
            return x + 1

        def fl(x):
            xjax.debug.print("false {x}", x=x)
            return x - 1
        return lax.cond(p, t, fl, x)

    got = xjax.vmap(f)(np.array([True, False]), np.array([1.0, 2.0], np.float32))
    np.testing.assert_array_equal(got, [2.0, 1.0])
    # JAX 0.10.2 prints exactly this: branch 0 (false) runs first, on every example.
    assert capsys.readouterr().out == "false 1.0\nfalse 2.0\ntrue 1.0\ntrue 2.0\n"


def test_grad_of_vmapped_cond_ignores_the_branch_not_taken():
    # sqrt's derivative at -1 is nan: it must not leak into the example that takes the other branch.
    f = lambda x: lax.cond(x > 0, jnp.sqrt, lambda v: v * 0.0, x)  # noqa: E731
    g = xjax.grad(lambda xs: xjax.vmap(f)(xs).sum())(np.array([-1.0, 4.0], np.float32))
    np.testing.assert_allclose(g, [0.0, 0.25])
    np.testing.assert_allclose(xjax.vmap(xjax.grad(f))(np.array([-1.0, 4.0], np.float32)), [0.0, 0.25])


# ---- while_loop and fori_loop -------------------------------------------------------------------

def _doubling_loop(n, x, c):
    """Carries (count, x, acc): doubles x until count reaches n, accumulating c (a closed-over const)."""
    def body(carry):
        i, v, acc = carry
        return i + 1, v * 2 + 1, acc + c
    return lax.while_loop(lambda carry: carry[0] < n, body, (0, x, x * 0))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("jit", [False, True])
def test_while_with_unbatched_predicate(seed, jit):
    # The accumulator starts unbatched and becomes batched through the body (the carry fixpoint).
    _, _, dtype, _, axes, args = _case(seed, 2)
    check_batch(lambda x, c: _doubling_loop(3, x, c), args, in_axes=axes, jit=jit)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("jit", [False, True])
def test_while_with_batched_predicate_runs_until_every_example_is_done(seed, jit):
    rng, _, dtype, size, axes, args = _case(seed, 2)
    bounds = rng.integers(0, 5, size).astype(np.int32)
    check_batch(_doubling_loop, [bounds, *args], in_axes=(0, *axes), jit=jit)


def test_while_with_batched_predicate_runs_the_body_on_finished_examples(capsys):
    def w(n, x):
        def body(c):
            xjax.debug.print("body {c}", c=c)
            return c * 2
        return lax.while_loop(lambda c: c < n, body, x)

    got = xjax.vmap(w)(np.array([3.0, 10.0], np.float32), np.array([1.0, 2.0], np.float32))
    np.testing.assert_array_equal(got, [4.0, 16.0])
    # JAX 0.10.2: the body runs on every example until all are done (finished ones are not updated).
    assert capsys.readouterr().out == "body 1.0\nbody 2.0\nbody 2.0\nbody 4.0\nbody 4.0\nbody 8.0\n"


@pytest.mark.parametrize("jit", [False, True])
def test_fori_loop_with_batched_and_static_bounds(jit):
    x = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    body = lambda i, c: c * 2.0 + i  # noqa: E731
    check_batch(lambda n, x: lax.fori_loop(0, n, body, x), [np.array([0, 1, 3], np.int32), x], jit=jit)
    check_batch(lambda x: lax.fori_loop(1, 4, body, x), [x], in_axes=1, jit=jit)


# ---- scan ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("jit", [False, True])
def test_scan_batches_consts_carries_and_xs(seed, jit):
    rng, shape, dtype, size, (ca, ia, xa), _ = _case(seed, 3)
    length = int(rng.integers(0, 4))
    const = _mapped(rng, shape, ca, size, dtype)
    init = _mapped(rng, shape, ia, size, dtype)
    xs_axis = None if xa is None else (xa + 1 if xa >= 0 else xa)  # the per-example xs have the scan axis in front
    xs = _mapped(rng, (length, *shape), xs_axis, size, dtype) if xa is not None else \
        _example(rng, (length, *shape), dtype)
    reverse = bool(rng.integers(0, 2))

    def f(c, init, xs):
        def step(carry, x):
            a, b = carry
            return (a + x * c, b + 1), a - x
        return lax.scan(step, (init, init * 0), xs, reverse=reverse)

    check_batch(f, [const, init, xs], in_axes=(ca, ia, xs_axis), jit=jit)


# ---- custom_jvp, custom_vjp ---------------------------------------------------------------------

@xjax.custom_jvp
def _softplus(x, s):
    return jnp.log1p(jnp.exp(x * s))


@_softplus.defjvp
def _softplus_jvp(primals, tangents):
    x, s = primals
    dx, ds = tangents
    sig = 1.0 / (1.0 + jnp.exp(-x * s))
    return _softplus(x, s), sig * (dx * s + ds * x)


@xjax.custom_vjp
def _scaled_sin(x, w):
    return jnp.sin(x) * w


def _scaled_sin_fwd(x, w):
    return _scaled_sin(x, w), (jnp.cos(x), jnp.sin(x), w)


def _scaled_sin_bwd(res, ct):
    c, s, w = res
    return c * w * ct, s * ct


_scaled_sin.defvjp(_scaled_sin_fwd, _scaled_sin_bwd)


@pytest.mark.parametrize("fun", [_softplus, _scaled_sin], ids=["custom_jvp", "custom_vjp"])
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("jit", [False, True])
def test_custom_functions_and_their_gradients(fun, seed, jit):
    _, _, _, _, axes, args = _case(seed, 2, dtypes=(np.float32,))
    check_batch(fun, args, in_axes=axes, jit=jit, rtol=1e-5)
    pullback = lambda x, s: xjax.vjp(fun, x, s)[1](jnp.ones_like(x))  # noqa: E731
    check_batch(pullback, args, in_axes=axes, jit=jit, rtol=1e-5)
    check_batch(xjax.vmap(fun), [a[None] for a in args], in_axes=tuple(None if a is None else a + (a >= 0)
                                                                       for a in axes), jit=jit, rtol=1e-5)


@pytest.mark.parametrize("fun", [_softplus, _scaled_sin], ids=["custom_jvp", "custom_vjp"])
@pytest.mark.parametrize("wrap", [lambda f: f, xjax.jit], ids=["lazy", "staged"])
def test_grad_of_vmapped_custom_function_sums_over_unbatched_inputs(fun, wrap):
    x = np.linspace(-1.0, 1.0, 5).astype(np.float32)
    w = np.float32(1.5)
    gx, gw = xjax.grad(lambda x, w: wrap(xjax.vmap(fun, (0, None)))(x, w).sum(), (0, 1))(x, w)
    loop = [xjax.grad(fun, (0, 1))(xi, w) for xi in x]
    np.testing.assert_allclose(gx, [g[0] for g in loop], rtol=1e-5)
    np.testing.assert_allclose(gw, np.sum([g[1] for g in loop]), rtol=1e-5)
    gx2, gw2 = xjax.grad(lambda x, w: xjax.vmap(wrap(fun), (0, None))(x, w).sum(), (0, 1))(x, w)
    np.testing.assert_allclose(gx2, gx, rtol=1e-6)
    np.testing.assert_allclose(gw2, gw, rtol=1e-6)


def test_vmap_of_linearized_custom_vjp_is_jax_type_error():
    with pytest.raises(TypeError, match=r"can't apply forward-mode autodiff \(jvp\) to a custom_vjp function."):
        xjax.vmap(lambda x: xjax.linearize(lambda v: _scaled_sin(v, 2.0), x)[1](x))(np.arange(3.0, dtype=np.float32))


# ---- remat ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("jit", [False, True])
def test_vmap_of_checkpoint_is_one_remat_and_differentiates(jit):
    f = xjax.checkpoint(lambda x, y: jnp.sin(jnp.sin(x) * y))
    x = np.linspace(-2.0, 2.0, 6).astype(np.float32).reshape(2, 3)
    check_batch(f, [x, np.float32(0.7)], in_axes=(1, None), jit=jit)
    check_batch(xjax.grad(f, (0, 1)), [x.ravel(), np.float32(0.7)], in_axes=(0, None), jit=jit)
    closed = xjax.make_jaxpr(xjax.vmap(f, (1, None)))(x, np.float32(0.7))
    assert _primitives(closed.jaxpr) == ["transpose", "remat2"]
    g = xjax.grad(lambda x: xjax.vmap(f, (0, None))(x, 0.7).sum())(x[0])
    np.testing.assert_allclose(g, [xjax.grad(f)(v, 0.7) for v in x[0]], rtol=1e-6)


# ---- debug callbacks ------------------------------------------------------------------------------

def test_debug_print_and_callback_run_once_per_example(capsys):
    def f(x, c):
        xjax.debug.print("x={x} c={c}", x=x, c=c)
        xjax.debug.callback(lambda v: print("cb", np.asarray(v), np.shape(v)), x)
        return x * 2

    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(xjax.vmap(f, (1, None))(x, 5.0), (x * 2).T)
    # As JAX 0.10.2 prints it (eagerly: every print, then every callback).
    want = ["x=[0. 3.] c=5.0", "x=[1. 4.] c=5.0", "x=[2. 5.] c=5.0", "cb [0. 3.] (2,)", "cb [1. 4.] (2,)",
            "cb [2. 5.] (2,)"]
    assert capsys.readouterr().out.splitlines() == want
    np.testing.assert_array_equal(xjax.jit(xjax.vmap(f, (1, None)))(x, 5.0), (x * 2).T)
    assert capsys.readouterr().out.splitlines() == want
