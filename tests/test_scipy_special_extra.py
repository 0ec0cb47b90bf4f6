"""dawsn, fresnel, sici, comb, boxcox, boxcox1p, bernoulli and owens_t against scipy.special in
float64 (float32 against float64 references), Bernoulli numbers against exact fractions, fresnel
past Cephes's range as JAX computes it, derivatives (check_grads in x64), jit, vmap and errors
(the complex-valued functions: test_scipy_special_complex.py)."""
from fractions import Fraction

import numpy as np
import pytest
import scipy.special as sp
from hypothesis import given, settings, strategies as st

import xjax
import xjax.numpy as jnp
from xjax.scipy import special as xs
from xjax.test_util import check_grads

RNG = np.random.default_rng(2705)


@pytest.fixture
def x64():
    with xjax.enable_x64(True):
        yield


def close(a, b, rtol, atol=0.0):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol, equal_nan=True)


def spread(n=600):
    """Values over [-10, 10] and magnitudes up to 1e4, both signs."""
    x = np.concatenate([RNG.uniform(-10, 10, n), np.exp(RNG.uniform(-15, np.log(1e4), n))])
    return x * np.where(RNG.uniform(size=x.size) < 0.5, -1, 1)


def test_dawsn(x64):
    x = np.concatenate([spread(), [0.0, 3.25, 6.25, np.inf, -np.inf, 1e300]])
    close(xs.dawsn(x), sp.dawsn(x), rtol=2e-14)


def test_fresnel(x64):
    x = np.concatenate([spread(), [0.0, 1.6, -1.6, np.inf, -np.inf]])
    s, c = xs.fresnel(x)
    want_s, want_c = sp.fresnel(x)
    # Large |x|: SciPy rounds x^2 in sin(pi x^2 / 2), an error of up to |x| ulp(x) / x in the
    # oscillating term; xjax reduces x^2 / 2 exactly.
    atol = np.where(np.abs(x) < 100, 1e-15, 1e-12)
    for got, want in ((s, want_s), (c, want_c)):
        np.testing.assert_array_less(np.abs(np.asarray(got) - want), 1e-13 * np.abs(want) + atol)


def test_fresnel_large_argument_as_jax(x64):
    # Past Cephes's cut SciPy rounds x^2 before the sine and gets the oscillating term's sign wrong
    # here; xjax (as JAX) reduces x^2 / 2 mod 2 exactly.
    x = np.array([139737011.94515032, 122311625.6520252])
    s, c = xs.fresnel(x)
    close(s, [0.5000000022747181, 0.49999999914619003], rtol=1e-15)  # JAX 0.10.2's values
    close(c, [0.49999999987924393, 0.49999999754159513], rtol=1e-15)


def test_sici(x64):
    x = np.concatenate([spread(), [0.0, 4.0, -4.0, 8.0, 2e9, np.inf]])
    si, ci = xs.sici(x)
    want_si, want_ci = sp.sici(x)
    close(si, want_si, rtol=1e-14, atol=1e-16)
    close(ci, np.where(x < 0, sp.sici(np.abs(x))[1], want_ci), rtol=1e-13, atol=1e-15)
    assert np.isnan(np.asarray(xs.sici(-np.inf)[1]))


def test_float32_against_float64():
    x = RNG.uniform(-12, 12, 300).astype(np.float32)
    ref = x.astype(np.float64)
    close(xs.dawsn(x), sp.dawsn(ref), rtol=2e-6, atol=1e-7)
    for got, want in zip(xs.fresnel(x) + xs.sici(x), sp.fresnel(ref) + sp.sici(ref)):
        assert got.dtype == np.float32
        close(got, want, rtol=1e-5, atol=1e-6)
    assert xs.dawsn(np.float16(1.0)).dtype == np.float16


def test_comb_boxcox(x64):
    n = RNG.integers(-2, 60, 300).astype(float)
    k = RNG.integers(-2, 62, 300).astype(float)
    close(xs.comb(n, k), sp.comb(n, k), rtol=1e-12)
    # JAX's comb with repetition is 0 for every negative k; SciPy's is NaN for some of them
    close(xs.comb(n, k, repetition=True), np.where(k < 0, 0.0, sp.comb(n, k, repetition=True)), rtol=1e-12)
    x, lam = RNG.uniform(1e-3, 20, 300), RNG.uniform(-3, 3, 300)
    lam[:10] = 0.0
    lam[10:20] = 1e-12
    close(xs.boxcox(x, lam), sp.boxcox(x, lam), rtol=1e-13)
    close(xs.boxcox1p(x - 0.999, lam), sp.boxcox1p(x - 0.999, lam), rtol=1e-13)
    close(xs.boxcox(np.array([-1.0, 0.0]), 0.5), [np.nan, -2.0], rtol=0)


def exact_bernoulli(n):
    """B_0 .. B_n with B_1 = -1/2, by the Akiyama-Tanigawa algorithm in fractions."""
    out, row = [], []
    for m in range(n + 1):
        row.append(Fraction(1, m + 1))
        for j in range(m, 0, -1):
            row[j - 1] = j * (row[j - 1] - row[j])
        out.append(row[0])
    if n >= 1:
        out[1] = -out[1]  # the algorithm gives B_1 = +1/2
    return np.array([float(b) for b in out])


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5, 12, 41])
def test_bernoulli_exact(x64, n):
    got = xs.bernoulli(n)
    assert got.shape == (n + 1,)
    close(got, exact_bernoulli(n), rtol=1e-14)


@settings(max_examples=30, deadline=None)
@given(st.floats(-8, 8), st.floats(-20, 20))
def test_owens_t_hypothesis(h, a):
    with xjax.enable_x64(True):
        close(xs.owens_t(h, a), sp.owens_t(h, a), rtol=1e-12, atol=1e-16)


def test_owens_t_special_values(x64):
    h = np.array([0.0, 1.0, 2.0, np.nan, 0.5])
    a = np.array([2.0, 1.0, 0.0, 1.0, np.inf])
    close(xs.owens_t(h, a), sp.owens_t(h, a), rtol=1e-14)


def test_gradients(x64):
    x = RNG.uniform(0.3, 9, 8) * np.where(RNG.uniform(size=8) < 0.5, -1, 1)
    check_grads(xs.dawsn, (x,), order=2)
    check_grads(xs.fresnel, (x,), order=2)
    check_grads(xs.sici, (x,), order=2)
    check_grads(lambda n, k: xs.comb(n, k), (RNG.uniform(5, 9, 4), RNG.uniform(1, 4, 4)), order=1)
    check_grads(xs.boxcox, (RNG.uniform(0.5, 3, 4), RNG.uniform(-1, 1, 4)), order=2)
    check_grads(xs.boxcox1p, (RNG.uniform(-0.5, 3, 4), RNG.uniform(-1, 1, 4)), order=2)
    check_grads(xs.owens_t, (RNG.uniform(-2, 2, 5), np.array([-3.0, -0.5, 0.3, 0.9, 4.0])), order=1)


def test_jit_and_vmap(x64):
    x = RNG.uniform(-6, 6, (3, 4))
    for fn, ref in [(xs.dawsn, sp.dawsn), (lambda v: xs.fresnel(v)[0], lambda v: sp.fresnel(v)[0]),
                    (lambda v: xs.sici(v)[1], lambda v: sp.sici(np.abs(v))[1]),
                    (lambda v: xs.owens_t(v, 0.7), lambda v: sp.owens_t(v, 0.7)),
                    (lambda v: xs.boxcox1p(v + 7, 0.3), lambda v: sp.boxcox1p(v + 7, 0.3)),
                    (lambda v: xs.comb(10.0, jnp.round(v) + 6), lambda v: sp.comb(10.0, np.round(v) + 6))]:
        close(xjax.jit(fn)(x), ref(x), rtol=1e-13)
        close(xjax.vmap(fn)(x), ref(x), rtol=1e-13)
    close(xjax.jit(xs.bernoulli, static_argnums=0)(6), exact_bernoulli(6), rtol=1e-14)


def test_errors():
    with pytest.raises(ValueError, match="n must be a non-negative integer"):
        xs.bernoulli(-1)
    with pytest.raises(TypeError, match="bernoulli must be a concrete integer"):
        xs.bernoulli(2.5)
    with pytest.raises(NotImplementedError, match="owens_t: complex arguments"):
        xs.owens_t(1j, 0.5)
    with pytest.raises(NotImplementedError, match="complex"):
        xs.dawsn(1j)
