"""The special-function primitives (lax.igamma, igammac, igamma_grad_a, polygamma, zeta,
bessel_i0e, bessel_i1e, betainc, digamma's derivative) against SciPy over broad random ranges in
float64 and float32, their derivatives (check_grads in x64), vmap, jit and dtype errors.

JAX's own values at the edge cases are in test_scipy_values.py."""
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest
import scipy.special as sp

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax.test_util import check_grads

RNG = np.random.default_rng(1234)
N = 4000


def loguniform(lo, hi, n=N):
    return np.exp(RNG.uniform(np.log(lo), np.log(hi), n))


def _igamma_da_reference(a, x):
    h = 1e-6 * a  # central differences of SciPy's gammainc, good to ~1e-8 absolute
    return (sp.gammainc(a + h, x) - sp.gammainc(a - h, x)) / (2 * h)


def _off_poles(lo, hi):
    x = RNG.uniform(lo, hi, N)
    return x[np.abs(x - np.round(x)) > 1e-2]


# name: (xjax function, reference, operands, rtol, atol). zeta at q < 0 (and so polygamma at x < 0)
# loses accuracy below -4 as XLA's does (Euler-Maclaurin from q + 10), so these stay above.
_A, _X = loguniform(1e-3, 1e4), loguniform(1e-3, 1e4)
_B, _U = loguniform(1e-3, 1e4), RNG.uniform(0, 1, N)
_N = RNG.integers(0, 8, N).astype(np.float64)
_NEG = _off_poles(-4.0, 0.0)
CASES = {
    "igamma": (lax.igamma, sp.gammainc, (_A, _X), 1e-10, 1e-11),
    "igammac": (lax.igammac, sp.gammaincc, (_A, _X), 1e-10, 1e-11),
    "igamma_grad_a": (lax.igamma_grad_a, _igamma_da_reference, (_A, _X), 1e-5, 1e-7),
    "polygamma": (lax.polygamma, lambda n, x: sp.polygamma(n.astype(int), x), (_N, loguniform(1e-2, 1e3)), 1e-12, 0),
    "polygamma_negative_x": (lambda x: lax.polygamma(np.full_like(x, 2.0), x), lambda x: sp.polygamma(2, x),
                             (_NEG,), 1e-11, 0),
    "zeta": (lax.zeta, sp.zeta, (loguniform(1.001, 100), loguniform(1e-3, 1e3)), 1e-13, 0),
    "zeta_negative_q": (lax.zeta, sp.zeta, (RNG.integers(2, 9, N).astype(float), _off_poles(-4.0, 0.0)), 1e-11, 0),
    "bessel_i0e": (lax.bessel_i0e, sp.i0e, (RNG.uniform(-700, 700, N),), 1e-15, 0),
    "bessel_i1e": (lax.bessel_i1e, sp.i1e, (RNG.uniform(-700, 700, N),), 1e-15, 0),
    "betainc": (lax.betainc, sp.betainc, (_A, _B, _U), 1e-8, 1e-11),
    "digamma": (lax.digamma, sp.digamma, (_off_poles(-20, 50),), 1e-12, 1e-12),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_float64_against_scipy(name):
    fn, ref, args, rtol, atol = CASES[name]
    if name == "zeta_negative_q":
        args = args[0][:len(args[1])], args[1]
    with xjax.enable_x64(True):
        got = np.asarray(fn(*args))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, ref(*args), rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", ["igamma", "igammac", "polygamma", "zeta", "bessel_i0e", "bessel_i1e", "betainc"])
def test_float32_against_float64_reference(name):
    # float32 computes in double: correctly rounded results of the rounded operands.
    fn, ref, args, _, atol = CASES[name]
    args32 = [a.astype(np.float32) for a in args]
    got = np.asarray(fn(*args32))
    assert got.dtype == np.float32
    want = ref(*[a.astype(np.float64) for a in args32])
    want = np.where(np.abs(want) < np.finfo(np.float32).tiny, 0.0, want)  # XLA flushes subnormal results
    with np.errstate(over="ignore"):  # beyond float32's range: inf in both
        want = want.astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=2e-7, atol=max(atol, 1e-38))


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_16_bit_floats(dtype):
    a, x = np.array([0.5, 2.0, 7.0], dtype), np.array([0.25, 3.0, 5.0], dtype)
    got = lax.igamma(jnp.asarray(a), jnp.asarray(x))
    assert got.dtype == dtype
    np.testing.assert_allclose(np.asarray(got, np.float64), sp.gammainc(a.astype(np.float64), x.astype(np.float64)),
                               rtol=1e-2)
    np.testing.assert_allclose(np.asarray(lax.bessel_i1e(jnp.asarray(x)), np.float64), sp.i1e(x.astype(np.float64)),
                               rtol=1e-2)


def test_flushes_subnormals_as_xla():
    tiny = np.float32(1e-40)  # subnormal: read as 0, so I0e = 1 and I1e = 0
    assert float(lax.bessel_i0e(tiny)) == 1.0 and float(lax.bessel_i1e(tiny)) == 0.0
    assert float(lax.igamma(np.float32(100.0), np.float32(1.0))) == 0.0  # 1.1e-159 flushed


def test_series_that_cannot_converge_gives_nan_in_finite_time():
    # JAX's loop never ends here (a + 1 == a); ours stops after its term limit.
    code = ("import xjax; from xjax import lax\nwith xjax.enable_x64(True):\n"
            "    print(float(lax.igamma(1e300, 1e300)), float(lax.igamma_grad_a(1e17, 1e17)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["nan", "nan"]


# ---- derivatives ----------------------------------------------------------------------------------

# (function, operands, order): igamma's second derivative in a raises, as in JAX.
_A3, _X3 = np.array([0.7, 2.0, 9.0]), np.array([0.4, 3.0, 12.0])
GRAD_CASES = {
    "igamma": (lax.igamma, (_A3, _X3), 1),
    "igammac": (lax.igammac, (_A3, _X3), 1),
    "igamma_in_x": (lambda x: lax.igamma(_A3, x), (_X3,), 2),
    "igammac_in_x": (lambda x: lax.igammac(_A3, x), (_X3,), 2),
    "igamma_grad_a_in_x": (lambda x: lax.igamma_grad_a(_A3, x), (_X3,), 2),
    "polygamma_in_x": (lambda x: lax.polygamma(np.array([0.0, 1.0, 3.0]), x), (np.array([0.4, 3.0, -1.5]),), 2),
    "zeta_in_q": (lambda q: lax.zeta(np.array([2.0, 3.5, 7.0]), q), (np.array([0.4, 3.0, 1.5]),), 2),
    "bessel_i0e": (lax.bessel_i0e, (np.array([-9.0, -0.5, 0.3, 2.0, 8.5]),), 2),
    "bessel_i1e": (lax.bessel_i1e, (np.array([-9.0, -0.5, 0.3, 2.0, 8.5]),), 2),
    "betainc_in_x": (lambda x: lax.betainc(np.array([0.5, 2.0, 30.0]), np.array([3.0, 2.0, 0.7]), x),
                     (np.array([0.2, 0.5, 0.97]),), 2),
    "digamma": (lax.digamma, (np.array([0.3, 2.0, -1.5, 20.0]),), 2),
    "lgamma": (lax.lgamma, (np.array([0.3, 2.0, -1.5, 20.0]),), 2),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_derivatives(name):
    fn, args, order = GRAD_CASES[name]
    with xjax.enable_x64(True):
        check_grads(fn, args, order=order, modes=("fwd", "rev"), atol=1e-5, rtol=1e-5)


def test_derivative_formulas():
    with xjax.enable_x64(True):
        a, x = 2.5, 1.75
        assert np.isclose(float(xjax.grad(lax.igamma, 1)(a, x)), np.exp((a - 1) * np.log(x) - x - sp.gammaln(a)))
        assert np.isclose(float(xjax.grad(lax.igamma, 0)(a, x)), float(lax.igamma_grad_a(a, x)))
        assert np.isclose(float(xjax.grad(lax.digamma)(x)), sp.polygamma(1, x))
        assert np.isclose(float(xjax.grad(lambda q: lax.zeta(3.0, q))(x)), -3 * sp.zeta(4.0, x))


@pytest.mark.parametrize("fn, err, match", [
    (lambda m: lax.polygamma(m, 2.0), ValueError, "polygamma gradient with respect to m is not supported"),
    (lambda a: lax.betainc(a, 2.0, 0.5), ValueError, "Betainc gradient with respect to a and b not supported"),
    (lambda a: lax.igamma_grad_a(a, 2.0), NotImplementedError, "'igamma_grad_a' with respect to a"),
    (lambda x: lax.zeta(x, 2.0), NotImplementedError, "'zeta' with respect to x"),
])
def test_derivatives_jax_lacks_raise(fn, err, match):
    with pytest.raises(err, match=match):
        xjax.grad(fn)(1.5)


# ---- transformations and errors ------------------------------------------------------------------

def test_vmap_jit_and_broadcasting():
    a = RNG.uniform(0.5, 5, (3, 1)).astype(np.float32)
    x = RNG.uniform(0.1, 6, (1, 4)).astype(np.float32)
    want = sp.gammainc(a.astype(np.float64), x.astype(np.float64))
    np.testing.assert_allclose(np.asarray(lax.igamma(a, x)), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(xjax.vmap(lax.igamma, in_axes=(0, None))(a[:, 0], x[0])), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(xjax.vmap(lax.igamma, in_axes=(None, 1), out_axes=1)(a[:, 0], x)), want,
                               rtol=1e-6)

    @xjax.jit
    def fused(a, b, x):  # elementwise chains fuse: the special ops run inside the fused kernel
        return lax.betainc(a, b, x) * 2 + lax.zeta(a + 1, b) - lax.bessel_i0e(x) + lax.polygamma(1.0, b)

    av, bv, xv = RNG.uniform(0.5, 4, 64), RNG.uniform(0.5, 4, 64), RNG.uniform(0, 1, 64)
    with xjax.enable_x64(True):
        want = sp.betainc(av, bv, xv) * 2 + sp.zeta(av + 1, bv) - sp.i0e(xv) + sp.polygamma(1, bv)
        np.testing.assert_allclose(np.asarray(fused(av, bv, xv)), want, rtol=1e-10)
        per_row = xjax.vmap(xjax.grad(lambda x: lax.igamma(2.0, x) + lax.bessel_i1e(x)))(xv)
        np.testing.assert_allclose(np.asarray(per_row), np.exp(np.log(xv) - xv) + sp.i0e(xv) - sp.i1e(xv) * (1 + 1 / xv),
                                   rtol=1e-9)


def test_dtype_errors():
    with pytest.raises(TypeError, match="igamma does not accept dtype int32"):
        lax.igamma(np.int32(1), np.int32(2))
    with pytest.raises(TypeError, match="lax.zeta requires arguments to have the same dtypes, got float32, float64"):
        with xjax.enable_x64(True):
            lax.zeta(np.float32(2), np.float64(1))
    with pytest.raises(TypeError, match="bessel_i0e does not accept dtype int32"):
        lax.bessel_i0e(np.int32(1))
    with pytest.raises(TypeError, match="regularized_incomplete_beta got incompatible shapes"):
        lax.betainc(np.ones(2, np.float32), np.ones(3, np.float32), np.float32(0.5))
