"""custom_jvp / custom_vjp misuse: each error's type and message as JAX 0.10.2 words them."""
import functools
import re

import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax.errors import UnexpectedTracerError


def mul_vjp(bwd, fwd=None):
    f = jax.custom_vjp(lambda x, y: x * y)
    f.defvjp(fwd or (lambda x, y: (x * y, (x, y))), bwd)
    return f


def test_jvp_of_custom_vjp_is_a_type_error():
    f = mul_vjp(lambda r, g: (g * r[1], g * r[0]))
    msg = "can't apply forward-mode autodiff (jvp) to a custom_vjp function."
    with pytest.raises(TypeError, match=re.escape(msg)):
        jax.jvp(f, (2., 3.), (1., 1.))
    with pytest.raises(TypeError, match=re.escape(msg)):
        jax.linearize(f, 2., 3.)[1](1., 1.)
    with pytest.raises(TypeError, match=re.escape(msg)):
        jax.jit(lambda x: jax.jvp(lambda x: f(x, 3.), (x,), (1.,)))(2.)


def test_forward_over_reverse_when_fwd_calls_the_function():
    @jax.custom_vjp
    def f(x):
        return jnp.sin(x)

    f.defvjp(lambda x: (f(x), jnp.cos(x)), lambda c, g: (c * g,))
    with pytest.raises(TypeError, match=re.escape("can't apply forward-mode autodiff (jvp) to a custom_vjp")):
        jax.jacfwd(jax.grad(f))(1.)


def test_bwd_with_the_wrong_structure():
    head = ("Custom VJP bwd rule must produce an output with the same container (pytree) structure as the args "
            "tuple of the primal function, and in particular must produce a tuple of length equal to the number of "
            "arguments to the primal function, but got bwd output structure ")
    cases = [(lambda r, g: (g * r[1],), "PyTreeDef((*,)) for primal input structure PyTreeDef((*, *))."),
             (lambda r, g: g * r[1], "PyTreeDef(*) for primal input structure PyTreeDef((*, *))."),
             (lambda r, g: (g, (g,)), "PyTreeDef((*, (*,))) for primal input structure PyTreeDef((*, *)).")]
    for bwd, tail in cases:
        with pytest.raises(TypeError) as e:
            jax.grad(mul_vjp(bwd))(2., 3.)
        assert str(e.value) == head + tail
    d = jax.custom_vjp(lambda d: d["a"] * d["b"])
    d.defvjp(lambda d_: (d_["a"] * d_["b"], d_), lambda r, g: ({"a": g},))
    with pytest.raises(TypeError, match=re.escape("structure PyTreeDef(({'a': *},)) for primal input structure "
                                                  "PyTreeDef(({'a': *, 'b': *},)).")):
        jax.grad(d)({"a": 2., "b": 3.})


def test_bwd_list_of_the_right_length_is_accepted():
    gx, gy = jax.grad(mul_vjp(lambda r, g: [g * r[1], g * r[0]]), (0, 1))(2., 3.)
    assert (float(gx), float(gy)) == (3., 2.)


def test_bwd_with_the_wrong_shape():
    f = mul_vjp(lambda r, g: (jnp.ones(3), g * r[0]))
    with pytest.raises(ValueError) as e:
        jax.grad(f, (0, 1))(2., 3.)
    assert str(e.value) == (
        "Custom VJP bwd rule must produce an output with the same type as the args tuple of the primal function, but "
        "at output[0] the bwd rule produced an output of type float32[3] corresponding to an input of type "
        "float32[], so the shapes do not match")


def test_bwd_of_another_float_dtype_passes_through_as_in_jax():
    gx, _ = jax.grad(mul_vjp(lambda r, g: (jnp.float16(1), g * r[0])), (0, 1))(2., 3.)
    assert repr(gx) == "Array(1., dtype=float16)"


def test_fwd_not_a_pair():
    f = mul_vjp(lambda r, g: (g, g), fwd=lambda x, y: x * y)
    with pytest.raises(TypeError) as e:
        jax.grad(f)(2., 3.)
    assert str(e.value) == (
        "Custom VJP fwd rule <lambda> for function <lambda> must produce a pair (list or tuple of length two) where "
        "the first element represents the primal output (equal to those of the custom_vjp-decorated function "
        "<lambda>) and the second element represents residuals (i.e. values stored from the forward pass for use on "
        "the backward pass), but instead of a pair the fwd rule <lambda> produced 6.0.")


def test_fwd_output_unlike_the_function_once_both_ran():
    @jax.custom_vjp
    def f(x):
        return x * 2.

    f.defvjp(lambda x: ((x * 2.,), None), lambda r, g: (g,))
    with pytest.raises(TypeError) as e:  # jit traces the function; differentiating its jaxpr runs fwd
        jax.grad(jax.jit(f))(1.)
    assert str(e.value) == (
        "Custom VJP fwd rule <lambda> for function f must produce a pair (list or tuple of length two) where the "
        "first element represents the primal output (equal to the output of the custom_vjp-decorated function f) and "
        "the second element represents residuals (i.e. values stored from the forward pass for use on the backward "
        "pass), but instead the fwd rule output's first element had container/pytree structure:\n    (float32[],)\n"
        "while the custom_vjp-decorated function f had output container/pytree structure:\n    float32[].")


def test_undefined_rules():
    no_vjp = "No VJP defined for custom_vjp function <lambda> using defvjp."
    with pytest.raises(AttributeError, match=re.escape(no_vjp)):
        jax.custom_vjp(lambda x: x)(1.)
    no_jvp = "No JVP defined for custom_jvp function <lambda> using defjvp."
    with pytest.raises(AttributeError, match=re.escape(no_jvp)):
        jax.custom_jvp(lambda x: x)(1.)


def test_tracer_as_a_custom_vjp_nondiff_argument():
    @functools.partial(jax.custom_vjp, nondiff_argnums=(0,))
    def clip(lo, x):
        return x

    clip.defvjp(lambda lo, x: (x, None), lambda lo, r, g: (jnp.clip(g, lo, 1.),))
    assert float(jax.grad(lambda x: clip(0.5, x))(1.)) == 1.
    with pytest.raises(UnexpectedTracerError, match=re.escape(
            "Found a JAX Tracer object passed as an argument to a custom_vjp function in a position indicated by "
            "nondiff_argnums as non-differentiable. Tracers cannot be passed as non-differentiable arguments to "
            "custom_vjp functions;")):
        jax.grad(lambda lo, x: clip(lo, x))(0., 1.)


def test_jvp_rule_output_errors():
    h = jax.custom_jvp(lambda x: x)
    h.defjvp(lambda p, t: p[0])
    with pytest.raises(TypeError, match=re.escape(
            "Custom JVP rule <lambda> for function <lambda> must produce a pair (list or tuple of length two) "
            "representing primal and tangent outputs, but got 1.0.")):
        jax.jvp(h, (1.,), (1.,))
    h.defjvp(lambda p, t: (p[0], (t[0],)))
    with pytest.raises(TypeError, match=re.escape(
            "must produce primal and tangent outputs with equal container (pytree) structures, but got PyTreeDef(*) "
            "and PyTreeDef((*,)) respectively.")):
        jax.jvp(h, (1.,), (1.,))
    h.defjvp(lambda p, t: (p[0], jnp.ones(2)))
    with pytest.raises(TypeError, match=re.escape(
            "Custom JVP rule must produce primal and tangent outputs with corresponding shapes and dtypes. Expected "
            "float32[] (tangent type of float32[]) but got float32[2].")):
        jax.jvp(h, (1.,), (1.,))
    h2 = jax.custom_jvp(lambda x, y: (x, y))
    h2.defjvp(lambda p, t: (p, (jnp.ones(2), t[1])))
    with pytest.raises(TypeError) as e:
        jax.jvp(h2, (1., 2.), (1., 1.))
    assert str(e.value) == ("Custom JVP rule must produce primal and tangent outputs with corresponding shapes and "
                            "dtypes, but got:\n  primal float32[] with tangent float32[2], expecting tangent float32[]")


def test_jvp_rule_primal_output_unlike_the_function():
    f = jax.custom_jvp(lambda x: x * 2.)
    f.defjvp(lambda p, t: (jnp.ones(2), t[0]))
    with pytest.raises(TypeError) as e:  # jit traces the function; differentiating its jaxpr runs the rule
        jax.jvp(jax.jit(f), (1.,), (1.,))
    assert "and in particular with leaves of the same shape/dtype), but instead the JVP rule output's first " \
           "element had shapes/dtypes of:\n    float32[2]\nwhile the custom_jvp-decorated function <lambda> had " \
           "output shapes/dtypes of:\n    float32[]" in str(e.value)


def test_nonlinear_jvp_rule_cannot_be_transposed():
    f = jax.custom_jvp(jnp.sin)
    f.defjvp(lambda p, t: (jnp.sin(p[0]), jnp.sin(t[0])))
    jax.jvp(f, (1.,), (0.5,))  # forward mode is fine
    with pytest.raises(NotImplementedError, match="Transpose rule .* for 'sin' not implemented"):
        jax.grad(f)(1.)


def test_differentiating_a_closed_over_value():
    def outer(y):
        f = jax.custom_jvp(lambda x: jnp.sin(x) * y)
        f.defjvp(lambda p, t: (f(p[0]), jnp.cos(p[0]) * y * t[0]))
        return f(2.)

    with pytest.raises(Exception, match="unexpected tracer"):  # JAX: an UnexpectedTracerError too
        jax.grad(outer)(3.)
    with pytest.raises(TypeError, match="Detected differentiation of a custom_jvp function with respect to a "
                                        "closed-over value"):
        jax.grad(jax.jit(outer))(3.)


def test_argument_errors():
    with pytest.raises(TypeError, match=re.escape("Can't use ``defjvps`` with ``nondiff_argnums``.")):
        jax.custom_jvp(lambda x, y: x * y, nondiff_argnums=(0,)).defjvps(None)

    def kwonly(x, *, y):
        return x

    f = jax.custom_jvp(kwonly)
    f.defjvp(lambda p, t: (p[0], t[0]))
    with pytest.raises(TypeError) as e:
        f(1., y=2.)
    assert str(e.value) == (
        "The input arguments to the custom_jvp-decorated function kwonly could not be resolved to positional-only "
        "arguments. Binding failed with the error:\nThe following keyword arguments could not be resolved to "
        "positions: y")
    g = jax.custom_jvp(lambda x, y=3.: x * y)
    g.defjvp(lambda p, t: (p[0] * p[1], t[0] * p[1]))
    with pytest.raises(TypeError, match="got an unexpected keyword argument 'z'"):
        g(1., z=2.)
    with pytest.raises(TypeError, match=re.escape(
            "Error interpreting argument to custom_jvp_call as a JAX value. The problematic value is of type <class "
            "'str'> and was passed to custom_jvp_call at position 0.")):
        g("a")
    v = jax.custom_vjp(lambda x: x)
    v.defvjp(lambda x: (x, None), lambda r, g: (g,))
    with pytest.raises(TypeError, match=re.escape("Argument 'a' of type <class 'str'> is not a valid JAX type")):
        v("a")
