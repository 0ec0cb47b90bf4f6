"""jax.pure_callback and jax.experimental.io_callback: eager, under jit (between compiled segments),
scan, cond and vmap (each vmap_method), and the errors JAX gives (JAX 0.10.2's wording)."""
import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax.experimental import io_callback

F32 = jax.ShapeDtypeStruct((), jnp.float32)


def test_eager_and_jit_receive_arrays_and_cast_results():
    seen = []

    def cb(x):
        seen.append(type(x))
        return np.sin(np.asarray(x, np.float64))  # float64 results are cast to the declared float32

    spec = jax.ShapeDtypeStruct((2,), jnp.float32)
    out = jax.jit(lambda x: jax.pure_callback(cb, spec, x) * 2)(jnp.ones(2))
    assert out.dtype == jnp.float32 and seen == [jax.Array]
    np.testing.assert_allclose(out, 2 * np.sin(np.ones(2, np.float32)), rtol=1e-6)
    tree = jax.pure_callback(lambda a, b: {"s": a + b, "p": (a * b,)}, {"s": F32, "p": (F32,)}, 2.0, b=3.0)
    assert float(tree["s"]) == 5.0 and float(tree["p"][0]) == 6.0


def test_inside_control_flow():
    times_ten = lambda x: jax.pure_callback(lambda a: a * 10, F32, x)  # noqa: E731
    total, _ = jax.lax.scan(lambda c, x: (c + times_ten(x), None), 0.0, jnp.arange(3.0))
    assert float(total) == 30.0
    five = jax.jit(lambda x: jax.lax.cond(x > 0, lambda: jax.pure_callback(lambda: np.float32(5), F32),
                                          lambda: 0.0))
    assert float(five(1.0)) == 5.0 and float(five(-1.0)) == 0.0


def test_vmap_methods():
    double = lambda x: jax.pure_callback(lambda a: a * 2, F32, x, vmap_method="sequential")  # noqa: E731
    np.testing.assert_array_equal(jax.vmap(double)(jnp.arange(3.0)), [0, 2, 4])
    shapes = []

    def mul(x, y):
        shapes.append((x.shape, y.shape))
        return x * y

    for method, y_shape in (("expand_dims", (1,)), ("broadcast_all", (2,))):
        f = lambda x, y: jax.pure_callback(mul, F32, x, y, vmap_method=method)  # noqa: E731
        np.testing.assert_array_equal(jax.vmap(f, in_axes=(0, None))(jnp.array([1.0, 2.0]), 3.0), [3, 6])
        assert shapes[-1] == ((2,), y_shape)  # called once on the whole batch
    with pytest.raises(NotImplementedError, match="Got vmap_method=None"):
        jax.vmap(lambda x: jax.pure_callback(np.sin, F32, x))(jnp.ones(2))
    with pytest.raises(ValueError, match="vmap_method must be on of the allowed methods"):
        jax.pure_callback(np.sin, F32, 1.0, vmap_method="parallel")


def test_errors():
    with pytest.raises(ValueError, match="Pure callbacks do not support JVP"):
        jax.grad(lambda x: jax.pure_callback(np.sin, F32, x))(1.0)
    with pytest.raises(ValueError, match=r"returned a value of shape \(3,\).*f32\[2\]"):
        jax.pure_callback(lambda x: np.ones(3), jax.ShapeDtypeStruct((2,), jnp.float32), jnp.ones(2))
    with pytest.raises(TypeError, match="result_shape_dtypes"):
        jax.pure_callback(np.sin, 3, 1.0)


def test_io_callback_runs_in_order_even_when_unused():
    log = []

    @jax.jit
    def f(x):
        io_callback(lambda v: log.append(float(v)) or np.int32(0), jax.ShapeDtypeStruct((), jnp.int32), x)
        return x + 1

    assert float(f(1.0)) == 2.0 and float(f(2.0)) == 3.0
    assert log == [1.0, 2.0]
    jax.vmap(lambda x: io_callback(lambda v: log.append(float(v)) or v, F32, x))(jnp.array([5.0, 6.0]))
    assert log[2:] == [5.0, 6.0]
    with pytest.raises(ValueError, match="Cannot `vmap` ordered IO callback"):
        jax.vmap(lambda x: io_callback(lambda v: v, F32, x, ordered=True))(jnp.ones(2))


def test_named_scope_and_named_call():
    with jax.named_scope("block"):
        y = jnp.sin(1.0)
    assert float(y) == pytest.approx(np.sin(1.0))
    with pytest.raises(TypeError, match="named_scope name argument must be a string"):
        with jax.named_scope(3):
            pass
    f = jax.named_call(lambda x: 2 * x, name="double")
    assert float(jax.jit(f)(2.0)) == 4.0 and float(jax.grad(f)(1.0)) == 2.0


def test_a_callbacks_exception_is_a_jax_runtime_error():
    """As JAX (values recorded from JAX 0.10.2): pure_callback and io_callback, eager or jitted, and a
    jitted debug.callback raise jax.errors.JaxRuntimeError, worded as XLA's CPU callback error and
    ending in the callback's own exception; an eager debug.callback raises the exception itself."""
    def bad(x):
        raise ValueError("boom from callback")

    def pure(x):
        return jax.pure_callback(bad, jax.ShapeDtypeStruct(x.shape, x.dtype), x)

    def io(x):
        return io_callback(bad, jax.ShapeDtypeStruct(x.shape, x.dtype), x)

    def debug(x):
        jax.debug.callback(bad, x)
        return x

    for f in (pure, jax.jit(pure), io, jax.jit(io), jax.jit(debug)):
        with pytest.raises(jax.errors.JaxRuntimeError) as info:
            jax.block_until_ready(f(jnp.ones(2)))
        text = str(info.value)
        assert text.startswith("INTERNAL: CpuCallback error calling callback: Traceback (most recent call last):")
        assert text.rstrip().endswith("ValueError: boom from callback")
        assert isinstance(info.value, RuntimeError)
    with pytest.raises(ValueError, match="^boom from callback$"):
        debug(jnp.ones(2))
