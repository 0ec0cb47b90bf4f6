"""betabinom, gumbel_l and wrapcauchy against scipy.stats in float64 (JAX's conventions at the edges),
their derivatives, and that every jax.scipy.stats submodule exports the names JAX's does."""
import importlib
import types

import numpy as np
import pytest
import scipy.stats as ss

import xjax
from xjax.scipy import stats as xst
from xjax.test_util import check_grads

RNG = np.random.default_rng(5)
N = 300


def test_every_stats_module_exports_jax_names():
    jax_stats = pytest.importorskip("jax.scipy.stats")  # the reference: JAX's own modules
    for name in dir(jax_stats):
        module = getattr(jax_stats, name)
        if isinstance(module, types.ModuleType) and module.__name__.startswith("jax.scipy.stats."):
            ours = importlib.import_module(f"xjax.scipy.stats.{name}")
            assert getattr(xst, name) is ours
            want = {n for n in dir(module) if not n.startswith("_")}
            got = {n for n in dir(ours) if not n.startswith("_")}
            assert got == want, (name, sorted(want - got), sorted(got - want))


def test_betabinom(x64):
    n = RNG.integers(0, 20, N).astype(float)
    k = RNG.integers(-2, 23, N).astype(float) + RNG.uniform(0, 0.9, N)  # floor(k) is the count
    a, b = RNG.uniform(0.2, 5, N), RNG.uniform(0.2, 5, N)
    want = ss.betabinom.logpmf(np.floor(k), n, a, b)
    # JAX's betaln (cdflib's algorithm, which xjax shares to 1e-14) is within about 2e-6 of SciPy's here
    np.testing.assert_allclose(xst.betabinom.logpmf(k, n, a, b), want, rtol=5e-6)
    np.testing.assert_allclose(xst.betabinom.pmf(k, n, a, b), np.exp(want), rtol=5e-6)
    # JAX 0.10.2's values with loc: y = floor(k) - loc is -inf below -loc (not below 0, as SciPy's)
    k = np.array([-1.0, 0.0, 10.0, 12.5, 3.0, 1.0])
    n = np.array([7.0, 13.0, 16.0, 19.0, 2.0, 3.0])
    a, b = np.array([2.5, 3.7, 2.4, 0.38, 1.0, 1.5]), np.array([2.9, 4.6, 4.8, 4.9, 1.0, 0.7])
    loc = np.array([-2.0, -1.0, 1.0, 1.0, 2.0, 0.0])
    np.testing.assert_allclose(xst.betabinom.logpmf(k, n, a, b, loc),
                               [-np.inf, -3.273424522041122, -2.823094612510305, -5.789153301090188,
                                -1.098612288668109, -1.7086619915595571], rtol=1e-13)
    # JAX's NaN for bad parameters, log 1 at n == k == 0
    np.testing.assert_array_equal(xst.betabinom.logpmf(1.0, np.array([-1.0, 3.0, 3.0]), np.array([1.0, 0.0, 1.0]),
                                                        np.array([1.0, 1.0, -1.0])), [np.nan] * 3)
    assert float(xst.betabinom.logpmf(0.0, 0.0, 2.0, 3.0)) == 0.0
    check_grads(lambda a, b: xst.betabinom.logpmf(3.0, 7.0, a, b), (1.3, 2.2), order=1, modes=["fwd", "rev"])


def test_gumbel_l(x64):
    x, loc, scale = RNG.uniform(-6, 3, N), RNG.uniform(-1, 1, N), RNG.uniform(0.5, 2, N)
    for fn in ["logpdf", "pdf", "logcdf", "cdf", "logsf", "sf"]:
        np.testing.assert_allclose(getattr(xst.gumbel_l, fn)(x, loc, scale), getattr(ss.gumbel_l, fn)(x, loc, scale),
                                   rtol=1e-10, atol=1e-15, err_msg=fn)  # JAX's logcdf rounds -exp(-e^z) ~ -1e-27 to 0
    p = RNG.uniform(0.001, 0.999, N)
    np.testing.assert_allclose(xst.gumbel_l.ppf(p, loc, scale), ss.gumbel_l.ppf(p, loc, scale), rtol=1e-10)
    np.testing.assert_array_equal(xst.gumbel_l.ppf(np.array([0.0, 1.0, 1.5]), 0.0, 1.0), [np.nan] * 3)
    assert np.isnan(float(xst.gumbel_l.logpdf(0.3, 0.0, -1.0)))
    for fn in ["logpdf", "logcdf", "logsf"]:
        check_grads(getattr(xst.gumbel_l, fn), (0.3, 0.1, 1.4), order=1, modes=["fwd", "rev"])
    check_grads(xst.gumbel_l.ppf, (0.3, 0.1, 1.4), order=1, modes=["fwd", "rev"])


def test_wrapcauchy(x64):
    x, c = RNG.uniform(0, 2 * np.pi, N), RNG.uniform(0.01, 0.99, N)
    np.testing.assert_allclose(xst.wrapcauchy.logpdf(x, c), ss.wrapcauchy.logpdf(x, c), rtol=1e-10)
    np.testing.assert_allclose(xst.wrapcauchy.pdf(x, c), ss.wrapcauchy.pdf(x, c), rtol=1e-10)
    # JAX's edges: -inf outside [0, 2 pi], NaN unless 0 < c < 1
    np.testing.assert_array_equal(xst.wrapcauchy.logpdf(np.array([-0.1, 7.0]), 0.5), [-np.inf, -np.inf])
    np.testing.assert_array_equal(xst.wrapcauchy.logpdf(1.0, np.array([0.0, 1.0])), [np.nan, np.nan])
    check_grads(xst.wrapcauchy.logpdf, (1.1, 0.4), order=2, modes=["fwd", "rev"])


def test_float32_and_vmap():
    x = RNG.uniform(-3, 3, 10).astype(np.float32)
    got = xst.gumbel_l.logpdf(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(xjax.vmap(xst.gumbel_l.logpdf)(x), [xst.gumbel_l.logpdf(v) for v in x], rtol=1e-6)
    np.testing.assert_allclose(got, ss.gumbel_l.logpdf(x.astype(np.float64)), rtol=1e-5)
