"""truncnorm, gennorm, pareto, nbinom, multinomial, vonmises, gumbel_r, mode, rankdata and sem
against scipy.stats in float64: every function JAX's modules have, their derivatives (check_grads
in x64), jit, vmap, and JAX's conventions at the edges."""
import numpy as np
import pytest
import scipy.stats as ss
from hypothesis import given, settings, strategies as st

import xjax
import xjax.numpy as jnp
from xjax.scipy import stats as xst
from xjax.test_util import check_grads

RNG = np.random.default_rng(99)
N = 400


@pytest.fixture
def x64():
    with xjax.enable_x64(True):
        yield


def close(a, b, rtol=1e-12, atol=1e-300):
    """Within rtol, or atol absolutely (where a formula of JAX's subtracts from 1 or cancels in a log)."""
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol, equal_nan=True)


_TN_A = RNG.uniform(-3, 1, N)
_TN_B = _TN_A + RNG.uniform(0.2, 4, N)
_TN_LOC, _TN_SCALE = RNG.uniform(-1, 1, N), RNG.uniform(0.5, 2, N)
_TN_X = _TN_LOC + _TN_SCALE * RNG.uniform(_TN_A - 0.5, _TN_B + 0.5)
_PARETO = (RNG.uniform(0, 10, N), RNG.uniform(0.5, 4, N), RNG.uniform(-1, 1, N), RNG.uniform(0.5, 2, N))
_GUMBEL = (RNG.uniform(-5, 10, N), RNG.uniform(-1, 1, N), RNG.uniform(0.5, 2, N))

# (xjax module, scipy distribution, operands, {function: rtol})
DISTRIBUTIONS = {
    "truncnorm": (xst.truncnorm, ss.truncnorm, (_TN_X, _TN_A, _TN_B, _TN_LOC, _TN_SCALE),
                  dict(logpdf=1e-11, pdf=1e-11, cdf=1e-10, logcdf=1e-10, sf=1e-10, logsf=1e-10)),
    "gennorm": (xst.gennorm, ss.gennorm, (RNG.uniform(-4, 4, N), RNG.uniform(0.5, 5, N)),
                dict(logpdf=1e-13, pdf=1e-13, cdf=1e-12)),  # cdf = (1 - P(1/beta, |x|^beta)) / 2 for x < 0
    "pareto": (xst.pareto, ss.pareto, _PARETO,
               dict(logpdf=1e-13, pdf=1e-13, cdf=1e-12, logcdf=1e-12, sf=1e-12, logsf=1e-12)),
    "vonmises": (xst.vonmises, ss.vonmises, (RNG.uniform(-np.pi, np.pi, N), RNG.uniform(0.01, 50, N)),
                 dict(logpdf=1e-11, pdf=1e-12)),  # logpdf crosses 0: kappa cos(x) cancels there
    "gumbel_r": (xst.gumbel_r, ss.gumbel_r, _GUMBEL,
                 dict(logpdf=1e-13, pdf=1e-12, cdf=1e-12, logcdf=1e-13, sf=1e-12, logsf=1e-12)),  # sf = 1 - cdf
}


@pytest.mark.parametrize("name, fn", [(d, f) for d in sorted(DISTRIBUTIONS) for f in DISTRIBUTIONS[d][3]])
def test_against_scipy(x64, name, fn):
    module, dist, args, rtols = DISTRIBUTIONS[name]
    close(getattr(module, fn)(*args), getattr(dist, fn)(*args), rtol=rtols[fn], atol=1e-15)


def test_ppf_against_scipy(x64):
    q = RNG.uniform(0, 1, N)
    close(xst.pareto.ppf(q, *_PARETO[1:]), ss.pareto.ppf(q, *_PARETO[1:]), rtol=1e-12)
    close(xst.gumbel_r.ppf(q, *_GUMBEL[1:]), ss.gumbel_r.ppf(q, *_GUMBEL[1:]), rtol=1e-12)
    close(xst.pareto.ppf(np.array([-0.1, 1.1, np.nan]), 2.0), [np.nan] * 3)
    close(xst.gumbel_r.ppf(np.array([0.0, 1.0]), 0.0, 1.0), [np.nan, np.nan])


def test_discrete_against_scipy(x64):
    k = RNG.integers(0, 30, N).astype(float)
    n, p, loc = RNG.uniform(0.5, 10, N), RNG.uniform(0.05, 0.95, N), RNG.integers(-3, 3, N).astype(float)
    close(xst.nbinom.logpmf(k, n, p, loc), ss.nbinom.logpmf(k, n, p, loc), rtol=1e-11)
    close(xst.nbinom.pmf(k, n, p, loc), ss.nbinom.pmf(k, n, p, loc), rtol=1e-11)
    probs = RNG.dirichlet(np.ones(4), 20)
    counts = np.stack([RNG.multinomial(9, q) for q in probs])
    close(xst.multinomial.logpmf(counts, 9, probs), ss.multinomial.logpmf(counts, 9, probs), rtol=1e-12)
    close(xst.multinomial.pmf(counts[0], 9, probs[0]), ss.multinomial.pmf(counts[0], 9, probs[0]), rtol=1e-12)
    assert float(xst.multinomial.logpmf(np.array([1, 2]), 4, np.array([0.5, 0.5]))) == -np.inf  # sum(x) != n
    with pytest.raises(ValueError, match="integer type"):
        xst.multinomial.logpmf(np.array([1.0, 2.0]), 3, np.array([0.5, 0.5]))


def test_edge_conventions(x64):
    # Outside the support, invalid parameters, as JAX (and SciPy) give them.
    close(xst.truncnorm.logpdf(np.array([-3.0, 0.0]), -1.0, 1.0), [-np.inf, ss.truncnorm.logpdf(0.0, -1, 1)])
    close(xst.truncnorm.logpdf(0.0, 1.0, 1.0), np.nan)
    close(xst.truncnorm.cdf(np.array([-2.0, 2.0]), -1.0, 1.0), [0.0, 1.0])
    close(xst.pareto.logpdf(0.5, 2.0), -np.inf)
    close(xst.pareto.cdf(0.5, 2.0), 0.0)
    close(xst.vonmises.logpdf(0.3, np.array([0.0, -1.0])), [np.nan, np.nan])
    close(xst.gumbel_r.logpdf(0.3, 0.0, -1.0), np.nan)
    close(xst.nbinom.logpmf(-1.0, 2.0, 0.5), -np.inf)
    # Far tails stay finite in log space.
    close(xst.truncnorm.logcdf(-30.0, -40.0, 0.0), ss.truncnorm.logcdf(-30.0, -40.0, 0.0), rtol=1e-10)
    close(xst.gumbel_r.logsf(40.0), ss.gumbel_r.logsf(40.0), rtol=1e-12)


@settings(max_examples=20)
@given(a=st.floats(-5, 2), width=st.floats(0.1, 6), t=st.floats(0, 1))
def test_truncnorm_hypothesis(a, width, t):
    with xjax.enable_x64(True):
        b = a + width
        x = a + t * width
        close(xst.truncnorm.logpdf(x, a, b), ss.truncnorm.logpdf(x, a, b), rtol=1e-10)
        close(xst.truncnorm.cdf(x, a, b), ss.truncnorm.cdf(x, a, b), rtol=1e-9, atol=1e-14)


@pytest.mark.parametrize("fn, args", [
    (xst.truncnorm.logpdf, (0.3, -1.0, 2.0, 0.1, 1.3)),
    (xst.truncnorm.logcdf, (0.3, -1.0, 2.0, 0.1, 1.3)),
    (xst.gennorm.logpdf, (0.7, 1.7)),
    (xst.gennorm.cdf, (0.7, 1.7)),
    (xst.pareto.logpdf, (3.0, 2.5, 0.5, 1.2)),
    (xst.pareto.logsf, (3.0, 2.5, 0.5, 1.2)),
    (xst.nbinom.logpmf, (3.0, 2.5, 0.4)),
    (xst.vonmises.logpdf, (0.4, 3.0)),
    (xst.gumbel_r.logpdf, (0.4, 0.2, 1.5)),
    (xst.gumbel_r.logsf, (0.4, 0.2, 1.5)),
    (lambda p: xst.multinomial.logpmf(np.array([1, 2, 3]), 6, p), (np.array([0.2, 0.3, 0.5]),)),
])
def test_gradients(x64, fn, args):
    check_grads(fn, args, order=1, modes=("fwd", "rev"))


def test_jit_and_vmap(x64):
    x = np.array([0.2, 0.5, 1.4])
    for fn in (lambda v: xst.truncnorm.pdf(v, -1.0, 2.0), lambda v: xst.gennorm.pdf(v, 1.5),
               lambda v: xst.pareto.pdf(v + 1, 2.0), lambda v: xst.nbinom.pmf(v * 4, 3.0, 0.4),
               lambda v: xst.vonmises.pdf(v, 2.0), lambda v: xst.gumbel_r.cdf(v)):
        expected = np.asarray(fn(x))
        close(xjax.jit(fn)(x), expected, rtol=1e-15)
        close(xjax.vmap(fn)(x), expected, rtol=1e-15)


# ---- mode, rankdata, sem ----------------------------------------------------------------------

@pytest.mark.parametrize("shape, axis, keepdims", [((12,), 0, False), ((6, 5), 0, False), ((6, 5), 1, True),
                                                   ((3, 4, 5), None, False), ((3, 4, 5), -1, True)])
def test_mode_against_scipy(shape, axis, keepdims):
    a = RNG.integers(0, 4, shape)
    out = xst.mode(a, axis=axis, keepdims=keepdims)
    ref = ss.mode(a, axis=axis, keepdims=keepdims)
    np.testing.assert_array_equal(out.mode, ref.mode)
    np.testing.assert_array_equal(out.count, ref.count)
    assert isinstance(out, xst.ModeResult)


def test_mode_edges_and_errors():
    out = xst.mode(jnp.zeros((0, 3)))
    assert np.isnan(np.asarray(out.mode)).all() and (np.asarray(out.count) == 0).all()
    with pytest.raises(ValueError, match="Illegal nan_policy"):
        xst.mode(jnp.ones(3), nan_policy="skip")
    with pytest.raises(NotImplementedError):
        xst.mode(jnp.ones(3), nan_policy="omit")
    f = xjax.vmap(lambda v: xst.mode(v).mode)
    np.testing.assert_array_equal(f(jnp.array([[1, 2, 2], [3, 3, 1]])), [2, 3])


@pytest.mark.parametrize("method", ["average", "min", "max", "dense", "ordinal"])
def test_rankdata_against_scipy(method):
    a = RNG.integers(0, 5, 17)
    np.testing.assert_array_equal(xst.rankdata(a, method), ss.rankdata(a, method))
    m = RNG.integers(0, 3, (4, 6))
    np.testing.assert_array_equal(xst.rankdata(m, method, axis=1), ss.rankdata(m, method, axis=1))
    np.testing.assert_array_equal(xst.rankdata(m, method), ss.rankdata(m, method))


@settings(max_examples=20)
@given(st.lists(st.integers(-3, 3), min_size=1, max_size=20), st.sampled_from(["average", "min", "max", "dense"]))
def test_rankdata_hypothesis(values, method):
    np.testing.assert_array_equal(xst.rankdata(np.array(values), method), ss.rankdata(values, method))


def test_rankdata_nan_and_errors():
    assert np.isnan(np.asarray(xst.rankdata(np.array([1.0, np.nan, 2.0])))).all()
    with pytest.raises(ValueError, match="unknown method"):
        xst.rankdata(np.ones(3), "mean")
    assert xst.rankdata(np.ones(3)).dtype == jnp.float32
    np.testing.assert_array_equal(xjax.jit(xst.rankdata)(np.array([3.0, 1.0, 3.0])), [2.5, 1.0, 2.5])


def test_sem_against_scipy(x64):
    a = RNG.normal(size=(7, 5))
    close(xst.sem(a), ss.sem(a), rtol=1e-13)
    close(xst.sem(a, axis=1, ddof=0), ss.sem(a, axis=1, ddof=0), rtol=1e-13)
    close(xst.sem(a, axis=None), ss.sem(a, axis=None), rtol=1e-13)
    close(xst.sem(a, keepdims=True), ss.sem(a, keepdims=True), rtol=1e-13)
    b = a.copy()
    b[0, 0] = np.nan
    close(xst.sem(b, nan_policy="omit"), ss.sem(b, nan_policy="omit"), rtol=1e-13)
    with pytest.raises(ValueError, match="not supported"):
        xst.sem(a, nan_policy="raise")
    check_grads(lambda v: xst.sem(v), (a,), order=1)
    close(xjax.vmap(xst.sem)(a), ss.sem(a, axis=1), rtol=1e-13)
