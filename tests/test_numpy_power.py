"""jnp.power (x ** y): concrete integer exponents, traced exponents under jit, and result types,
with values and reprs recorded from JAX 0.10.2."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax._src import core


def test_traced_integer_exponent_under_jit():
    # Adam's bias correction: b1 ** (step + 1) with a traced step (was a ConcretizationTypeError).
    assert repr(xjax.jit(lambda x, i: x ** (i + 1))(jnp.float32(0.9), 2)) == "Array(0.7289999, dtype=float32)"
    bias = xjax.jit(lambda b1, step: 1 - b1 ** (step + 1))
    np.testing.assert_allclose(np.asarray(bias(jnp.float32(0.9), jnp.int32(9))), 1 - 0.9 ** 10, rtol=1e-6)


@pytest.mark.parametrize("fn, args, want", [
    (lambda x, i: x ** i, (jnp.array([2, 3, -2]), 3), "Array([ 8, 27, -8], dtype=int32)"),
    (lambda x, i: x ** i, (2, 10), "Array(1024, dtype=int32)"),
    (lambda x, i: x ** i, (jnp.array([2., 0.5]), jnp.array([3, 2], jnp.int8)), "Array([8.  , 0.25], dtype=float32)"),
    (lambda x, i: x ** i, (jnp.array([2., 0.5], jnp.float16), 3), "Array([8.   , 0.125], dtype=float16)"),
    (lambda x, i: x ** i, (jnp.array([True, False]), 3), "Array([1, 0], dtype=int32)"),
    (lambda x, i: x ** i, (True, False), "Array(1, dtype=int32)"),
    (lambda i: 2 ** i, (5,), "Array(32, dtype=int32)"),
    (lambda i: 2.0 ** i, (5,), "Array(32., dtype=float32, weak_type=True)"),
    (lambda i: 2.0 ** i, (jnp.array(5),), "Array(32., dtype=float32, weak_type=True)"),
    (lambda b, i: b ** (i + 1), (0.9, 0), "Array(0.9, dtype=float32, weak_type=True)"),
    (lambda x: x ** jnp.array(2), (jnp.float32(3),), "Array(9., dtype=float32)"),
    (lambda x, i: x ** i, (jnp.array([1.5, 2.]), jnp.array([2, 3])), "Array([2.25, 8.  ], dtype=float32)"),
    (lambda x, i: x ** i, (2.0, jnp.array([2, 3])), "Array([4., 8.], dtype=float32)"),
    (lambda x, i: x ** i, (2.0, jnp.array(3)), "Array(8., dtype=float32, weak_type=True)"),
    (lambda x, i: x ** i, (jnp.float32(2.0), 3), "Array(8., dtype=float32)"),
    (lambda x, i: x ** i, (2, 3.0), "Array(8., dtype=float32, weak_type=True)"),
    (lambda x, i: x ** i, (jnp.int8(2), jnp.array(3, jnp.uint8)), "Array(8, dtype=int16)"),
    (lambda x, i: x ** i, (jnp.bfloat16(2), 3), "Array(8, dtype=bfloat16)"),
    (lambda x, i: x ** i, (jnp.float16(2), jnp.int8(3)), "Array(8., dtype=float16)"),
])
def test_jit_power_matches_jax(fn, args, want):
    assert repr(xjax.jit(fn)(*args)) == want


@pytest.mark.parametrize("x1, x2, want", [
    (True, 2, "Array(1, dtype=int32)"),
    (jnp.array([True, False]), 3, "Array([1, 0], dtype=int32)"),
    (jnp.array([True, False]), jnp.array([True, True]), "Array([1, 0], dtype=int32)"),
    (jnp.array([2, 3], jnp.int8), jnp.array(2), "Array([4, 9], dtype=int8)"),
    (jnp.array([2., 3.]), np.array(2), "Array([4., 9.], dtype=float32)"),
    (jnp.array([2., 3.]), np.array([2]), "Array([4., 9.], dtype=float32)"),
    (jnp.float32(2), jnp.array([2]), "Array([4.], dtype=float32)"),
    (jnp.array([2, 3], jnp.int8), jnp.array([2], jnp.uint8), "Array([4, 9], dtype=int16)"),
    (jnp.array([2, 3], jnp.int8), 2.0, "Array([4., 9.], dtype=float32, weak_type=True)"),
    (2, jnp.array([2, 3], jnp.int8), "Array([4, 8], dtype=int8)"),
    (2.0, jnp.array([2, 3], jnp.int8), "Array([4., 8.], dtype=float32)"),
    (jnp.array([2, 3], jnp.bfloat16), jnp.array([2, 3]), "Array([4, 27], dtype=bfloat16)"),
    (jnp.array([2., 3.]), -2, "Array([0.25      , 0.11111111], dtype=float32)"),
    (jnp.array([2., 3.]), np.int64(3), "Array([ 8., 27.], dtype=float32)"),
    (2, 3, "Array(8, dtype=int32, weak_type=True)"),
    (2.0, 3, "Array(8., dtype=float32, weak_type=True)"),
    (2.0, jnp.int8(3), "Array(8., dtype=float32, weak_type=True)"),
    (2.0, jnp.array([[2]]), "Array([[4.]], dtype=float32)"),
    (jnp.asarray(2.0), jnp.array([2, 3]), "Array([4., 8.], dtype=float32)"),
    (jnp.array([2., 3.]), jnp.array(True), "Array([2., 3.], dtype=float32)"),
    (2.0, True, "Array(2., dtype=float32, weak_type=True)"),
    (jnp.float32(2), np.array(3), "Array(8., dtype=float32)"),
    (jnp.float32(2), np.array([3]), "Array([8.], dtype=float32)"),
])
def test_eager_power_matches_jax(x1, x2, want):
    assert repr(jnp.power(x1, x2)) == want


def test_concrete_integer_exponent_uses_integer_pow_and_traced_uses_pow():
    assert "integer_pow[y=2]" in str(xjax.make_jaxpr(lambda x: x ** 2)(1.0))
    text = str(xjax.make_jaxpr(lambda x, i: x ** i)(1.0, 2))
    assert "pow" in text and "integer_pow" not in text


def test_integers_to_concrete_negative_powers_raise():
    with pytest.raises(TypeError, match=r"Integers cannot be raised to negative powers, got "
                                        r"integer_pow\(int32\[2\], -1\)"):
        jnp.power(jnp.array([2, 3]), -1)


def test_to_concrete_value():
    x = jnp.arange(3)
    assert core.to_concrete_value(x) is x
    assert core.to_concrete_value(2) == 2
    seen = []
    xjax.jit(lambda t: seen.append(core.to_concrete_value(t)) or t)(x)
    assert seen == [None]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_lax_pow_takes_an_integer_exponent_for_a_float_base(dtype):
    # JAX 0.10.2: lax.pow(f32[6], i32[6]) -> [8, -8, inf, 1.1057332e+07, 1, 1] (y converted to x's dtype).
    x = jnp.array([2.0, -2.0, 0.0, 1.5, np.inf, np.nan], dtype)
    y = jnp.array([3, 3, -1, 40, 0, 0], jnp.int32)
    got = lax.pow(x, y)
    assert got.dtype == x.dtype
    with np.errstate(divide="ignore", over="ignore"):
        want = np.power(np.asarray(x, np.float64), np.asarray(y, np.float64)).astype(x.dtype).astype(np.float32)
    np.testing.assert_allclose(np.asarray(got, np.float32), want, rtol=1e-2 if dtype != "float32" else 1e-7)
    assert xjax.grad(lambda a: lax.pow(a, jnp.int32(3)).sum())(jnp.array([2.0, -2.0])).tolist() == [12.0, 12.0]
    with pytest.raises(TypeError, match=f"lax.pow requires arguments to have the same dtypes, got int32, {dtype}"):
        lax.pow(y, x)
