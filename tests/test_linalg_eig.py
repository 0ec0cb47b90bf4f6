"""The eigendecomposition of general real matrices (lax.linalg.eig, jnp.linalg.eig and eigvals, jnp.roots):
against NumPy's geev in x64 (eigenvalues, unit-norm eigenvectors with LAPACK's phase), the defining
identities for left and right eigenvectors, eigenvalue derivatives by differences, vmap against a
loop, NaN for non-finite input, and JAX's refusals."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xjax
import xjax.numpy as jnp
from xjax.lax import linalg as lax_linalg


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 9), st.integers(0, 2**16))
def test_matches_numpy_and_the_identities(n, seed):
    a = np.random.default_rng(seed).standard_normal((n, n))
    with xjax.enable_x64(True):
        w, vl, vr = (np.asarray(t) for t in lax_linalg.eig(jnp.asarray(a)))
    assert w.dtype == np.complex128 and vl.shape == vr.shape == (n, n)
    w_np, v_np = np.linalg.eig(a)
    np.testing.assert_allclose(w, w_np, rtol=1e-10, atol=1e-10)
    # Unit-norm eigenvectors as NumPy's geev gives them, up to a sign (LAPACK builds differ in it).
    np.testing.assert_allclose(np.abs(np.sum(vr.conj() * v_np, axis=0)), 1, rtol=1e-8)
    np.testing.assert_allclose(a @ vr, vr * w, atol=1e-9)
    np.testing.assert_allclose(vl.conj().T @ a, w[:, None] * vl.conj().T, atol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(vr, axis=0), 1, rtol=1e-12)


def test_float32_and_jnp_entry_points():
    a = np.random.default_rng(1).standard_normal((6, 6)).astype(np.float32)
    w, v = jnp.linalg.eig(a)
    assert w.dtype == jnp.complex64 and v.dtype == jnp.complex64
    np.testing.assert_allclose(a @ np.asarray(v), np.asarray(v) * np.asarray(w), atol=2e-5)
    np.testing.assert_allclose(np.sort_complex(np.asarray(jnp.linalg.eigvals(a))), np.sort_complex(np.linalg.eigvals(a)),
                               rtol=1e-5, atol=1e-5)
    assert len(lax_linalg.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)) == 1


def test_eigenvalue_derivatives_by_differences():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((5, 5))
    f = lambda m: jnp.sum(jnp.real(jnp.linalg.eigvals(m)) ** 2 + jnp.imag(jnp.linalg.eigvals(m)))
    with xjax.enable_x64(True):
        g = np.asarray(xjax.grad(f)(jnp.asarray(a)))
        eps, fd = 1e-6, np.zeros_like(a)
        for i in range(5):
            for j in range(5):
                e = np.zeros_like(a)
                e[i, j] = eps
                fd[i, j] = (float(f(jnp.asarray(a + e))) - float(f(jnp.asarray(a - e)))) / (2 * eps)
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7)
        t = rng.standard_normal((5, 5))
        _, dw = xjax.jvp(jnp.linalg.eigvals, (jnp.asarray(a),), (jnp.asarray(t),))
        w_plus, w_minus = np.linalg.eigvals(a + eps * t), np.linalg.eigvals(a - eps * t)
        w0 = np.linalg.eigvals(a)
        order = lambda w: np.array([np.argmin(np.abs(w - x)) for x in w0])  # match eigenvalues to w0
        fd_w = (w_plus[order(w_plus)] - w_minus[order(w_minus)]) / (2 * eps)
        np.testing.assert_allclose(np.asarray(dw)[order(np.asarray(jnp.linalg.eigvals(jnp.asarray(a))))], fd_w,
                                   rtol=1e-5, atol=1e-6)
        with pytest.raises(NotImplementedError, match="derivatives of eigenvectors"):
            xjax.jvp(lambda m: jnp.linalg.eig(m)[1], (jnp.asarray(a),), (jnp.asarray(t),))


def test_vmap_matches_a_loop_and_non_finite_input_gives_nan():
    a = np.random.default_rng(3).standard_normal((4, 5, 5)).astype(np.float32)
    a[2, 1, 1] = np.nan
    got = np.asarray(xjax.vmap(jnp.linalg.eigvals)(a))
    for b in range(4):
        np.testing.assert_array_equal(got[b], np.asarray(jnp.linalg.eigvals(a[b])))
    assert np.all(np.isnan(got[2])) and np.all(np.isfinite(got[[0, 1, 3]]))


def test_roots():
    np.testing.assert_allclose(np.sort_complex(np.asarray(jnp.roots(jnp.array([0.0, 1, -3, 2])))), [1, 2], atol=1e-6)
    np.testing.assert_allclose(np.sort_complex(np.asarray(jnp.roots(jnp.array([1.0, 0, 1])))), [-1j, 1j], atol=1e-6)
    assert jnp.roots(jnp.array([2.0])).shape == (0,) and jnp.roots(jnp.array([2.0])).dtype == jnp.complex64
    with pytest.raises(ValueError, match="strip_zeros=False"):
        xjax.jit(jnp.roots)(jnp.array([1.0, 2.0]))


def test_bad_input():
    with pytest.raises(ValueError, match=r"must have shape \[..., n, n\]"):
        jnp.linalg.eig(jnp.ones((2, 3)))
