"""The matrix-product kernels that a plan's dot_general and dot_general_add steps get when their
contracting dims are read once at lowering (cpu/contraction.cpp, specialize_matrix): every layout,
alone and accumulated in a loop, against NumPy in float64; operands those kernels do not take (other
ranks, integer and half dtypes) go to the general kernel."""
import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax import lax

RNG = np.random.default_rng(1)
LAYOUTS = [(0, 0), (0, 1), (1, 0), (1, 1)]


def _operands(lc, rc, m=5, k=7, n=3, dtype=np.float32):
    lhs = RNG.normal(size=(k, m) if lc == 0 else (m, k)).astype(dtype)
    rhs = RNG.normal(size=(k, n) if rc == 0 else (n, k)).astype(dtype)
    return lhs, rhs


def _ref(lhs, rhs, lc, rc):
    a = np.asarray(lhs, np.float64)
    b = np.asarray(rhs, np.float64)
    return (a.T if lc == 0 else a) @ (b if rc == 0 else b.T)


def _dot(lc, rc):
    return lambda a, b: lax.dot_general(a, b, (((lc,), (rc,)), ((), ())))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("lc,rc", LAYOUTS)
def test_every_layout(lc, rc, dtype):
    with jax.enable_x64(dtype == np.float64):
        lhs, rhs = _operands(lc, rc, dtype=dtype)
        got = jax.jit(_dot(lc, rc))(lhs, rhs)
        assert got.dtype == dtype
        tol = 1e-12 if dtype == np.float64 else 1e-5
        np.testing.assert_allclose(got, _ref(lhs, rhs, lc, rc), rtol=tol, atol=tol)


@pytest.mark.parametrize("lc,rc", LAYOUTS)
def test_accumulated_in_a_loop(lc, rc):
    # acc + dot(...) in a loop body becomes dot_general_add, updating the sum in place.
    n = 6
    lhs, rhs = _operands(lc, rc)
    ls = np.stack([lhs * (1 + 0.1 * i) for i in range(n)])
    dot = _dot(lc, rc)

    def f(acc0, ls, rhs):
        return lax.fori_loop(0, n, lambda i, acc: acc + dot(ls[i], rhs), acc0)
    acc0 = RNG.normal(size=(5, 3)).astype(np.float32)
    got = jax.jit(f)(acc0, ls, rhs)
    want = acc0 + sum(_ref(ls[i], rhs, lc, rc) for i in range(n))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_operands_the_matrix_kernels_do_not_take():
    # A 3-d lhs with one contracting dim and no batch dims: the general kernel.
    x = RNG.normal(size=(2, 4, 7)).astype(np.float32)
    w = RNG.normal(size=(7, 3)).astype(np.float32)
    got = jax.jit(lambda x, w: lax.dot_general(x, w, (((2,), (0,)), ((), ()))))(x, w)
    np.testing.assert_allclose(got, np.einsum("abk,kn->abn", x.astype(np.float64), w), rtol=1e-5, atol=1e-5)
    for lc, rc in LAYOUTS:
        lhs, rhs = _operands(lc, rc, dtype=np.float32)
        ints = (lhs * 4).astype(np.int32), (rhs * 4).astype(np.int32)
        np.testing.assert_array_equal(jax.jit(_dot(lc, rc))(*ints), _ref(*ints, lc, rc).astype(np.int64))
        halves = lhs.astype(jnp.bfloat16), rhs.astype(jnp.bfloat16)
        got = jax.jit(_dot(lc, rc))(*halves)
        assert got.dtype == jnp.bfloat16
        np.testing.assert_allclose(np.asarray(got, np.float64), _ref(*halves, lc, rc), rtol=2e-2, atol=5e-2)
    # A vector operand (m = 1): still a matrix product of the right shape.
    v = RNG.normal(size=(1, 7)).astype(np.float32)
    np.testing.assert_allclose(jax.jit(_dot(1, 0))(v, w), v.astype(np.float64) @ w, rtol=1e-5, atol=1e-5)
