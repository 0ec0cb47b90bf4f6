"""jax.scipy.linalg's Schur-based functions and Householder products on complex matrices (schur,
rsf2csf, sqrtm, funm, polar, hessenberg, solve_sylvester, qr_multiply): complex128 against SciPy
(whose values JAX 0.10.2 gives on these functions, checked when these tests were written) up to
the phases that another LAPACK build's rounding moves, complex64 at float32's tolerance, and
batching against a loop."""
import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings, strategies as st

import xjax.numpy as jnp
import xjax.scipy.linalg as L
from batching_util import check_batch
from x64_util import in_x64


def crandn(rng, shape, dtype=np.complex128):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def mH(x):
    return np.conj(np.swapaxes(x, -1, -2))


def loop(fn, *arrays):
    batch = np.shape(arrays[0])[:-2]
    outs = [fn(*[np.asarray(x)[i] for x in arrays]) for i in np.ndindex(*batch)]
    if isinstance(outs[0], tuple):
        return tuple(np.stack(o).reshape(batch + o[0].shape) for o in zip(*outs))
    return np.stack(outs).reshape(batch + outs[0].shape)


# ---- schur and rsf2csf ------------------------------------------------------------------------

@settings(max_examples=10, deadline=None)
@given(batch=st.sampled_from([(), (2,), (2, 1)]), n=st.integers(0, 6), output=st.sampled_from(["real", "complex"]),
       seed=st.integers(0, 2**31))
@in_x64
def test_schur_of_complex_input(batch, n, output, seed):
    # Complex input gets the complex Schur form for either output (zgees), as JAX's and SciPy's.
    a = crandn(np.random.default_rng(seed), batch + (n, n))
    t, z = (np.asarray(x) for x in L.schur(a, output=output))
    assert t.dtype == z.dtype == np.complex128 and t.shape == z.shape == a.shape
    np.testing.assert_allclose(z @ t @ mH(z), a, atol=1e-12)
    np.testing.assert_allclose(mH(z) @ z, np.broadcast_to(np.eye(n), a.shape), atol=1e-12)
    assert np.all(np.tril(t, -1) == 0)
    if a.size:
        ts, zs = loop(lambda m: scipy.linalg.schur(m, output=output), a)
        np.testing.assert_allclose(np.diagonal(t, 0, -2, -1), np.diagonal(ts, 0, -2, -1), atol=1e-11)
        np.testing.assert_allclose(np.abs(t), np.abs(ts), atol=1e-11)  # (Z's column phases aside)


def test_schur_complex64():
    a = crandn(np.random.default_rng(1), (5, 5), np.complex64)
    t, z = (np.asarray(x) for x in L.schur(a))
    assert t.dtype == np.complex64
    np.testing.assert_allclose(z @ t @ mH(z), a, atol=2e-5)
    np.testing.assert_allclose(np.diag(t), np.diag(scipy.linalg.schur(a, output="complex")[0]), atol=2e-5)


def test_rsf2csf_of_a_complex_schur_form_keeps_it(x64):
    a = crandn(np.random.default_rng(2), (4, 4))
    ts, zs = scipy.linalg.schur(a, output="complex")
    t, z = L.rsf2csf(ts, zs)
    want = scipy.linalg.rsf2csf(ts, zs)
    np.testing.assert_allclose(t, want[0], atol=1e-14)
    np.testing.assert_allclose(z, want[1], atol=1e-14)


# ---- sqrtm, funm ----------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 3, 6])
def test_sqrtm_and_funm_against_scipy(x64, n):
    a = crandn(np.random.default_rng(n), (n, n))
    s = np.asarray(L.sqrtm(a))
    assert s.dtype == np.complex128
    np.testing.assert_allclose(s, scipy.linalg.sqrtm(a), atol=1e-10)
    np.testing.assert_allclose(s @ s, a, atol=1e-10)
    np.testing.assert_allclose(L.funm(a, jnp.exp), scipy.linalg.expm(a), atol=1e-10)
    f, err = L.funm(a, jnp.sin, disp=False)
    fs, errs = scipy.linalg.funm(a, np.sin, disp=False)
    np.testing.assert_allclose(f, fs, atol=1e-10)
    np.testing.assert_allclose(err, errs, rtol=1e-6)


def test_sqrtm_and_funm_complex64():
    a = crandn(np.random.default_rng(3), (4, 4), np.complex64)
    s = np.asarray(L.sqrtm(a))
    assert s.dtype == np.complex64
    np.testing.assert_allclose(s, scipy.linalg.sqrtm(a.astype(np.complex128)), atol=1e-4)
    np.testing.assert_allclose(L.funm(a, jnp.exp), scipy.linalg.expm(a.astype(np.complex128)), atol=1e-4)


# ---- polar ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["qdwh", "svd"])
@pytest.mark.parametrize("side, shape", [("right", (5, 5)), ("right", (6, 3)), ("left", (3, 6)),
                                         ("right", (2, 6, 3))])
def test_polar_against_scipy(x64, method, side, shape):
    a = crandn(np.random.default_rng(4), shape)
    u, p = L.polar(a, side=side, method=method)
    assert u.dtype == p.dtype == np.complex128
    us, ps = loop(lambda m: scipy.linalg.polar(m, side=side), a) if a.ndim > 2 else scipy.linalg.polar(a, side=side)
    np.testing.assert_allclose(u, us, atol=1e-11)
    np.testing.assert_allclose(p, ps, atol=1e-11)


def test_polar_complex64():
    a = crandn(np.random.default_rng(5), (5, 4), np.complex64)
    u, p = (np.asarray(x) for x in L.polar(a))
    assert u.dtype == np.complex64
    us, ps = scipy.linalg.polar(a.astype(np.complex128))
    np.testing.assert_allclose(u, us, atol=1e-4)
    np.testing.assert_allclose(p, ps, atol=1e-4)


# ---- hessenberg -----------------------------------------------------------------------------------

@settings(max_examples=8, deadline=None)
@given(batch=st.sampled_from([(), (3,)]), n=st.sampled_from([1, 3, 4, 6]), seed=st.integers(0, 2**31))
@in_x64
def test_hessenberg_against_scipy(batch, n, seed):
    a = crandn(np.random.default_rng(seed), batch + (n, n))
    h, q = (np.asarray(x) for x in L.hessenberg(a, calc_q=True))
    hs, qs = loop(lambda m: scipy.linalg.hessenberg(m, calc_q=True), a)
    np.testing.assert_allclose(h, hs, atol=1e-12)
    np.testing.assert_allclose(q, qs, atol=1e-12)
    np.testing.assert_allclose(q @ h @ mH(q), a, atol=1e-12)


def test_hessenberg_of_order_2_as_jax(x64):
    # SciPy returns a matrix of order 2 as it is (Q = I); JAX's zgehrd still makes the subdiagonal
    # real with one reflector. Recorded from JAX 0.10.2:
    a = np.array([[1 + 2j, 3 - 1j], [2 + 1j, -1 + 0.5j]])
    h, q = L.hessenberg(a, calc_q=True)
    np.testing.assert_allclose(h, [[1 + 2j, -3.1304951684997055 - 0.4472135954999581j],
                                   [-2.23606797749979, -1 + 0.4999999999999999j]], atol=1e-14)
    np.testing.assert_allclose(q, [[1, 0], [0, -0.8944271909999157 - 0.4472135954999579j]], atol=1e-14)


# ---- solve_sylvester ------------------------------------------------------------------------------

@settings(max_examples=8, deadline=None)
@given(m=st.integers(1, 5), n=st.integers(1, 5), method=st.sampled_from(["schur", "eigen"]),
       seed=st.integers(0, 2**31))
@in_x64
def test_solve_sylvester_against_scipy(m, n, method, seed):
    rng = np.random.default_rng(seed)
    a = crandn(rng, (m, m)) + 4 * np.eye(m)  # eigenvalues of A and -B kept apart
    b = crandn(rng, (n, n)) + 4 * np.eye(n)
    c = crandn(rng, (m, n))
    x = np.asarray(L.solve_sylvester(a, b, c, method=method))
    assert x.dtype == np.complex128
    np.testing.assert_allclose(x, scipy.linalg.solve_sylvester(a, b, c), atol=1e-10)
    # a real A and B with a complex C: all promoted to complex, as JAX's. (SciPy passes the real
    # quasi-triangular Schur forms to ztrsyl, which takes them as triangular: its X is off when A or
    # B has complex eigenvalues, so the check here is the equation.)
    x = np.asarray(L.solve_sylvester(a.real, b.real, c, method=method))
    assert x.dtype == np.complex128
    np.testing.assert_allclose(a.real @ x + x @ b.real, c, atol=1e-10)


def test_solve_sylvester_complex64():
    rng = np.random.default_rng(6)
    a, b, c = crandn(rng, (3, 3), np.complex64) + 4 * np.eye(3, dtype=np.complex64), \
        crandn(rng, (2, 2), np.complex64) + 4 * np.eye(2, dtype=np.complex64), crandn(rng, (3, 2), np.complex64)
    for method in ("schur", "eigen"):
        x = np.asarray(L.solve_sylvester(a, b, c, method=method))
        assert x.dtype == np.complex64
        np.testing.assert_allclose(a @ x + x @ b, c, atol=1e-4)


# ---- qr_multiply ----------------------------------------------------------------------------------

@settings(max_examples=12, deadline=None)
@given(m=st.integers(1, 5), n=st.integers(1, 5), mode=st.sampled_from(["left", "right"]), pivoting=st.booleans(),
       conjugate=st.booleans(), seed=st.integers(0, 2**31))
@in_x64
def test_qr_multiply_against_scipy(m, n, mode, pivoting, conjugate, seed):
    rng = np.random.default_rng(seed)
    a = crandn(rng, (m, n))
    k = min(m, n)
    c = crandn(rng, (k, 3) if mode == "left" else (2, m))
    got = L.qr_multiply(a, c, mode=mode, pivoting=pivoting, conjugate=conjugate)
    want = scipy.linalg.qr_multiply(a, c, mode=mode, pivoting=pivoting, conjugate=conjugate)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, atol=1e-12)


def test_qr_multiply_complex64():
    rng = np.random.default_rng(7)
    a, c = crandn(rng, (5, 3), np.complex64), crandn(rng, (2, 5), np.complex64)
    cq, r = L.qr_multiply(a, c, conjugate=True)
    assert cq.dtype == np.complex64
    want = scipy.linalg.qr_multiply(a.astype(np.complex128), c, conjugate=True)
    np.testing.assert_allclose(cq, want[0], atol=2e-5)
    np.testing.assert_allclose(r, want[1], atol=2e-5)


# ---- batching -------------------------------------------------------------------------------------

def test_vmap_and_jit_against_a_loop(x64):
    a = crandn(np.random.default_rng(8), (3, 4, 4))
    check_batch(L.sqrtm, (a,), rtol=1e-10, atol=1e-10)
    check_batch(lambda x: L.funm(x, jnp.sin), (a,), rtol=1e-10, atol=1e-10, jit=True)
    check_batch(lambda x, y: L.solve_sylvester(x, y, x), (a, a + 4 * np.eye(4)), rtol=1e-10, atol=1e-10)
    check_batch(L.schur, (np.moveaxis(a, 0, 1),), in_axes=1, rtol=1e-10, atol=1e-10)
    check_batch(lambda x, c: L.qr_multiply(x, c, pivoting=True), (a, a[0, :2]), in_axes=(0, None), rtol=1e-10,
                atol=1e-10)
    check_batch(lambda x: L.hessenberg(x, calc_q=True), (a,), rtol=1e-10, atol=1e-10, jit=True)
    check_batch(L.polar, (a,), rtol=1e-10, atol=1e-10)
