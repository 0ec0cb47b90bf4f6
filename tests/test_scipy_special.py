"""xjax.scipy.special against scipy.special: float64 over broad ranges, float32 against float64
references, derivatives (check_grads in x64) of every differentiable function, logsumexp's and
softmax's options, errors, jit and vmap. JAX's own edge-case conventions: test_scipy_values.py."""
import numpy as np
import pytest
import scipy.special as sp

import xjax
import xjax.numpy as jnp
from xjax.scipy import special as xs
from xjax.test_util import check_grads

RNG = np.random.default_rng(7)
N = 2000


def uniform(lo, hi, n=N):
    return RNG.uniform(lo, hi, n)


def loguniform(lo, hi, n=N):
    return np.exp(RNG.uniform(np.log(lo), np.log(hi), n))


def off_integers(x):
    return x[np.abs(x - np.round(x)) > 1e-3]


# name: (reference, operands, rtol, atol). The tolerances are JAX's accuracy where its formulas are
# less accurate than SciPy's (erfc in the tail, log_ndtr, betaln's Stirling series past 8): xjax
# gives JAX's values there to ~1e-13 (test_scipy_values.py).
CASES = {
    "gammaln": (sp.gammaln, (off_integers(uniform(-50, 200)),), 1e-12, 1e-12),
    "gamma": (sp.gamma, (off_integers(uniform(-20, 170)),), 1e-12, 0),
    "gammasgn": (sp.gammasgn, (off_integers(uniform(-20, 20)),), 0, 0),
    "digamma": (sp.digamma, (off_integers(uniform(-30, 1e3)),), 1e-11, 1e-12),
    "erf": (sp.erf, (uniform(-7, 7),), 1e-15, 0),
    "erfc": (sp.erfc, (uniform(-7, 27),), 2e-8, 2.3e-308),  # subnormal results flush to 0
    "erfinv": (sp.erfinv, (uniform(-1, 1),), 1e-13, 0),
    "expit": (sp.expit, (uniform(-700, 700),), 1e-15, 0),
    "logit": (sp.logit, (uniform(0, 1),), 1e-13, 1e-15),
    "entr": (sp.entr, (uniform(-1, 100),), 1e-15, 0),
    "ndtr": (sp.ndtr, (uniform(-37, 9),), 1e-13, 0),
    "ndtri": (sp.ndtri, (loguniform(1e-300, 1),), 1e-14, 0),
    "log_ndtr": (sp.log_ndtr, (uniform(-1e3, 40),), 1e-7, 1e-16),
    "i0": (sp.i0, (uniform(-700, 700),), 1e-14, 0),
    "i0e": (sp.i0e, (uniform(-1e4, 1e4),), 1e-15, 0),
    "i1": (sp.i1, (uniform(-700, 700),), 1e-14, 0),
    "i1e": (sp.i1e, (uniform(-1e4, 1e4),), 1e-15, 0),
    "factorial": (lambda n: sp.factorial(n), (np.arange(-3, 170).astype(np.float64),), 1e-12, 0),
    "gammainc": (sp.gammainc, (loguniform(1e-3, 1e3), loguniform(1e-3, 1e3)), 1e-11, 1e-13),
    "gammaincc": (sp.gammaincc, (loguniform(1e-3, 1e3), loguniform(1e-3, 1e3)), 1e-11, 1e-13),
    "betaln": (sp.betaln, (loguniform(1e-3, 1e7), loguniform(1e-3, 1e7)), 1e-6, 1e-6),
    "beta": (sp.beta, (loguniform(1e-2, 50), loguniform(1e-2, 50)), 2e-6, 0),
    "betainc": (sp.betainc, (loguniform(1e-2, 1e3), loguniform(1e-2, 1e3), uniform(0, 1)), 1e-9, 1e-12),
    "xlogy": (sp.xlogy, (np.where(RNG.uniform(size=N) < 0.2, 0.0, uniform(-5, 5)), loguniform(1e-10, 1e10)),
              1e-15, 0),
    "xlog1py": (sp.xlog1py, (np.where(RNG.uniform(size=N) < 0.2, 0.0, uniform(-5, 5)), uniform(-1, 10)), 1e-13, 0),
    "rel_entr": (sp.rel_entr, (uniform(-0.5, 3), uniform(-0.5, 3)), 1e-13, 1e-15),
    "kl_div": (sp.kl_div, (uniform(-0.5, 3), uniform(-0.5, 3)), 1e-12, 1e-15),
    "zeta": (sp.zeta, (loguniform(1.01, 60), loguniform(1e-2, 1e3)), 1e-13, 0),
}


def _run(name, args, dtype):
    return np.asarray(getattr(xs, name)(*[a.astype(dtype) for a in args]))


@pytest.mark.parametrize("name", sorted(CASES))
def test_float64_against_scipy(name):
    ref, args, rtol, atol = CASES[name]
    with xjax.enable_x64(True):
        got = _run(name, args, np.float64)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, ref(*args), rtol=rtol, atol=atol)


# float32 (rtol, atol): absolute errors near zeros of the function; JAX's float32 log_ndtr takes
# log(1 - p) in float32 below x = 5, an ulp of 1 (~6e-8) absolute.
FLOAT32 = {"gammaln": (2e-6, 2e-6), "digamma": (2e-6, 2e-6), "erf": (2e-6, 0), "erfinv": (5e-6, 0),
           "expit": (2e-6, 0), "ndtr": (2e-6, 6e-8), "ndtri": (2e-6, 0), "log_ndtr": (2e-6, 6e-8), "i0e": (2e-6, 0),
           "i1e": (2e-6, 0), "gammainc": (2e-6, 1e-7), "betaln": (2e-6, 2e-6), "betainc": (2e-6, 1e-7),
           "xlogy": (2e-6, 2e-6), "zeta": (2e-6, 0)}


@pytest.mark.parametrize("name", sorted(FLOAT32))
def test_float32_against_float64_reference(name):
    ref, args, _, _ = CASES[name]
    rtol, atol = FLOAT32[name]
    args32 = [a.astype(np.float32) for a in args]
    if name == "ndtri":  # float32's range
        args32 = [np.maximum(a, np.float32(1e-37)) for a in args32]
    if name == "log_ndtr":
        args32 = [np.maximum(a, np.float32(-1e3)) for a in args32]
    got = _run(name, args32, np.float32)
    assert got.dtype == np.float32
    want = ref(*[a.astype(np.float64) for a in args32])
    want = np.where(np.abs(want) < np.finfo(np.float32).tiny, 0.0, want)  # XLA flushes subnormal results
    with np.errstate(over="ignore"):
        want = want.astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def test_polygamma():
    n = RNG.integers(0, 6, N)
    x = loguniform(1e-2, 1e3)
    with xjax.enable_x64(True):
        np.testing.assert_allclose(np.asarray(xs.polygamma(n, x)), sp.polygamma(n, x), rtol=1e-12)
    with pytest.raises(ValueError, match="Argument `n` to polygamma must be of integer type"):
        xs.polygamma(1.0, 2.0)


def test_multigammaln():
    a = uniform(2.5, 50)
    with xjax.enable_x64(True):
        for d in (1, 2, 5):
            np.testing.assert_allclose(np.asarray(xs.multigammaln(a, d)), sp.multigammaln(a, d), rtol=1e-12)


def test_logsumexp_options():
    x = RNG.normal(size=(3, 4, 5)) * 10
    b = RNG.normal(size=(3, 4, 5))
    mask = RNG.uniform(size=(3, 4, 5)) < 0.7
    with xjax.enable_x64(True):
        np.testing.assert_allclose(np.asarray(xs.logsumexp(x)), sp.logsumexp(x), rtol=1e-14)
        np.testing.assert_allclose(np.asarray(xs.logsumexp(x, axis=(0, 2), keepdims=True)),
                                   sp.logsumexp(x, axis=(0, 2), keepdims=True), rtol=1e-14)
        out, sign = xs.logsumexp(x, axis=1, b=b, return_sign=True)
        want, want_sign = sp.logsumexp(x, axis=1, b=b, return_sign=True)
        np.testing.assert_allclose(np.asarray(out), want, rtol=1e-12)
        np.testing.assert_array_equal(np.asarray(sign), want_sign)
        got = np.asarray(xs.logsumexp(x, axis=1, b=b))
        np.testing.assert_array_equal(np.isnan(got), want_sign < 0)  # a negative sum is NaN without return_sign
        np.testing.assert_allclose(np.asarray(xs.logsumexp(x, axis=-1, where=mask)),
                                   sp.logsumexp(np.where(mask, x, -np.inf), axis=-1), rtol=1e-14)
        # The gradient is the softmax, even where the max is shifted out (stop_gradient of the max).
        g = np.asarray(xjax.grad(lambda v: xs.logsumexp(v))(x[0, 0]))
        np.testing.assert_allclose(g, sp.softmax(x[0, 0]), rtol=1e-13)


def test_softmax_over_all_axes_by_default():
    x = RNG.normal(size=(3, 4))
    with xjax.enable_x64(True):
        np.testing.assert_allclose(np.asarray(xs.softmax(x)), sp.softmax(x), rtol=1e-14)
        np.testing.assert_allclose(np.asarray(xs.log_softmax(x)), sp.log_softmax(x), rtol=1e-14)
        np.testing.assert_allclose(np.asarray(xs.softmax(x, axis=1)), sp.softmax(x, axis=1), rtol=1e-14)
        np.testing.assert_allclose(np.asarray(xs.log_softmax(x, axis=0)), sp.log_softmax(x, axis=0), rtol=1e-14)


# ---- derivatives ----------------------------------------------------------------------------------

def _pts(*values):
    return tuple(np.array(v, np.float64) for v in values)


GRADS = {  # name: (function, operands, order)
    "gammaln": (xs.gammaln, _pts([0.3, 2.5, -1.5, 40.0]), 2),
    "gamma": (xs.gamma, _pts([0.3, 2.5, -1.5, 4.0]), 2),
    "digamma": (xs.digamma, _pts([0.3, 2.5, -1.5, 40.0]), 2),
    "polygamma": (lambda x: xs.polygamma(np.array([1, 2, 3]), x), _pts([0.3, 2.5, -1.5]), 2),
    "erf": (xs.erf, _pts([-2.0, 0.1, 1.5]), 2),
    "erfc": (xs.erfc, _pts([-2.0, 0.1, 4.5]), 2),
    "erfinv": (xs.erfinv, _pts([-0.9, 0.1, 0.8]), 2),
    "expit": (xs.expit, _pts([-20.0, 0.1, 3.0]), 2),
    "logit": (xs.logit, _pts([0.01, 0.5, 0.97]), 2),
    "entr": (xs.entr, _pts([0.01, 0.5, 3.0]), 2),
    "ndtr": (xs.ndtr, _pts([-6.0, 0.2, 3.0]), 2),
    "ndtri": (xs.ndtri, _pts([0.02, 0.3, 0.95]), 2),
    "log_ndtr": (xs.log_ndtr, _pts([-30.0, -12.0, -3.0, 0.5, 6.0, 9.0]), 2),
    "i0": (xs.i0, _pts([-3.0, 0.2, 9.0]), 2),
    "i0e": (xs.i0e, _pts([-3.0, 0.2, 9.0]), 2),
    "i1": (xs.i1, _pts([-3.0, 0.2, 9.0]), 2),
    "i1e": (xs.i1e, _pts([-3.0, 0.2, 9.0]), 2),
    "factorial": (xs.factorial, _pts([0.5, 3.0, 7.5]), 2),
    "multigammaln": (lambda a: xs.multigammaln(a, 3), _pts([1.7, 4.0, 20.0]), 2),
    "gammainc": (xs.gammainc, _pts([0.5, 3.0, 20.0], [0.7, 2.0, 25.0]), 1),
    "gammaincc": (xs.gammaincc, _pts([0.5, 3.0, 20.0], [0.7, 2.0, 25.0]), 1),
    "gammainc_x": (lambda x: xs.gammainc(np.array([0.5, 3.0, 20.0]), x), _pts([0.7, 2.0, 25.0]), 2),
    "betaln": (xs.betaln, _pts([0.5, 3.0, 20.0], [0.7, 9.0, 1e3]), 2),
    "beta": (xs.beta, _pts([0.5, 3.0, 2.0], [0.7, 1.5, 4.0]), 2),
    "betainc_x": (lambda x: xs.betainc(np.array([0.5, 3.0, 20.0]), np.array([2.0, 0.5, 30.0]), x),
                  _pts([0.2, 0.7, 0.45]), 2),
    "xlogy": (xs.xlogy, _pts([0.5, -2.0, 3.0], [0.2, 1.5, 7.0]), 2),
    "xlog1py": (xs.xlog1py, _pts([0.5, -2.0, 3.0], [-0.2, 1.5, 7.0]), 2),
    "rel_entr": (xs.rel_entr, _pts([0.5, 2.0, 3.0], [0.2, 1.5, 7.0]), 2),
    "kl_div": (xs.kl_div, _pts([0.5, 2.0, 3.0], [0.2, 1.5, 7.0]), 2),
    "zeta": (xs.zeta, _pts([2.5, 4.0, 11.0], [0.5, 3.0, 1.2]), 1),
    "logsumexp": (lambda x, b: xs.logsumexp(x, axis=-1, b=b), _pts([[0.5, 2.0, -3.0], [1.0, 1.0, 40.0]],
                                                                   [[1.0, 0.5, 2.0], [0.2, 3.0, 1.0]]), 2),
    "softmax": (lambda x: xs.softmax(x, axis=-1), _pts([[0.5, 2.0, -3.0], [1.0, 1.0, 40.0]]), 2),
    "log_softmax": (xs.log_softmax, _pts([[0.5, 2.0, -3.0], [1.0, 1.0, 4.0]]), 2),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_derivatives(name):
    fn, args, order = GRADS[name]
    with xjax.enable_x64(True):
        check_grads(fn, args, order=order, modes=("fwd", "rev"), atol=1e-5, rtol=1e-5)


def test_custom_derivatives_at_the_edges():
    with xjax.enable_x64(True):
        # xlogy(0, y) has derivative log(y) in x and 0 in y; entr's is -(log x + 1), -inf at 0.
        gx, gy = xjax.grad(xs.xlogy, (0, 1))(0.0, 2.0)
        assert float(gx) == np.log(2.0) and float(gy) == 0.0
        assert float(xjax.grad(xs.entr)(0.0)) == np.inf
        # log_ndtr's derivative far in the left tail (where ndtr underflows) is ~ -x.
        np.testing.assert_allclose(float(xjax.grad(xs.log_ndtr)(-100.0)), 100.0099, rtol=1e-6)
        # zeta's derivative in x (from a series expansion) against central differences of SciPy.
        h = 1e-6
        np.testing.assert_allclose(float(xjax.grad(xs.zeta)(3.0, 2.0)), (sp.zeta(3 + h, 2) - sp.zeta(3 - h, 2)) / (2 * h),
                                   rtol=1e-7)


# ---- errors, jit, vmap ------------------------------------------------------------------------------

def test_errors():
    with pytest.raises(NotImplementedError, match="Riemann zeta function not implemented"):
        xs.zeta(2.0)
    with pytest.raises(TypeError, match="x.dtype=int32 is not supported"):
        xs.ndtr(jnp.arange(3))
    with pytest.raises(TypeError, match="x.dtype=int32 is not supported"):
        xs.ndtri(jnp.arange(3))
    with pytest.raises(TypeError, match="series_order must be a Python integer"):
        xs.log_ndtr(1.0, 2.5)
    with pytest.raises(ValueError, match="series_order must be <= 30"):
        xs.log_ndtr(1.0, 31)
    with pytest.raises(TypeError, match="gammaln requires ndarray or scalar arguments"):
        xs.gammaln([1.0, 2.0])


def test_jit_and_vmap():
    x = np.linspace(-30, 8, 50)
    want = sp.log_ndtr(x)
    np.testing.assert_allclose(np.asarray(xjax.jit(xs.log_ndtr)(x.astype(np.float32))), want, rtol=2e-6, atol=6e-8)
    a, y = np.linspace(0.1, 5, 8), np.linspace(0.2, 9, 8)
    g = xjax.vmap(xjax.grad(xs.xlogy, (0, 1)))(a.astype(np.float32), y.astype(np.float32))
    np.testing.assert_allclose(np.asarray(g[0]), np.log(y), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(g[1]), a / y, rtol=1e-6)
    f = xjax.jit(xjax.vmap(lambda a, x: xs.gammainc(a, x) + xs.zeta(a + 1, x)))
    np.testing.assert_allclose(np.asarray(f(a.astype(np.float32), y.astype(np.float32))),
                               sp.gammainc(a, y) + sp.zeta(a + 1, y), rtol=2e-6)


def test_weak_types_and_promotion():
    assert xs.gammaln(2).dtype == np.float32  # integers promote to the default float
    assert xs.betainc(1, 2, 0.5).dtype == np.float32
    with xjax.enable_x64(True):
        assert xs.gammainc(np.float32(1), 2.0).dtype == np.float32  # a weak Python float keeps float32
