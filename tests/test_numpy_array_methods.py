"""Operators and methods of xjax.Array (the same ones are attached to tracers), reprs against JAX's."""
import operator

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src import core

A = np.array([[1.5, -2.0, 3.0], [0.0, 4.0, -0.5]], np.float32)
B = np.array([[2.0, 1.0, -1.0], [3.0, 0.5, 2.0]], np.float32)
I = np.array([[1, -2, 3], [0, 4, 7]], np.int32)


def check(got, want, dtype=None):
    got_np = np.asarray(got)
    want = np.asarray(want)
    assert got_np.shape == want.shape, (got_np.shape, want.shape)
    np.testing.assert_allclose(got_np.astype(np.float64), want.astype(np.float64), rtol=1e-6, atol=1e-6)
    if dtype is not None:
        assert got.dtype == np.dtype(dtype), (got.dtype, dtype)


BINOPS = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "lt", "le", "gt", "ge", "eq", "ne"]


@pytest.mark.parametrize("name", BINOPS)
def test_binary_operators_and_reflected(name):
    op = getattr(operator, name)
    a, b = (np.abs(A) + 1, B) if name == "pow" else (A, B)
    with np.errstate(all="ignore"):
        check(op(jnp.asarray(a), jnp.asarray(b)), op(a, b))
        check(op(jnp.asarray(a), 2.0), op(a, np.float32(2.0)))
        check(op(3.0, jnp.asarray(b)) if name != "pow" else op(3.0, jnp.asarray(a)),
              op(np.float32(3.0), b) if name != "pow" else op(np.float32(3.0), a))
        check(op(a, jnp.asarray(b)), op(a, b))


@pytest.mark.parametrize("name", ["and_", "or_", "xor", "lshift", "rshift"])
def test_integer_operators(name):
    op = getattr(operator, name)
    a, b = np.abs(I), np.array([[1, 2, 0], [3, 1, 2]], np.int32)
    check(op(jnp.asarray(a), jnp.asarray(b)), op(a, b), np.int32)
    check(op(jnp.asarray(a), 1), op(a, 1), np.int32)
    check(op(5, jnp.asarray(b)), op(5, b), np.int32)


def test_unary_operators():
    x = jnp.asarray(A)
    check(-x, -A)
    check(+x, A)
    check(abs(x), np.abs(A))
    check(~jnp.asarray(I), ~I)
    assert repr(round(jnp.asarray(2.5))) == "Array(2, dtype=int32)"
    check(round(x, 1), np.round(A, 1))
    q, r = divmod(jnp.asarray(I), 3)
    check(q, I // 3)
    check(r, I % 3)


def test_matmul_operator():
    x = jnp.asarray(A)
    check(x @ x.T, A @ A.T)
    check(A @ jnp.asarray(B.T), A @ B.T)


def test_unsupported_operands_return_not_implemented():
    x = jnp.arange(3)
    for other in ([1, 2, 3], (1, 2, 3), None, "a", {}):
        with pytest.raises(TypeError, match="unsupported operand"):
            x + other
        with pytest.raises(TypeError, match="unsupported operand"):
            other - x

    class Custom:
        def __radd__(self, other):
            return "custom"

    assert x + Custom() == "custom"


def test_methods():
    x = jnp.asarray(A)
    check(x.astype(jnp.int32), A.astype(np.int32), np.int32)
    check(x.reshape(3, 2), A.reshape(3, 2))
    check(x.reshape((3, 2)), A.reshape(3, 2))
    check(x.reshape(-1), A.reshape(-1))
    check(x.transpose(), A.T)
    check(x.transpose(1, 0), A.T)
    check(x.T, A.T)
    check(x.flatten(), A.flatten())
    check(x.ravel(), A.ravel())
    check(x[None].squeeze(), A)
    check(x.clip(-1, 1), A.clip(-1, 1))
    check(x.round(), np.round(A))
    check(x.dot(x.T), A @ A.T)
    check(x.conj(), A)
    check(x.real, A)
    check(x.imag, np.zeros_like(A))
    check(x.repeat(2, axis=1), A.repeat(2, axis=1))
    check(x.sort(axis=1), np.sort(A, axis=1))
    check(x.argsort(axis=1), np.argsort(A, axis=1))
    check(x.take(jnp.asarray([0, 4])), A.take([0, 4]))
    check(x.swapaxes(0, 1), A.swapaxes(0, 1))
    check(x.cumsum(axis=1), A.cumsum(axis=1))
    check(x.cumprod(), A.cumprod())
    check(x.diagonal(), A.diagonal())
    check(x.trace(), A.trace())
    check(x.ptp(), np.ptp(A))
    check(x.at[0, 1].set(9.0), np.where(np.arange(6).reshape(2, 3) == 1, 9.0, A))
    assert x.itemsize == 4 and x.nbytes == 24 and x.size == 6 and x.ndim == 2 and len(x) == 2


def test_reprs_match_jax():
    assert repr(jnp.arange(3)) == "Array([0, 1, 2], dtype=int32)"
    assert repr(jnp.asarray(2.0)) == "Array(2., dtype=float32, weak_type=True)"
    assert repr(jnp.arange(3) * 2) == "Array([0, 2, 4], dtype=int32)"
    assert repr(jnp.arange(3.0) / 2) == "Array([0. , 0.5, 1. ], dtype=float32)"
    assert repr(jnp.ones((2, 2), jnp.bfloat16)) == "Array([[1, 1],\n       [1, 1]], dtype=bfloat16)"
    assert repr(jnp.zeros((0, 3))) == "Array([], shape=(0, 3), dtype=float32)"
    assert repr(jnp.asarray(True)) == "Array(True, dtype=bool)"
    assert repr(jnp.arange(3) < 1.5).startswith("Array([ True,  True, False], dtype=bool")


def test_methods_exist_on_tracer():
    for name in ("sum", "mean", "reshape", "astype", "at", "T", "__add__", "__radd__", "__matmul__", "__getitem__",
                 "__lt__", "__neg__", "clip", "argmax", "transpose", "flatten", "take", "repeat", "dot"):
        assert hasattr(core.Tracer, name), name
        assert hasattr(xjax.Array, name), name


def test_iter_and_len():
    x = jnp.asarray(A)
    rows = list(x)
    assert len(rows) == 2
    check(rows[1], A[1])
    assert len(x) == 2
    with pytest.raises(TypeError):
        len(jnp.asarray(1.0))


def test_objects_with_jax_array_in_operators_and_functions():
    # As JAX 0.10.2 (recorded): operators convert an object with __jax_array__ (a Flax Variable), while a
    # function that must type it raises JAX's ValueError.
    class Wrapped:
        def __init__(self, value):
            self.value = value

        def __jax_array__(self):
            return self.value

    w = Wrapped(jnp.arange(9.0).reshape(3, 3))
    np.testing.assert_array_equal(np.asarray(jnp.ones(3) @ w), np.ones(3) @ np.arange(9.0).reshape(3, 3))
    np.testing.assert_array_equal(np.asarray(jnp.ones((3, 3)) + w), 1 + np.arange(9.0).reshape(3, 3))
    np.testing.assert_array_equal(np.asarray(2.0 * jnp.ones((3, 3)) - w), 2 - np.arange(9.0).reshape(3, 3))
    for f in (jnp.sin, lambda v: jnp.add(1.0, v), lambda v: jnp.clip(v, 0, 1)):
        with pytest.raises(ValueError, match=r"Triggering __jax_array__\(\) during abstractification is no longer "
                                             "supported. To avoid this error, either explicitly convert your object "
                                             r"using jax.numpy.array\(\), or register your object as a pytree."):
            f(w)
