"""jax.checkpoint / jax.remat: forward values and gradients unchanged, recomputation present in the
gradient's jaxpr (and only what the policy does not save), nesting with jit, custom rules and other
checkpoints, and errors; values and printed jaxprs recorded from JAX 0.10.2."""
import collections

import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax.ad_checkpoint import checkpoint_name
from xjax.test_util import check_grads

P = jax.checkpoint_policies


def close(got, want, rtol=1e-6, atol=1e-6):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want, np.float32), rtol=rtol, atol=atol)


@jax.checkpoint
def sin_sin(x):
    return jnp.sin(jnp.sin(x))


def test_values_and_gradient():
    v, g = jax.value_and_grad(sin_sin)(2.0)
    assert repr(v) == "Array(0.78907233, dtype=float32, weak_type=True)"
    assert repr(g) == "Array(-0.25563914, dtype=float32, weak_type=True)"
    close(jax.grad(jax.remat(lambda y: jnp.sin(jnp.sin(y))))(1.3), 0.15263526)


def test_jaxprs_match_jax_and_show_the_recomputation():
    assert str(jax.make_jaxpr(sin_sin)(2.0)) == """\
{ lambda ; a:f32[]. let
    b:f32[] = remat2[
      differentiated=False
      jaxpr={ lambda ; c:f32[]. let d:f32[] = sin c; e:f32[] = sin d in (e,) }
      policy=None
      prevent_cse=True
    ] a
  in (b,) }"""
    # The forward pass computes only the output; the backward pass (one remat equation) recomputes
    # sin(x) and the cosines from the saved input x instead of reading them as residuals.
    assert str(jax.make_jaxpr(jax.grad(sin_sin))(2.0)) == """\
{ lambda ; a:f32[]. let
    b:f32[] = sin a
    _:f32[] = sin b
    c:f32[] = remat2[
      differentiated=True
      jaxpr={ lambda ; d:f32[] e:f32[]. let
          f:f32[] = sin d
          g:f32[] = cos d
          h:f32[] = cos f
          i:f32[] = mul e h
          j:f32[] = mul i g
        in (j,) }
      policy=None
      prevent_cse=True
    ] a 1.0:f32[]
  in (c,) }"""


def _backward_remat(fun, *args):
    """(counts of the primitives in the backward remat equation of grad(fun), producers of its operands)."""
    closed = jax.make_jaxpr(jax.grad(fun, tuple(range(len(args)))))(*args)
    eqns = [e for e in closed.jaxpr.eqns if e.primitive.name == "remat2" and e.params["differentiated"]]
    assert len(eqns) == 1
    eqn = eqns[0]
    counts = collections.Counter(e.primitive.name for e in eqn.params["jaxpr"].jaxpr.eqns)
    made_by = {v: e for e in closed.jaxpr.eqns for v in e.outvars}
    operands = [a for a in eqn.invars if type(a).__name__ != "Literal"]
    producers = [made_by[a].primitive.name if a in made_by else "input" for a in operands]
    return counts, producers


def mlp(W, x):
    for _ in range(3):
        x = checkpoint_name(jnp.tanh(W @ x) * 1.5, "h")
    return jnp.sum(x ** 2)


W = jnp.array([[0.8820262, 0.2000786, 0.489369, 1.1204466],
               [0.933779, -0.48863894, 0.47504422, -0.0756786],
               [-0.05160943, 0.20529926, 0.07202178, 0.72713673],
               [0.38051885, 0.06083751, 0.22193162, 0.16683717]], dtype=np.float32)
X = jnp.arange(4.0)
GW = [[0.04080151, 0.02736234, 0.03421337, 0.03250229], [1.8080317, 2.0425334, 1.8600168, 2.2837136],
      [2.790039, 1.9316875, 2.3165112, 2.2239025], [2.7278354, 2.399389, 2.9482026, 3.2834978]]
GX = [0.39775553, -0.11022231, 0.21347788, 0.04564945]

POLICIES = {"default": None, "everything": P.everything_saveable, "nothing": P.nothing_saveable,
            "dots": P.dots_saveable, "checkpoint_dots": P.checkpoint_dots,
            "dots_no_batch": P.dots_with_no_batch_dims_saveable, "only_h": P.save_only_these_names("h"),
            "except_h": P.save_anything_except_these_names("h"), "names_but_h": P.save_any_names_but_these("h"),
            "both": P.save_from_both_policies(P.dots_saveable, P.save_only_these_names("h"))}


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_every_policy_gives_the_plain_gradient(name):
    f = jax.checkpoint(mlp, policy=POLICIES[name])
    close(f(W, X), 6.6974287)
    for gw, gx in (jax.grad(f, (0, 1))(W, X), jax.jit(jax.grad(f, (0, 1)))(W, X)):
        close(gw, GW, rtol=2e-6)
        close(gx, GX, rtol=2e-6, atol=2e-6)


def test_policies_decide_what_is_recomputed():
    def recomputed(policy, prim="tanh"):
        counts, producers = _backward_remat(jax.checkpoint(mlp, policy=policy), W, X)
        return counts[prim], counts["dot_general"], collections.Counter(producers)

    # Nothing saved: every tanh and every forward product is recomputed; only the inputs are saved.
    tanh, dots, saved = recomputed(None)
    assert (tanh, dots) == (3, 3 + 6) and set(saved) == {"input"}
    # Products saved: they are read from the forward pass, the tanh are recomputed from them.
    tanh, dots, saved = recomputed(P.dots_saveable)
    assert (tanh, dots, saved["dot_general"]) == (3, 6, 3)
    # Everything saved: the backward pass recomputes nothing of the forward pass.
    tanh, dots, saved = recomputed(P.everything_saveable)
    assert (tanh, dots) == (0, 6)
    # Named values saved: the named layer outputs are residuals.
    _, _, saved = recomputed(P.save_only_these_names("h"))
    assert saved["name"] == 3
    _, _, saved = recomputed(P.save_any_names_but_these("other"))
    assert saved["name"] == 3
    # Everything but the named values (nor what computes them) saved: the two named layer outputs
    # the backward pass reads are recomputed from the saved tanh outputs (all three are saved: JAX's
    # tanh rule reads each layer's tanh output).
    names, _, saved = recomputed(P.save_anything_except_these_names("h"), "name")
    assert (names, saved["name"], saved["tanh"]) == (2, 0, 3)


def test_plain_gradient_saves_intermediates_where_checkpoint_does_not():
    closed = jax.make_jaxpr(jax.grad(lambda x: jnp.sin(jnp.sin(x))))(2.0)
    assert not any(e.primitive.name == "remat2" for e in closed.jaxpr.eqns)
    counts, producers = _backward_remat(sin_sin, 2.0)
    assert counts["sin"] == 1 and producers == ["input"]


def test_nested_checkpoints_and_jit():
    def layer(x):
        return jnp.sin(x) * 2.

    def net(x):
        for _ in range(4):
            x = jax.checkpoint(layer)(x)
        return jnp.sum(x)

    want = [16., -0.09993673, 0.17098506, -6.3433213]
    for f in (jax.grad(net), jax.grad(jax.checkpoint(net)), jax.jit(jax.grad(jax.checkpoint(net)))):
        close(f(X), want, rtol=2e-6)
    inner_jit = jax.checkpoint(lambda y: jnp.sum(jax.jit(lambda z: jnp.sin(z) ** 2)(y)))
    outer_jit = jax.jit(jax.grad(lambda y: jnp.sum(jax.checkpoint(lambda z: jnp.sin(z) ** 2)(y))))
    for g in (jax.grad(inner_jit)(X), outer_jit(X)):
        close(g, [0., 0.90929735, -0.7568025, -0.2794155])


def test_checkpointed_scan_step_and_checkpoint_inside_cond():
    def step(c, _):
        return jnp.tanh(W @ c), jnp.sum(c)  # closes over the concrete W: an operand of the remat equation

    def loss(c0):
        c, ys = jax.lax.scan(jax.checkpoint(step), c0, None, length=5)
        return jnp.sum(c) + jnp.sum(ys)

    want = [2.4229984, 0.50316775, 1.754026, 1.0967833]
    close(jax.grad(loss)(X), want, rtol=2e-6)
    close(jax.jit(jax.grad(loss))(X), want, rtol=2e-6)
    branchy = jax.checkpoint(lambda y: jnp.sin(jnp.sin(y)))
    close(jax.grad(lambda x: jax.lax.cond(x > 0, branchy, jnp.sin, x))(1.5), 0.03836846)


def test_higher_order_and_forward_mode():
    f = jax.checkpoint(lambda y: jnp.sin(jnp.sin(y)))
    close(jax.grad(jax.grad(f))(1.3), -0.60857123)
    close(jax.jacfwd(jax.grad(f))(1.3), -0.60857123)
    y, t = jax.jvp(f, (1.3,), (1.,))
    close(y, 0.8212271)
    close(t, 0.15263526)
    close(jax.linearize(f, 1.3)[1](2.), 0.30527052)
    check_grads(jax.checkpoint(mlp), (W, X), order=2, rtol=2e-2, atol=2e-2)


def test_custom_rules_inside_checkpoint():
    @jax.custom_vjp
    def cv(x):
        return jnp.sin(x)

    cv.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda c, g: (c * g * 2.,))

    @jax.custom_jvp
    def cj(x):
        return jnp.sin(x)

    cj.defjvp(lambda p, t: (jnp.sin(p[0]), 3. * jnp.cos(p[0]) * t[0]))
    close(jax.grad(jax.checkpoint(lambda y: jnp.sum(cv(jnp.sin(y)))))(X), [2., 0.72007895, -0.5112783, -1.9603021])
    want = [3., 1.0801184, -0.7669174, -2.940453]
    close(jax.grad(jax.checkpoint(lambda y: jnp.sum(cj(jnp.sin(y)))))(X), want)
    close(jax.jit(jax.grad(jax.checkpoint(lambda y: jnp.sum(cj(jnp.sin(y))))))(X), want)


def test_pytrees_keywords_and_static_arguments():
    def pf(d, n, scale=1.0):
        return {"o": jnp.sin(d["a"]) * n * scale, "p": d["b"]}

    g = jax.grad(lambda d: jnp.sum(jax.checkpoint(pf)(d, 3, scale=2.)["o"]))({"a": X, "b": 1.})
    close(g["a"], [6., 3.2418137, -2.496881, -5.9399548])
    close(g["b"], 0.)
    power = jax.checkpoint(lambda z, n: z ** n if n > 1 else z, static_argnums=(1,))  # n is a Python int
    close(jax.grad(lambda y: power(y, 3))(2.), 12.)
    close(jax.grad(lambda y: power(y, 1))(2.), 1.)


def test_closing_over_traced_values():
    def outer(y):
        return jax.grad(jax.checkpoint(lambda z: jnp.sin(z * y)))(2.)

    close(outer(3.), 2.8805108)
    close(jax.jit(outer)(3.), 2.8805108)
    close(jax.grad(outer)(3.), 2.6366632)


def test_prevent_cse_flags_follow_the_operands():
    f = jax.checkpoint(lambda x, y: jnp.sin(x) * y, prevent_cse=(True, False))
    assert "prevent_cse=(True, False)\n" in str(jax.make_jaxpr(f)(2., 3.))
    assert "prevent_cse=(True, False, True)\n" in str(jax.make_jaxpr(jax.grad(f))(2., 3.))


def _optimised_ops(closed):
    """The ops of the C++ graph a jaxpr lowers to, after the compiler's passes."""
    from xjax import _core
    from xjax._src.interpreters import graph_lowering as gl

    graph = _core.Graph()
    in_refs, const_refs, ext, _ = gl.graph_inputs(graph, closed)
    graph.set_outputs(gl.GraphLowerer(graph, ext).lower_jaxpr(closed.jaxpr, const_refs, in_refs))
    return graph.optimized(["simplify", "fold", "simplify", "cse", "dce"]).ops()


@pytest.mark.parametrize("prevent_cse", [True, False])
def test_recomputation_survives_cse_in_a_compiled_gradient(prevent_cse):
    # The forward pass computes sin(x); the backward pass recomputes it. Under jit both are in one
    # graph: without a barrier CSE would merge them (the forward value kept alive: no remat at all).
    f = jax.value_and_grad(lambda x: jnp.sum(jax.checkpoint(lambda x: jnp.sin(jnp.sin(x)), prevent_cse=prevent_cse)(x)))
    x = jnp.arange(3.0)
    ops = _optimised_ops(jax.make_jaxpr(f)(x))
    assert ops.count("sin") == (3 if prevent_cse else 2), ops
    assert ops.count("optimization_barrier") == int(prevent_cse)
    v, g = jax.jit(f)(x)
    close(v, np.sum(np.sin(np.sin(np.arange(3.0)))))
    close(g, np.cos(np.sin(np.arange(3.0))) * np.cos(np.arange(3.0)))


def test_tracing_is_cached_per_signature():
    traces = []

    @jax.checkpoint
    def f(x):
        traces.append(x.shape)
        return jnp.sin(x)

    for _ in range(3):
        jax.grad(lambda x: jnp.sum(f(x)))(X)
    f(jnp.ones(2))
    assert traces == [(4,), (2,)]


def test_checkpoint_name_is_the_identity():
    assert str(jax.make_jaxpr(lambda x: checkpoint_name(jnp.sin(x), "a"))(1.)) == (
        "{ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = name[name=a] b in (c,) }")
    close(jax.grad(lambda x: checkpoint_name(x * 3., "a"))(1.), 3.)
    close(jax.jit(lambda x: checkpoint_name(x, "a") + 1.)(1.), 2.)


def test_errors():
    @jax.checkpoint
    def branchy(x):
        return x if x > 0 else -x

    with pytest.raises(jax.errors.TracerBoolConversionError) as e:
        branchy(1.)
    assert "for checkpoint / remat." in str(e.value)
    assert str(e.value).endswith(
        "Consider using the `static_argnums` parameter for `jax.remat` or `jax.checkpoint`. See the `jax.checkpoint` "
        "docstring and its example involving `static_argnums`:\n"
        "https://docs.jax.dev/en/latest/_autosummary/jax.checkpoint.html\n")
    with pytest.raises(ValueError) as e:
        jax.checkpoint(lambda x: x, static_argnums=(3,))(1.)
    assert str(e.value) == (
        "the `static_argnums` argument to `jax.checkpoint` / `jax.remat` can only take integer values greater than or "
        "equal to `-len(args)` and less than `len(args)`, but got (3,), while `len(args)` = 1")
    with pytest.raises(TypeError, match="must be an int, tuple of ints or, bool, but got value a"):
        jax.checkpoint(lambda x: x, static_argnums="a")(1.)
    with pytest.raises(TypeError, match=r"prevent_cse must be a bool or tuple of bools, got type\(prevent_cse\)="):
        jax.checkpoint(lambda x: x, prevent_cse=3)
    with pytest.raises(NotImplementedError, match="The `concrete` option to `jax.checkpoint` was deprecated"):
        jax.checkpoint(lambda x: x, concrete=True)
    with pytest.raises(ValueError, match="The return value of the policies should be a boolean"):
        jax.grad(jax.checkpoint(jnp.sin, policy=P.save_from_both_policies(lambda *a, **k: 1, P.nothing_saveable)))(1.)
