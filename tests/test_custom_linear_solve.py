"""lax.custom_linear_solve: solves by a solver loop that is never differentiated; derivatives with
respect to b and to what matvec closes over, forward and reverse, under vmap and jit. Values
recorded from JAX 0.10.2 (rounded to 5 decimals)."""
import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax import lax

M = jnp.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
N = jnp.array([[2.0, 1.0], [0.0, 3.0]])
B = jnp.array([1.0, 2.0, 3.0])


def richardson(matvec, b):  # a fixed number of steps: the loop itself has no useful derivative
    return lax.fori_loop(0, 200, lambda _, x: x + 0.2 * (b - matvec(x)), jnp.zeros_like(b))


def sym(m, b):
    return lax.custom_linear_solve(lambda x: m @ x, b, richardson, symmetric=True)


def nonsym(n, b):
    return lax.custom_linear_solve(lambda x: n @ x, b, lambda f, y: jnp.linalg.solve(n, y),
                                   lambda f, y: jnp.linalg.solve(n.T, y))


CASES = {  # recorded from JAX 0.10.2
    "solve": (lambda: sym(M, B), [-0.08173, 0.59652, 1.46078]),
    "grad_b": (lambda: jax.grad(lambda b: sym(M, b).sum())(B), [0.12964, 0.26069, 0.44152]),
    "grad_matrix": (lambda: jax.grad(lambda m: (sym(m, B) ** 2).sum())(M),
                    [[-0.02702, 0.19723, 0.48297], [0.03332, -0.24321, -0.59558], [0.12281, -0.89638, -2.19506]]),
    "jacfwd_b": (lambda: jax.jacfwd(lambda b: sym(M, b))(B),
                 [[0.27994, -0.08924, -0.06106], [-0.08924, 0.36402, -0.01409], [-0.06106, -0.01409, 0.51667]]),
    "grad_nonsymmetric": (lambda: jax.grad(lambda n: nonsym(n, jnp.array([1.0, -1.0])).sum())(N),
                          [[-0.33333, 0.16667], [-0.11111, 0.05556]]),
    "vmap": (lambda: jax.vmap(lambda bb: sym(M, bb))(jnp.stack([B, 2 * B])),
             [[-0.08173, 0.59652, 1.46078], [-0.16346, 1.19305, 2.92156]]),
    "jit": (lambda: jax.jit(lambda b: nonsym(N, b))(jnp.array([1.0, -1.0])), [0.66667, -0.33333]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax(name):
    run, want = CASES[name]
    np.testing.assert_allclose(run(), want, atol=2e-5)


def test_reverse_mode_needs_a_transpose_solve():
    f = lambda b: lax.custom_linear_solve(lambda x: N @ x, b, lambda f, y: jnp.linalg.solve(N, y))  # noqa: E731
    np.testing.assert_allclose(jax.jacfwd(f)(jnp.array([1.0, -1.0])), np.linalg.inv(np.asarray(N)), rtol=1e-6)
    with pytest.raises(TypeError, match="transpose_solve required for backwards mode"):
        jax.grad(lambda b: f(b).sum())(jnp.array([1.0, -1.0]))
