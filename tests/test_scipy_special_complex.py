"""The complex-valued special functions against scipy.special in complex128: wofz (Weideman's rational
approximation, whose coefficients are derived at import), erfcx, gamma and loggamma of complex
arguments (SciPy's branch), sph_harm_y, and logsumexp of complex values (JAX's principal logarithm);
derivatives by check_grads in x64, float32 errors no worse than JAX's."""
import numpy as np
import pytest
import scipy.special as sp

import xjax
import xjax.numpy as jnp
from xjax.scipy import special as xs
from xjax.test_util import check_grads

RNG = np.random.default_rng(77)


pytestmark = pytest.mark.usefixtures("x64")  # conftest.py's, for every test here


def complex_points(n, scale):
    return RNG.standard_normal(n) * scale + 1j * RNG.standard_normal(n) * scale


def rel_err(got, want):
    got, want = np.asarray(got), np.asarray(want)
    ok = np.isfinite(want) & (np.abs(want) < 1e250)
    return np.max(np.abs(got[ok] - want[ok]) / np.maximum(np.abs(want[ok]), 1e-300))


def test_wofz_and_erfcx_against_scipy():
    z = np.concatenate([complex_points(400, 5.0), [0, 0.5, 2.0, -3.0, 1j, -1j, 30 + 0.1j, 1e-8j]])
    assert rel_err(xs.wofz(z), sp.wofz(z)) < 1e-12
    assert rel_err(xs.erfcx(z), sp.erfcx(z)) < 1e-12
    assert xs.wofz(np.float32(0.5)).dtype == np.complex64
    assert xs.wofz(np.array([0.5, 2.0])).dtype == np.complex128


def test_wofz_float32_accuracy():
    z = complex_points(300, 4.0).astype(np.complex64)
    got = np.asarray(xs.wofz(z))
    want = sp.wofz(z.astype(np.complex128))
    finite = np.isfinite(got)
    assert finite.sum() >= 295  # exp(-z^2) overflows float32 far below the real axis, as in JAX
    assert rel_err(got[finite], want[finite]) < 2e-5


def test_wofz_derivative():
    z = np.array([0.3 + 0.4j, -1.2 + 0.7j, 2.0 - 1.5j])
    check_grads(xs.wofz, (z,), order=1, modes=["fwd"])
    # w'(z) = -2 z w(z) + 2i / sqrt(pi)
    _, tangent = xjax.jvp(xs.wofz, (z,), (np.ones_like(z),))
    np.testing.assert_allclose(tangent, -2 * z * sp.wofz(z) + 2j / np.sqrt(np.pi), rtol=1e-12)


def test_complex_gamma_and_loggamma_against_scipy():
    z = np.concatenate([complex_points(300, 6.0), [-3.0 + 1e-9j, -3.0 - 1e-9j, -7.3 + 2j, 4.5 + 0j, 0.5 + 30j]])
    assert rel_err(xs.loggamma(z), sp.loggamma(z)) < 1e-12
    assert rel_err(xs.gamma(z), sp.gamma(z)) < 1e-11
    poles = np.array([0j, -1 + 0j, -4 + 0j])
    assert np.isnan(np.asarray(xs.gamma(poles))).all() and np.isnan(np.asarray(xs.loggamma(poles))).all()


def test_sph_harm_y_against_scipy():
    n = np.arange(0, 25)
    m = (n * 7) % (2 * n + 1) - n  # orders across -n..n
    theta, phi = RNG.uniform(0, np.pi, 25), RNG.uniform(0, 2 * np.pi, 25)
    got = xs.sph_harm_y(n, m, theta, phi)
    assert got.dtype == np.complex128
    np.testing.assert_allclose(got, sp.sph_harm_y(n, m, theta, phi), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(xs.sph_harm_y(2, 1, 0.3, 0.4), sp.sph_harm_y(2, 1, 0.3, 0.4), rtol=1e-13)
    jitted = xjax.jit(lambda t: xs.sph_harm_y(np.array([3]), np.array([-2]), t, np.array([0.4]), n_max=3))
    np.testing.assert_allclose(jitted(np.array([0.7])), sp.sph_harm_y(3, -2, 0.7, 0.4), rtol=1e-13)
    with pytest.raises(NotImplementedError, match="diff_n"):
        xs.sph_harm_y(1, 0, 0.3, 0.4, diff_n=1)
    with pytest.raises(TypeError, match="n_max"):
        xjax.jit(lambda k: xs.sph_harm_y(k, 0, 0.3, 0.4))(np.array([2]))


def test_complex_logsumexp_as_jax():
    a = RNG.standard_normal((3, 4)) + 3j * RNG.standard_normal((3, 4))
    b = RNG.standard_normal((3, 4))
    np.testing.assert_allclose(xs.logsumexp(a, axis=1), np.log(np.sum(np.exp(a), axis=1)), rtol=1e-12)
    np.testing.assert_allclose(xs.logsumexp(a, b=b), np.log(np.sum(b * np.exp(a))), rtol=1e-12)
    out, sign = xs.logsumexp(a, return_sign=True)
    total = np.sum(np.exp(a))
    np.testing.assert_allclose(out, np.log(np.abs(total)), rtol=1e-12)
    np.testing.assert_allclose(sign, total / np.abs(total), rtol=1e-12)


def test_derivatives_of_the_complex_functions():
    z = np.array([0.3 + 0.4j, -1.2 + 0.7j, 2.0 - 1.5j])
    # forward mode only, as in JAX: the shift into Re z >= 1/2 is a while loop of data-dependent length
    check_grads(xs.loggamma, (z,), order=1, modes=["fwd"])
    check_grads(xs.gamma, (z,), order=1, modes=["fwd"])
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work for lax.while_loop"):
        xjax.grad(lambda v: xs.loggamma(v).real.sum())(z)
    degrees, orders = np.array([2, 3, 1]), np.array([1, -2, 0])
    check_grads(lambda t, p: xs.sph_harm_y(degrees, orders, t, p),
                (np.array([0.3, 1.1, 2.0]), np.array([0.4, 2.0, 5.0])), order=1, modes=["fwd", "rev"])
    check_grads(lambda a, b: jnp.logaddexp(a, b), (z, z[::-1] + 0.1), order=1, modes=["fwd", "rev"])
