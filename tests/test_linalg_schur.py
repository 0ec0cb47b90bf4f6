"""Tests of jax.lax.linalg's matrix forms and Householder products (schur, hessenberg, tridiagonal,
tridiagonal_solve, householder_product, ormqr, symmetric_product, cholesky_update, qdwh): values
against SciPy (scipy.linalg.lapack for the packed forms) in float64 and against values recorded
from JAX, reconstruction identities, batching against a loop, tridiagonal_solve's derivatives
(check_grads in x64), and JAX's errors."""
import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings, strategies as st
from scipy.linalg import lapack

import xjax
from batching_util import check_batch
from xjax.lax import linalg
from xjax.test_util import check_grads
from x64_util import in_x64


batch_shapes = st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple)


def per_matrix(a, fn):
    """fn over the matrices of a batch (the trailing two dims), results stacked back."""
    a = np.asarray(a)
    flat = a.reshape((-1,) + a.shape[-2:])
    outs = [fn(m) for m in flat]
    if not isinstance(outs[0], tuple):
        return np.stack(outs).reshape(a.shape[:-2] + outs[0].shape) if len(flat) else None
    return tuple(np.stack(o).reshape(a.shape[:-2] + o[0].shape) for o in zip(*outs))


def block_eigenvalues(t):
    """The eigenvalues of a real Schur form, block by block down the diagonal; checks that each
    2 x 2 block is standardised as LAPACK's (equal diagonal, off-diagonals of opposite signs)."""
    out, i, n = [], 0, t.shape[0]
    while i < n:
        if i + 1 < n and t[i + 1, i] != 0:
            assert t[i, i] == t[i + 1, i + 1] and t[i, i + 1] * t[i + 1, i] < 0
            im = np.sqrt(-t[i, i + 1] * t[i + 1, i])
            out += [t[i, i] + 1j * im, t[i, i] - 1j * im]
            i += 2
        else:
            out.append(complex(t[i, i]))
            i += 1
    return np.array(out)


def sym(a):
    return (a + np.swapaxes(a, -1, -2)) / 2


# ---- values recorded from JAX 0.10.2 (LAPACK's packed forms, which SciPy's wrappers return too) ----

A4 = np.array([[1., 2, 3, 4], [1, 4, 2, 3], [3, 2, 1, 4], [2, 3, 2, 2]])
S4 = np.array([[4., 1, 2, 0.5], [1, 3, 0, 1], [2, 0, 5, 1], [0.5, 1, 1, 2]])
SCHUR_T = np.array([[9.683440878622394, -1.5194094089830366, -1.0118205745880189, 2.007993310409038],
                    [0.0, 1.6041128691239868, 0.2003483074861026, 1.2431427784175384],
                    [0.0, 0.0, -2.0000000000000004, -0.2236819756764792], [0.0, 0.0, 0.0, -1.287553747746373]])
SCHUR_Z = np.array([[0.5089850085749794, 0.4256699091703701, 0.7478517292677993, -0.021381779719651488],
                    [0.5145924831067307, -0.7969487586068402, 0.09475680751845543, -0.30180854844416877],
                    [0.5089850085749792, 0.4256699091703703, -0.6014234974526932, -0.44500468108165714],
                    [0.46590030953188527, -0.04982903780722633, -0.26462939211630104, 0.8428672810101582]])
HESS_PACKED = np.array([[1.0, -5.0779635963360645, 1.1674774785852047, 1.3606182606749222],
                        [-3.7416573867739413, 5.785714285714285, -3.6129700430703773, -1.8245822889364376],
                        [0.632690166178602, -2.992337152236202, 2.4934879934879945, -0.5771624540444946],
                        [0.42179344411906794, 0.13080294350321012, -0.04263997021964593, -1.2792022792022792]])
HESS_TAUS = np.array([1.2672612419124243, 1.9663567953252654, 0.0])
TRID_LOWER = (
    np.array([[4.0, 1.0, 2.0, 0.5], [-2.29128784747792, 5.0476190476190474, 0.0, 1.0],
              [0.6076648694013741, 0.9499970163457144, 1.8971045704714053, 1.0],
              [0.15191621735034352, 0.4859004956321706, 0.9441487612723094, 3.055276381909547]]),
    np.array([4.0, 5.0476190476190474, 1.8971045704714053, 3.055276381909547]),
    np.array([-2.29128784747792, 0.9499970163457144, 0.9441487612723094]),
    np.array([1.4364357804719847, 1.6179929990262099, 0.0]))
TRID_UPPER = (
    np.array([[3.2342342342342345, -0.7387387387387399, -0.42790057506777707, 0.2],
              [1.0, 3.4324324324324342, -2.027587510099407, 0.4], [2.0, 0.0, 5.333333333333336, -1.5],
              [0.5, 1.0, 1.0, 2.0]]),
    np.array([3.2342342342342345, 3.4324324324324342, 5.333333333333336, 2.0]),
    np.array([-0.7387387387387399, -2.027587510099407, -1.5]),
    np.array([0.0, 1.690475746682501, 1.6666666666666667]))


def test_values_recorded_from_jax(x64):
    t, z = linalg.schur(A4)
    np.testing.assert_allclose(t, SCHUR_T, atol=1e-12)
    np.testing.assert_allclose(z, SCHUR_Z, atol=1e-12)
    packed, taus = linalg.hessenberg(A4)
    np.testing.assert_allclose(packed, HESS_PACKED, atol=1e-12)
    np.testing.assert_allclose(taus, HESS_TAUS, atol=1e-12)
    for lower, want in ((True, TRID_LOWER), (False, TRID_UPPER)):
        for got, w in zip(linalg.tridiagonal(S4, lower=lower), want):
            np.testing.assert_allclose(got, w, atol=1e-12)


def test_results_are_lists_as_jax():
    a = A4.astype(np.float32)
    assert type(linalg.schur(a)) is list and len(linalg.schur(a, compute_schur_vectors=False)) == 1
    assert type(linalg.hessenberg(a)) is list and type(linalg.tridiagonal(S4)) is list


# ---- schur ----------------------------------------------------------------------------------------

@settings(max_examples=12, deadline=None)
@given(batch=batch_shapes, n=st.integers(0, 7), seed=st.integers(0, 2**31))
@in_x64
def test_schur_against_scipy(batch, n, seed):
    a = np.random.default_rng(seed).standard_normal(batch + (n, n))
    t, z = (np.asarray(x) for x in linalg.schur(a))
    assert t.shape == z.shape == a.shape and t.dtype == np.float64
    np.testing.assert_allclose(z @ t @ np.swapaxes(z, -1, -2), a, atol=1e-12)
    np.testing.assert_allclose(np.swapaxes(z, -1, -2) @ z, np.broadcast_to(np.eye(n), a.shape), atol=1e-12)
    assert np.all(np.tril(t, -2) == 0)  # quasi-triangular
    # SciPy's eigenvalues in the same order. (Z itself is fixed only up to the signs of its columns
    # and a rotation within each 2 x 2 block, which rounding in another OpenBLAS build moves.)
    count = int(np.prod(batch))
    for tm, am in zip(t.reshape((count, n, n)), a.reshape((count, n, n))):
        np.testing.assert_allclose(block_eigenvalues(tm), block_eigenvalues(scipy.linalg.schur(am)[0]), atol=1e-10)
    t_only, = linalg.schur(a, compute_schur_vectors=False)
    np.testing.assert_allclose(t_only, t, atol=1e-12)


def test_schur_float32_and_failures():
    a = A4.astype(np.float32)
    t, z = linalg.schur(a)
    assert t.dtype == np.float32
    np.testing.assert_allclose(np.asarray(z) @ np.asarray(t) @ np.asarray(z).T, a, atol=1e-5)
    bad = A4.copy()
    bad[1, 2] = np.nan
    t, z = linalg.schur(np.stack([A4, bad]).astype(np.float32))
    assert np.isfinite(np.asarray(t)[0]).all() and np.isnan(np.asarray(t)[1]).all() and np.isnan(np.asarray(z)[1]).all()


# ---- hessenberg, tridiagonal: LAPACK's packed forms ---------------------------------------------

@settings(max_examples=12, deadline=None)
@given(batch=batch_shapes, n=st.integers(0, 7), seed=st.integers(0, 2**31))
@in_x64
def test_hessenberg_against_gehrd(batch, n, seed):
    a = np.random.default_rng(seed).standard_normal(batch + (n, n))
    packed, taus = (np.asarray(x) for x in linalg.hessenberg(a))
    assert packed.shape == a.shape and taus.shape == batch + (max(n - 1, 0),)
    if n:
        ref = per_matrix(a, lambda m: lapack.dgehrd(m)[:2])
        np.testing.assert_allclose(packed, ref[0], atol=1e-12)
        np.testing.assert_allclose(taus, ref[1][..., :n - 1], atol=1e-12)


@settings(max_examples=12, deadline=None)
@given(batch=batch_shapes, n=st.integers(1, 7), lower=st.booleans(), seed=st.integers(0, 2**31))
@in_x64
def test_tridiagonal_against_sytrd(batch, n, lower, seed):
    a = sym(np.random.default_rng(seed).standard_normal(batch + (n, n)))
    got = [np.asarray(x) for x in linalg.tridiagonal(a, lower=lower)]
    assert [g.shape for g in got] == [a.shape, batch + (n,), batch + (n - 1,), batch + (n - 1,)]
    ref = per_matrix(a, lambda m: lapack.dsytrd(m, lower=int(lower))[:4])
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g, r, atol=1e-12)
    # T = Q^T A Q: the tridiagonal matrix of (d, e) has A's eigenvalues.
    count = int(np.prod(batch))
    for d, e, m in zip(got[1].reshape(count, n), got[2].reshape(count, n - 1), a.reshape(count, n, n)):
        tri = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
        np.testing.assert_allclose(np.linalg.eigvalsh(tri), np.linalg.eigvalsh(m), atol=1e-10)


def test_tridiagonal_reads_one_triangle(x64):
    noisy = np.triu(S4) + np.tril(np.full((4, 4), 7.0), -1)  # garbage in the lower triangle, which stays
    packed, *rest = linalg.tridiagonal(noisy, lower=False)
    np.testing.assert_allclose(np.triu(packed), np.triu(TRID_UPPER[0]), atol=1e-12)
    np.testing.assert_allclose(np.tril(packed, -1), np.tril(noisy, -1))
    for got, want in zip(rest, TRID_UPPER[1:]):
        np.testing.assert_allclose(got, want, atol=1e-12)


# ---- householder_product, ormqr -----------------------------------------------------------------

@settings(max_examples=12, deadline=None)
@given(batch=batch_shapes, m=st.integers(0, 6), n=st.integers(0, 6), seed=st.integers(0, 2**31))
@in_x64
def test_householder_product_and_ormqr_against_lapack(batch, m, n, seed):
    m, n = max(m, n), min(m, n)  # householder_product wants m >= n
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(batch + (m, n))
    if a.size:
        qr = per_matrix(a, lambda x: lapack.dgeqrf(x)[:2])
        packed, taus = qr
    else:
        packed, taus = a, np.zeros(batch + (n,))
    q = np.asarray(linalg.householder_product(packed, taus))
    assert q.shape == a.shape
    if a.size:
        np.testing.assert_allclose(q, per_matrix(a, lambda x: scipy.linalg.qr(x, mode="economic")[0]), atol=1e-12)
    full_q = per_matrix(a, lambda x: scipy.linalg.qr(x)[0]) if a.size else np.broadcast_to(np.eye(m), batch + (m, m))
    c_left, c_right = rng.standard_normal(batch + (m, 3)), rng.standard_normal(batch + (2, m))
    qt = np.swapaxes(full_q, -1, -2)
    for left, transpose, c, want in ((True, False, c_left, full_q @ c_left), (True, True, c_left, qt @ c_left),
                                     (False, False, c_right, c_right @ full_q),
                                     (False, True, c_right, c_right @ qt)):
        got = linalg.ormqr(packed, taus, c, left=left, transpose=transpose)
        np.testing.assert_allclose(got, want, atol=1e-12)


# ---- tridiagonal_solve --------------------------------------------------------------------------

def tridiag(rng, batch, m, dtype=np.float64):
    dl, d, du = rng.standard_normal((3,) + batch + (m,)).astype(dtype)
    d = d + 4 * np.sign(d)  # diagonally dominant: well conditioned
    dl[..., :1] = 0
    du[..., m - 1:] = 0
    return dl, d, du


def dense(dl, d, du):
    m = d.shape[-1]
    return (d[..., :, None] * np.eye(m) + dl[..., :, None] * np.eye(m, k=-1) + du[..., :, None] * np.eye(m, k=1))


@settings(max_examples=12, deadline=None)
@given(batch=batch_shapes, m=st.integers(0, 7), k=st.integers(0, 3), seed=st.integers(0, 2**31))
@in_x64
def test_tridiagonal_solve_against_numpy(batch, m, k, seed):
    rng = np.random.default_rng(seed)
    dl, d, du = tridiag(rng, batch, m)
    b = rng.standard_normal(batch + (m, k))
    x = np.asarray(linalg.tridiagonal_solve(dl, d, du, b))
    assert x.shape == b.shape
    if m and k:
        np.testing.assert_allclose(x, np.linalg.solve(dense(dl, d, du), b), atol=1e-12)


def test_tridiagonal_solve_singular_gives_nan_as_jax():
    # JAX's values: [[0, 1], [1, 0]] needs a pivot and solves; [[1, 1], [1, 1]] is singular: NaN.
    x = linalg.tridiagonal_solve(np.array([0., 1]), np.array([0., 0]), np.array([1., 0]), np.ones((2, 1)))
    np.testing.assert_allclose(x, [[1.], [1.]])
    x = linalg.tridiagonal_solve(np.array([0., 1]), np.array([1., 1]), np.array([1., 0]), np.ones((2, 1)))
    assert np.isnan(np.asarray(x)).all()
    x = linalg.tridiagonal_solve(np.array([0., 1]), np.array([2., 1]), np.array([1., 0]), np.ones((2, 1)))
    np.testing.assert_allclose(x, [[0.], [1.]])


def test_tridiagonal_solve_grads(x64):
    rng = np.random.default_rng(0)
    dl, d, du = tridiag(rng, (), 5)
    b = rng.standard_normal((5, 2))
    check_grads(lambda *args: linalg.tridiagonal_solve(*args), (dl, d, du, b), order=2, modes=["fwd", "rev"])
    check_grads(lambda b: linalg.tridiagonal_solve(dl, d, du, b), (b,), order=1, modes=["rev"])
    bd, bb = tridiag(rng, (3,), 4), rng.standard_normal((3, 4, 1))
    check_grads(lambda *args: linalg.tridiagonal_solve(*args), (*bd, bb), order=1, modes=["fwd", "rev"])


def test_tridiagonal_solve_batching():
    rng = np.random.default_rng(1)
    dl, d, du = tridiag(rng, (3,), 5, np.float32)
    b = rng.standard_normal((3, 5, 2)).astype(np.float32)
    solve = linalg.tridiagonal_solve
    check_batch(solve, (dl, d, du, b), rtol=1e-5, atol=1e-5)
    check_batch(solve, (dl[0], d[0], du[0], np.moveaxis(b, 0, 2)), in_axes=(None, None, None, 2),
                rtol=1e-5, atol=1e-5)  # one matrix: the examples are more right-hand sides
    check_batch(solve, (dl, d[0], du, b[0]), in_axes=(0, None, 0, None), rtol=1e-5, atol=1e-5, jit=True)


def test_tridiagonal_solve_under_jit_and_jvp_of_matrix(x64):
    rng = np.random.default_rng(2)
    dl, d, du = tridiag(rng, (), 4)
    b = rng.standard_normal((4, 1))
    f = xjax.jit(lambda d: linalg.tridiagonal_solve(dl, d, du, b))
    np.testing.assert_allclose(f(d), np.linalg.solve(dense(dl, d, du), b), atol=1e-12)
    _, tangent = xjax.jvp(f, (d,), (np.ones(4),))
    a = dense(dl, d, du)
    x = np.linalg.solve(a, b)
    np.testing.assert_allclose(tangent, -np.linalg.solve(a, x), atol=1e-12)  # d(A^-1 b) = -A^-1 dA x, dA = I


# ---- batching of the rest --------------------------------------------------------------------------

def test_batching_rules_against_a_loop():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 5, 5)).astype(np.float32)
    check_batch(linalg.schur, (a,), rtol=1e-5, atol=1e-5)
    check_batch(lambda x: linalg.schur(x, compute_schur_vectors=False), (np.moveaxis(a, 0, 2),), in_axes=2,
                rtol=1e-5, atol=1e-5)
    check_batch(linalg.hessenberg, (a,), rtol=1e-5, atol=1e-5, jit=True)
    check_batch(lambda x: linalg.tridiagonal(x, lower=False), (np.moveaxis(sym(a), 0, 1),), in_axes=1,
                rtol=1e-5, atol=1e-5)
    tall = rng.standard_normal((3, 6, 4)).astype(np.float32)
    packed, taus = zip(*[lapack.sgeqrf(x)[:2] for x in tall])
    packed, taus = np.stack(packed), np.stack(taus)
    check_batch(linalg.householder_product, (packed, taus), rtol=1e-5, atol=1e-5)
    check_batch(linalg.householder_product, (packed[0], taus), in_axes=(None, 0), rtol=1e-5, atol=1e-5)
    c = rng.standard_normal((3, 6, 2)).astype(np.float32)
    check_batch(lambda p, t, c: linalg.ormqr(p, t, c, transpose=True), (packed, taus[0], c), in_axes=(0, None, 0),
                rtol=1e-5, atol=1e-5)
    cc = sym(rng.standard_normal((3, 6, 6))).astype(np.float32)
    check_batch(lambda p, c: linalg.symmetric_product(p, c, alpha=2., beta=0.5), (tall, cc), rtol=1e-5, atol=1e-5)
    check_batch(lambda p, c: linalg.symmetric_product(p, c), (tall[0], cc), in_axes=(None, 0), rtol=1e-5, atol=1e-5)


# ---- symmetric_product, cholesky_update ---------------------------------------------------------

def test_symmetric_product(x64):
    rng = np.random.default_rng(4)
    a, c = rng.standard_normal((2, 5, 3)), sym(rng.standard_normal((2, 5, 5)))
    got = linalg.symmetric_product(a, c, alpha=2.0, beta=-0.5)
    np.testing.assert_allclose(got, 2 * a @ np.swapaxes(a, -1, -2) - 0.5 * c, atol=1e-12)
    c_tri = np.tril(c) + np.triu(np.full_like(c, 9.0), 1)
    got = np.asarray(linalg.symmetric_product(a, c_tri, beta=1.0, symmetrize_output=True))
    want = a @ np.swapaxes(a, -1, -2) + c
    np.testing.assert_allclose(got, want, atol=1e-12)
    jitted = xjax.jit(lambda a, c: linalg.symmetric_product(a, c))(a, c)
    np.testing.assert_allclose(jitted, a @ np.swapaxes(a, -1, -2), atol=1e-12)
    with pytest.raises(ValueError, match="symmetric_update expects"):
        linalg.symmetric_product(a, c[..., :4, :4])
    with pytest.raises(TypeError, match="does not accept dtype int32"):
        linalg.symmetric_product(np.ones((2, 2), np.int32), np.ones((2, 2), np.int32))


@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_cholesky_update(x64, n):
    rng = np.random.default_rng(n)
    g = rng.standard_normal((n, n))
    a = g @ g.T + n * np.eye(n)
    r = np.linalg.cholesky(a).T if n else np.zeros((0, 0))
    w = rng.standard_normal(n)
    for fn in (linalg.cholesky_update, xjax.jit(linalg.cholesky_update)):
        got = np.asarray(fn(r, w))
        np.testing.assert_allclose(got, np.linalg.cholesky(a + np.outer(w, w)).T if n else r, atol=1e-12)
    w[:] = 0  # zero rotations leave R as it is
    np.testing.assert_allclose(linalg.cholesky_update(r, w), r, atol=1e-14)


def test_cholesky_update_errors_as_jax():
    r = np.eye(3, dtype=np.float32)
    with pytest.raises(NotImplementedError, match="Batching rule for 'cholesky_update' not implemented"):
        xjax.vmap(linalg.cholesky_update)(np.stack([r] * 2), np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="Rank-1 update"):
        linalg.cholesky_update(r, np.ones(2, np.float32))
    with pytest.raises(TypeError, match="rank of exactly 2"):
        linalg.cholesky_update(np.stack([r] * 2), np.ones(3, np.float32))


# ---- qdwh ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(1, 1), (5, 5), (7, 4), (24, 16)])
def test_qdwh_against_scipy_polar(x64, shape):
    a = np.random.default_rng(5).standard_normal(shape)
    u, h, num_iters, converged = linalg.qdwh(a)
    up, hp = scipy.linalg.polar(a)
    np.testing.assert_allclose(u, up, atol=1e-12)
    np.testing.assert_allclose(h, hp, atol=1e-11)
    assert bool(converged) and 0 < int(num_iters) <= 10


def test_qdwh_ill_conditioned_takes_the_qr_iterations(x64):
    u_svd, _, vt = np.linalg.svd(np.random.default_rng(6).standard_normal((6, 6)))
    a = u_svd @ np.diag(np.logspace(0, -12, 6)) @ vt
    u, h, _, converged = linalg.qdwh(a)
    # Against the polar factor of the rounded `a` (u_svd @ vt is itself only about 4e-8 from it at
    # condition 1e12, by an amount that depends on NumPy's LAPACK).
    np.testing.assert_allclose(u, scipy.linalg.polar(a)[0], atol=1e-8)
    np.testing.assert_allclose(np.asarray(u).T @ np.asarray(u), np.eye(6), atol=1e-14)
    np.testing.assert_allclose(np.asarray(u) @ np.asarray(h), a, atol=1e-14)
    assert bool(converged)


def test_qdwh_dynamic_shape_and_errors(x64):
    a = np.zeros((6, 4))
    a[:4, :3] = np.random.default_rng(7).standard_normal((4, 3))
    u, h, _, _ = linalg.qdwh(a, dynamic_shape=(4, 3))
    up, hp = scipy.linalg.polar(a[:4, :3])
    np.testing.assert_allclose(np.asarray(u)[:4, :3], up, atol=1e-12)
    np.testing.assert_allclose(np.asarray(h)[:3, :3], hp, atol=1e-12)
    assert np.all(np.asarray(u)[4:] == 0) and np.all(np.asarray(u)[:, 3:] == 0)
    with pytest.raises(ValueError, match="M >= N"):
        linalg.qdwh(np.ones((2, 3)))
    u32 = linalg.qdwh(np.eye(3, dtype=np.float32) * 2)[0]
    assert u32.dtype == np.float32
    np.testing.assert_allclose(u32, np.eye(3), atol=1e-6)


# ---- errors and what is not there ---------------------------------------------------------------

@pytest.mark.parametrize("name, fn", [
    ("schur", lambda x: linalg.schur(x)[0]), ("hessenberg", lambda x: linalg.hessenberg(x)[0]),
    ("tridiagonal", lambda x: linalg.tridiagonal(x)[0]),
    ("householder_product", lambda x: linalg.householder_product(x, x[:, 0])),
    ("ormqr", lambda x: linalg.ormqr(x, x[:, 0], x))])
def test_no_derivatives_as_jax(name, fn):
    with pytest.raises(NotImplementedError, match=f"Differentiation rule for '{name}' not implemented"):
        xjax.grad(lambda x: fn(x).sum())(np.eye(3, dtype=np.float32))


def test_errors():
    with pytest.raises(ValueError, match="must be a square matrix"):
        linalg.schur(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="rank at least 2"):
        linalg.hessenberg(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="does not accept dtype int32"):
        linalg.schur(np.ones((2, 2), np.int32))
    with pytest.raises(TypeError, match="does not accept dtype bool"):
        linalg.hessenberg(np.ones((2, 2), bool))
    with pytest.raises(NotImplementedError, match="sort feature"):
        linalg.schur(np.eye(2, dtype=np.float32), sort_eig_vals=True)
    with pytest.raises(ValueError, match="must be a square matrix. Got shape \\(0, 0\\)"):
        linalg.tridiagonal(np.zeros((0, 0), np.float32))
    with pytest.raises(ValueError, match="at least as many rows as columns"):
        linalg.householder_product(np.ones((2, 3), np.float32), np.ones(2, np.float32))
    with pytest.raises(ValueError, match="batch dimensions of its inputs must be equal"):
        linalg.householder_product(np.ones((2, 3, 2), np.float32), np.ones((3, 2), np.float32))
    with pytest.raises(TypeError, match="same number of batch dimensions"):
        linalg.ormqr(np.ones((3, 2), np.float32), np.ones((1, 2), np.float32), np.ones((3, 2), np.float32))
    with pytest.raises(ValueError, match="left=True expects c to have the same number of rows"):
        linalg.ormqr(np.ones((3, 2), np.float32), np.ones(2, np.float32), np.ones((2, 2), np.float32))
    with pytest.raises(TypeError, match="all diagonal arguments have the same shape"):
        linalg.tridiagonal_solve(np.ones(3), np.ones(2), np.ones(3), np.ones((3, 1)))
    with pytest.raises(TypeError, match="leading ndim-1 dimensions of b"):
        linalg.tridiagonal_solve(np.ones(3), np.ones(3), np.ones(3), np.ones((2, 1)))
    with pytest.raises(NotImplementedError, match="perturb_singular"):
        linalg.tridiagonal_solve(np.ones(3), np.ones(3), np.ones(3), np.ones((3, 1)), perturb_singular=True)


def test_public_names_match_jax():
    import xjax.lax.linalg as public
    for name in ["schur", "schur_p", "hessenberg", "hessenberg_p", "tridiagonal", "tridiagonal_p",
                 "tridiagonal_solve", "tridiagonal_solve_p", "householder_product", "householder_product_p",
                 "ormqr", "ormqr_p", "symmetric_product", "symmetric_product_p", "cholesky_update",
                 "cholesky_update_p", "qdwh", "EigImplementation"]:
        assert hasattr(public, name), name
    assert public.EigImplementation.LAPACK.value == "lapack"


def test_same_bits_for_any_thread_count():
    import os
    import subprocess
    import sys
    code = """
import hashlib, numpy as np, xjax
from xjax.lax import linalg
xjax.config.update("jax_enable_x64", True)
a = np.random.default_rng(5).standard_normal((24, 30, 30))
outs = linalg.schur(a) + linalg.hessenberg(a) + linalg.tridiagonal(a + a.transpose(0, 2, 1))
outs.append(linalg.tridiagonal_solve(a[:, 0], a[:, 1] + 8, a[:, 2], a[:, 3:, :].transpose(0, 2, 1)))
print(hashlib.sha256(b"".join(np.ascontiguousarray(o).tobytes() for o in outs)).hexdigest())
"""
    digests = set()
    for threads in ("1", "2", "3"):
        env = dict(os.environ, XJAX_NUM_THREADS=threads)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
        assert out.returncode == 0, out.stderr
        digests.add(out.stdout.strip())
    assert len(digests) == 1, digests
