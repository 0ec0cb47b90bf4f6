"""erfcx, exp1, expn, expi, loggamma, poch, spence, bessel_jn and hyp1f1 against scipy.special in
float64 (float32 against float64 references), their derivatives (check_grads in x64), special
values, jit and vmap. Where JAX's values are wrong and SciPy's right (expi(0), expn(n, 0)) xjax
gives SciPy's."""
import numpy as np
import pytest
import scipy.special as sp
from hypothesis import given, settings, strategies as st

import xjax
from xjax.scipy import special as xs
from xjax.test_util import check_grads

RNG = np.random.default_rng(2727)


@pytest.fixture
def x64():
    with xjax.enable_x64(True):
        yield


def close(a, b, rtol, atol=0.0):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol, equal_nan=True)


def loguniform(lo, hi, n=1000):
    return np.exp(RNG.uniform(np.log(lo), np.log(hi), n))


# (function, reference, operands, rtol) in float64
CASES = {
    "erfcx": (xs.erfcx, sp.erfcx, (RNG.uniform(-5, 1e3, 1000),), 1e-14),
    # For x << 0 SciPy rounds x^2 before exp (an error x^2 eps); xjax does not.
    "erfcx_negative": (xs.erfcx, sp.erfcx, (RNG.uniform(-26, -5, 300),), 1e-12),
    "exp1": (xs.exp1, sp.exp1, (loguniform(1e-10, 700),), 1e-13),
    "expi_negative": (xs.expi, sp.expi, (-loguniform(1e-10, 700),), 1e-13),
    "expi_positive": (xs.expi, sp.expi, (loguniform(1e-10, 700),), 1e-13),
    "loggamma": (xs.loggamma, sp.loggamma, (loguniform(1e-5, 1e5),), 1e-13),
    "poch": (xs.poch, sp.poch, (RNG.uniform(0.1, 10, 1000), RNG.uniform(-0.5, 5, 1000)), 1e-13),
    "spence": (xs.spence, sp.spence, (loguniform(1e-8, 1e8),), 1e-13),
    # The Taylor series of hyp1f1 cancels for x << 0 (JAX's algorithm, and its values, are the same).
    "hyp1f1": (xs.hyp1f1, sp.hyp1f1,
               (RNG.uniform(0.1, 5, 500), RNG.uniform(0.1, 5, 500), RNG.uniform(-2, 60, 500)), 1e-12),
    "hyp1f1_asymptotic": (xs.hyp1f1, sp.hyp1f1,
                          (RNG.uniform(0.5, 3, 200), RNG.uniform(0.5, 3, 200), RNG.uniform(100, 600, 200)), 1e-12),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_float64_against_scipy(x64, name):
    fn, ref, args, rtol = CASES[name]
    close(fn(*args), ref(*args), rtol=rtol)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 30, 200])
def test_expn_against_scipy(x64, n):
    x = np.concatenate([loguniform(1e-8, 700, 400), [0.5, 1.0, 1.0 + 1e-12, 1.0 - 1e-12]])
    ref = sp.expn(n, x)
    keep = ref > 1e-300  # beyond, the core flushes subnormals to zero
    close(xs.expn(n, x)[keep], ref[keep], rtol=1e-13)


@settings(max_examples=20)
@given(st.integers(0, 12), st.floats(1e-6, 60.0))
def test_expn_hypothesis(n, x):
    with xjax.enable_x64(True):
        close(xs.expn(n, x), sp.expn(n, x), rtol=1e-13)


def test_special_values(x64):
    close(xs.expn(np.array([-1, 2, 1, 2, 0, 3]), np.array([1.0, 0, 0, -1, 0, np.inf])),
          [np.nan, 1.0, np.inf, np.nan, np.inf, 0.0], rtol=0)
    close(xs.expi(np.array([0.0, np.nan, -np.inf, np.inf])), sp.expi([0.0, np.nan, -np.inf, np.inf]), rtol=0)
    close(xs.exp1(np.array([0.0, -1.0, np.inf])), [np.inf, np.nan, 0.0], rtol=0)
    close(xs.loggamma(np.array([0.0, -1.5, 1.0])), [np.nan, np.nan, 0.0], rtol=0)
    close(xs.spence(np.array([0.0, 1.0, -1.0, 2.0])), [np.pi ** 2 / 6, 0.0, np.nan, sp.spence(2.0)], rtol=1e-15)
    close(xs.poch(np.array([3.0, 0.5]), np.array([0.0, 0.0])), [1.0, 1.0], rtol=0)
    # a == 0 gives 1 (also for b == 0, where SciPy gives inf), a == b gives exp(x), b == 0 inf.
    close(xs.hyp1f1(np.array([0.0, 2, 1, 0]), np.array([1.0, 2, 0, 0]), 1.5), [1, np.exp(1.5), np.inf, 1], rtol=1e-15)
    close(xs.erfcx(np.array([-np.inf, np.inf, 0.0])), [np.inf, 0.0, 1.0], rtol=0)


def test_float32_against_float64_references():
    x = RNG.uniform(-3, 30, 500).astype(np.float32)
    close(xs.erfcx(x), sp.erfcx(x.astype(np.float64)), rtol=5e-7)
    y = loguniform(1e-3, 80, 300).astype(np.float32)
    close(xs.exp1(y), sp.exp1(y.astype(np.float64)), rtol=2e-5, atol=1e-37)
    close(xs.expi(y), sp.expi(y.astype(np.float64)), rtol=2e-5)
    close(xs.spence(y), sp.spence(y.astype(np.float64)), rtol=2e-6, atol=1e-7)
    for fn in (xs.erfcx, xs.exp1, xs.expi, xs.spence, xs.loggamma):
        assert fn(y).dtype == np.float32
    with pytest.raises(TypeError, match="not supported"):
        xs.spence(np.arange(3))


def test_bessel_jn(x64):
    z = RNG.uniform(-25, 25, 60)
    out = xs.bessel_jn(z, v=6, n_iter=60)
    assert out.shape == (7, 60)
    close(out, np.stack([sp.jv(k, z) for k in range(7)]), rtol=1e-12, atol=1e-14)
    z2 = RNG.uniform(0.1, 10, (2, 3))
    close(xs.bessel_jn(z2, v=2), np.stack([sp.jv(k, z2) for k in range(3)]), rtol=1e-12, atol=1e-14)
    with pytest.raises(TypeError):
        xs.bessel_jn(z, v=1.5)


@pytest.mark.parametrize("name, fn, args", [
    ("erfcx", xs.erfcx, (np.array([-1.5, 0.3, 4.0, 30.0]),)),
    ("exp1", xs.exp1, (np.array([0.2, 1.5, 7.0]),)),
    ("expn", lambda x: xs.expn(3, x), (np.array([0.2, 1.5, 7.0]),)),
    ("expi", xs.expi, (np.array([-3.0, -0.5, 0.7, 4.0, 45.0]),)),
    ("loggamma", xs.loggamma, (np.array([0.3, 2.5, 40.0]),)),
    ("poch", xs.poch, (np.array([0.7, 2.5]), np.array([1.3, -0.4]))),
    ("spence", xs.spence, (np.array([0.2, 0.9, 1.7, 5.0]),)),
    ("hyp1f1", xs.hyp1f1, (np.array([0.5, 1.5]), np.array([1.7, 2.2]), np.array([0.8, 3.0]))),
    ("bessel_jn", lambda z: xs.bessel_jn(z, v=3), (np.array([0.7, 3.1, 8.0]),)),
])
def test_gradients(x64, name, fn, args):
    # hyp1f1's derivatives in a and b are series truncated at epsilon, as JAX's.
    check_grads(fn, args, order=1, modes=("fwd", "rev"), rtol=1e-5 if name == "hyp1f1" else None)


def test_derivative_formulas(x64):
    x = np.array([0.4, 2.0, 9.0])
    close(xjax.vmap(xjax.grad(xs.expi))(x), np.exp(x) / x, rtol=1e-13)
    close(xjax.vmap(xjax.grad(lambda v: xs.expn(2, v)))(x), -sp.expn(1, x), rtol=1e-13)
    close(xjax.vmap(xjax.grad(xs.erfcx))(x), 2 * x * sp.erfcx(x) - 2 / np.sqrt(np.pi), rtol=1e-10)
    close(xjax.vmap(xjax.grad(lambda v: xs.hyp1f1(0.5, 1.5, v)))(x), 0.5 / 1.5 * sp.hyp1f1(1.5, 2.5, x), rtol=1e-12)


def test_jit_and_vmap(x64):
    x = np.array([[0.5, 1.5], [2.5, 3.5]])
    for fn in (xs.erfcx, xs.exp1, xs.expi, xs.loggamma, xs.spence, lambda v: xs.expn(2, v),
               lambda v: xs.poch(v, 1.5), lambda v: xs.hyp1f1(0.5, 1.5, v)):
        expected = np.asarray(fn(x))
        close(xjax.jit(fn)(x), expected, rtol=1e-15)
        close(xjax.vmap(fn)(x), expected, rtol=1e-15)
    close(xjax.vmap(lambda z: xs.bessel_jn(z, v=2))(x), np.moveaxis(np.asarray(xs.bessel_jn(x, v=2)), 0, 1),
          rtol=1e-15)
    close(xjax.jit(lambda z: xs.bessel_jn(z, v=2))(x), xs.bessel_jn(x, v=2), rtol=1e-15)
