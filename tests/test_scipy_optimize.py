"""jax.scipy.optimize.minimize (BFGS) follows JAX 0.10.2 step by step: the same iterations, function
evaluations and exit status, and the same points up to float32 rounding (values recorded from JAX)."""
import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax.scipy.optimize import minimize


def rosen(x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def quad(x, a):
    return jnp.sum((x - a) ** 2 * jnp.arange(1.0, x.shape[0] + 1))


# Recorded from JAX 0.10.2: x, success, status, fun, nfev, nit.
RECORDED = {
    "rosen": ([-0.7048668265342712, 0.5241801738739014, 0.27636727690696716], False, 3, 3.207995891571045, 13, 4),
    "quad": ([1.0, -2.0, 3.0, 0.5], True, 0, 0.0, 12, 11),
    "jit": ([0.8547136783599854, 0.7253784537315369], False, 1, 0.02376759797334671, 14, 5),
    "gtol": ([0.9999112486839294, 0.9998051524162292], True, 0, 3.79888582813237e-08, 35, 22),
}


def _run(name):
    if name == "rosen":  # a line search that runs out of steps: status 3 (2 + the search's 1)
        return minimize(rosen, jnp.array([-1.2, 1.0, 0.5]), method="BFGS")
    if name == "quad":
        return minimize(quad, jnp.zeros(4), args=(jnp.array([1.0, -2.0, 3.0, 0.5]),), method="BFGS")
    if name == "jit":  # maxiter reached: status 1
        return jax.jit(lambda x0: minimize(rosen, x0, method="BFGS", options=dict(maxiter=5)))(jnp.array([0.5, 0.5]))
    return minimize(rosen, jnp.array([2.0, 2.0]), method="bfgs", options=dict(gtol=1e-2))


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_bfgs_follows_jax(name):
    x, success, status, fun, nfev, nit = RECORDED[name]
    r = _run(name)
    # (gtol: 22 steps down the valley to where the gradient is 1e-2 end at a point that moves with
    # the rounding of the jitted function: JAX's LLVM fuses one of rosen's two multiply-adds by its
    # own operand order, the contract pass the first; 6e-5 apart, the same steps and evaluations.)
    np.testing.assert_allclose(r.x, x, rtol=1e-4 if name == "gtol" else 3e-5, atol=1e-6)
    assert (bool(r.success), int(r.status), int(r.nfev), int(r.njev), int(r.nit)) == (success, status, nfev, nfev, nit)
    np.testing.assert_allclose(r.fun, fun, rtol=1e-4, atol=1e-8)
    # (jitted, as the search computes it: near the minimum the gradient is a difference of large
    # terms, where the eager ops' second rounding of each multiply-add shows)
    np.testing.assert_allclose(r.jac, jax.jit(jax.grad(rosen if name != "quad" else quad))(
        r.x, *((jnp.array([1.0, -2.0, 3.0, 0.5]),) if name == "quad" else ())), rtol=1e-5, atol=1e-6)
    assert r.hess_inv.shape == (len(x), len(x))


def test_arguments():
    with pytest.raises(ValueError, match="Method nelder-mead not recognized"):
        minimize(rosen, jnp.zeros(2), method="nelder-mead")
    with pytest.raises(TypeError, match="args argument to jax.scipy.optimize.minimize must be a tuple"):
        minimize(quad, jnp.zeros(2), args=jnp.ones(2), method="BFGS")
    assert jax.scipy.optimize.minimize is minimize
