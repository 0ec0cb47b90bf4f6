"""Complex operands of jax.lax.linalg's matrix forms and Householder products (schur, hessenberg,
tridiagonal, tridiagonal_solve, householder_product, ormqr, and the internal geqrf/geqp3): LAPACK's
c*/z* routines, complex128 against SciPy's wrappers of the same routines, complex64 at float32's
tolerance, JAX's recorded values and result dtypes, tridiagonal_solve's derivatives (check_grads in
x64), batching against a loop, and the same bits at 1 and 3 threads."""
import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings, strategies as st
from scipy.linalg import lapack

import xjax
from batching_util import check_batch
from isolated import digests_by_thread_count
from xjax._src.lax import linalg_forms
from xjax.lax import linalg
from xjax.test_util import check_grads
from x64_util import in_x64


batch_shapes = st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple)


def crandn(rng, shape, dtype=np.complex128):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def mH(x):
    return np.conj(np.swapaxes(x, -1, -2))


def herm(a):
    return (a + mH(a)) / 2


def per_matrix(a, fn):
    """fn over the matrices of a batch (the trailing two dims), its tuple of results stacked back."""
    flat = np.asarray(a).reshape((-1,) + np.shape(a)[-2:])
    outs = [fn(m) for m in flat]
    return tuple(np.stack(o).reshape(np.shape(a)[:-2] + o[0].shape) for o in zip(*outs))


def assert_schur_of(a, t, z, want_t, want_z, atol):
    """(t, z) a complex Schur decomposition of a: unitary z, upper triangular t, and SciPy's (want_t,
    want_z) up to the phases of z's columns, the freedom that another OpenBLAS build's rounding
    moves (zgees of scipy-openblas32 and of SciPy's bundled OpenBLAS differ there)."""
    n = a.shape[-1]
    np.testing.assert_allclose(z @ t @ mH(z), a, atol=atol)
    np.testing.assert_allclose(mH(z) @ z, np.broadcast_to(np.eye(n), a.shape), atol=atol)
    assert np.all(np.tril(t, -1) == 0)
    # the eigenvalues in LAPACK's order
    np.testing.assert_allclose(np.diagonal(t, 0, -2, -1), np.diagonal(want_t, 0, -2, -1), atol=atol)
    phases = np.diagonal(mH(want_z) @ z, 0, -2, -1)  # z = want_z diag(phases)
    np.testing.assert_allclose(np.abs(phases), 1, atol=atol)
    np.testing.assert_allclose(z, want_z * phases[..., None, :], atol=atol)
    np.testing.assert_allclose(t, np.conj(phases)[..., :, None] * want_t * phases[..., None, :], atol=atol)


# ---- values recorded from JAX 0.10.2 --------------------------------------------------------------

H3 = np.array([[2, 1 - 1j, 0.5j], [1 + 1j, 3, 2 - 1j], [-0.5j, 2 + 1j, 1]])
C3 = np.array([[1, 2j, 3], [1 - 1j, 4, 2], [3j, 2, 1 + 1j]])
TRID_LOWER = (
    np.array([[2, 1 - 1j, 0.5j], [-1.5, 1.4444444444444446, 2 - 1j],
              [-0.0689655172413793 - 0.1724137931034483j, 2.385656728175988, 2.555555555555556]]),
    np.array([2, 1.4444444444444446, 2.555555555555556]), np.array([-1.5, 2.385656728175988]),
    np.array([1.6666666666666667 + 0.6666666666666666j, 1.2730237709708476 + 0.9620072871266923j]))
TRID_UPPER = (
    np.array([[2.6190476190476195, 1.4952684255340551, -0.0257530827320669 + 0.1105138909632124j],
              [1 + 1j, 2.3809523809523814, -2.29128784747792], [-0.5j, 2 + 1j, 1]]),
    np.array([2.6190476190476195, 2.3809523809523814, 1]), np.array([1.4952684255340551, -2.29128784747792]),
    np.array([1.2935858961334448 - 0.955932697208084j, 1.8728715609439694 - 0.4364357804719848j]))
HESS_PACKED = np.array(
    [[1, -0.6030226891555271 - 3.316624790355399j, -0.3102526139970117 - 1.2410104559880457j],
     [-3.3166247903554003, 0.4545454545454541 + 0.818181818181818j, 1.8085305342300928 - 0.1870893656100098j],
     [-0.1528020100629408 + 0.6595889446538256j, 1.0601730717900542, 4.545454545454547 + 0.1818181818181821j]])
HESS_TAUS = np.array([1.3015113445777635 - 0.3015113445777636j, 1.8391470009746473 - 0.5439046890359149j])
SCHUR_T = np.array(
    [[-1.8348104670174923 - 1.6045694926108434j, 0.123515519670086 + 1.386078933934269j,
      0.3972794818467176 + 0.3855884094945951j],
     [0, 2.9987875509329993 + 1.9267202885614167j, -2.2580606375154035 - 1.0795527377440717j],
     [0, 0, 4.836022916084493 + 0.6778492040494268j]])
SCHUR_Z = np.array(
    [[0.3396415190641082 - 0.6050525999998659j, 0.1715895777521619 + 0.6716107237344053j,
      -0.1947140268899146 + 0.0117256157758692j],
     [0.2671558208824937 + 0.0157807670061154j, 0.3548708255080517 - 0.3498167611213915j,
      -0.5156572120665462 - 0.6435614230567506j],
     [-0.6340355808830272 + 0.2119731272988359j, -0.2566889187618981 + 0.4531023972551935j,
      -0.4453950380297731 - 0.2889611603007823j]])


def test_values_and_dtypes_recorded_from_jax(x64):
    for lower, want in ((True, TRID_LOWER), (False, TRID_UPPER)):
        got = linalg.tridiagonal(H3, lower=lower)
        # d and e of a Hermitian matrix are real (JAX's dtypes), the packed form and taus complex
        assert [x.dtype for x in got] == [np.complex128, np.float64, np.float64, np.complex128]
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, atol=1e-12)
    packed, taus = linalg.hessenberg(C3)
    np.testing.assert_allclose(packed, HESS_PACKED, atol=1e-12)
    np.testing.assert_allclose(taus, HESS_TAUS, atol=1e-12)
    t, z = (np.asarray(x) for x in linalg.schur(C3))
    assert_schur_of(C3, t, z, SCHUR_T, SCHUR_Z, atol=1e-12)  # (JAX's up to the phases of Z's columns)
    assert linalg.tridiagonal(H3.astype(np.complex64))[1].dtype == np.float32


# ---- schur ----------------------------------------------------------------------------------------

@settings(max_examples=12, deadline=None)
@given(batch=batch_shapes, n=st.integers(0, 7), seed=st.integers(0, 2**31))
@in_x64
def test_schur_against_scipy(batch, n, seed):
    a = crandn(np.random.default_rng(seed), batch + (n, n))
    t, z = (np.asarray(x) for x in linalg.schur(a))
    assert t.dtype == z.dtype == np.complex128 and t.shape == z.shape == a.shape
    if a.size:
        want_t, want_z = per_matrix(a, lambda m: scipy.linalg.schur(m, output="complex"))
        assert_schur_of(a, t, z, want_t, want_z, atol=1e-11)
    t_only, = linalg.schur(a, compute_schur_vectors=False)
    np.testing.assert_allclose(t_only, t, atol=1e-12)


def test_schur_complex64_and_failures():
    a = crandn(np.random.default_rng(1), (2, 6, 6), np.complex64)
    t, z = (np.asarray(x) for x in linalg.schur(a))
    assert t.dtype == z.dtype == np.complex64
    want_t, want_z = per_matrix(a, lambda m: scipy.linalg.schur(m, output="complex"))
    assert_schur_of(a, t, z, want_t, want_z, atol=2e-5)
    bad = a.copy()
    bad[1, 2, 3] = np.nan + 1j  # LAPACK's failure, as JAX: NaN results for that matrix only
    t, z = (np.asarray(x) for x in linalg.schur(bad))
    assert np.isnan(t[1]).all() and np.isnan(z[1]).all() and np.isfinite(t[0]).all()


# ---- hessenberg, tridiagonal: the packed forms of zgehrd and zhetrd ---------------------------------

@settings(max_examples=10, deadline=None)
@given(batch=batch_shapes, n=st.integers(1, 7), lower=st.booleans(), seed=st.integers(0, 2**31))
@in_x64
def test_hessenberg_and_tridiagonal_against_lapack(batch, n, lower, seed):
    rng = np.random.default_rng(seed)
    a = crandn(rng, batch + (n, n))
    packed, taus = linalg.hessenberg(a)
    want = per_matrix(a, lambda m: lapack.zgehrd(m)[:2])
    np.testing.assert_allclose(packed, want[0], atol=1e-12)
    np.testing.assert_allclose(taus, want[1][..., :n - 1], atol=1e-12)
    h = herm(a)
    got = linalg.tridiagonal(h, lower=lower)
    want = per_matrix(h, lambda m: lapack.zhetrd(m, lower=int(lower))[:4])
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, atol=1e-12)
    assert got[1].dtype == got[2].dtype == np.float64


def test_tridiagonal_reads_one_triangle_complex64():
    h = herm(crandn(np.random.default_rng(2), (5, 5), np.complex64))
    junk = h + np.triu(np.full((5, 5), 7 + 7j, np.complex64), 1)  # only the lower triangle is read
    got, want = linalg.tridiagonal(junk), lapack.chetrd(h, lower=1)[:4]
    np.testing.assert_allclose(np.tril(got[0]), np.tril(want[0]), atol=2e-5)
    np.testing.assert_array_equal(np.triu(got[0], 1), np.triu(junk, 1))  # the other triangle untouched
    for g, w in zip(got[1:], want[1:]):
        np.testing.assert_allclose(g, w, atol=2e-5)


# ---- householder_product, ormqr, geqrf/geqp3: zungqr, zunmqr, zgeqrf, zgeqp3 ---------------------

@settings(max_examples=10, deadline=None)
@given(batch=batch_shapes, m=st.integers(1, 6), n=st.integers(1, 6), seed=st.integers(0, 2**31))
@in_x64
def test_householder_forms_against_lapack(batch, m, n, seed):
    rng = np.random.default_rng(seed)
    a = crandn(rng, batch + (m, n))
    packed, taus = linalg_forms.geqrf(a)
    want = per_matrix(a, lambda x: lapack.zgeqrf(x)[:2])
    np.testing.assert_allclose(packed, want[0], atol=1e-12)
    np.testing.assert_allclose(taus, want[1], atol=1e-12)
    p_packed, p_taus, perm = linalg_forms.geqp3(a)
    want = per_matrix(a, lambda x: lapack.zgeqp3(x)[:3])
    np.testing.assert_allclose(p_packed, want[0], atol=1e-12)
    np.testing.assert_array_equal(perm, want[1] - 1)
    np.testing.assert_allclose(p_taus, want[2], atol=1e-12)
    q_full = per_matrix(a, lambda x: (scipy.linalg.qr(x)[0],))[0]
    if m >= n:  # householder_product: the first n columns of Q
        np.testing.assert_allclose(linalg.householder_product(packed, taus), q_full[..., :n], atol=1e-12)
    c = crandn(rng, batch + (m, 3))
    # ormqr's transpose is the conjugate one for complex (zunmqr with 'C'), as JAX's
    np.testing.assert_allclose(linalg.ormqr(packed, taus, c), q_full @ c, atol=1e-12)
    np.testing.assert_allclose(linalg.ormqr(packed, taus, c, transpose=True), mH(q_full) @ c, atol=1e-12)
    r = mH(c)
    np.testing.assert_allclose(linalg.ormqr(packed, taus, r, left=False), r @ q_full, atol=1e-12)
    np.testing.assert_allclose(linalg.ormqr(packed, taus, r, left=False, transpose=True), r @ mH(q_full),
                               atol=1e-12)


def test_householder_forms_complex64():
    rng = np.random.default_rng(3)
    a = crandn(rng, (6, 4), np.complex64)
    packed, taus = linalg_forms.geqrf(a)
    assert packed.dtype == taus.dtype == np.complex64
    q = scipy.linalg.qr(a.astype(np.complex128))[0]
    np.testing.assert_allclose(linalg.householder_product(packed, taus), q[:, :4], atol=2e-5)
    c = crandn(rng, (6, 2), np.complex64)
    np.testing.assert_allclose(linalg.ormqr(packed, taus, c, transpose=True), mH(q) @ c, atol=2e-5)


# ---- tridiagonal_solve: zgtsv; JAX's (unconjugated) transpose rule --------------------------------

def dense(dl, d, du):
    return np.diag(d) + np.diag(dl[1:], -1) + np.diag(du[:-1], 1)


@settings(max_examples=10, deadline=None)
@given(batch=batch_shapes, m=st.integers(1, 6), k=st.integers(1, 3), seed=st.integers(0, 2**31))
@in_x64
def test_tridiagonal_solve_against_numpy(batch, m, k, seed):
    rng = np.random.default_rng(seed)
    dl, d, du = (crandn(rng, batch + (m,)) for _ in range(3))
    d = d + 6  # well conditioned
    b = crandn(rng, batch + (m, k))
    x = np.asarray(linalg.tridiagonal_solve(dl, d, du, b))
    assert x.dtype == np.complex128
    flat = [dense(*v) for v in zip(dl.reshape(-1, m), d.reshape(-1, m), du.reshape(-1, m))]
    want = np.stack([np.linalg.solve(A, bb) for A, bb in zip(flat, b.reshape((-1, m, k)))]).reshape(x.shape)
    np.testing.assert_allclose(x, want, atol=1e-12)


def test_tridiagonal_solve_complex64_and_singular():
    rng = np.random.default_rng(4)
    dl, d, du = (crandn(rng, (5,), np.complex64) for _ in range(3))
    d = d + 6
    b = crandn(rng, (5, 2), np.complex64)
    x = linalg.tridiagonal_solve(dl, d, du, b)
    assert x.dtype == np.complex64
    np.testing.assert_allclose(x, np.linalg.solve(dense(dl, d, du), b), atol=2e-5)
    ones = np.ones(2, np.complex64)  # [[1, 1], [1, 1]]: singular, NaN as JAX
    assert np.isnan(np.asarray(linalg.tridiagonal_solve(ones, ones, ones, np.ones((2, 1), np.complex64)))).all()


def test_tridiagonal_solve_grads(x64):
    rng = np.random.default_rng(5)
    dl, d, du = (crandn(rng, (2, 4)) for _ in range(3))
    d = d + 5
    b = crandn(rng, (2, 4, 2))
    check_grads(linalg.tridiagonal_solve, (dl, d, du, b), order=2, modes=("fwd", "rev"))
    # reverse mode through b alone: the transpose rule
    check_grads(lambda b: linalg.tridiagonal_solve(dl, d, du, b), (b,), order=1, modes=("rev",))


def test_tridiagonal_solve_vjp_as_jax(x64):
    # JAX's cotangents, recorded from JAX 0.10.2 for a cotangent of ones: for b the solve with A^T,
    # unconjugated (JAX's convention for linear maps); for d through the JVP's product.
    dl, d, du = np.array([0, 1j, 2]), np.array([3 + 1j, 4, 5 - 1j]), np.array([1 - 1j, 2j, 0])
    b = np.array([[1.0], [2j], [3]])
    ones = np.ones((3, 1), np.complex128)
    ct_b, = xjax.vjp(lambda b: linalg.tridiagonal_solve(dl, d, du, b), b)[1](ones)
    np.testing.assert_allclose(ct_b[:, 0], [0.3239508700102354 - 0.1356192425793245j,
                                            0.082906857727738 + 0.1074718526100307j,
                                            0.2400204708290686 + 0.0148413510747185j], atol=1e-14)
    np.testing.assert_allclose(ct_b, np.linalg.solve(dense(dl, d, du).T, ones), atol=1e-14)
    ct_d, = xjax.vjp(lambda d: linalg.tridiagonal_solve(dl, d, du, b), d)[1](ones)
    np.testing.assert_allclose(ct_d, [-0.0609546697900221 + 0.0750087215789148j,
                                      0.0157774148297223 - 0.0117324879600305j,
                                      -0.1404949456747779 - 0.0231140174892539j], atol=1e-14)


# ---- batching ---------------------------------------------------------------------------------------

def test_batching_rules_against_a_loop():
    rng = np.random.default_rng(6)
    a = crandn(rng, (3, 5, 5), np.complex64)
    check_batch(linalg.schur, (a,), rtol=1e-5, atol=1e-5)
    check_batch(linalg.hessenberg, (np.moveaxis(a, 0, 2),), in_axes=2, rtol=1e-5, atol=1e-5, jit=True)
    check_batch(lambda x: linalg.tridiagonal(x, lower=False), (herm(a),), rtol=1e-5, atol=1e-5)
    tall = crandn(rng, (3, 6, 4), np.complex64)
    packed, taus = zip(*[lapack.cgeqrf(x)[:2] for x in tall])
    packed, taus = np.stack(packed), np.stack(taus)
    check_batch(linalg.householder_product, (packed[0], taus), in_axes=(None, 0), rtol=1e-5, atol=1e-5)
    c = crandn(rng, (3, 6, 2), np.complex64)
    check_batch(lambda p, t, c: linalg.ormqr(p, t, c, transpose=True), (packed, taus[0], c), in_axes=(0, None, 0),
                rtol=1e-5, atol=1e-5)
    diags = crandn(rng, (3, 3, 5), np.complex64) + np.array([0, 6, 0])[:, None]
    b = crandn(rng, (3, 5, 2), np.complex64)
    check_batch(linalg.tridiagonal_solve, (diags[0], diags[1], diags[2], b),
                rtol=1e-5, atol=1e-5)
    check_batch(lambda b: linalg.tridiagonal_solve(diags[0, 0], diags[1, 0], diags[2, 0], b), (b,),
                rtol=1e-5, atol=1e-5)
    check_batch(linalg_forms.geqp3, (tall,), rtol=1e-5, atol=1e-5)


# ---- errors and thread counts -------------------------------------------------------------------------

def test_errors(x64):
    c = np.ones((3, 3), np.complex64)
    with pytest.raises(TypeError, match="same dtypes"):
        linalg.householder_product(c, np.ones(2, np.float32))
    with pytest.raises(TypeError, match="same dtypes"):
        linalg.tridiagonal_solve(c[0], c[0], c[0], np.ones((3, 1), np.complex128))
    with pytest.raises(ValueError, match="must be a square matrix"):
        linalg.schur(np.ones((2, 3), np.complex128))


def test_same_bits_at_1_and_3_threads():
    first, second = digests_by_thread_count("""
import hashlib, numpy as np, xjax
from xjax.lax import linalg
from xjax._src.lax import linalg_forms
xjax.config.update("jax_enable_x64", True)
rng = np.random.default_rng(7)
a = rng.standard_normal((16, 24, 24)) + 1j * rng.standard_normal((16, 24, 24))
outs = linalg.schur(a) + linalg.hessenberg(a) + linalg.tridiagonal(a + a.conj().transpose(0, 2, 1))
packed, taus = linalg_forms.geqrf(a)
outs += [packed, linalg.householder_product(packed, taus), linalg.ormqr(packed, taus, a, transpose=True)]
outs.append(linalg.tridiagonal_solve(a[:, 0], a[:, 1] + 8, a[:, 2], a[:, 3:, :].transpose(0, 2, 1)))
print(hashlib.sha1(b"".join(np.ascontiguousarray(o).tobytes() for o in outs)).hexdigest())
""")
    assert first == second
