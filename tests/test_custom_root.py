"""lax.custom_root: roots found by a solver loop, differentiated by the implicit function theorem
(forward and reverse, under jit and vmap); values recorded from JAX 0.10.2."""
import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax import lax


def newton(f, x0):
    def body(_, x):
        fx, dfx = jax.jvp(f, (x,), (jnp.ones_like(x),))
        return x - fx / dfx

    return lax.fori_loop(0, 30, body, x0)


def newton_vec(f, x0):
    return lax.fori_loop(0, 5, lambda _, x: x - jnp.linalg.solve(jax.jacobian(f)(x), f(x)), x0)


def sqrt_cr(a):
    return lax.custom_root(lambda x: x ** 2 - a, 1.0, newton, lambda g, y: y / g(1.0))


def vec(a):  # 2 x0 + x1 = a, x0 + 3 x1 = a^2
    f = lambda x: jnp.array([2.0 * x[0] + x[1], x[0] + 3.0 * x[1]]) - jnp.array([a, a ** 2])  # noqa: E731
    return lax.custom_root(f, jnp.zeros(2), newton_vec, lambda g, y: jnp.linalg.solve(jax.jacobian(g)(y), y))


def test_scalar_root_and_its_derivatives():
    # Recorded from JAX 0.10.2.
    assert float(sqrt_cr(2.0)) == pytest.approx(1.4142135381698608, rel=1e-7)
    assert float(jax.grad(sqrt_cr)(2.0)) == pytest.approx(0.3535533845424652, rel=1e-7)
    assert float(jax.jit(jax.grad(sqrt_cr))(9.0)) == pytest.approx(0.1666666716337204, rel=1e-7)
    np.testing.assert_allclose(jax.vmap(jax.grad(sqrt_cr))(jnp.array([1.0, 4.0])), [0.5, 0.25], rtol=1e-7)


def test_vector_root_jacobians():
    # Recorded from JAX 0.10.2.
    np.testing.assert_allclose(vec(1.5), [0.44999998807907104, 0.6000000238418579], rtol=1e-6)
    np.testing.assert_allclose(jax.jacfwd(vec)(1.5), [0.0, 1.0], atol=1e-6)
    np.testing.assert_allclose(jax.jacrev(vec)(1.5), [0.0, 1.0], atol=1e-6)


def test_aux_and_structure_checks():
    def solve_with_aux(f, x0):
        return newton(f, x0), jnp.int32(30)

    x, steps = lax.custom_root(lambda x: x ** 3 - 8.0, 1.0, solve_with_aux, lambda g, y: y / g(1.0), has_aux=True)
    assert float(x) == pytest.approx(2.0) and int(steps) == 30
    with pytest.raises(TypeError, match="output pytree structure must match initial_guess"):
        lax.custom_root(lambda x: (x, x), 1.0, newton, lambda g, y: y)
