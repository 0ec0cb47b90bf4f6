"""vmap composed with the other transformations: vmap of grad (per-example gradients), grad of vmap
(numeric checks in x64), jit of vmap, vmap of jit, nested vmap, custom_vjp under both, and the
Jacobians (jacfwd/jacrev vmap their jvp/vjp over a basis, so hessian runs batched)."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from batching_util import check_batch
from xjax import lax
from xjax._src.lax import contraction, layout, reduction
from xjax._src.lax.stop_gradient import stop_gradient_p
from xjax.test_util import check_grads


def _needs(*prims):
    """Skips until the batching rules of these primitives (written on other branches) are present."""
    missing = [p.name for p in prims if p.batch is None]
    return pytest.mark.skipif(bool(missing), reason=f"needs the batching rules of {', '.join(missing)}")


_LAYOUT = (layout.broadcast_in_dim_p, layout.transpose_p, layout.reshape_p, stop_gradient_p)


@pytest.fixture
def x64():
    prev = xjax.config.jax_enable_x64
    xjax.config.update("jax_enable_x64", True)
    yield
    xjax.config.update("jax_enable_x64", prev)


def _f(x, w):
    """A per-example scalar function through control flow (cond, scan, fori_loop) and a custom_jvp."""
    y = lax.cond(x > 0, lambda v: jnp.sin(v * w), lambda v: v * w * w, x)
    y, _ = lax.scan(lambda c, t: (c * 0.9 + jnp.cos(t * w), None), y, jnp.arange(3.0))
    y = lax.fori_loop(0, 2, lambda i, c: c + jnp.tanh(c * w), y)
    return _softplus(y) * w


@xjax.custom_jvp
def _softplus(x):
    return jnp.log1p(jnp.exp(x))


_softplus.defjvp(lambda p, t: (_softplus(p[0]), t[0] / (1.0 + jnp.exp(-p[0]))))

XS = np.array([-1.3, -0.4, 0.5, 1.2])
W = 0.8


def test_vmap_of_grad_is_per_example_gradients(x64):
    per_example = xjax.vmap(xjax.grad(_f, (0, 1)), (0, None))
    gx, gw = per_example(XS, W)
    loop = [xjax.grad(_f, (0, 1))(x, W) for x in XS]
    np.testing.assert_allclose(gx, [g[0] for g in loop], rtol=1e-12)
    np.testing.assert_allclose(gw, [g[1] for g in loop], rtol=1e-12)
    check_grads(per_example, (XS, W), order=1)


def test_grad_of_vmap(x64):
    loss = lambda xs, w: xjax.vmap(_f, (0, None))(xs, w).sum()  # noqa: E731
    gx, gw = xjax.grad(loss, (0, 1))(XS, W)
    np.testing.assert_allclose(gx, [xjax.grad(_f)(x, W) for x in XS], rtol=1e-12)
    np.testing.assert_allclose(gw, sum(xjax.grad(_f, 1)(x, W) for x in XS), rtol=1e-12)
    check_grads(loss, (XS, W), order=2)


@pytest.mark.parametrize("jit", [False, True])
def test_jit_of_vmap_and_vmap_of_jit(jit):
    xs = XS.astype(np.float32)
    check_batch(_f, [xs, np.float32(W)], in_axes=(0, None), jit=jit, rtol=1e-5)
    check_batch(xjax.jit(_f), [xs, np.float32(W)], in_axes=(0, None), jit=jit, rtol=1e-5)
    check_batch(xjax.jit(xjax.grad(_f, (0, 1))), [xs, np.float32(W)], in_axes=(0, None), jit=jit, rtol=1e-5)


@_needs(*_LAYOUT)
@pytest.mark.parametrize("jit", [False, True])
def test_nested_vmap(jit):
    ws = np.array([0.5, 1.1, -0.7], np.float32)
    got = xjax.vmap(xjax.vmap(_f, (0, None)), (None, 0))
    got = (xjax.jit(got) if jit else got)(XS.astype(np.float32), ws)
    want = [[_f(x, w) for x in XS.astype(np.float32)] for w in ws]
    np.testing.assert_allclose(got, want, rtol=1e-5)


@xjax.custom_vjp
def _clip_grad(x, w):
    return jnp.sin(x) * w


_clip_grad.defvjp(lambda x, w: (jnp.sin(x) * w, (jnp.cos(x), jnp.sin(x), w)),
                  lambda res, ct: (jnp.clip(res[0] * res[2] * ct, -0.5, 0.5), res[1] * ct))


def test_vmap_of_custom_vjp_then_grad_and_grad_of_vmap(x64):
    gx, gw = xjax.vmap(xjax.grad(_clip_grad, (0, 1)), (0, None))(XS, W)
    np.testing.assert_allclose(gx, np.clip(np.cos(XS) * W, -0.5, 0.5), rtol=1e-12)
    np.testing.assert_allclose(gw, np.sin(XS), rtol=1e-12)
    gx2, gw2 = xjax.grad(lambda xs, w: xjax.vmap(_clip_grad, (0, None))(xs, w).sum(), (0, 1))(XS, W)
    np.testing.assert_allclose(gx2, gx, rtol=1e-12)
    np.testing.assert_allclose(gw2, np.sin(XS).sum(), rtol=1e-12)
    # Where the rule is the true derivative (no clipping), reverse mode checks out numerically.
    check_grads(lambda xs: xjax.vmap(_clip_grad, (0, None))(xs, 0.3), (XS,), order=1, modes=("rev",))


# ---- Jacobians -------------------------------------------------------------------------------------

@_needs(*_LAYOUT, reduction.reduce_sum_p)
def test_jacobians_of_pytrees():
    x = np.array([0.5, -1.0, 2.0], np.float32)
    y = np.float32(1.5)
    f = lambda x, y: {"a": jnp.sin(x) * y, "b": x.sum() * y}  # noqa: E731
    for jac in (xjax.jacfwd, xjax.jacrev):
        (ax, ay), (bx, by) = (lambda j: ((j["a"][0], j["a"][1]), (j["b"][0], j["b"][1])))(jac(f, (0, 1))(x, y))
        np.testing.assert_allclose(ax, np.diag(np.cos(x) * y), rtol=1e-6)
        np.testing.assert_allclose(ay, np.sin(x), rtol=1e-6)
        np.testing.assert_allclose(bx, np.full(3, y), rtol=1e-6)
        np.testing.assert_allclose(by, x.sum(), rtol=1e-6)


@_needs(*_LAYOUT, reduction.reduce_sum_p)
def test_hessian_is_batched_not_a_loop_over_the_basis():
    f = lambda x: jnp.sum(jnp.sin(x) * x ** 3)  # noqa: E731
    x = np.array([0.3, -1.2, 2.0, 0.7], np.float32)
    h = np.diag(-np.sin(x) * x ** 3 + 6 * np.cos(x) * x ** 2 + 6 * np.sin(x) * x)
    np.testing.assert_allclose(xjax.hessian(f)(x), h, rtol=1e-5, atol=1e-5)
    # The traced program does not grow with the number of basis vectors.
    sizes = {len(xjax.make_jaxpr(xjax.hessian(f))(np.ones(n, np.float32)).jaxpr.eqns) for n in (2, 5)}
    assert len(sizes) == 1, sizes


# ---- per-example gradients of a small MLP ----------------------------------------------------------

def _mlp_loss(params, x, y):
    h = jnp.tanh(x @ params[0]["w"] + params[0]["b"])
    logits = h @ params[1]["w"] + params[1]["b"]
    logp = logits - jnp.log(jnp.sum(jnp.exp(logits - logits.max()))) - logits.max()
    return -jnp.sum(y * logp)


@_needs(*_LAYOUT, contraction.dot_general_p, reduction.reduce_sum_p, reduction.reduce_max_p)
@pytest.mark.parametrize("jit", [False, True])
def test_per_example_gradients_of_an_mlp_equal_a_loop_of_grad(jit):
    rng = np.random.default_rng(0)
    sizes = [6, 5, 3]
    params = [{"w": (rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32), "b": np.zeros(b, np.float32)}
              for a, b in zip(sizes[:-1], sizes[1:])]
    x = rng.standard_normal((4, 6)).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, 4)]
    f = xjax.vmap(xjax.grad(_mlp_loss), in_axes=(None, 0, 0))
    got = (xjax.jit(f) if jit else f)(params, x, y)
    for i in range(4):
        want = xjax.grad(_mlp_loss)(params, x[i], y[i])
        for g, w in zip(xjax.tree_util.tree_leaves(got), xjax.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(np.asarray(g)[i], w, rtol=1e-5, atol=1e-6)


def test_jacobians_of_integer_values_as_jax():
    # JAX 0.10.2: zeros of the integer value's dtype; jacrev of an integer output is a TypeError.
    jx, ji = xjax.jacrev(lambda x, i: x * i, argnums=(0, 1), allow_int=True)(jnp.arange(2.0), 3)
    np.testing.assert_array_equal(jx, 3 * np.eye(2))
    assert ji.dtype == np.int32 and ji.shape == (2,) and not np.any(ji)
    jf = xjax.jacfwd(lambda x: (x > 0).astype(int))(jnp.arange(2.0))
    assert jf.dtype == np.int32 and jf.shape == (2, 2) and not np.any(jf)
    with pytest.raises(TypeError, match="^jacrev requires real-valued outputs"):
        xjax.jacrev(lambda x: (x > 0).astype(int), allow_int=True)(jnp.arange(2.0))


@_needs(*_LAYOUT, reduction.reduce_or_p)
@pytest.mark.parametrize("jit", [False, True])
def test_nested_vmap_of_while_with_batched_predicates(jit):
    def f(n, x):
        return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 1.5 + 1.0), (0, x))[1]

    ns = np.array([[0, 2, 5], [1, 3, 4]], np.int32)
    xs = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    g = xjax.vmap(xjax.vmap(f))
    got = (xjax.jit(g) if jit else g)(ns, xs)
    np.testing.assert_allclose(got, [[f(n, x) for n, x in zip(rn, rx)] for rn, rx in zip(ns, xs)], rtol=1e-6)
