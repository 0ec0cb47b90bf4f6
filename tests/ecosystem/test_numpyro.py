"""NumPyro runs unchanged on xjax (`install_as_jax`): NUTS on a small Bayesian linear regression.

Each program runs in a fresh interpreter (install_as_jax is process-global). The references were
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
import numpyro
import numpyro.distributions as dist
from numpyro.infer import MCMC, NUTS


def model(x, y=None):
    w = numpyro.sample("w", dist.Normal(0.0, 1.0).expand([2]).to_event(1))
    b = numpyro.sample("b", dist.Normal(0.0, 1.0))
    sigma = numpyro.sample("sigma", dist.HalfNormal(1.0))
    numpyro.sample("y", dist.Normal(x @ w + b, sigma), obs=y)


rng = np.random.RandomState(0)
x = rng.randn(50, 2).astype(np.float32)
y = (x @ np.array([1.5, -0.7], np.float32) + 0.3 + 0.5 * rng.randn(50)).astype(np.float32)


def run(num_warmup, num_samples):
    mcmc = MCMC(NUTS(model), num_warmup=num_warmup, num_samples=num_samples, progress_bar=False)
    mcmc.run(jax.random.PRNGKey(0), x, y)
    return {k: np.asarray(v) for k, v in mcmc.get_samples().items()}


short = run(5, 3)
long = run(300, 1000)
print(json.dumps({"short": {k: v.tolist() for k, v in short.items()},
                  "means": {k: v.mean(0).tolist() for k, v in long.items()}}))
"""

# Recorded from JAX 0.10.2 (the same program, with jax itself).
JAX_SHORT = {"b": [0.7940593957901001, 0.7779887914657593, 1.1812220811843872],
             "sigma": [1.655527114868164, 1.8495450019836426, 4.201544284820557],
             "w": [[-1.3659939765930176, -0.5530745983123779], [-1.3581329584121704, -0.5797201991081238],
                   [-0.49483346939086914, -0.9407674074172974]]}
JAX_MEANS = {"b": 0.434100866317749, "sigma": 0.5417639017105103, "w": [1.4837225675582886, -0.7432287335395813]}


@pytest.fixture(scope="module")
def nuts_run():
    if importlib.util.find_spec("numpyro") is None:
        pytest.skip("numpyro is not installed")
    return json.loads(run_isolated(PROGRAM, PRELUDE, timeout=300))


def test_nuts_first_samples_follow_jax(nuts_run):
    # The PRNG is JAX's threefry bit for bit, so a short chain takes JAX's path: the initial point,
    # momenta and tree directions are the same draws, and positions differ by float32 rounding only.
    for name, want in JAX_SHORT.items():
        np.testing.assert_allclose(nuts_run["short"][name], want, rtol=1e-4, atol=1e-5, err_msg=name)


def test_nuts_posterior_means_match_jax(nuts_run):
    # Over hundreds of leapfrog steps, rounding differences grow as a chaotic system's do (XLA
    # rewrites x / s as x * (1 / s) and sums in its own order; xjax divides and sums otherwise), so
    # the long chains are two samples of one posterior: their means agree within Monte Carlo error
    # (posterior sds ~0.05-0.07, 1000 draws).
    for name, want in JAX_MEANS.items():
        np.testing.assert_allclose(nuts_run["means"][name], want, atol=0.02, err_msg=name)
    np.testing.assert_allclose(nuts_run["means"]["w"], [1.5, -0.7], atol=0.1)  # near the true weights
