"""jax.core, jax.extend.core, jax.extend.linear_util and jax.interpreters.partial_eval: the names
libraries use to build, check and interpret jaxprs and to reach the tracing state."""
import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax import core
from xjax.extend import core as jex
from xjax.extend import linear_util as lu
from xjax.interpreters import partial_eval as pe
from xjax._src.lax.elementwise import mul_p, sin_p


def test_jax_core_exports_jax_0_10_names():
    for name in ("AbstractValue", "Atom", "ParamDict", "ShapedArray", "Trace", "Tracer", "Value",
                 "ensure_compile_time_eval", "eval_context", "eval_jaxpr", "max_dim", "min_dim"):
        assert hasattr(core, name), name
    assert isinstance(core.ShapedArray((2,), np.float32), core.AbstractValue)
    assert core.max_dim(3, 5) == 5 and core.min_dim(3, 5) == 3
    assert jax.ensure_compile_time_eval is core.ensure_compile_time_eval


def test_ensure_compile_time_eval_gives_concrete_values_inside_jit():
    seen = []

    @jax.jit
    def f(x):
        with jax.ensure_compile_time_eval():
            y = jnp.sin(3.0)
            z = jnp.sin(y)
            positive = z > 0
        seen.append(isinstance(y, core.Tracer))
        return jnp.sin(x) if positive else jnp.cos(x)  # Python control flow on a value computed now

    np.testing.assert_allclose(f(1.0), np.sin(1.0), rtol=1e-6)
    assert seen == [False]
    text = str(jax.make_jaxpr(f)(1.0))
    assert text.count("sin") == 1  # only sin(x) is staged; the constant chain was computed

    @jax.jit
    def g(x):
        with jax.ensure_compile_time_eval():
            return jnp.sin(x) if x > 0 else x  # the argument is still traced: no value to branch on

    with pytest.raises(jax.errors.ConcretizationTypeError):
        g(1.0)
    from xjax._src.core import eager_constant_folding

    assert not eager_constant_folding()  # restored on the way out, error or not


def test_eval_context_runs_eagerly_inside_a_trace():
    @jax.jit
    def f(x):
        with core.eval_context():
            c = jnp.arange(3.0) * 2
        assert not isinstance(c, core.Tracer)
        return x + c

    np.testing.assert_allclose(f(1.0), [1.0, 3.0, 5.0])


def test_jaxpr_as_fun_and_eval_jaxpr():
    closed = jax.make_jaxpr(lambda x, y: jnp.sin(x) * y + 1.0)(np.float32(0.5), np.float32(2.0))
    want = np.sin(np.float32(0.5)) * 2 + 1
    np.testing.assert_allclose(jex.jaxpr_as_fun(closed)(0.5, 2.0)[0], want, rtol=1e-6)
    np.testing.assert_allclose(core.eval_jaxpr(closed.jaxpr, closed.consts, 0.5, 2.0)[0], want, rtol=1e-6)
    assert list(jex.subjaxprs(jax.make_jaxpr(jax.jit(jnp.sin))(1.0).jaxpr))  # the jit's inner jaxpr


def test_building_and_checking_a_jaxpr_by_hand():
    f32 = core.ShapedArray((3,), np.float32)
    a, b, s, out = jex.Var(f32), jex.Var(f32), jex.Var(f32), jex.Var(f32)
    eqns = [jex.new_jaxpr_eqn([a], [s], sin_p, {}, jex.no_effects),
            jex.new_jaxpr_eqn([s, b], [out], mul_p, {}, jex.no_effects)]
    jaxpr = jex.Jaxpr([], [a, b], [out], eqns)
    jex.check_jaxpr(jaxpr)
    x, y = np.arange(3, dtype=np.float32), np.full(3, 2.0, np.float32)
    np.testing.assert_allclose(jex.jaxpr_as_fun(jex.ClosedJaxpr(jaxpr, []))(x, y)[0], np.sin(x) * y, rtol=1e-6)
    with pytest.raises(jex.JaxprTypeError, match="not defined"):
        jex.check_jaxpr(jex.Jaxpr([], [a], [out], eqns))
    wrong = jex.Var(core.ShapedArray((4,), np.float32))
    with pytest.raises(jex.JaxprTypeError, match="sin"):
        jex.check_jaxpr(jex.Jaxpr([], [a, b], [wrong], [jex.new_jaxpr_eqn([a], [wrong], sin_p, {})]))
    with pytest.raises(NotImplementedError, match="effects"):
        jex.new_jaxpr_eqn([a], [s], sin_p, {}, {"an effect"})


def test_mapped_and_unmapped_avals():
    aval = core.ShapedArray((4, 5), np.float32)
    assert jex.mapped_aval(4, 0, aval).shape == (5,)
    assert jex.unmapped_aval(7, 1, aval).shape == (4, 7, 5)
    assert jex.mapped_aval(4, None, aval) is aval
    with pytest.raises(ValueError, match="size"):
        jex.mapped_aval(3, 0, aval)


def test_trace_state():
    outside = jex.get_opaque_trace_state(convention="flax")
    assert outside == jex.get_opaque_trace_state()
    inside = []

    @jax.jit
    def f(x):
        inside.append(jex.get_opaque_trace_state())
        assert isinstance(jex.find_top_trace((x,)), core.Trace)
        with jex.take_current_trace() as trace:
            with jex.set_current_trace(trace):
                return x * 2

    np.testing.assert_allclose(f(1.0), 2.0)
    assert inside[0] != outside
    with pytest.raises(RuntimeError, match="take_current_trace"):
        with jex.take_current_trace():
            jnp.sin(jnp.ones(2))


def test_concrete_or_error():
    assert jex.concrete_or_error(int, 3.0) == 3
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(lambda x: jex.concrete_or_error(None, x, "x"))(1.0)
    assert jex.primal_dtype_to_tangent_dtype(np.int32) == np.dtype([("float0", np.void, 0)])
    assert jex.primal_dtype_to_tangent_dtype(np.float32) == np.float32


def test_linear_util_transformations():
    @lu.transformation_with_aux2
    def flatten_out(f, store, *args):
        out = f(*args)
        store.store(len(out))
        return list(out)

    @lu.transformation2
    def doubled_args(f, *args):
        return f(*[2 * a for a in args])

    wrapped = lu.wrap_init(lambda a, b, scale: (a * scale, b + 1), {"scale": 3}, debug_info=None)
    wrapped, n_out = flatten_out(doubled_args(wrapped))
    assert wrapped.call_wrapped(1, 2) == [6, 5]
    assert n_out() == 2
    with pytest.raises(NotImplementedError, match="transformation2"):
        lu.transformation(lambda f: f)


def test_trace_to_jaxpr_nounits_splits_known_from_unknown():
    def f(a, b):
        return a * 2.0, jnp.sin(a) * b

    a = jnp.array([0.5, 1.0])
    pvals = [pe.PartialVal.known(a), pe.PartialVal.unknown(core.ShapedArray((2,), np.float32))]
    jaxpr, out_pvals, consts = pe.trace_to_jaxpr_nounits(lu.wrap_init(lambda *xs: list(f(*xs))), pvals)
    assert out_pvals[0].is_known() and not out_pvals[1].is_known()
    np.testing.assert_allclose(out_pvals[0].get_known(), [1.0, 2.0])
    b = np.array([3.0, 4.0], np.float32)
    (got,) = core.eval_jaxpr(jaxpr, consts, b)
    np.testing.assert_allclose(got, np.sin([0.5, 1.0]) * b, rtol=1e-6)
    jaxpr, used = pe.dce_jaxpr(jax.make_jaxpr(f)(a, b).jaxpr, [False, True])
    assert used == [True, True] and len(jaxpr.outvars) == 1 and "mul" in str(jaxpr)
    jaxpr, used = pe.dce_jaxpr(jax.make_jaxpr(f)(a, b).jaxpr, [True, False])
    assert used == [True, False]
    jaxpr, out_avals, consts = pe.trace_to_jaxpr_dynamic(lu.wrap_init(lambda x: [jnp.cos(x)]),
                                                         [core.ShapedArray((2,), np.float32)])
    assert out_avals == [core.ShapedArray((2,), np.float32)] and "cos" in str(jaxpr)
