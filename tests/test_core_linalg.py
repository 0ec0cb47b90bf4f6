"""Tests of the C++ core's linear-algebra ops (cholesky, lu, qr, eigh, svd, triangular_solve,
lu_pivots_to_permutation) against NumPy/SciPy, over random batched shapes in float32 and float64,
with singular, ill-conditioned and non-finite input, and the errors of bad operands."""
import itertools
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings, strategies as st

from core_util import run_op

DTYPES = ["float32", "float64"]
TOL = {"float32": 2e-4, "float64": 1e-10}

batch_shapes = st.lists(st.integers(0, 3), min_size=0, max_size=2).map(tuple)
dims = st.integers(0, 9)


def rand(rng, shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


def spd(rng, batch, n, dtype):
    a = rng.standard_normal(batch + (n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


def close(got, want, dtype, scale=1.0):
    np.testing.assert_allclose(got, want, rtol=TOL[dtype], atol=TOL[dtype] * scale)


def mats(x, core=2):
    """The matrices (or vectors: core=1) of a batch, one after another."""
    return x.reshape((int(np.prod(x.shape[:-core])),) + x.shape[-core:])


# ---- cholesky --------------------------------------------------------------------------------

@settings(max_examples=25)
@given(batch=batch_shapes, n=dims, dtype=st.sampled_from(DTYPES), seed=st.integers(0, 2**31))
def test_cholesky_matches_numpy(batch, n, dtype, seed):
    a = spd(np.random.default_rng(seed), batch, n, dtype)
    (l,) = run_op("cholesky", a)
    assert l.shape == a.shape and l.dtype == a.dtype
    if a.size:
        close(l, np.linalg.cholesky(a.astype(np.float64)), dtype, n)
        assert not np.triu(mats(l), 1).any()  # zeros above the diagonal


def test_cholesky_reads_only_the_lower_triangle():
    a = spd(np.random.default_rng(0), (2,), 5, "float64")
    garbage = a + np.triu(np.full((5, 5), 7.0), 1)
    np.testing.assert_array_equal(run_op("cholesky", garbage)[0], run_op("cholesky", a)[0])


@pytest.mark.parametrize("dtype", DTYPES)
def test_cholesky_not_positive_definite_gives_nan_for_that_matrix_only(dtype):
    a = spd(np.random.default_rng(1), (3,), 4, dtype)
    a[1] = -a[1]
    (l,) = run_op("cholesky", a)
    assert np.isnan(l[1][np.tril_indices(4)]).all() and not np.triu(l[1], 1).any()  # JAX's, after its tril
    close(l[[0, 2]], np.linalg.cholesky(a[[0, 2]].astype(np.float64)), dtype, 4)


def test_cholesky_of_nan_does_not_crash():
    (l,) = run_op("cholesky", np.array([[1.0, np.nan], [np.nan, 1.0]], np.float32))
    assert np.isnan(l[1]).all()  # as JAX: [[1, 0], [nan, nan]]


@pytest.mark.parametrize("n", [200, 333, 520])  # one large matrix: the blocked algorithm over the pool
def test_cholesky_large(n):
    rng = np.random.default_rng(n)
    a = spd(rng, (), n, "float64")
    (l,) = run_op("cholesky", a)
    np.testing.assert_allclose(l, np.linalg.cholesky(a), rtol=1e-10, atol=1e-10)
    a[n - 3, n - 3] = -1e6  # fails late: in the last panel
    assert np.isnan(run_op("cholesky", a)[0][np.tril_indices(n)]).all()


# ---- lu ----------------------------------------------------------------------------------------

def check_lu(a, lu, piv, perm, dtype, noise_from=None):
    """P A = L U, and LAPACK's own factors and pivots (before column `noise_from`, where a singular
    matrix leaves only rounding noise to pivot on: there any pivot is right)."""
    m, n = a.shape[-2:]
    k = min(m, n)
    assert lu.shape == a.shape and piv.shape == a.shape[:-2] + (k,) and perm.shape == a.shape[:-2] + (m,)
    assert piv.dtype == perm.dtype == np.int32
    for x, f, p, q in zip(mats(a), mats(lu), mats(piv, 1), mats(perm, 1)):
        L = np.tril(f, -1)[:, :k] + np.eye(m, k)
        U = np.triu(f)[:k]
        close(L @ U, x[q].astype(np.float64), dtype, np.abs(x).max(initial=1) * max(m, n))
        if k and dtype == "float64":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)  # singular: no error
                want_lu, want_piv = scipy.linalg.lu_factor(x, check_finite=False)
            if noise_from is not None:
                np.testing.assert_array_equal(p[:noise_from], want_piv[:noise_from])
                continue
            np.testing.assert_array_equal(p, want_piv)  # LAPACK's pivots
            close(f, want_lu, dtype, np.abs(x).max(initial=1) * max(m, n))


@settings(max_examples=25)
@given(batch=batch_shapes, m=dims, n=dims, dtype=st.sampled_from(DTYPES), seed=st.integers(0, 2**31))
def test_lu_reconstructs_with_lapacks_pivots(batch, m, n, dtype, seed):
    a = rand(np.random.default_rng(seed), batch + (m, n), dtype)
    lu, piv, perm = run_op("lu", a)
    check_lu(a, lu, piv, perm, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_lu_of_singular_matrices_is_finite(dtype):
    zeros = np.zeros((3, 3), dtype)
    lu, piv, perm = run_op("lu", zeros)
    np.testing.assert_array_equal(lu, zeros)
    np.testing.assert_array_equal(piv, [0, 1, 2])
    rank1 = np.outer([1, 2, 3], [1, 1, 2]).astype(dtype)
    lu, piv, perm = run_op("lu", rank1)
    assert np.isfinite(lu).all()
    check_lu(rank1, lu, piv, perm, dtype)


@pytest.mark.parametrize("shape", [(300, 300), (400, 260), (260, 530), (2, 200, 200)])
@pytest.mark.parametrize("singular", [False, True])
def test_lu_large(shape, singular):
    a = rand(np.random.default_rng(sum(shape)), shape, "float64")
    if singular:
        a[..., 7] = a[..., 3]  # no NaN, as LAPACK
    lu, piv, perm = run_op("lu", a)
    check_lu(a, lu, piv, perm, "float64", noise_from=7 if singular else None)


def test_large_factors_are_the_same_bits_for_any_thread_count():
    code = """
import sys; sys.path.insert(0, %r)
import hashlib, numpy as np
from core_util import run_op
a = np.random.default_rng(5).standard_normal((2, 300, 300))
a[..., 7] = a[..., 3]
spd = a[0] @ a[0].T + 300 * np.eye(300)
outs = run_op("lu", a) + run_op("cholesky", spd) + run_op("lu", a[0].astype(np.float32))
print(hashlib.sha256(b"".join(np.ascontiguousarray(o).tobytes() for o in outs)).hexdigest())
""" % os.path.dirname(os.path.abspath(__file__))
    digests = set()
    for threads in ("1", "2", "3", "8"):
        env = dict(os.environ, XJAX_NUM_THREADS=threads)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
        assert out.returncode == 0, out.stderr
        digests.add(out.stdout.strip())
    assert len(digests) == 1, digests


def test_lu_recorded_from_jax():
    # jax.lax.linalg.lu(jnp.arange(6.).reshape(3, 2))
    lu, piv, perm = run_op("lu", np.arange(6.0, dtype=np.float32).reshape(3, 2))
    np.testing.assert_array_equal(lu, [[4, 5], [0, 1], [0.5, 0.5]])
    np.testing.assert_array_equal(piv, [2, 2])
    np.testing.assert_array_equal(perm, [2, 0, 1])


# ---- lu_pivots_to_permutation -------------------------------------------------------------------

def pivots_reference(piv, m):
    """JAX's definition: swaps applied in order, a negative pivot counted from the end, reads
    clamped into range, writes out of range dropped."""
    perm = list(range(m))
    for i, j in enumerate(piv[:m]):
        j = j + m if j < 0 else j
        y = perm[min(max(j, 0), m - 1)]
        x = perm[i]
        perm[i] = y
        if 0 <= j < m:
            perm[j] = x
    return perm


@settings(max_examples=25)
@given(batch=batch_shapes, k=st.integers(0, 6), extra=st.integers(0, 3), seed=st.integers(0, 2**31))
def test_lu_pivots_to_permutation(batch, k, extra, seed):
    m = k + extra
    piv = np.random.default_rng(seed).integers(-m - 2, m + 3, batch + (k,)).astype(np.int32)
    (perm,) = run_op("lu_pivots_to_permutation", piv, permutation_size=m)
    assert perm.shape == batch + (m,) and perm.dtype == np.int32
    for p, q in zip(mats(piv, 1), mats(perm, 1)):
        assert list(q) == pivots_reference(list(p), m)
    # jax.lax.linalg.lu_pivots_to_permutation(jnp.array([5, -1, 2]), 4)
    np.testing.assert_array_equal(run_op("lu_pivots_to_permutation", np.array([5, -1, 2], np.int32),
                                         permutation_size=4)[0], [3, 3, 2, 1])


# ---- qr ----------------------------------------------------------------------------------------

@settings(max_examples=25)
@given(batch=batch_shapes, m=dims, n=dims, full=st.booleans(), dtype=st.sampled_from(DTYPES),
       seed=st.integers(0, 2**31))
def test_qr_matches_numpy(batch, m, n, full, dtype, seed):
    a = rand(np.random.default_rng(seed), batch + (m, n), dtype)
    q, r = run_op("qr", a, full_matrices=int(full))
    k = m if full else min(m, n)
    assert q.shape == batch + (m, k) and r.shape == batch + (k, n) and q.dtype == r.dtype == a.dtype
    if not a.size:
        np.testing.assert_array_equal(q, np.broadcast_to(np.eye(m, k, dtype=dtype), q.shape))
        return
    want_q, want_r = np.linalg.qr(a.astype(np.float64), mode="complete" if full else "reduced")
    close(q, want_q, dtype, max(m, n))  # the same Householder signs as LAPACK via NumPy
    close(r, want_r, dtype, max(m, n))
    assert not np.tril(mats(r), -1).any()


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (0, 3)])
def test_qr_pivoting(shape):
    a = rand(np.random.default_rng(2), shape, "float64")
    q, r, p = run_op("qr", a, full_matrices=0, pivoting=1)
    assert p.shape == shape[:-1][:-1] + (shape[-1],) and p.dtype == np.int32
    for x, qi, ri, pi in zip(mats(a), mats(q), mats(r), mats(p, 1)):
        if x.size:
            want_q, want_r, want_p = scipy.linalg.qr(x, pivoting=True, mode="economic")
            np.testing.assert_array_equal(pi, want_p)
            close(qi @ ri, x[:, pi], "float64", 10)


def test_qr_of_rank_deficient_and_nan_input_does_not_crash():
    q, r = run_op("qr", np.zeros((4, 3)))
    np.testing.assert_allclose(q @ r, np.zeros((4, 3)))
    q, r = run_op("qr", np.array([[1.0, np.nan], [2.0, 3.0]], np.float32))
    assert np.isnan(r[:, 1]).all()  # as JAX: NaN only where it propagates


# ---- eigh --------------------------------------------------------------------------------------

@settings(max_examples=25)
@given(batch=batch_shapes, n=dims, lower=st.booleans(), dtype=st.sampled_from(DTYPES), seed=st.integers(0, 2**31))
def test_eigh_matches_numpy_and_reads_one_triangle(batch, n, lower, dtype, seed):
    rng = np.random.default_rng(seed)
    a = rand(rng, batch + (n, n), dtype)
    sym = (a + np.swapaxes(a, -1, -2)) / 2
    used = np.tril(sym) if lower else np.triu(sym)
    noisy = used + (np.triu(a, 1) if lower else np.tril(a, -1)) * 100  # the other triangle is ignored
    v, w = run_op("eigh", noisy, lower=int(lower))
    assert v.shape == a.shape and w.shape == batch + (n,) and v.dtype == w.dtype == a.dtype
    if not a.size:
        return
    close(w, np.linalg.eigvalsh(sym.astype(np.float64)), dtype, n)
    assert (np.diff(w, axis=-1) >= 0).all()  # ascending
    close(sym @ v, v * w[..., None, :], dtype, 4 * n)
    close(np.swapaxes(v, -1, -2) @ v, np.broadcast_to(np.eye(n), v.shape), dtype, n)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_eigh_non_finite_gives_nan(bad):
    a = np.tile(np.eye(3, dtype=np.float32), (2, 1, 1))
    a[1, 2, 0] = bad
    v, w = run_op("eigh", a)
    assert np.isnan(v[1]).all() and np.isnan(w[1]).all()
    np.testing.assert_allclose(w[0], [1, 1, 1])


def test_eigh_recorded_from_jax():
    # jax.lax.linalg.eigh(jnp.array([[2., 1.], [1., 3.]]), symmetrize_input=False): the signs too
    v, w = run_op("eigh", np.array([[2.0, 1.0], [1.0, 3.0]], np.float32))
    np.testing.assert_allclose(w, [1.3819661, 3.618034], rtol=1e-6)
    np.testing.assert_allclose(v, [[-0.85065085, 0.52573115], [0.52573115, 0.85065085]], rtol=1e-6)


# ---- svd ---------------------------------------------------------------------------------------

@settings(max_examples=25)
@given(batch=batch_shapes, m=dims, n=dims, full=st.booleans(), uv=st.booleans(), dtype=st.sampled_from(DTYPES),
       seed=st.integers(0, 2**31))
def test_svd_matches_numpy(batch, m, n, full, uv, dtype, seed):
    a = rand(np.random.default_rng(seed), batch + (m, n), dtype)
    outs = run_op("svd", a, full_matrices=int(full), compute_uv=int(uv))
    k = min(m, n)
    assert len(outs) == (3 if uv else 1)
    s = outs[0]
    assert s.shape == batch + (k,) and s.dtype == a.dtype
    if a.size:
        close(s, np.linalg.svd(a.astype(np.float64), compute_uv=False), dtype, max(m, n))
    if not uv:
        return
    u, vt = outs[1:]
    assert u.shape == batch + (m, m if full else k) and vt.shape == batch + (n if full else k, n)
    if not a.size:
        if full:
            np.testing.assert_array_equal(u, np.broadcast_to(np.eye(m), u.shape))
            np.testing.assert_array_equal(vt, np.broadcast_to(np.eye(n), vt.shape))
        return
    close((u[..., :, :k] * s[..., None, :]) @ vt[..., :k, :], a, dtype, 4 * max(m, n))
    close(np.swapaxes(u, -1, -2) @ u, np.broadcast_to(np.eye(u.shape[-1]), u.shape[:-2] + (u.shape[-1],) * 2),
          dtype, max(m, n))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_svd_non_finite_gives_nan(bad):
    a = np.ones((2, 3, 2), np.float64)
    a[0, 1, 1] = bad
    s, u, vt = run_op("svd", a)
    assert np.isnan(s[0]).all() and np.isnan(u[0]).all() and np.isnan(vt[0]).all()
    assert np.isfinite(s[1]).all()


def test_svd_recorded_from_jax():
    # jax.lax.linalg.svd(jnp.array([[1., 2.], [3., 4.], [5., 6.]]), full_matrices=False): signs too
    s, u, vt = run_op("svd", np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32), full_matrices=0)
    np.testing.assert_allclose(s, [9.525519, 0.51430136], rtol=1e-5)
    np.testing.assert_allclose(u, [[-0.22984788, 0.8834613], [-0.5247448, 0.24078177], [-0.819642, -0.40189567]],
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(vt, [[-0.6196294, -0.7848945], [-0.7848945, 0.6196294]], rtol=1e-5, atol=1e-6)


# ---- triangular_solve --------------------------------------------------------------------------

def tri_reference(a, b, left, lower, trans, unit):
    t = np.tril(a) if lower else np.triu(a)
    if unit:
        t = t * (1 - np.eye(a.shape[-1])) + np.eye(a.shape[-1])
    op = np.swapaxes(t, -1, -2) if trans else t
    if left:
        return np.linalg.solve(op, b)
    return np.swapaxes(np.linalg.solve(np.swapaxes(op, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)


@pytest.mark.parametrize("m", [3, 40])  # below and above the size that goes to BLAS
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("left,lower,trans,unit", list(itertools.product([False, True], repeat=4)))
def test_triangular_solve_flags(m, dtype, left, lower, trans, unit):
    rng = np.random.default_rng(m)
    a = (rng.standard_normal((2, m, m)) / m + 2 * np.eye(m)).astype(dtype)  # well conditioned
    b = rand(rng, (2, m, 5) if left else (2, 5, m), dtype)
    (x,) = run_op("triangular_solve", a, b, left_side=int(left), lower=int(lower), transpose_a=int(trans),
                  unit_diagonal=int(unit))
    assert x.shape == b.shape and x.dtype == b.dtype
    close(x, tri_reference(a.astype(np.float64), b.astype(np.float64), left, lower, trans, unit), dtype, 10)


@settings(max_examples=25)
@given(batch=batch_shapes, m=st.integers(0, 40), n=dims, left=st.booleans(), dtype=st.sampled_from(DTYPES),
       seed=st.integers(0, 2**31))
def test_triangular_solve_batched(batch, m, n, left, dtype, seed):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(batch + (m, m)) / max(m, 1) + 2 * np.eye(m)).astype(dtype)
    b = rand(rng, batch + ((m, n) if left else (n, m)), dtype)
    (x,) = run_op("triangular_solve", a, b, left_side=int(left), lower=1)
    if a.size and b.size:
        close(x, tri_reference(a.astype(np.float64), b.astype(np.float64), left, True, False, False), dtype, 10)


@pytest.mark.parametrize("m", [2, 30])
def test_triangular_solve_singular_gives_inf_not_a_crash(m):
    a = np.tril(np.ones((m, m), np.float32))
    a[0, 0] = 0
    (x,) = run_op("triangular_solve", a, np.ones((m, 2), np.float32), left_side=1, lower=1)
    assert not np.isfinite(x).all()


# ---- bad operands --------------------------------------------------------------------------------

@pytest.mark.parametrize("op,shapes,dtype,attrs,err,match", [
    ("cholesky", [(3,)], "float32", {}, TypeError, r"\[cholesky\] Input 0 to cholesky must have rank at least 2"),
    ("cholesky", [(2, 3)], "float32", {}, ValueError, r"must be a square matrix. Got shape \(2, 3\)"),
    ("cholesky", [(3, 3)], "int32", {}, TypeError, "cholesky does not accept dtype int32"),
    ("cholesky", [(3, 3)], "float16", {}, TypeError, "cholesky does not accept dtype float16"),
    ("lu", [(3,)], "float32", {}, TypeError, "must have rank at least 2"),
    ("eigh", [(2, 3, 4)], "float64", {}, ValueError, r"must have shape \[..., n, n\]"),
    ("svd", [(4,)], "float64", {}, TypeError, "rank at least 2"),
    ("qr", [(3, 3)], "bool", {}, TypeError, "qr does not accept dtype bool"),
    ("triangular_solve", [(2, 3), (3, 3)], "float32", {}, ValueError, "must be a square matrix"),
    ("triangular_solve", [(3, 3), (3, 2)], "float32", {}, ValueError, "Incompatible shapes"),
    ("triangular_solve", [(3, 3), (2, 3, 2)], "float32", {"left_side": 1}, TypeError, "same number of batch"),
    ("triangular_solve", [(2, 3, 3), (4, 3, 2)], "float32", {"left_side": 1}, ValueError, "batch dimensions"),
    ("lu_pivots_to_permutation", [(3,)], "int32", {"permutation_size": 2}, ValueError, "has to exceed"),
    ("lu_pivots_to_permutation", [(3,)], "float32", {"permutation_size": 4}, TypeError, "subtypes of int32"),
    ("lu_pivots_to_permutation", [()], "int32", {"permutation_size": 4}, TypeError, "rank at least 1"),
])
def test_bad_operands(op, shapes, dtype, attrs, err, match):
    with pytest.raises(err, match=match):
        run_op(op, *[np.zeros(s, dtype) for s in shapes], **attrs)


def test_triangular_solve_mixed_dtypes():
    with pytest.raises(TypeError, match="same dtypes, got float32, float64"):
        run_op("triangular_solve", np.eye(2, dtype=np.float32), np.eye(2))


def test_too_large_for_lapack_is_a_clear_error():
    from xjax import _core
    with pytest.raises(ValueError, match="LAPACK's 32-bit sizes"):
        _core.infer("cholesky", [((50000, 50000), "float32")], {})


def test_without_lapack_ops_raise_and_triangular_solve_falls_back():
    # A fresh process with BLAS (and so LAPACK) disabled: no crash, a clear error.
    code = """
import numpy as np, sys
sys.path.insert(0, {tests!r})
from core_util import run_op
a = np.array([[2.0, 0.0], [1.0, 4.0]])
(x,) = run_op("triangular_solve", a, np.array([[2.0], [9.0]]), left_side=1, lower=1)
np.testing.assert_allclose(x, [[1.0], [2.0]])
try:
    run_op("cholesky", a)
except RuntimeError as e:
    assert "needs LAPACK" in str(e), e
    print("ok")
"""
    env = dict(os.environ, XJAX_DISABLE_BLAS="1")
    out = subprocess.run([sys.executable, "-c", code.format(tests=os.path.dirname(__file__))], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stdout + out.stderr
