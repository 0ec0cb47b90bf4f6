"""jit: results, the compile cache (hits, misses, static arguments), pytrees, ahead-of-time lowering,
compile logging and bad input, with behaviour and messages recorded from JAX 0.10."""
import functools
import logging

import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax import lax


def selu(x, alpha=1.67, lambda_=1.05):
    return lambda_ * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def test_results_match_eager():
    x = jnp.asarray(np.linspace(-3, 3, 101, dtype=np.float32))
    np.testing.assert_allclose(np.asarray(jax.jit(selu)(x)), np.asarray(selu(x)), rtol=1e-6)
    f = jax.jit(lambda a, b: (a @ b, jnp.sum(a, axis=0), a[1:, ::-1]))
    a = jnp.asarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    b = jnp.asarray(np.ones((4, 2), np.float32))
    for got, want in zip(f(a, b), (np.asarray(a) @ np.asarray(b), np.asarray(a).sum(0), np.asarray(a)[1:, ::-1])):
        np.testing.assert_allclose(np.asarray(got), want)


def test_weak_types_of_python_scalars():
    assert repr(jax.jit(lambda x: x + 1)(10)) == "Array(11, dtype=int32, weak_type=True)"
    assert repr(jax.jit(lambda x: x * 2)(1.5)) == "Array(3., dtype=float32, weak_type=True)"
    assert repr(jax.jit(lambda x: x * 2)(np.float32(1.5))) == "Array(3., dtype=float32)"
    assert repr(jax.jit(lambda x: x)(True)) == "Array(True, dtype=bool)"


def test_outputs_that_are_inputs_literals_or_repeated():
    f = jax.jit(lambda x: (x, 2.0, x, x + 1, x + 1))
    out = f(jnp.arange(3))
    assert repr(out[1]) == "Array(2., dtype=float32, weak_type=True)"
    for o, want in zip(out, ([0, 1, 2], 2.0, [0, 1, 2], [1, 2, 3], [1, 2, 3])):
        np.testing.assert_array_equal(np.asarray(o), want)
    assert jax.jit(lambda x: None)(1.0) is None
    assert jax.jit(lambda x: ())(1.0) == ()


def test_pytrees_in_and_out():
    @jax.jit
    def f(params, x):
        return {"y": params["w"] * x + params["b"], "aux": [x, (params["b"],)]}

    out = f({"w": jnp.ones(2), "b": jnp.zeros(2)}, 3.0)
    assert sorted(out) == ["aux", "y"]
    np.testing.assert_array_equal(np.asarray(out["y"]), [3.0, 3.0])
    assert isinstance(out["aux"], list) and isinstance(out["aux"][1], tuple)


def test_same_function_hits_cache_new_lambda_misses():
    def body(x):
        return x + 1

    f = jax.jit(body)
    f(jnp.ones(3))
    f(jnp.ones(3))
    assert f._cache_size() == 1
    g = jax.jit(body)  # a new wrapper of the same function shares the cache
    g(jnp.ones(3))
    assert g._cache_size() == 1
    f(jnp.ones(4))  # new shape
    f(jnp.ones(3, jnp.int32))  # new dtype
    f(1.0)  # weak type
    f(np.float32(1.0))  # strong scalar
    assert f._cache_size() == 5
    h1 = jax.jit(lambda x: body(x))
    h1(1.0)
    h2 = jax.jit(lambda x: body(x))
    h2(1.0)
    assert h1._cache_size() == 1 and h2._cache_size() == 1
    p = jax.jit(functools.partial(body))
    p(1.0)
    assert p._cache_size() == 1


def test_changed_structure_recompiles():
    f = jax.jit(lambda t: jax.tree_util.tree_map(lambda v: v * 2, t))
    f((1.0, 2.0))
    f([1.0, 2.0])
    f({"a": 1.0})
    assert f._cache_size() == 3
    np.testing.assert_array_equal(np.asarray(f({"a": 1.0})["a"]), 2.0)


def test_static_argnums_and_argnames():
    def g(x, n):
        i = 0
        while i < n:
            i += 1
        return x + i

    by_num = jax.jit(g, static_argnums=1)
    assert int(by_num(10, 20)) == 30
    by_num(10, 20)
    assert by_num._cache_size() == 1
    assert int(by_num(10, 5)) == 15
    assert by_num._cache_size() == 2
    by_name = jax.jit(g, static_argnames=["n"])
    assert int(by_name(10, 20)) == 30  # the name also marks the position
    assert int(by_name(10, n=3)) == 13

    @functools.partial(jax.jit, static_argnames=("mode",))
    def h(x, mode="double"):
        return x * 2 if mode == "double" else x * 3

    assert float(h(1.0)) == 2.0 and float(h(1.0, mode="triple")) == 3.0

    @jax.jit(static_argnums=(0,))
    def k(n, x):
        return x ** n

    assert float(k(3, 2.0)) == 8.0


def test_unhashable_static_argument():
    f = jax.jit(lambda x, n: x, static_argnums=1)
    with pytest.raises(TypeError, match="Non-hashable static arguments are not supported") as e:
        f(1.0, [1])
    assert isinstance(e.value, ValueError)  # JAX raises ValueError
    assert "static argument 1" in str(e.value)
    g = jax.jit(lambda x, n: x, static_argnames="n")
    with pytest.raises(TypeError, match=r"argument 'n'"):
        g(1.0, n={})


def test_non_array_arguments_and_results():
    with pytest.raises(TypeError, match=r"Error interpreting argument to .* as an abstract array\. The problematic "
                                        r"value is of type <class 'str'> and was passed to the function at path x\."):
        jax.jit(lambda x: x)("abc")
    with pytest.raises(TypeError, match=r"at path d\['b'\]"):
        jax.jit(lambda d: d)({"a": 1.0, "b": object()})
    with pytest.raises(TypeError, match=r"function <lambda> at .*test_jit.py:\d+ traced for jit returned a value of "
                                        r"type <class 'str'>, which is not a valid JAX type"):
        jax.jit(lambda x: "hello")(1.0)


def test_nested_jit_is_one_equation():
    @jax.jit
    def loop_body(prev_i):
        return prev_i + 1

    def g(x, n):
        i = 0
        while i < n:
            i = loop_body(i)
        return x + i

    assert repr(g(10, 20)) == "Array(30, dtype=int32, weak_type=True)"
    assert str(jax.make_jaxpr(lambda x: loop_body(loop_body(x)))(1)) == (
        "let loop_body = { lambda ; a:i32[]. let b:i32[] = add a 1:i32[] in (b,) } in\n"
        "{ lambda ; c:i32[]. let\n"
        "    d:i32[] = jit[name=loop_body jaxpr=loop_body] c\n"
        "    e:i32[] = jit[name=loop_body jaxpr=loop_body] d\n"
        "  in (e,) }")
    inlined = jax.jit(lambda x: x * 2, inline=True)
    assert str(jax.make_jaxpr(lambda x: inlined(x) + 1)(1.0)) == (
        "{ lambda ; a:f32[]. let\n    b:f32[] = mul a 2.0:f32[]\n    c:f32[] = add b 1.0:f32[]\n  in (c,) }")


def test_jit_inside_jit_runs():
    inner = jax.jit(lambda x, y: (x * y, x - y))
    outer = jax.jit(lambda x: inner(x, 2.0)[0] + inner(x, 3.0)[1])
    np.testing.assert_allclose(np.asarray(outer(jnp.arange(3.0))), np.arange(3.0) * 2 + np.arange(3.0) - 3)


def test_closures_over_outer_tracers():
    def f(x):
        y = jnp.sin(x)
        return jax.jit(lambda z: z + y)(x)

    np.testing.assert_allclose(float(jax.jit(f)(1.0)), 1.0 + np.sin(1.0), rtol=1e-6)


def test_methods_and_wrapper_attributes():
    class Model:
        scale = 3.0

        @functools.partial(jax.jit, static_argnums=0)
        def apply(self, x):
            return x * self.scale

    Model.__hash__ = object.__hash__
    assert float(Model().apply(2.0)) == 6.0

    def documented(x):
        """Doubles."""
        return x * 2

    f = jax.jit(documented)
    assert f.__name__ == "documented" and f.__doc__ == "Doubles." and f.__wrapped__ is documented


def test_ahead_of_time():
    f = jax.jit(lambda x, y: x * y + 2.0)
    lowered = f.lower(jnp.ones(4), jax.ShapeDtypeStruct((4,), jnp.float32))
    text = lowered.as_text()
    assert text.startswith("module @jit_<lambda>") and "mul(" in text and "add(" in text
    compiled = lowered.compile()
    np.testing.assert_array_equal(np.asarray(compiled(jnp.ones(4), jnp.full(4, 3.0))), [5.0] * 4)
    assert f._cache_size() == 1
    with pytest.raises(TypeError, match="Argument types differ"):
        compiled(jnp.ones(3), jnp.ones(3))
    assert str(f.trace(jnp.ones(2), jnp.ones(2)).jaxpr).startswith("{ lambda ; a:f32[2] b:f32[2]. let")
    out = f.eval_shape(jnp.ones((2, 3)), 1.0)
    assert out.shape == (2, 3) and out.dtype == jnp.float32
    assert jax.eval_shape(lambda x: x.sum(0), jax.ShapeDtypeStruct((5, 2), jnp.int32)).shape == (2,)


def test_log_compiles(caplog):
    jax.config.update("jax_log_compiles", True)
    try:
        def twice(x):
            return x * 2

        f = jax.jit(twice)
        with caplog.at_level(logging.WARNING, logger="xjax._src.jit"):
            f(jnp.ones(3))
            f(jnp.ones(3))
            f(jnp.ones(4))
    finally:
        jax.config.update("jax_log_compiles", False)
    text = caplog.text
    assert text.count("Compiling jit(twice) with global shapes and types") == 2
    assert "never seen function" in text
    assert "different input types:\n  * at x, now f32[4] and before f32[3]" in text


def test_donate_argnums_accepted():
    f = jax.jit(lambda x, y: x + y, donate_argnums=0)
    np.testing.assert_array_equal(np.asarray(f(jnp.ones(2), jnp.ones(2))), [2.0, 2.0])
    assert "donated_invars=(True, False)" in str(jax.make_jaxpr(lambda a: f(a, a))(jnp.ones(2)))


def test_graph_is_one_executable():
    f = jax.jit(lambda x: selu(x))
    x = jnp.arange(5.0)
    f(x)
    (entry,) = f._cache.values()
    assert type(entry.call).__name__ == "GraphCall"
    from xjax._src.interpreters import graph_lowering

    # 0.0, 1.67 and 1.05: constants in the graph, or inputs fed on each run while the core lacks constants
    assert len(entry.call.extern) == (0 if graph_lowering.HAS_CONSTANT else 3)


def test_disable_jit():
    jax.config.update("jax_disable_jit", True)
    try:
        seen = []
        jax.jit(lambda x: seen.append(type(x).__name__) or x)(jnp.ones(2))
        assert lax.cond(True, lambda: 1, lambda: 2) == 1
    finally:
        jax.config.update("jax_disable_jit", False)
    assert seen == ["Array"]
