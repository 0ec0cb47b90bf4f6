"""xjax.numpy.linalg's decompositions, solvers, determinants and norms against NumPy in float64 over
random batched shapes, ill-conditioned matrices, JAX's errors for bad shapes, derivatives
(check_grads in x64), jit and vmap. Singular, integer and empty inputs are compared with
JAX-recorded values in test_linalg_jax_values.py."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xjax
import xjax.numpy as jnp
from xjax.test_util import check_grads

L = jnp.linalg
batch_shapes = st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple)


@pytest.fixture
def x64():
    xjax.config.update("jax_enable_x64", True)
    yield
    xjax.config.update("jax_enable_x64", False)


def _x64_on():
    xjax.config.update("jax_enable_x64", True)


def _x64_off():
    xjax.config.update("jax_enable_x64", False)


def sym(a):
    return (a + np.swapaxes(a, -1, -2)) / 2


def spd(rng, shape):
    a = rng.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def col_signs(v):
    """+-1 per column: the sign of the column's largest-magnitude entry (eigen/singular vectors'
    signs are a convention; this fixes one)."""
    idx = np.argmax(np.abs(v), axis=-2)[..., None, :]
    return np.sign(np.take_along_axis(v, idx, axis=-2))


def close(got, want, tol):
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


# ---- square matrices, against NumPy --------------------------------------------------------------

@settings(max_examples=12, deadline=None)
@given(batch=batch_shapes, n=st.integers(1, 6), k=st.integers(1, 3), seed=st.integers(0, 2**31))
def test_square_functions_match_numpy(batch, n, k, seed):
    _x64_on()
    try:
        rng = np.random.default_rng(seed)
        a = rng.standard_normal(batch + (n, n)) + 2 * np.eye(n)
        tol = 1e-9 * np.linalg.cond(a).max()
        b, v = rng.standard_normal(batch + (n, k)), rng.standard_normal(n)
        close(L.solve(a, b), np.linalg.solve(a, b), tol)
        close(L.solve(a, v), np.linalg.solve(a, v), tol)
        close(L.inv(a), np.linalg.inv(a), tol)
        close(L.det(a), np.linalg.det(a), tol)
        for method in (None, "qr"):
            sign, logdet = L.slogdet(a, method=method)
            want_sign, want_logdet = np.linalg.slogdet(a)
            close(sign, want_sign, 0)
            close(logdet, want_logdet, tol)
        for p in (-2, 3):
            close(L.matrix_power(a, p), np.linalg.matrix_power(a, p), tol * 10)
        for p in (None, 1, -1, 2, -2, np.inf, -np.inf, "fro", "nuc"):
            close(L.norm(a, p, axis=(-2, -1)), np.linalg.norm(a, p, axis=(-2, -1)), 1e-10)
            close(L.cond(a, p), np.linalg.cond(a, p), tol)
        s = spd(rng, batch + (n, n))
        close(L.cholesky(s), np.linalg.cholesky(s), 1e-10)
        close(L.cholesky(s, upper=True), np.swapaxes(np.linalg.cholesky(s), -1, -2), 1e-10)
        w, vecs = L.eigh(s)
        want_w, want_v = np.linalg.eigh(s)
        close(w, want_w, 1e-9 * n)
        close(np.asarray(vecs) * col_signs(np.asarray(vecs)), want_v * col_signs(want_v), 1e-7)
        close(L.eigvalsh(s, UPLO="U"), want_w, 1e-9 * n)
        assert int(np.max(L.matrix_rank(a))) <= n
        close(L.matrix_rank(a), np.linalg.matrix_rank(a), 0)
    finally:
        _x64_off()


# ---- rectangular matrices ----------------------------------------------------------------------

@settings(max_examples=12, deadline=None)
@given(batch=batch_shapes, m=st.integers(1, 6), n=st.integers(1, 6), seed=st.integers(0, 2**31))
def test_rectangular_functions_match_numpy(batch, m, n, seed):
    _x64_on()
    try:
        rng = np.random.default_rng(seed)
        x = rng.standard_normal(batch + (m, n))
        for mode in ("reduced", "complete"):
            q, r = L.qr(x, mode=mode)
            want_q, want_r = np.linalg.qr(x, mode=mode)
            d, want_d = np.sign(np.diagonal(r, 0, -2, -1)), np.sign(np.diagonal(want_r, 0, -2, -1))
            k = d.shape[-1]
            close(np.asarray(q)[..., :k] * d[..., None, :], want_q[..., :k] * want_d[..., None, :], 1e-9)
            close(np.asarray(r)[..., :k, :] * d[..., :, None], want_r[..., :k, :] * want_d[..., :, None], 1e-9)
        close(abs(np.asarray(L.qr(x, mode="r"))), abs(np.linalg.qr(x, mode="r")), 1e-9)
        for full in (False, True):
            u, s, vh = L.svd(x, full_matrices=full)
            want_u, want_s, want_vh = np.linalg.svd(x, full_matrices=full)
            close(s, want_s, 1e-9)
            k = s.shape[-1]
            flip, want_flip = col_signs(np.asarray(u)[..., :k]), col_signs(want_u[..., :k])
            close(np.asarray(u)[..., :k] * flip, want_u[..., :k] * want_flip, 1e-6)
            close(np.asarray(vh)[..., :k, :] * np.swapaxes(flip, -1, -2),
                  want_vh[..., :k, :] * np.swapaxes(want_flip, -1, -2), 1e-6)
            if full:  # the complements: orthonormal, whatever their basis
                close(np.swapaxes(u, -1, -2) @ np.asarray(u), np.broadcast_to(np.eye(m), u.shape), 1e-10)
        close(L.svd(x, compute_uv=False), np.linalg.svd(x, compute_uv=False), 1e-9)
        close(L.svdvals(x), np.linalg.svd(x, compute_uv=False), 1e-9)
        close(L.pinv(x), np.linalg.pinv(x), 1e-8 * np.linalg.cond(x).max())
        for p in (2, -2, "nuc"):
            close(L.norm(x, p, axis=(-1, -2)), np.linalg.norm(x, p, axis=(-1, -2)), 1e-10)
        low_rank = x[..., :, :1] @ x[..., :1, :]
        close(L.matrix_rank(low_rank), np.linalg.matrix_rank(low_rank), 0)
    finally:
        _x64_off()


@settings(max_examples=10, deadline=None)
@given(m=st.integers(1, 6), n=st.integers(1, 6), k=st.integers(1, 3), deficient=st.booleans(),
       seed=st.integers(0, 2**31))
def test_lstsq_matches_numpy(m, n, k, deficient, seed):
    _x64_on()
    try:
        rng = np.random.default_rng(seed)
        a = rng.standard_normal((m, n))
        if deficient:
            a[:, -1] = a[:, 0]
        b = rng.standard_normal((m, k))
        x, resid, rank, s = L.lstsq(a, b, numpy_resid=True)
        want = np.linalg.lstsq(a, b, rcond=None)
        close(x, want[0], 1e-8)
        close(resid, want[1], 1e-8)
        assert int(rank) == want[2] and x.dtype == np.float64
        close(s, want[3], 1e-10)
        x1, resid1, _, _ = L.lstsq(a, b[:, 0])
        close(x1, np.linalg.lstsq(a, b[:, 0], rcond=None)[0], 1e-8)
        close(resid1, [np.sum((a @ np.asarray(x1) - b[:, 0]) ** 2)], 1e-8)
    finally:
        _x64_off()


def test_tensorsolve_tensorinv_multi_dot_match_numpy(x64):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((6, 2, 3)) + np.eye(6).reshape(6, 2, 3)
    close(L.tensorinv(a, 1), np.linalg.tensorinv(a, 1), 1e-10)
    t, b = rng.standard_normal((2, 3, 3, 2)), rng.standard_normal((2, 3))
    close(L.tensorsolve(t, b), np.linalg.tensorsolve(t, b), 1e-9)
    t0 = np.moveaxis(t, -1, 0)  # axes=(0,) moves it back to the end
    close(L.tensorsolve(t0, b, axes=(0,)), np.linalg.tensorsolve(t0, b, axes=(0,)), 1e-9)
    mats = [rng.standard_normal(s) for s in [(3,), (3, 4), (4, 2)]]
    close(L.multi_dot(mats), np.linalg.multi_dot(mats), 1e-12)


# ---- ill-conditioned matrices --------------------------------------------------------------------

def exact_hilbert_det(n):
    """det(hilbert(n)) in rational arithmetic, rounded once."""
    from fractions import Fraction

    m = [[Fraction(1, i + j + 1) for j in range(n)] for i in range(n)]
    det = Fraction(1)
    for i in range(n):  # no pivoting needed: the Hilbert matrix is positive definite
        det *= m[i][i]
        for r in range(i + 1, n):
            f = m[r][i] / m[i][i]
            m[r] = [a - f * b for a, b in zip(m[r], m[i])]
    return float(det)


def hilbert(n):
    i = np.arange(n)
    return 1.0 / (i[:, None] + i[None, :] + 1)


@pytest.mark.parametrize("n", [6, 10])
def test_ill_conditioned_hilbert(x64, n):
    h = hilbert(n)  # cond ~ 1e7 (n=6), 1e13 (n=10)
    b = h @ np.ones(n)
    x = np.asarray(L.solve(h, b))
    # A backward-stable solve: a small residual, however large the forward error.
    assert np.linalg.norm(h @ x - b) <= 1e-13 * np.linalg.norm(b)
    close(x, np.linalg.solve(h, b), 1e-16 * np.linalg.cond(h) * 10)
    rel = max(1e-10, 1e-17 * np.linalg.cond(h))  # rounding in LU's pivots grows with the condition number
    np.testing.assert_allclose(L.slogdet(h)[1], np.linalg.slogdet(h)[1], rtol=rel)
    # det against the exact value (NumPy's own is off by 3.5e-10 at n=6): relative error up to eps * cond
    np.testing.assert_allclose(L.det(h), exact_hilbert_det(n), rtol=max(1e-10, 1e-16 * np.linalg.cond(h)))
    close(L.eigvalsh(h), np.linalg.eigvalsh(h), 1e-14)
    close(L.svdvals(h), np.linalg.svd(h, compute_uv=False), 1e-14)
    close(L.cond(h), np.linalg.cond(h), 1e-3 * np.linalg.cond(h))
    assert int(L.matrix_rank(h)) == np.linalg.matrix_rank(h)
    close(L.pinv(h, rtol=1e-10), np.linalg.pinv(h, rcond=1e-10), 1e-6 * np.abs(np.linalg.pinv(h, rcond=1e-10)).max())


def test_nearly_singular_gives_finite_large_values(x64):
    a = np.diag([1.0, 1.0, 1e-300])
    assert np.isfinite(np.asarray(L.inv(a))).all()
    close(L.det(a), 1e-300, 1e-310)
    # det underflows, log|det| does not
    close(L.slogdet(np.diag([1e-200, 1e-200, 1.0])).logabsdet, np.log(1e-200) * 2, 1e-10)


def test_float32_and_integer_dtypes():
    a = np.array([[4., 1.], [1., 3.]], np.float32)
    assert L.solve(a, np.ones(2, np.float32)).dtype == np.float32
    assert L.inv(a.astype(np.int32)).dtype == np.float32
    xjax.config.update("jax_enable_x64", True)
    try:  # JAX's promotion: int32 -> float32 even with x64, int64 -> float64
        assert L.det(a.astype(np.int32)).dtype == np.float32
        assert L.cholesky(a.astype(np.int64)).dtype == np.float64
    finally:
        xjax.config.update("jax_enable_x64", False)


# ---- errors (JAX's types and messages) -------------------------------------------------------------

@pytest.mark.parametrize("call, exc, match", [
    (lambda: L.solve(np.ones((3, 3)), np.ones(4)), ValueError,
     r"inconsistent size for core dimension 'm': 4 vs 3 on vectorized function with excluded=frozenset\(\) and "
     r"signature='\(m,m\),\(m\)->\(m\)'"),
    (lambda: L.solve(np.ones((3, 3)), np.ones((5, 3))), ValueError,
     r"inconsistent size for core dimension 'm': 5 vs 3 .*signature='\(m,m\),\(m,n\)->\(m,n\)'"),
    (lambda: L.solve(np.ones((3, 4)), np.ones(3)), ValueError, "inconsistent size for core dimension 'm': 4 vs 3"),
    (lambda: L.solve(np.ones((2, 3, 3)), np.ones((4, 3, 2))), ValueError,
     r"Incompatible shapes for broadcasting: shapes=\[\(2,\), \(4,\)\]"),
    (lambda: L.solve(np.ones((2, 3, 3)), np.ones((2, 3))), ValueError,
     r"Invalid shapes for solve: \(2, 3, 3\), \(2, 3\). Prior to JAX v0.5.0"),
    (lambda: L.solve(np.ones(3), np.ones(3)), ValueError,
     r"left hand array must be at least two dimensional; got a.shape=\(3,\)"),
    (lambda: L.solve([[1., 0.], [0., 1.]], [1., 1.]), TypeError, "jnp.linalg.solve requires ndarray or scalar"),
    (lambda: L.inv(np.ones((3, 4))), ValueError, r"Argument to inv must have shape \[..., n, n\], got \(3, 4\)."),
    (lambda: L.det(np.ones((3, 4))), ValueError, r"Argument to _det\(\) must have shape \[..., n, n\], got \(3, 4\)"),
    (lambda: L.slogdet(np.ones(3)), ValueError, r"Argument to slogdet\(\) must have shape \[..., n, n\], got \(3,\)"),
    (lambda: L.cholesky(np.ones((3, 4))), ValueError, r"Argument to cholesky must have shape \[..., n, n\]"),
    (lambda: L.eigh(np.ones((3, 4))), ValueError, r"Argument to eigh must have shape \[..., n, n\]"),
    (lambda: L.qr(np.ones(3)), TypeError, r"Input 0 to qr must have rank at least 2, but got shape=\(3,\)"),
    (lambda: L.lstsq(np.ones((3, 2)), np.ones(4)), ValueError, "Leading dimensions of input arrays must match"),
    (lambda: L.lstsq(np.ones((3, 2)), np.ones((3, 2, 2))), TypeError,
     "3-dimensional array given. Array must be one or two-dimensional"),
    (lambda: L.lstsq(np.ones((2, 3, 2)), np.ones(2)), TypeError,
     "3-dimensional array given. Array must be two-dimensional"),
    (lambda: L.matrix_power(np.ones(3), 2), TypeError,
     "1-dimensional array given. Array must be at least two-dimensional"),
    (lambda: L.matrix_power(np.ones((3, 4)), 2), TypeError, "Last 2 dimensions of the array must be square"),
    (lambda: L.matrix_power(np.ones((3, 3)), 2.5), TypeError, "exponent must be an integer, got 2.5"),
    (lambda: L.cond(np.ones((3, 4)), 1), ValueError, r"jnp.linalg.cond: for p=1, array must be square"),
    (lambda: L.cond(np.ones((0, 4))), ValueError, "jnp.linalg.cond: input array must not be empty"),
    (lambda: L.tensorinv(np.ones((2, 3, 4)), 1), ValueError, "tensorinv is only possible when the product"),
    (lambda: L.tensorinv(np.ones((2, 2)), 0), ValueError, "ind must be a positive integer; got ind=0"),
    (lambda: L.tensorsolve(np.ones((2, 3, 4)), np.ones((3,))), ValueError,
     "After moving axes to end, leading shape of a must match shape of b"),
    (lambda: L.tensorsolve(np.ones((2, 3, 4)), np.ones((2,))), ValueError,
     r"Input arrays must have prod\(a.shape\[:b.ndim\]\) == prod\(a.shape\[b.ndim:\]\)"),
    (lambda: L.norm(np.ones((3, 3, 3)), 2), ValueError,
     r"Improper number of axes for norm: axis=\(0, 1, 2\). Pass one axis to compute a vector-norm"),
    (lambda: L.norm(np.ones((3, 3)), 3), ValueError, "Invalid order '3' for matrix norm."),
    (lambda: L.norm(np.ones(3), "fro"), ValueError, "Invalid order 'fro' for vector norm."),
    (lambda: L.pinv(np.ones((3, 3)), rtol=1, rcond=1), ValueError, "pinv: only one of rtol and rcond"),
    (lambda: L.matrix_rank(np.ones((3, 3)), rtol=1, tol=1), ValueError, "matrix_rank: only one of tol or rtol"),
    (lambda: L.eig(np.ones((3, 4))), ValueError, r"must have shape \[..., n, n\]"),
])
def test_errors_as_jax(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# ---- derivatives -----------------------------------------------------------------------------------

RNG = np.random.default_rng(7)
SQ = RNG.standard_normal((2, 4, 4)) + 3 * np.eye(4)
RHS = RNG.standard_normal((2, 4, 2))
TALL = RNG.standard_normal((5, 3))
SPD = spd(RNG, (4, 4))

GRAD_CASES = [
    ("solve", L.solve, (SQ, RHS), 2),
    ("solve_vector", L.solve, (SQ[0], RHS[0, :, 0]), 2),
    ("inv", L.inv, (SQ,), 2),
    ("det", L.det, (SQ,), 2),
    ("det_2x2", L.det, (SQ[:, :2, :2],), 2),
    ("det_3x3", L.det, (SQ[:, :3, :3],), 2),
    ("det_1x1", L.det, (SQ[:, :1, :1],), 1),
    ("slogdet", lambda a: L.slogdet(a).logabsdet, (SQ,), 2),
    ("slogdet_2x2", lambda a: L.slogdet(a).logabsdet, (SQ[:, :2, :2] + 3,), 1),
    ("slogdet_qr", lambda a: L.slogdet(a, method="qr").logabsdet, (SQ,), 1),
    ("pinv_tall", L.pinv, (TALL,), 1),
    ("pinv_wide", L.pinv, (TALL.T,), 1),
    ("cholesky", lambda a: L.cholesky(sym(a)), (SPD,), 2),
    ("qr", L.qr, (TALL,), 1),
    ("eigh", lambda a: L.eigh(sym(a)), (SPD,), 1),
    ("eigvalsh", lambda a: L.eigvalsh(sym(a)), (SPD,), 2),
    ("svd", lambda a: L.svd(a, full_matrices=False), (TALL,), 1),
    ("svdvals", L.svdvals, (TALL,), 2),
    ("lstsq", lambda a, b: L.lstsq(a, b)[0], (TALL, RNG.standard_normal(5)), 1),
    ("norm_2", lambda a: L.norm(a, 2), (TALL,), 1),
    ("norm_nuc", lambda a: L.norm(a, "nuc"), (TALL,), 1),
    ("norm_fro", lambda a: L.norm(a, "fro"), (TALL,), 2),
    ("matrix_power_negative", lambda a: L.matrix_power(a, -2), (SQ,), 1),
    ("cond", L.cond, (SQ[0],), 1),
    ("tensorsolve", L.tensorsolve, ((RNG.standard_normal((8, 8)) + 3 * np.eye(8)).reshape(2, 4, 8), RHS[:, :, 0]), 1),
]


@pytest.mark.parametrize("name, f, args, order", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_check_grads(x64, name, f, args, order):
    check_grads(f, args, order=order, modes=("fwd", "rev"))


def test_solve_gradient_reuses_the_factorisation(x64):
    jaxpr = str(xjax.make_jaxpr(xjax.grad(lambda a, b: L.solve(a, b).sum(), (0, 1)))(SQ, RHS))
    assert jaxpr.count(" lu ") == 1, jaxpr  # the reverse pass solves with the primal's factors


def test_det_gradient_is_the_adjugate_at_singular_matrices(x64):
    a = np.array([[1., 2., 3., 4.], [2., 4., 6., 8.], [1., 0., 1., 0.], [0., 1., 1., 2.]])
    adj_t = np.array([[np.linalg.det(np.delete(np.delete(a, i, 0), j, 1)) * (-1) ** (i + j) for j in range(4)]
                      for i in range(4)])
    close(xjax.grad(L.det)(a), adj_t, 1e-10)


# ---- jit and vmap ------------------------------------------------------------------------------------

def test_jit_and_vmap_match_eager():
    a, b = SQ.astype(np.float32), RHS.astype(np.float32)
    close(xjax.vmap(L.solve)(a, b), L.solve(a, b), 1e-6)
    close(xjax.vmap(L.solve, in_axes=(None, 0))(a[0], b[:, :, 0]), L.solve(a[0], b[:, :, 0].T).T, 1e-5)
    close(xjax.jit(L.det)(a), L.det(a), 1e-6)
    close(xjax.vmap(lambda x: L.slogdet(x).logabsdet)(a), L.slogdet(a).logabsdet, 1e-6)
    close(xjax.vmap(L.pinv)(a), L.pinv(a), 1e-6)
    close(xjax.jit(lambda x: L.norm(x, "nuc", axis=(1, 2)))(a), L.norm(a, "nuc", axis=(1, 2)), 1e-5)
    close(xjax.jit(L.inv)(a), L.inv(a), 1e-6)
    w = xjax.vmap(lambda x: L.eigh(x @ x.T).eigenvalues)(a)
    close(w, L.eigvalsh(a @ np.swapaxes(a, 1, 2)), 1e-4)
    grads = xjax.vmap(xjax.grad(lambda x: L.slogdet(x).logabsdet))(a)
    close(grads, np.swapaxes(np.linalg.inv(a), 1, 2), 1e-5)


def test_empty_cholesky_does_not_reach_lapack():
    # The core's potrf call rejects n = 0 (LAPACK prints "parameter number 4 had an illegal value"):
    # jnp/scipy cholesky return the empty factor without calling it. Run apart, to read its output.
    import subprocess
    import sys
    code = ("import numpy as np, xjax.numpy as jnp, xjax.scipy.linalg as sl\n"
            "print(jnp.linalg.cholesky(np.zeros((2, 0, 0))).shape, sl.cholesky(np.zeros((0, 0))).shape,\n"
            "      sl.solve(np.zeros((0, 0)), np.zeros(0), assume_a='pos').shape)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "(2, 0, 0) (0, 0) (0,)" and "illegal" not in out.stderr, (out.stdout, out.stderr)


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 3, 3), (0, 2)])
def test_qr_raw_mode_against_numpy(shape):
    a = np.random.default_rng(1).standard_normal(shape)
    with xjax.enable_x64(True):
        h, tau = L.qr(a, mode="raw")
    if len(shape) == 2:
        want_h, want_tau = np.linalg.qr(a, mode="raw")
        np.testing.assert_allclose(h, want_h, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(tau, want_tau, rtol=1e-12, atol=1e-12)
    else:  # NumPy's raw mode takes one matrix: each of the batch against it
        for k in range(shape[0]):
            want_h, want_tau = np.linalg.qr(a[k], mode="raw")
            np.testing.assert_allclose(h[k], want_h, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(tau[k], want_tau, rtol=1e-12, atol=1e-12)
