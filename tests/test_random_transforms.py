"""xjax.random under transformations: vmap over a batch of keys (against a loop over the keys),
grad of the reparameterised samplers (numerically checked, and gamma's implicit gradient against
JAX's values and SciPy's incomplete gamma function)."""
import numpy as np
import pytest
import scipy.special as sp

import xjax
import xjax.numpy as jnp
from batching_util import check_batch
from xjax import random
from xjax.test_util import check_grads

KEYS = np.asarray(random.split(random.PRNGKey(3), 4))

# Through exp, pow or tan, whose vector and scalar loops may round differently (an element's place
# in its tile changes under vmap): compared to a few ulp; the others bit for bit.
LAST_BITS = {"lognormal", "pareto", "cauchy", "beta", "t", "chisquare", "gamma", "gamma_array", "dirichlet", "maxwell",
             "ball"}

# (name, function of one key); each is vmapped over KEYS and compared with a loop.
BATCHED = [
    ("bits", lambda k: random.bits(k, (3,), jnp.uint8)),
    ("split", lambda k: random.split(k, 3)),
    ("fold_in", lambda k: random.fold_in(k, 7)),
    ("uniform", lambda k: random.uniform(k, (2, 3), minval=-1.0, maxval=2.0)),
    ("normal", lambda k: random.normal(k, (5,))),
    ("normal_f16", lambda k: random.normal(k, (5,), jnp.float16)),
    ("randint", lambda k: random.randint(k, (6,), -3, 9)),
    ("randint_int8", lambda k: random.randint(k, (6,), -3, 9, jnp.int8)),
    ("bernoulli", lambda k: random.bernoulli(k, 0.3, (6,))),
    ("rademacher", lambda k: random.rademacher(k, (6,))),
    ("truncated_normal", lambda k: random.truncated_normal(k, -1.0, 0.5, (4,))),
    ("exponential", lambda k: random.exponential(k, (4,))),
    ("laplace", lambda k: random.laplace(k, (4,))),
    ("logistic", lambda k: random.logistic(k, (4,))),
    ("gumbel", lambda k: random.gumbel(k, (4,))),
    ("cauchy", lambda k: random.cauchy(k, (4,))),
    ("lognormal", lambda k: random.lognormal(k, 0.3, (4,))),
    ("pareto", lambda k: random.pareto(k, 2.0, (4,))),
    ("weibull_min", lambda k: random.weibull_min(k, 1.0, 2.0, (4,))),
    ("gamma", lambda k: random.gamma(k, 2.0, (4,))),
    ("gamma_array", lambda k: random.gamma(k, jnp.array([0.3, 1.0, 4.0]))),
    ("loggamma", lambda k: random.loggamma(k, 0.5, (3,))),
    ("beta", lambda k: random.beta(k, 2.0, 0.5, (3,))),
    ("t", lambda k: random.t(k, 3.0, (3,))),
    ("chisquare", lambda k: random.chisquare(k, 3.0, (3,))),
    # these need batching rules of other families (reductions, sorting, control flow, linalg)
    ("dirichlet", lambda k: random.dirichlet(k, jnp.array([1.0, 2.0, 3.0]))),
    ("maxwell", lambda k: random.maxwell(k, (3,))),
    ("categorical", lambda k: random.categorical(k, jnp.array([0.1, 1.0, -0.5]), shape=(4,))),
    ("choice", lambda k: random.choice(k, 10, (3,), replace=False)),
    ("permutation", lambda k: random.permutation(k, 6)),
    ("poisson", lambda k: random.poisson(k, 3.0, (4,))),
    ("ball", lambda k: random.ball(k, 3)),
    ("orthogonal", lambda k: random.orthogonal(k, 3)),
    ("multivariate_normal", lambda k: random.multivariate_normal(k, jnp.zeros(2), jnp.eye(2))),
]


def _skip_if_other_family(e):
    msg = str(e)
    if "Batching rule for" in msg or "linalg" in msg:
        pytest.skip(f"needs another family's rule: {msg}")
    raise e


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name,fun", BATCHED, ids=[b[0] for b in BATCHED])
def test_vmap_over_keys_matches_a_loop(name, fun, jit):
    try:
        tol = 2e-6 if name in LAST_BITS else 0
        check_batch(fun, (KEYS,), rtol=tol, atol=tol, jit=jit)
    except NotImplementedError as e:
        _skip_if_other_family(e)


def test_vmap_over_typed_keys_and_parameters():
    try:
        _vmap_over_typed_keys_and_parameters()
    except NotImplementedError as e:
        _skip_if_other_family(e)


def _vmap_over_typed_keys_and_parameters():
    keys = random.wrap_key_data(KEYS)
    got = xjax.vmap(lambda k, lo: random.uniform(k, (3,), minval=lo, maxval=lo + 1.0))(keys, jnp.arange(4.0))
    want = np.stack([np.asarray(random.uniform(KEYS[i], (3,), minval=float(i), maxval=i + 1.0)) for i in range(4)])
    np.testing.assert_array_equal(got, want)
    got = xjax.vmap(lambda a: random.gamma(random.PRNGKey(0), a))(jnp.array([0.5, 2.0, 9.0]))
    want = [float(random.gamma(random.PRNGKey(0), a)) for a in (0.5, 2.0, 9.0)]
    np.testing.assert_allclose(got, want, rtol=1e-6)


# ---- gradients ---------------------------------------------------------------------------------------

KEY = random.PRNGKey(11)
# jax.grad of the samplers at KEY (jax 0.10.2).
JAX_GRADS = {
    "gamma": [2.5522093772888184, 0.759792685508728, 1.4962561130523682, 0.684234082698822, 0.9215337038040161,
              1.0700582265853882],
    "loggamma": [6.110925197601318, 1.9217814207077026, 0.348972350358963, 0.02710389532148838],
    "beta": [0.5819987654685974, -0.39077436923980713],
    "dirichlet": [-0.2876274585723877, -0.06220440939068794, 0.08062561601400375],
    "t": 0.14812780916690826,
    "chisquare": 4.217814922332764,
    "truncated_normal": [2.748426675796509, 0.3398568630218506],
}


def test_reparameterised_normal_and_uniform():
    z = np.asarray(random.normal(KEY, (5,)))
    g = xjax.grad(lambda mu, sigma: jnp.sum(mu + sigma * random.normal(KEY, (5,))), (0, 1))(0.5, 2.0)
    np.testing.assert_allclose(g, [5.0, z.sum()], rtol=1e-6)
    check_grads(lambda mu, sigma: mu + sigma * random.normal(KEY, (5,)), (0.5, 2.0), order=2)
    u01 = np.asarray(random.uniform(KEY, (6,)))
    g = xjax.grad(lambda lo, hi: jnp.sum(random.uniform(KEY, (6,), minval=lo, maxval=hi)), (0, 1))(-2.0, 3.0)
    np.testing.assert_allclose(g, [np.sum(1 - u01), np.sum(u01)], rtol=1e-5)
    check_grads(lambda lo, hi: random.uniform(KEY, (6,), minval=lo, maxval=hi), (-2.0, 3.0), order=1)


@pytest.mark.parametrize("fun,args", [
    (lambda s: random.lognormal(KEY, s, (4,)), (0.7,)),
    (lambda b: random.pareto(KEY, b, (4,)), (2.5,)),
    (lambda sc, c: random.weibull_min(KEY, sc, c, (4,)), (1.5, 2.0)),
    (lambda s: s * random.exponential(KEY, (4,)), (0.5,)),
    (lambda lo, hi: random.truncated_normal(KEY, lo, hi, (4,)), (-1.0, 2.0)),
])
def test_check_grads_of_parameterised_samplers(fun, args):
    check_grads(fun, args, order=1, rtol=2e-2)


def test_gamma_family_gradients_match_jax():
    a = jnp.array([0.2, 0.9, 1.0, 2.5, 7.0, 40.0])
    np.testing.assert_allclose(xjax.grad(lambda a: random.gamma(KEY, a).sum())(a), JAX_GRADS["gamma"], rtol=1e-4)
    np.testing.assert_allclose(xjax.grad(lambda a: random.loggamma(KEY, a).sum())(jnp.array([0.2, 0.9, 2.5, 40.0])),
                               JAX_GRADS["loggamma"], rtol=1e-4)
    np.testing.assert_allclose(xjax.grad(lambda a, b: random.beta(KEY, a, b, (4,)).sum(), (0, 1))(1.5, 2.5),
                               JAX_GRADS["beta"], rtol=1e-4)
    np.testing.assert_allclose(
        xjax.grad(lambda a: (random.dirichlet(KEY, a) * jnp.arange(3.0)).sum())(jnp.array([1.0, 2.0, 3.0])),
        JAX_GRADS["dirichlet"], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(xjax.grad(lambda df: random.t(KEY, df, (5,)).sum())(4.0), JAX_GRADS["t"], rtol=1e-4)
    np.testing.assert_allclose(xjax.grad(lambda df: random.chisquare(KEY, df, (5,)).sum())(3.0),
                               JAX_GRADS["chisquare"], rtol=1e-4)
    np.testing.assert_allclose(
        xjax.grad(lambda lo, hi: random.truncated_normal(KEY, lo, hi, (6,)).sum(), (0, 1))(-1.0, 2.0),
        JAX_GRADS["truncated_normal"], rtol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gamma_implicit_gradient_against_scipy(dtype):
    """dx/da = -(dP/da) / (dP/dx) at the sample, P the regularised lower incomplete gamma function."""
    from xjax._src.random.gamma import random_gamma_grad

    with xjax.enable_x64(dtype == "float64"):
        a = np.array([0.05, 0.3, 1.0, 2.5, 10.0, 30.0, 0.7, 5.0], dtype)
        x = np.array([0.01, 0.2, 1.7, 0.8, 12.0, 25.0, 3.0, 0.5], dtype)  # both the series and the fraction
        got = np.asarray(random_gamma_grad(jnp.asarray(a), jnp.asarray(x))).astype(np.float64)
    a64, x64 = a.astype(np.float64), x.astype(np.float64)
    h = 1e-6 * a64
    dp_da = (sp.gammainc(a64 + h, x64) - sp.gammainc(a64 - h, x64)) / (2 * h)
    dp_dx = np.exp((a64 - 1) * np.log(x64) - x64 - sp.gammaln(a64))
    np.testing.assert_allclose(got, -dp_da / dp_dx, rtol=2e-4 if dtype == "float32" else 1e-6)


def test_gamma_grad_under_jit_and_vmap():
    f = xjax.grad(lambda a: random.gamma(KEY, a))
    want = float(f(2.5))
    assert float(xjax.jit(f)(2.5)) == pytest.approx(want, rel=1e-6)
    got = xjax.vmap(f)(jnp.array([2.5, 2.5]))
    np.testing.assert_allclose(got, [want, want], rtol=1e-6)
