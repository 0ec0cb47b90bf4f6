"""Tracer errors: each type and its message as JAX 0.10 words it, naming the function being traced and
the arguments the value depends on."""
import re

import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax import errors, lax

HERE = re.escape(__file__)


def raised(fn, *args, **kwargs):
    with pytest.raises(Exception) as e:
        fn(*args, **kwargs)
    return e.value


def test_bool_conversion():
    def f1(x):
        if x > 0:
            return x
        return -x

    e = raised(jax.jit(f1), 10)
    assert type(e) is errors.TracerBoolConversionError
    assert isinstance(e, errors.ConcretizationTypeError) and isinstance(e, TypeError)
    lines = str(e).splitlines()
    assert lines[0] == "Attempted boolean conversion of traced array with shape bool[]."
    assert re.fullmatch(rf"The error occurred while tracing the function f1 at {HERE}:\d+ for jit\. This concrete "
                        r"value was not available in Python because it depends on the value of the argument x\.",
                        lines[1])
    assert lines[2] == "See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError"


def test_while_on_traced_value_in_seed():
    def g(x, n):
        i = 0
        while i < n:
            i += 1
        return x + i

    e = raised(jax.jit(g), 10, 20)
    assert type(e).__name__ == "TracerBoolConversionError" and "Attempted boolean conversion" in str(e)
    assert str(e).splitlines()[0] == "Attempted boolean conversion of traced array with shape bool[]."
    assert "depends on the value of the argument n." in str(e)


def test_argument_names_in_messages():
    e = raised(jax.jit(lambda d: bool(d["a"][1] + d["b"])), {"a": (1.0, 2.0), "b": 3})
    assert "depends on the values of the arguments d['a'][1] and d['b']." in str(e)
    e = raised(jax.jit(lambda *args: bool(args[0] + args[2])), 1.0, 2.0, 3.0)
    assert "depends on the values of the arguments args[0] and args[2]." in str(e)
    e = raised(jax.jit(lambda x, **kw: bool(x + kw["z"])), 1.0, z=2.0)
    assert "depends on the values of the arguments x and kw['z']." in str(e)
    e = raised(jax.jit(lambda x, y, z: bool(x + y + z)), 1.0, 2.0, 3.0)
    assert "depends on the values of the arguments x, y, and z." in str(e)
    e = raised(jax.jit(lambda x, n: bool(x + n), static_argnums=0), 1.0, 2.0)
    assert "depends on the value of the argument n." in str(e)
    e = raised(jax.jit(lambda x: bool(jnp.ones(3).sum() > 0)), 1.0)
    assert "This value became a tracer due to JAX operations on these lines:" in str(e)


def test_traced_for_control_flow():
    e = raised(jax.jit(lambda x: lax.cond(x > 0, lambda y: bool(y), lambda y: y, x)), 1.0)
    assert re.search(r"tracing the function <lambda> at .*:\d+ for cond\. .* argument y\.", str(e))
    e = raised(lambda x: lax.while_loop(lambda y: bool(y), lambda y: y, x), 1.0)
    assert "for while_cond." in str(e)
    e = raised(lambda x: lax.scan(lambda c, y: (bool(y), y), x, jnp.ones(3)), 1.0)
    assert "for scan." in str(e) and "argument y." in str(e)
    e = raised(lambda: lax.fori_loop(0, 3, lambda i, c: c + int(i), 0))
    assert "for fori_loop." in str(e) and "argument i." in str(e)


def test_ambiguous_truth_value_of_array():
    e = raised(jax.jit(lambda x: bool(x)), jnp.ones(3))
    assert type(e) is ValueError
    assert str(e) == "The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()"


CONVERSIONS = [
    (lambda x: float(x), 1.0, errors.ConcretizationTypeError,
     "Abstract tracer value encountered where concrete value is expected: traced array with shape float32[]",
     "The problem arose with the `float` function. If trying to convert the data type of a value, try using "
     "`x.astype(float)` or `jnp.array(x, float)` instead."),
    (lambda x: int(x), 1.0, errors.ConcretizationTypeError,
     "Abstract tracer value encountered where concrete value is expected: traced array with shape float32[]",
     "The problem arose with the `int` function. If trying to convert the data type of a value, try using "
     "`x.astype(int)` or `jnp.array(x, int)` instead."),
    (lambda x: complex(x), 1.0, errors.ConcretizationTypeError,
     "Abstract tracer value encountered where concrete value is expected: traced array with shape float32[]",
     "The problem arose with the `complex` function. If trying to convert the data type of a value, try using "
     "`x.astype(complex)` or `jnp.array(x, complex)` instead."),
    (lambda x: x.item(), 1.0, errors.ConcretizationTypeError,
     "Abstract tracer value encountered where concrete value is expected: traced array with shape float32[]",
     "This occurred in the item() method of jax.Array"),
    (lambda x: [1, 2, 3][x], 1, errors.TracerIntegerConversionError,
     "The __index__() method was called on traced array with shape int32[]", None),
    (lambda x: np.asarray(x), 1.0, errors.TracerArrayConversionError,
     "The numpy.ndarray conversion method __array__() was called on traced array with shape float32[]", None),
    (lambda x: range(x), 3, errors.TracerIntegerConversionError,
     "The __index__() method was called on traced array with shape int32[]", None),
]


@pytest.mark.parametrize("k", range(len(CONVERSIONS)))
def test_conversions(k):
    fn, arg, exc, first, second = CONVERSIONS[k]
    e = raised(jax.jit(fn), arg)
    assert type(e) is exc and isinstance(e, TypeError)
    lines = str(e).splitlines()
    assert lines[0] == first
    if second is not None:
        assert lines[1] == second
    assert "depends on the value of the argument x." in str(e)
    assert lines[-1] == f"See https://docs.jax.dev/en/latest/errors.html#jax.errors.{exc.__name__}"


def test_make_jaxpr_errors_and_shapes_stay_static():
    e = raised(jax.make_jaxpr(lambda x: 1 if x else 0), 1.0)
    assert type(e) is errors.TracerBoolConversionError and "for jit." in str(e)
    # shapes are static: Python control flow on them works while tracing
    f = jax.jit(lambda x: x.sum() if x.ndim > 1 and x.shape[0] == 2 else x)
    assert float(f(jnp.ones((2, 2)))) == 4.0


def test_leaked_tracer():
    leak = []

    def leaky(x):
        leak.append(x)
        return x

    jax.jit(leaky)(1.0)
    for use in (lambda: jnp.sin(leak[0]), lambda: jax.jit(lambda y: y + leak[0])(1.0)):
        e = raised(use)
        assert type(e) is errors.UnexpectedTracerError and isinstance(e, TypeError)
        lines = str(e).splitlines()
        assert lines[0] == (
            "Encountered an unexpected tracer. A function transformed by JAX had a side effect, allowing for a "
            "reference to an intermediate value with type float32[] wrapped in a DynamicJaxprTracer to escape the "
            "scope of the transformation.")
        assert re.fullmatch(rf"The function being traced when the value leaked was leaky at {HERE}:\d+ traced for "
                            r"jit\.", lines[2])


def test_tracer_repr_and_type():
    seen = []
    jax.jit(lambda x, y: seen.append((repr(x), repr(y), type(x).__name__)))(1.0, jnp.ones(3))
    assert seen == [("JitTracer(~float32[])", "JitTracer(float32[3])", "DynamicJaxprTracer")]
