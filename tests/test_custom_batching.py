"""jax.custom_batching: custom_vmap runs its function outside vmap and its rule under vmap (eagerly,
under jit, vmap of jit, jit of vmap), its JVP is a custom_vmap whose rule is the JVP of the rule;
sequential_vmap maps the function over the batch. Values recorded from JAX 0.10.2 running the same
programs (the rule adds 100 on purpose, to show which of function and rule ran)."""
import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax.custom_batching import custom_vmap, sequential_vmap

calls = []


@custom_vmap
def f(x, y):
    return jnp.sin(x) * y


@f.def_vmap
def f_rule(axis_size, in_batched, x, y):
    calls.append((axis_size, in_batched))
    xb, yb = in_batched
    y = y[:, None] if yb else y
    return jnp.sin(x) * y + 100.0, True


X = jnp.arange(3.0)
Y = jnp.array(2.0)
XS = jnp.stack([X, X + 1])
# Recorded from JAX 0.10.2.
F = [0.0, 1.6829419, 1.8185948]
F_RULE = [[100.0, 101.682945, 101.818596], [101.682945, 101.818596, 100.28224]]
F_RULE_Y = [[100.0, 100.84147, 100.909294], [100.0, 101.682945, 101.818596]]
DF = [2.0, 1.0806046, -0.8322937]
DF_BATCHED = [[2.0, 1.0806046, -0.8322937], [1.0806046, -0.8322937, -1.979985]]


def test_function_outside_vmap():
    np.testing.assert_allclose(f(X, Y), F, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(f)(X, Y), F, rtol=1e-6)


def test_rule_under_vmap():
    np.testing.assert_allclose(jax.vmap(f, in_axes=(0, None))(XS, Y), F_RULE, rtol=1e-6)
    assert calls[-1] == (2, [True, False])
    np.testing.assert_allclose(jax.jit(jax.vmap(f, in_axes=(0, None)))(XS, Y), F_RULE, rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(jax.jit(f), in_axes=(None, 0))(X, jnp.array([1.0, 2.0])), F_RULE_Y,
                               rtol=1e-6)
    assert calls[-1] == (2, [False, True])


def test_jvp_and_vmap_of_jvp_use_the_rule():
    out, t = jax.jvp(lambda x: f(x, Y), (X,), (jnp.ones(3),))
    np.testing.assert_allclose(out, F, rtol=1e-6)
    np.testing.assert_allclose(t, DF, rtol=1e-6)
    out, t = jax.vmap(lambda x: jax.jvp(lambda x: f(x, Y), (x,), (jnp.ones(3),)))(XS)
    np.testing.assert_allclose(out, F_RULE, rtol=1e-6)
    np.testing.assert_allclose(t, DF_BATCHED, rtol=1e-6)


def test_reverse_mode_is_refused():
    # JAX refuses too (its linearization finds no known primal outputs); xjax names the missing rule.
    with pytest.raises(NotImplementedError, match="custom_vmap_call"):
        jax.grad(lambda x: f(x, Y).sum())(X)


def test_sequential_vmap_maps_the_function():
    @sequential_vmap
    def g(x, y):
        return {"a": x * y, "b": jnp.cos(x)}

    out = jax.vmap(g, in_axes=(0, None))(XS, Y)
    np.testing.assert_allclose(out["a"], np.asarray(XS) * 2.0)
    np.testing.assert_allclose(out["b"], np.cos(np.asarray(XS)), rtol=1e-6)
    out = jax.jit(jax.vmap(g))(XS, jnp.array([1.0, 3.0]))
    np.testing.assert_allclose(out["a"], np.asarray(XS) * np.array([[1.0], [3.0]]))
    np.testing.assert_allclose(g(X, Y)["a"], np.asarray(X) * 2.0)


def test_missing_rule_and_keywords():
    h = custom_vmap(lambda x: x)
    with pytest.raises(AttributeError, match="No batching rule"):
        h(X)
    with pytest.raises(TypeError, match="positional"):
        f(X, y=Y)
