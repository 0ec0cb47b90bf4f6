"""Compositions of transformations that once raised where JAX computes; values recorded from JAX 0.10.2.

Each was found by composing jit, grad, vmap, linearize and control flow at random.
"""
import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax import lax
from xjax.test_util import check_grads


@pytest.fixture
def x64():
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", False)


def g(a, b):
    return b * jnp.sum(a) + jnp.sum(a * a)


# ---- add_any's transpose sums a cotangent back over the operand batching broadcast -------------------

def test_grad_of_vmapped_grad_with_an_unbatched_argument():
    f = lambda a: jnp.sum(jax.vmap(jax.grad(g), in_axes=(None, 0))(a, jnp.ones(3)))
    np.testing.assert_allclose(jax.grad(f)(jnp.ones(4)), np.full(4, 6.0))  # JAX: [6. 6. 6. 6.]


def test_vjp_of_vmapped_value_and_grad():
    f = lambda a: jax.vmap(jax.value_and_grad(g), in_axes=(None, 0))(a, jnp.ones(3))
    (ct,) = jax.vjp(f, jnp.ones(4))[1]((jnp.ones(3), jnp.ones((3, 4))))
    np.testing.assert_allclose(ct, np.full(4, 15.0))  # JAX: [15. 15. 15. 15.]


def test_hessian_of_vmapped_jacrev():
    h = jax.hessian(lambda a: jnp.sum(jax.vmap(jax.jacrev(g), in_axes=(None, 0))(a, jnp.ones(3))))(jnp.ones(4))
    np.testing.assert_allclose(h, np.zeros((4, 4)))  # JAX: zeros


def test_vmapped_grad_with_unbatched_argument_checks_numerically(x64):
    b = np.array([0.5, -1.0, 2.0])
    f = lambda a: jnp.sum(jnp.sin(jax.vmap(jax.grad(g), in_axes=(None, 0))(a, b)))
    check_grads(f, (np.array([0.3, -0.2, 0.7, 1.1]),), order=2)


# ---- lax.map over no examples ----------------------------------------------------------------------

@pytest.mark.parametrize("batch_size", [None, 0, 1, 2])
def test_map_of_zero_examples(batch_size):
    out = lax.map(lambda x: x * 2, jnp.zeros((0, 3)), batch_size=batch_size)
    assert out.shape == (0, 3) and out.dtype == jnp.float32


# ---- while_loop and fori_loop with traced bounds linearize (and refuse to transpose) ------------------

def _fori(x, n):
    return lax.fori_loop(0, n, lambda i, c: jnp.sin(c) * x, x)


def test_linearize_while_loop():
    f = lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * c[2], c[2] + 1.0), (0, x, x))
    out, f_jvp = jax.linearize(f, 1.5)
    assert int(out[0]) == 3
    np.testing.assert_allclose(out[1], 1.5 * 1.5 * 2.5 * 3.5, rtol=1e-6)
    np.testing.assert_allclose(f_jvp(1.0)[1], 39.75, rtol=1e-6)  # JAX: 39.75
    np.testing.assert_allclose(f_jvp(1.0)[2], 1.0)


def test_linearize_fori_loop_with_traced_bounds():
    def primal_and_tangent(x, n):
        primal, f_jvp = jax.linearize(lambda x: _fori(x, n), x)
        return primal, f_jvp(1.0)

    primal, tangent = jax.jit(primal_and_tangent)(0.5, 3)
    np.testing.assert_allclose(primal, 0.05921659, rtol=1e-6)  # JAX: 0.05921659
    np.testing.assert_allclose(tangent, 0.45773047, rtol=1e-6)  # JAX: 0.45773047
    got = jax.vmap(lambda x: jax.linearize(lambda x: _fori(x, 3), x)[1](1.0))(jnp.array([0.5, 0.7]))
    np.testing.assert_allclose(got, [0.45773047, 1.0875582], rtol=1e-6)


def test_linearized_while_loop_matches_jvp(x64):
    f = lambda x: lax.while_loop(lambda c: c[1] < 5.0, lambda c: (c[0] * jnp.cos(c[0]), c[1] + 1.0), (x, 0.0))[0]
    _, f_jvp = jax.linearize(f, 0.7)
    np.testing.assert_allclose(f_jvp(1.0), jax.jvp(f, (0.7,), (1.0,))[1], rtol=1e-12)
    check_grads(f, (0.7,), order=1, modes=("fwd",))


@pytest.mark.parametrize("fn", [
    lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x),
    lambda x: jax.jit(_fori)(x, 3),
])
def test_reverse_mode_of_while_loop_is_refused_as_jax_does(fn):
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work for lax.while_loop"):
        jax.grad(fn)(1.5)


# ---- collectives inside a loop body, under a vmap whose operands are not batched ---------------------

def _scan_with(collective):
    return lambda x: lax.scan(lambda c, _: (jnp.tanh(c) + collective(c, "i"), None), x, None, length=2)[0]


@pytest.mark.parametrize("collective, expected", [(lax.psum, 6.515234), (lax.pmax, 2.704275)])
def test_collective_in_scan_under_vmap_of_unbatched_values(collective, expected):
    got = jax.vmap(_scan_with(collective), in_axes=None, axis_size=2, axis_name="i")(1.0)
    np.testing.assert_allclose(got, [expected, expected], rtol=1e-6)  # JAX's values


def test_grad_through_pmax_in_scan_under_vmap_of_unbatched_values():
    f = lambda x: jnp.sum(jax.vmap(_scan_with(lax.pmax), in_axes=None, axis_size=2, axis_name="i")(x))
    np.testing.assert_allclose(jax.grad(f)(1.0), 3.1561852, rtol=1e-6)  # JAX: 3.1561852


def test_psum_in_cond_under_vmap_of_unbatched_values():
    f = lambda x: lax.cond(x > 0, lambda y: lax.psum(y, "i"), lambda y: -y, x)
    np.testing.assert_allclose(jax.vmap(f, in_axes=None, axis_size=3, axis_name="i")(2.0), [6.0, 6.0, 6.0])


# ---- branches whose jaxprs keep consts of their own ----------------------------------------------------

def test_jit_grad_of_cond_calling_custom_jvp_with_a_constant():
    const = jnp.array([1.0, 2.0, 3.0])

    @jax.custom_jvp
    def f(x):
        return jnp.sin(x) * const

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), jnp.cos(x) * const * t

    loss = lambda x, p: jnp.sum(lax.cond(p, f, lambda x: x * const, x))
    for p, expected in [(True, np.cos(1.0) * np.array([1.0, 2.0, 3.0])), (False, [1.0, 2.0, 3.0])]:
        np.testing.assert_allclose(jax.jit(jax.grad(loss))(jnp.ones(3), p), expected, rtol=1e-6)
        np.testing.assert_allclose(jax.grad(loss)(jnp.ones(3), p), expected, rtol=1e-6)


# ---- scalar and slice indices are unique: scatter_mul differentiates -----------------------------------

def test_grad_of_at_mul_with_a_scalar_index():
    gx, gy = jax.grad(lambda x, y: jnp.sum(x.at[1].mul(y)), argnums=(0, 1))(jnp.array([1.0, 2.0, 1.0]), 2.0)
    np.testing.assert_allclose(gx, [1.0, 2.0, 1.0])  # JAX: [1. 2. 1.]
    np.testing.assert_allclose(gy, 2.0)  # JAX: 2.


def test_at_mul_with_slices_checks_numerically(x64):
    f = lambda x, y: jnp.sum(jnp.sin(x.at[1:3].mul(y)))
    check_grads(f, (np.array([1.0, 2.0, 1.0, 0.5]), np.array([0.3, -1.2])), order=1)


def test_scalar_index_gathers_print_as_unique_and_sorted():
    text = str(jax.make_jaxpr(lambda x, i: x.at[i].mul(3.0))(jnp.ones(5), 2))
    assert "indices_are_sorted=True" in text and "unique_indices=True" in text, text
    text = str(jax.make_jaxpr(lambda x, i: x.at[i].mul(3.0))(jnp.ones(5), jnp.array([1, 1])))
    assert "unique_indices=False" in text, text
