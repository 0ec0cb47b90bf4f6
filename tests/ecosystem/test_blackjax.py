"""BlackJAX runs unchanged on xjax (`install_as_jax`): NUTS on a correlated 2-d Gaussian, its steps
in a jitted lax.scan.

The program runs in a fresh interpreter (install_as_jax is process-global). The references were
recorded by running the same program with JAX 0.10.2.
"""
import importlib.util
import json

import numpy as np
import pytest

from isolated import run_isolated

PRELUDE = "import xjax\nxjax.install_as_jax()\n"

PROGRAM = """
import json
import numpy as np
import jax
import jax.numpy as jnp
import blackjax

mean = jnp.array([1.0, -2.0])
prec = jnp.array([[2.0, 0.6], [0.6, 1.0]])


def logdensity(x):
    d = x["x"] - mean
    return -0.5 * d @ prec @ d


nuts = blackjax.nuts(logdensity, step_size=0.4, inverse_mass_matrix=jnp.ones(2))
state = nuts.init({"x": jnp.zeros(2)})


@jax.jit
def sample(key, state):
    def one_step(state, key):
        state, info = nuts.step(key, state)
        return state, (state.position["x"], info.num_integration_steps)

    return jax.lax.scan(one_step, state, jax.random.split(key, 2000))


_, (xs, steps) = sample(jax.random.key(1), state)
xs = np.asarray(xs)
print(json.dumps({"first": xs[:3].tolist(), "steps": np.asarray(steps[:10]).tolist(),
                  "mean": xs.mean(0).tolist(), "cov": np.cov(xs.T).tolist()}))
"""

# Recorded from JAX 0.10.2 (the same program, with jax itself).
JAX_FIRST = [[0.2665230631828308, -0.8827409148216248], [-0.8516176342964172, -0.42194822430610657],
             [-0.08602960407733917, 1.67966628074646]]
JAX_STEPS = [3, 3, 7, 7, 15, 11, 7, 7, 3, 15]
JAX_MEAN = [0.9982886910438538, -1.9953991174697876]
JAX_COV = [[0.6009755569083072, -0.3134968853655742], [-0.3134968853655742, 1.2102309796714354]]


@pytest.fixture(scope="module")
def nuts_run():
    if importlib.util.find_spec("blackjax") is None:
        pytest.skip("blackjax is not installed")
    return json.loads(run_isolated(PROGRAM, PRELUDE, timeout=300))


def test_nuts_follows_jax_path(nuts_run):
    # Typed keys split and drawn as JAX's threefry does: the same momenta and tree directions, so
    # the same trajectories (lengths exactly, positions to float32 rounding).
    assert nuts_run["steps"] == JAX_STEPS
    np.testing.assert_allclose(nuts_run["first"], JAX_FIRST, rtol=1e-5, atol=1e-6)


def test_nuts_moments_match_jax(nuts_run):
    np.testing.assert_allclose(nuts_run["mean"], JAX_MEAN, atol=1e-3)
    np.testing.assert_allclose(nuts_run["cov"], JAX_COV, atol=1e-3)
    # and the target's own moments: mean [1, -2], covariance inv([[2, .6], [.6, 1]])
    np.testing.assert_allclose(nuts_run["mean"], [1.0, -2.0], atol=0.1)
    np.testing.assert_allclose(nuts_run["cov"], np.linalg.inv([[2.0, 0.6], [0.6, 1.0]]), atol=0.1)
