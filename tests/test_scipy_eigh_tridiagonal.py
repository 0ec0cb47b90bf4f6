"""jax.scipy.linalg.eigh_tridiagonal against scipy.linalg.eigh_tridiagonal in float64 (all
eigenvalues, an index range, clustered and graded spectra, a tolerance), the eigenvectors as
eigenvectors, float32, jit, vmap and JAX's errors. Bisection does not differentiate (as in JAX)."""
import numpy as np
import pytest
import scipy.linalg as sl
from hypothesis import given, settings, strategies as st

import xjax
import xjax.numpy as jnp
from xjax.scipy.linalg import eigh_tridiagonal

RNG = np.random.default_rng(2704)


@pytest.fixture
def x64():
    with xjax.enable_x64(True):
        yield


def spectrum_tol(d, e):
    """Bisection's accuracy: a few ulps of the Gershgorin bound on the norm (its stopping width
    is one, the Sturm counts' rounding adds a few)."""
    off = np.abs(np.concatenate([[0.0], e, [0.0]]))
    return 10 * np.finfo(np.float64).eps * np.max(np.abs(d) + off[:-1] + off[1:])


@pytest.mark.parametrize("kind", ["random", "clustered", "graded", "wilkinson"])
def test_eigenvalues_against_scipy(x64, kind):
    n = 40
    d, e = RNG.normal(size=n), RNG.normal(size=n - 1)
    if kind == "clustered":
        d, e = np.ones(n) + 1e-12 * RNG.normal(size=n), 1e-10 * RNG.normal(size=n - 1)
    elif kind == "graded":
        d, e = 10.0 ** np.linspace(-6, 6, n), 10.0 ** np.linspace(-6, 6, n - 1)
    elif kind == "wilkinson":
        d, e = np.abs(np.arange(n) - (n - 1) / 2), np.ones(n - 1)
    got = eigh_tridiagonal(d, e, eigvals_only=True)
    assert got.dtype == np.float64 and got.shape == (n,)
    np.testing.assert_allclose(got, sl.eigh_tridiagonal(d, e, eigvals_only=True), rtol=0, atol=spectrum_tol(d, e))


@settings(max_examples=20, deadline=None)
@given(n=st.integers(2, 12), seed=st.integers(0, 2 ** 16), lo=st.integers(0, 11), width=st.integers(0, 11))
def test_index_range_hypothesis(n, seed, lo, width):
    rng = np.random.default_rng(seed)
    d, e = rng.normal(size=n), rng.normal(size=n - 1)
    lo = min(lo, n - 1)
    hi = min(lo + width, n - 1)
    with xjax.enable_x64(True):
        got = eigh_tridiagonal(d, e, eigvals_only=True, select="i", select_range=(lo, hi))
    want = sl.eigh_tridiagonal(d, e, eigvals_only=True, select="i", select_range=(lo, hi))
    np.testing.assert_allclose(got, want, rtol=0, atol=spectrum_tol(d, e))


def test_tolerance_and_eigenvectors(x64):
    d, e = RNG.normal(size=20), RNG.normal(size=19)
    coarse = eigh_tridiagonal(d, e, eigvals_only=True, tol=1e-3)
    np.testing.assert_allclose(coarse, sl.eigh_tridiagonal(d, e, eigvals_only=True), atol=2e-3)
    w, v = eigh_tridiagonal(d, e, select="i", select_range=(2, 5))
    matrix = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    assert v.shape == (20, 4)
    np.testing.assert_allclose(matrix @ np.asarray(v), np.asarray(v) * np.asarray(w), atol=1e-12)
    np.testing.assert_allclose(np.asarray(v).T @ np.asarray(v), np.eye(4), atol=1e-12)


def test_float32_small_and_trivial():
    got = eigh_tridiagonal(jnp.array([1.0, 2, 3, 4]), jnp.array([1.0, 1, 1]), eigvals_only=True)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, sl.eigh_tridiagonal([1.0, 2, 3, 4], [1.0, 1, 1], eigvals_only=True), rtol=2e-6)
    np.testing.assert_array_equal(eigh_tridiagonal(jnp.array([3.0]), jnp.zeros(0), eigvals_only=True), [3.0])
    w, v = eigh_tridiagonal(jnp.array([3.0]), jnp.zeros(0))
    np.testing.assert_array_equal(v, [[1.0]])


def test_jit_and_vmap(x64):
    ds, es = RNG.normal(size=(3, 8)), RNG.normal(size=(3, 7))
    want = np.stack([sl.eigh_tridiagonal(d, e, eigvals_only=True) for d, e in zip(ds, es)])
    fn = lambda d, e: eigh_tridiagonal(d, e, eigvals_only=True)
    np.testing.assert_allclose(xjax.jit(fn)(ds[0], es[0]), want[0], atol=1e-14)
    np.testing.assert_allclose(xjax.vmap(fn)(ds, es), want, atol=1e-14)


def test_errors():
    with pytest.raises(TypeError, match="must have same dtype"):
        eigh_tridiagonal(jnp.ones(3), jnp.ones(2, dtype=np.int32), eigvals_only=True)
    with pytest.raises(TypeError, match="Only float32 and float64 inputs are supported"):
        eigh_tridiagonal(jnp.ones(3, dtype=np.int32), jnp.ones(2, dtype=np.int32), eigvals_only=True)
    with pytest.raises(ValueError, match="select_range must be specified"):
        eigh_tridiagonal(jnp.ones(3), jnp.ones(2), eigvals_only=True, select="i")
    with pytest.raises(ValueError, match="Got empty index range"):
        eigh_tridiagonal(jnp.ones(3), jnp.ones(2), eigvals_only=True, select="i", select_range=(2, 1))
    with pytest.raises(NotImplementedError, match="select='v'"):
        eigh_tridiagonal(jnp.ones(3), jnp.ones(2), eigvals_only=True, select="v", select_range=(0.0, 1.0))
    with pytest.raises(ValueError, match="select must have a value in"):
        eigh_tridiagonal(jnp.ones(3), jnp.ones(2), eigvals_only=True, select="b")
