"""Statistical checks of every xjax.random sampler: Kolmogorov-Smirnov tests against SciPy's
distributions for the continuous ones, frequencies (chi-square) for the discrete ones. Keys are
fixed, so each test's outcome is too; the thresholds still fail a wrong distribution."""
import numpy as np
import pytest
import scipy.stats as st

import xjax.numpy as jnp
from xjax import random

N = 20_000
KEY = random.PRNGKey(2024)
P_MIN = 1e-4


def _ks(x, dist):
    x = np.asarray(x, np.float64).ravel()
    assert np.all(np.isfinite(x))
    p = st.kstest(x, dist.cdf).pvalue
    assert p > P_MIN, p


CONTINUOUS = [
    ("uniform", lambda k: random.uniform(k, (N,), minval=-2.0, maxval=3.0), st.uniform(-2, 5)),
    ("uniform_narrow", lambda k: random.uniform(k, (N,), jnp.float32, 0.5, 0.75), st.uniform(0.5, 0.25)),
    ("normal", lambda k: random.normal(k, (N,)), st.norm()),
    ("normal_2d", lambda k: random.normal(k, (100, N // 100)), st.norm()),
    ("truncated_normal", lambda k: random.truncated_normal(k, -1.0, 2.0, (N,)), st.truncnorm(-1, 2)),
    ("exponential", lambda k: random.exponential(k, (N,)), st.expon()),
    ("laplace", lambda k: random.laplace(k, (N,)), st.laplace()),
    ("logistic", lambda k: random.logistic(k, (N,)), st.logistic()),
    ("gumbel", lambda k: random.gumbel(k, (N,)), st.gumbel_r()),
    ("gumbel_high", lambda k: random.gumbel(k, (N,), mode="high"), st.gumbel_r()),
    ("cauchy", lambda k: random.cauchy(k, (N,)), st.cauchy()),
    ("lognormal", lambda k: random.lognormal(k, 0.5, (N,)), st.lognorm(0.5)),
    ("pareto", lambda k: random.pareto(k, 3.0, (N,)), st.pareto(3.0)),
    ("weibull_min", lambda k: random.weibull_min(k, 2.0, 1.5, (N,)), st.weibull_min(1.5, scale=2.0)),
    ("maxwell", lambda k: random.maxwell(k, (N,)), st.maxwell()),
    ("gamma", lambda k: random.gamma(k, 2.5, (N,)), st.gamma(2.5)),
    ("gamma_small", lambda k: random.gamma(k, 0.3, (N,)), st.gamma(0.3)),
    ("loggamma", lambda k: jnp.exp(random.loggamma(k, 0.3, (N,))), st.gamma(0.3)),
    ("beta", lambda k: random.beta(k, 2.0, 3.0, (N,)), st.beta(2.0, 3.0)),
    ("t", lambda k: random.t(k, 3.0, (N,)), st.t(3.0)),
    ("chisquare", lambda k: random.chisquare(k, 4.0, (N,)), st.chi2(4.0)),
    ("dirichlet_marginal", lambda k: random.dirichlet(k, jnp.array([1.0, 2.0, 3.0]), (N,))[:, 2], st.beta(3.0, 3.0)),
    ("rayleigh", lambda k: random.rayleigh(k, 2.0, (N,)), st.rayleigh(scale=2.0)),
    ("wald", lambda k: random.wald(k, 1.5, (N,)), st.invgauss(1.5)),
    ("triangular", lambda k: random.triangular(k, 0.0, 0.3, 2.0, (N,)), st.triang(0.15, loc=0.0, scale=2.0)),
    ("double_sided_maxwell", lambda k: jnp.abs(random.double_sided_maxwell(k, 1.0, 2.0, (N,)) - 1.0) / 2.0,
     st.maxwell()),
    ("generalized_normal", lambda k: random.generalized_normal(k, 1.5, (N,)), st.gennorm(1.5)),
    ("f", lambda k: random.f(k, 3.0, 5.0, (N,)), st.f(3.0, 5.0)),
    ("ball_radius_cubed", lambda k: jnp.sum(random.ball(k, 3, shape=(N,)) ** 2, axis=-1) ** 1.5, st.uniform()),
]


@pytest.mark.parametrize("name,sample,dist", CONTINUOUS, ids=[c[0] for c in CONTINUOUS])
def test_continuous_ks(name, sample, dist):
    _ks(sample(KEY), dist)


def _chi2(counts, probs):
    counts = np.asarray(counts, np.float64)
    expected = np.asarray(probs, np.float64) * counts.sum()
    p = st.chisquare(counts, expected).pvalue
    assert p > P_MIN, (p, counts, expected)


def test_randint_and_rademacher_and_bernoulli():
    x = np.asarray(random.randint(KEY, (N,), -3, 7))
    assert x.min() == -3 and x.max() == 6
    _chi2(np.bincount(x + 3, minlength=10), np.full(10, 0.1))
    x = np.asarray(random.randint(KEY, (N,), 0, 5, jnp.uint8))
    _chi2(np.bincount(x, minlength=5), np.full(5, 0.2))
    r = np.asarray(random.rademacher(KEY, (N,)))
    assert set(np.unique(r)) == {-1, 1}
    _chi2([np.sum(r == -1), np.sum(r == 1)], [0.5, 0.5])
    b = np.asarray(random.bernoulli(KEY, 0.3, (N,)))
    _chi2([np.sum(~b), np.sum(b)], [0.7, 0.3])
    b = np.asarray(random.bernoulli(KEY, 0.3, (N,), mode="high"))
    _chi2([np.sum(~b), np.sum(b)], [0.7, 0.3])


def test_geometric_frequencies():
    x = np.asarray(random.geometric(KEY, 0.3, (N,)))
    assert x.min() >= 1
    top = 20
    counts = np.bincount(np.minimum(x, top), minlength=top + 1)[1:]
    probs = st.geom(0.3).pmf(np.arange(1, top + 1))
    probs[-1] += st.geom(0.3).sf(top)
    _chi2(counts, probs)


def test_categorical_and_choice_frequencies():
    p = np.array([0.1, 0.2, 0.3, 0.4])
    x = np.asarray(random.categorical(KEY, jnp.log(jnp.asarray(p)), shape=(N,)))
    _chi2(np.bincount(x, minlength=4), p)
    x = np.asarray(random.choice(KEY, 4, (N,), p=jnp.asarray(p)))
    _chi2(np.bincount(x, minlength=4), p)
    x = np.asarray(random.choice(KEY, 7, (N,)))
    _chi2(np.bincount(x, minlength=7), np.full(7, 1 / 7))
    keys = random.split(KEY, 500)
    firsts = [int(random.choice(k, 5, (3,), replace=False)[0]) for k in keys]
    _chi2(np.bincount(firsts, minlength=5), np.full(5, 0.2))
    picks = np.asarray(random.choice(KEY, 50, (20,), replace=False))
    assert len(set(picks.tolist())) == 20


def test_permutation_is_uniform():
    keys = random.split(KEY, 600)
    perms = np.stack([np.asarray(random.permutation(k, 4)) for k in keys])
    assert np.all(np.sort(perms, axis=1) == np.arange(4))
    codes = perms @ np.array([64, 16, 4, 1])  # one of 24 permutations
    _chi2(np.unique(codes, return_counts=True)[1], np.full(24, 1 / 24))


@pytest.mark.parametrize("lam", [0.5, 3.0, 30.0])
def test_poisson_frequencies(lam):
    x = np.asarray(random.poisson(KEY, lam, (N,)))
    assert x.min() >= 0
    top = int(st.poisson(lam).ppf(0.999))
    counts = np.bincount(np.minimum(x, top), minlength=top + 1)
    probs = st.poisson(lam).pmf(np.arange(top + 1))
    probs[-1] += st.poisson(lam).sf(top)
    lo = int(max(0, st.poisson(lam).ppf(0.001)))  # merge the sparse lower tail too
    counts = np.concatenate([[counts[:lo + 1].sum()], counts[lo + 1:]])
    probs = np.concatenate([[probs[:lo + 1].sum()], probs[lo + 1:]])
    _chi2(counts, probs)


def _linalg_or_skip(fn):
    try:
        return fn()
    except NotImplementedError as e:
        if "linalg" in str(e):
            pytest.skip(str(e))
        raise


def test_multivariate_normal_moments():
    cov = np.array([[2.0, 0.6, 0.0], [0.6, 1.0, -0.3], [0.0, -0.3, 0.5]])
    mean = np.array([1.0, -2.0, 0.5])
    for method in ("cholesky", "eigh", "svd"):
        x = np.asarray(_linalg_or_skip(lambda: random.multivariate_normal(KEY, jnp.asarray(mean), jnp.asarray(cov),
                                                                           (N,), method=method)), np.float64)
        np.testing.assert_allclose(x.mean(0), mean, atol=0.05)
        np.testing.assert_allclose(np.cov(x.T), cov, atol=0.06)


def test_orthogonal_matrices():
    q = np.asarray(_linalg_or_skip(lambda: random.orthogonal(KEY, 4, (200,))), np.float64)
    np.testing.assert_allclose(np.einsum("bij,bik->bjk", q, q), np.broadcast_to(np.eye(4), (200, 4, 4)), atol=1e-5)
    _ks(q[:, 0, 0] / 2 + 0.5, st.beta(1.5, 1.5))  # an entry of a Haar 4x4 orthogonal matrix
