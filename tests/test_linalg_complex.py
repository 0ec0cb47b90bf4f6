"""Complex linear algebra (complex64, complex128): lax.linalg's factorizations against NumPy/SciPy
(complex128 tightly, complex64 at float32's tolerance) and rebuilt from their factors, Hermitian eigh
reading one triangle, eig, batches and vmap against a loop, check_grads in x64 (holomorphic functions by
jvp/vjp, real losses of the factors), gradients of real losses against values recorded from JAX (grad of
a real function of complex input is JAX's conjugate convention), jnp.linalg and jax.scipy.linalg on
complex input, triangular_solve without LAPACK, and the bits of factorizations at 1 and 3 threads (the
CUDA backend's refusal of complex matrices: tests/test_cuda_linalg.py)."""
import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings, strategies as st

import xjax
import xjax.numpy as jnp
import xjax.scipy.linalg as jsl
from batching_util import check_batch
from isolated import digests_by_thread_count, run_isolated
from xjax.lax import linalg
from xjax.test_util import check_grads

CTYPES = [np.complex64, np.complex128]
TOL = {np.complex64: 2e-5, np.complex128: 1e-12}


pytestmark = pytest.mark.usefixtures("x64")  # conftest.py's, for every test here


def crandn(rng, shape, dtype=np.complex128):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def hpd(rng, shape, dtype=np.complex128):
    """Hermitian positive-definite matrices, well conditioned."""
    a = crandn(rng, shape)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def H(x):  # noqa: N802
    return np.conj(np.swapaxes(x, -1, -2))


def close(got, want, dtype, scale=1.0):
    """got within the tolerance of dtype (times scale) of the float64/complex128 reference want."""
    got, want = np.asarray(got), np.asarray(want)
    tol = TOL[dtype] * scale
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, float(np.max(np.abs(want), initial=0))))


# ---- factorizations against NumPy/SciPy, and rebuilt from their factors ----------------------------------

@pytest.mark.parametrize("dtype", CTYPES)
@pytest.mark.parametrize("n", [1, 5, 17, 200])  # 200: the blocked (threaded) algorithm
def test_cholesky(dtype, n):
    a = hpd(np.random.default_rng(n), (n, n), dtype)
    l = np.asarray(linalg.cholesky(a))
    assert l.dtype == dtype
    want = np.linalg.cholesky(a.astype(np.complex128))
    close(l, want, dtype, scale=n)
    close(l @ H(l), a.astype(np.complex128), dtype, scale=n)
    assert np.all(np.triu(l, 1) == 0)


def test_cholesky_not_positive_definite_gives_nan():
    a = np.array([[1, 2j], [-2j, 1]])
    l = np.asarray(linalg.cholesky(a))
    assert np.isnan(l[1, 1].real) and np.isnan(l[1, 1].imag) and l[0, 1] == 0


@pytest.mark.parametrize("dtype", CTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (3, 7), (9, 4), (20, 20), (200, 200)])
def test_lu(dtype, shape):
    a = crandn(np.random.default_rng(sum(shape)), shape, dtype)
    lu, piv, perm = (np.asarray(t) for t in linalg.lu(a))
    assert lu.dtype == dtype and piv.dtype == perm.dtype == np.int32
    m, n = shape
    k = min(m, n)
    l = np.tril(lu[:, :k], -1) + np.eye(m, k)
    u = np.triu(lu[:k])
    close(l @ u, a[perm].astype(np.complex128), dtype, scale=max(shape))
    # LAPACK's pivots (by |re| + |im|, as SciPy's)
    slu, spiv = scipy.linalg.lu_factor(a.astype(np.complex128))
    np.testing.assert_array_equal(piv, spiv)
    close(lu, slu, dtype, scale=max(shape))


@pytest.mark.parametrize("dtype", CTYPES)
@pytest.mark.parametrize("shape", [(5, 5), (7, 3), (3, 7)])
@pytest.mark.parametrize("full", [True, False])
def test_qr(dtype, shape, full):
    a = crandn(np.random.default_rng(3), shape, dtype)
    q, r = (np.asarray(t) for t in linalg.qr(a, full_matrices=full))
    sq, sr = scipy.linalg.qr(a.astype(np.complex128), mode="full" if full else "economic")
    close(q, sq, dtype, scale=10)
    close(r, sr, dtype, scale=10)
    close(q @ r, a.astype(np.complex128), dtype, scale=10)
    close(H(q) @ q, np.eye(q.shape[1]), dtype, scale=10)


@pytest.mark.parametrize("dtype", CTYPES)
def test_qr_pivoting(dtype):
    a = crandn(np.random.default_rng(4), (6, 5), dtype)
    q, r, p = (np.asarray(t) for t in linalg.qr(a, pivoting=True, full_matrices=False))
    sq, sr, sp = scipy.linalg.qr(a.astype(np.complex128), mode="economic", pivoting=True)
    np.testing.assert_array_equal(p, sp)
    close(q @ r, a[:, p].astype(np.complex128), dtype, scale=10)
    close(r, sr, dtype, scale=10)


@pytest.mark.parametrize("dtype", CTYPES)
@pytest.mark.parametrize("n", [1, 6, 40])
def test_eigh(dtype, n):
    a = hpd(np.random.default_rng(n), (n, n), dtype) - 2 * n * np.eye(n, dtype=dtype)
    v, w = (np.asarray(t) for t in linalg.eigh(a))
    assert v.dtype == dtype and w.dtype == np.finfo(dtype).dtype  # real eigenvalues
    close(w, np.linalg.eigvalsh(a.astype(np.complex128)), dtype, scale=n)
    close((v * w) @ H(v), a.astype(np.complex128), dtype, scale=n)
    close(H(v) @ v, np.eye(n), dtype, scale=n)


@pytest.mark.parametrize("lower", [True, False])
def test_eigh_reads_one_triangle(lower):
    a = hpd(np.random.default_rng(7), (5, 5))
    junk = a + (np.triu(crandn(np.random.default_rng(8), (5, 5)), 1) if lower else
                np.tril(crandn(np.random.default_rng(8), (5, 5)), -1))
    w = np.asarray(linalg.eigh(junk, lower=lower, symmetrize_input=False)[1])
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a), rtol=1e-12)
    got = np.asarray(jnp.linalg.eigvalsh(junk, UPLO="L" if lower else "U", symmetrize_input=False))
    np.testing.assert_allclose(got, np.linalg.eigvalsh(junk, UPLO="L" if lower else "U"), rtol=1e-12)


@pytest.mark.parametrize("dtype", CTYPES)
@pytest.mark.parametrize("shape", [(5, 5), (7, 3), (3, 7)])
@pytest.mark.parametrize("full", [True, False])
def test_svd(dtype, shape, full):
    a = crandn(np.random.default_rng(5), shape, dtype)
    u, s, vh = (np.asarray(t) for t in linalg.svd(a, full_matrices=full))
    assert s.dtype == np.finfo(dtype).dtype and u.dtype == vh.dtype == dtype
    close(s, np.linalg.svd(a.astype(np.complex128), compute_uv=False), dtype, scale=10)
    k = min(shape)
    close((u[:, :k] * s) @ vh[:k], a.astype(np.complex128), dtype, scale=10)
    close(H(u) @ u, np.eye(u.shape[1]), dtype, scale=10)
    close(vh @ H(vh), np.eye(vh.shape[0]), dtype, scale=10)
    s_only = np.asarray(linalg.svd(a, compute_uv=False))
    close(s_only, s, dtype, scale=10)


@pytest.mark.parametrize("dtype", CTYPES)
@pytest.mark.parametrize("m", [4, 30])  # substitution and BLAS's trsm
@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("op", ["N", "T", "C", "conj"])
def test_triangular_solve(dtype, m, left_side, lower, op):
    rng = np.random.default_rng(m)
    a = (crandn(rng, (m, m)) + 3 * np.eye(m)).astype(dtype)
    b = crandn(rng, (m, 3) if left_side else (3, m), dtype)
    x = np.asarray(linalg.triangular_solve(a, b, left_side=left_side, lower=lower, transpose_a=op in "TC",
                                           conjugate_a=op in ("C", "conj")))
    t = np.tril(a) if lower else np.triu(a)
    t = {"N": t, "T": t.T, "C": H(t), "conj": np.conj(t)}[op].astype(np.complex128)
    want = np.linalg.solve(t, b) if left_side else np.linalg.solve(t.T, b.T).T
    close(x, want, dtype, scale=m)


def test_non_finite_input_gives_nan():
    a = np.eye(3, dtype=np.complex64)
    a[1, 0] = complex(np.nan, 0)
    v, w = linalg.eigh(a, symmetrize_input=False)
    assert np.isnan(np.asarray(w)).all() and np.isnan(np.asarray(v).real).all() and np.isnan(np.asarray(v).imag).all()
    for x in linalg.svd(a):
        assert np.isnan(np.asarray(x).real).all()
    for x in linalg.eig(a):
        assert np.isnan(np.asarray(x).real).all() and np.isnan(np.asarray(x).imag).all()


def test_triangular_solve_refuses_mixed_dtypes():
    with pytest.raises(TypeError, match="complex128"):
        linalg.triangular_solve(np.eye(2, dtype=np.complex128), np.ones((2, 2)), left_side=True)


# lax.linalg.eig of a complex matrix as JAX 0.10.2 gives it (its eigenvalues in LAPACK's order, the first
# right eigenvector with its largest component real)
EIG_A = np.array([[1 + 2j, 0.5, -1j], [0.3 - 0.2j, -1 + 0.5j, 2.0], [1j, 0.7 + 0.1j, 0.4]])
JAX_EIG_W = [1.437011886251+1.333392208167j, 0.6845183684919+0.7033316536274j, -1.721530254743+0.4632761382053j]
JAX_EIG_VR0 = [0.7640629557538+0j, 0.4285092822565-0.1110495130848j, 0.4538055632138+0.1196499523804j]


@pytest.mark.parametrize("dtype", CTYPES)
@pytest.mark.parametrize("batch", [(), (3,)])
def test_eig(dtype, batch):
    a = crandn(np.random.default_rng(6), batch + (6, 6), dtype)
    w, vl, vr = (np.asarray(t) for t in linalg.eig(a))
    assert w.dtype == vl.dtype == vr.dtype == dtype
    wide = a.astype(np.complex128)
    # The same eigenvalues as NumPy's (whose order, c/zgeev's, can differ in single precision where its
    # BLAS rounds otherwise): each within tolerance of the nearest reference, in both directions.
    ref = np.linalg.eigvals(wide)
    for x, y in ((w, ref), (ref, w)):
        gap = np.abs(x[..., :, None] - y[..., None, :]).min(axis=-1)
        assert gap.max() < TOL[dtype] * 20 * np.abs(ref).max(), gap.max()
    close(wide @ vr, vr * w[..., None, :], dtype, scale=20)
    close(H(vl) @ wide, w[..., :, None] * H(vl), dtype, scale=20)
    close(np.linalg.norm(vr, axis=-2), np.ones(batch + (6,)), dtype, scale=20)
    w_only = np.asarray(jnp.linalg.eigvals(a))
    np.testing.assert_array_equal(w_only, w)


def test_eig_as_jax():
    w, vr = (np.asarray(t) for t in linalg.eig(EIG_A, compute_left_eigenvectors=False))
    np.testing.assert_allclose(w, JAX_EIG_W, rtol=1e-11)
    np.testing.assert_allclose(vr[:, 0], JAX_EIG_VR0, rtol=1e-11, atol=1e-13)


# ---- shapes and dtypes over batches (hypothesis); vmap against a loop ---------------------------------------

@settings(max_examples=15, deadline=None)
@given(batch=st.sampled_from([(), (2,), (2, 3)]), m=st.integers(1, 6), n=st.integers(1, 6),
       dtype=st.sampled_from(CTYPES), seed=st.integers(0, 1000))
def test_batched_factors_match_each_matrix(batch, m, n, dtype, seed):
    rng = np.random.default_rng(seed)
    a = crandn(rng, batch + (m, n), dtype)
    flat = a.reshape((-1, m, n))
    for fn in (linalg.lu, lambda x: linalg.qr(x, full_matrices=False), lambda x: linalg.svd(x, compute_uv=False)):
        got = [np.asarray(t).reshape((flat.shape[0],) + np.shape(t)[len(batch):]) for t in
               xjax.tree_util.tree_leaves(fn(a))]
        for i, x in enumerate(flat):
            for g, w in zip(got, xjax.tree_util.tree_leaves(fn(x))):
                np.testing.assert_array_equal(g[i], np.asarray(w))  # the same bits, batched or not
    h = hpd(rng, batch + (m, m), dtype)
    w = np.asarray(linalg.eigh(h)[1])
    close(w, np.linalg.eigvalsh(h.astype(np.complex128)), dtype, scale=10)
    close(np.asarray(linalg.cholesky(h)), np.linalg.cholesky(h.astype(np.complex128)), dtype, scale=10)


def test_vmap_against_a_loop():
    rng = np.random.default_rng(9)
    a, h, b = crandn(rng, (3, 4, 4)), hpd(rng, (3, 4, 4)), crandn(rng, (3, 4, 2))
    check_batch(linalg.cholesky, (h,), rtol=1e-12, atol=1e-12)
    check_batch(linalg.lu, (a,), rtol=1e-12, atol=1e-12)
    check_batch(linalg.qr, (a,), rtol=1e-12, atol=1e-12)
    check_batch(linalg.eigh, (h,), rtol=1e-12, atol=1e-12)
    check_batch(linalg.svd, (a,), rtol=1e-12, atol=1e-12)
    solve = lambda a, b: linalg.triangular_solve(a, b, left_side=True, lower=True, transpose_a=True,  # noqa: E731
                                                 conjugate_a=True)
    check_batch(solve, (a + 4 * np.eye(4), b), rtol=1e-12, atol=1e-12)
    check_batch(solve, (a[0] + 4 * np.eye(4), b), in_axes=(None, 0), rtol=1e-12, atol=1e-12)
    check_batch(jnp.linalg.slogdet, (a,), rtol=1e-12, atol=1e-12)


# ---- derivatives ---------------------------------------------------------------------------------------

RNG = np.random.default_rng(21)
A = crandn(RNG, (4, 4)) + 3 * np.eye(4)
HPD = hpd(RNG, (4, 4))
B = crandn(RNG, (4, 2))
TALL = crandn(RNG, (5, 3))
WIDE = crandn(RNG, (3, 5))


def weights(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


@pytest.mark.parametrize("name, f, args", [
    ("inv", jnp.linalg.inv, (A,)),
    ("solve", jnp.linalg.solve, (A, B)),
    ("det", jnp.linalg.det, (A,)),
    ("lu", lambda a: linalg.lu(a)[0], (A,)),
    ("triangular_solve", lambda a, b: linalg.triangular_solve(a, b, left_side=True, lower=True), (A, B)),
    ("triangular_solve_T", lambda a, b: linalg.triangular_solve(a, b, left_side=False, transpose_a=True),
     (A, B.T)),
    ("matrix_power", lambda a: jnp.linalg.matrix_power(a, -2), (A,)),
    ("lu_solve", lambda a, b: jsl.lu_solve(jsl.lu_factor(a), b, trans=0), (A, B)),
    ("expm", lambda a: jsl.expm(0.3 * a), (A,)),
    ("eigvals", jnp.linalg.eigvals, (A,)),
])
def test_holomorphic_gradients(name, f, args):
    check_grads(f, args, order=1, modes=("fwd", "rev"), atol=1e-6, rtol=1e-6)


def hermitian(a):
    return (a + jnp.conj(jnp.swapaxes(a, -1, -2))) / 2


def _abs2(x):
    return jnp.real(x) ** 2 + jnp.imag(x) ** 2


@pytest.mark.parametrize("name, f, args", [
    ("cholesky", lambda a: jnp.sum(_abs2(linalg.cholesky(a)) * weights((4, 4))), (HPD,)),
    ("cholesky_parts", lambda a: jnp.real(jnp.sum(linalg.cholesky(a) * (weights((4, 4)) + 1j))), (HPD,)),
    ("eigh_values", lambda a: jnp.sum(linalg.eigh(a)[1] * weights(4)), (HPD,)),
    ("eigh_vectors", lambda a: jnp.sum(_abs2(linalg.eigh(a)[0]) * weights((4, 4))), (HPD,)),
    ("svd_values", lambda a: jnp.sum(linalg.svd(a, compute_uv=False) * weights(3)), (TALL,)),
    ("svd_vectors", lambda a: jnp.sum(_abs2(linalg.svd(a, full_matrices=False)[0]) * weights((5, 3))), (TALL,)),
    ("svd_vectors_wide", lambda a: jnp.sum(_abs2(linalg.svd(a, full_matrices=False)[2]) * weights((3, 5))), (WIDE,)),
    ("qr_tall", lambda a: jnp.sum(jnp.real(linalg.qr(a, full_matrices=False)[0] * (weights((5, 3)) - 1j))) +
     jnp.sum(jnp.imag(linalg.qr(a, full_matrices=False)[1]) * weights((3, 3), 1)), (TALL,)),
    ("qr_complete", lambda a: jnp.sum(jnp.real(linalg.qr(a)[0] * (weights((5, 5)) + 2j))), (TALL,)),
    ("qr_wide", lambda a: jnp.sum(jnp.real(linalg.qr(a)[1] * (weights((3, 5)) + 1j))), (WIDE,)),
    ("slogdet", lambda a: jnp.linalg.slogdet(a)[1], (A,)),
    ("slogdet_sign", lambda a: jnp.real(jnp.linalg.slogdet(a)[0] * (1 + 2j)), (A,)),
    ("pinv", lambda a: jnp.sum(_abs2(jnp.linalg.pinv(a)) * weights((3, 5))), (TALL,)),
    # (the factor reads one triangle, the JVP takes the tangent as Hermitian: a Hermitian input)
    ("cho_solve", lambda a, b: jnp.sum(_abs2(jsl.cho_solve(jsl.cho_factor(hermitian(a), lower=False), b))),
     (HPD, B)),
    ("cho_solve_lower", lambda a, b: jnp.sum(_abs2(jsl.cho_solve(jsl.cho_factor(hermitian(a), lower=True), b))),
     (HPD, B)),
    ("solve_triangular_C", lambda a, b: jnp.sum(_abs2(jsl.solve_triangular(a, b, trans="C", lower=True))), (A, B)),
])
def test_real_loss_gradients(name, f, args):
    check_grads(f, args, order=1, modes=("fwd", "rev"), atol=1e-6, rtol=1e-6)


# JAX's convention: grad of a real loss of complex input is the conjugate of the derivative along x
# (d/dRe - i d/dIm). The point and the losses of the recording:
A3 = np.array([[2 + 1j, 0.5 - 0.3j, 0.1j], [0.2 + 0.4j, 1.5 - 0.5j, 0.3], [-0.1 + 0.2j, 0.4j, 1.2 + 0.7j]])
H3 = A3 @ A3.conj().T + np.eye(3)
W3 = np.arange(9.0).reshape(3, 3)
LOSSES = {
    "inv": (lambda x: jnp.sum(jnp.abs(jnp.linalg.inv(x)) ** 2), A3),
    "slogdet": (lambda x: jnp.linalg.slogdet(x)[1], A3),
    "cholesky": (lambda x: jnp.sum(jnp.abs(jnp.linalg.cholesky(x)) ** 2 * W3), H3),
    "eigvalsh": (lambda x: jnp.sum(jnp.linalg.eigvalsh(x) * np.array([1.0, 2.0, 3.0])), H3),
    "svdvals": (lambda x: jnp.sum(jnp.linalg.svd(x, compute_uv=False) * np.array([1.0, 2.0, 3.0])), A3),
    "qr": (lambda x: jnp.sum(jnp.abs(jnp.linalg.qr(x)[1]) ** 2 * W3), A3),
    "solve": (lambda x: jnp.sum(jnp.abs(jnp.linalg.solve(x, np.array([1.0, 2j, 3.0]))) ** 2), A3),
}
JAX_GRADS = {  # recorded from JAX 0.10.2 (x64)
    'inv': [
        [-0.2713542580149+0.10455910798j, 0.1780609642761+0.2200210006715j, 0.0564383100191-0.0434250486545j],
        [0.2823533795306-0.2366868435278j, -0.7158935746245-0.3583643255698j, 0.150907752597+0.3799857264527j],
        [0.0445262036404+0.1227318177992j, 0.3075187249739-0.2313422655629j, -0.759574709026+0.3433856228171j],
    ],
    'slogdet': [
        [0.4314532150834-0.197062151578j, -0.06517509524098-0.103291460713j, -0.05235710143296-0.03606404089585j],
        [-0.1537693251846+0.1035168550247j, 0.6258372637853+0.2700556714439j, -0.0054104145106-0.1712017206811j],
        [-0.01048226203829-0.05571899549078j, -0.1501791837226+0.02552186391395j, 0.641055659461-0.3267856127292j],
    ],
    'cholesky': [
        [0.09544378707137+0j, -0.2617859012173-0.1213294916898j, 0.001956683502943-0.1163973673407j],
        [-0.2617859012173+0.1213294916898j, 4.05306112789+0j, -0.05030218231991-0.2247906100002j],
        [0.001956683502943+0.1163973673407j, -0.05030218231991+0.2247906100002j, 8+0j],
    ],
    'eigvalsh': [
        [2.669222714687+0j, 0.5261599488665+0.2458977027357j, 0.01978547394728+0.02814718268065j],
        [0.5261599488665-0.2458977027357j, 1.708243352689+0j, 0.1228617018204+0.5555902211075j],
        [0.01978547394728-0.02814718268065j, 0.1228617018204-0.5555902211075j, 1.622533932624+0j],
    ],
    'svdvals': [
        [1.226393016756-0.5451339830989j, -0.306091449817-0.4203732281618j, -0.1776587142209-0.0792637846622j],
        [-0.5873460991203+0.4359160153526j, 2.025620232446+0.9067050106104j, -0.1038952450594-0.6649738770499j],
        [-0.0421428636755-0.2005875875483j, -0.572220551392+0.2051210922436j, 2.112135470477-1.051030662331j],
    ],
    'qr': [
        [0.7338604741029-0.09745456967967j, 0.09201129579632-0.7738377137769j, -1.244290891162-1.712624676445j],
        [-2.570445407785+2.435548499938j, 11.23054732559+4.471055546046j, 2.794811783557-1.834137310489j],
        [0.1622025862384+0.3032338886469j, -1.691968526615-0.8762779763451j, 18.94709232097-10.49024528534j],
    ],
    'solve': [
        [-0.44311548506-0.01226084986835j, 0.9193725049339+0.4547130886218j, -0.9810235214304-1.196849797728j],
        [2.143904168681+0.2300356292134j, -4.282899808725-2.558786062723j, 4.29614297134+6.181068732693j],
        [-0.8641455242778+2.63102503663j, 4.362960992229-4.692788850594j, -8.916103191146+3.737544971781j],
    ],
}
JAX_SIGN_JVP = -0.07651253565101+0.1165934267432j


@pytest.mark.parametrize("name", list(LOSSES))
def test_gradients_of_real_losses_as_jax(name):
    f, x = LOSSES[name]
    got = np.asarray(xjax.grad(f)(x))
    assert got.dtype == np.complex128
    np.testing.assert_allclose(got, np.array(JAX_GRADS[name]), rtol=1e-10, atol=1e-11)


def test_slogdet_sign_tangent_as_jax():
    t = np.ones((3, 3)) * (1 + 0.5j)
    got = xjax.jvp(lambda x: jnp.linalg.slogdet(x)[0], (A3,), (t,))[1]
    np.testing.assert_allclose(complex(got), JAX_SIGN_JVP, rtol=1e-10)


# ---- jnp.linalg and jax.scipy.linalg on complex input ---------------------------------------------------

@pytest.mark.parametrize("dtype", CTYPES)
def test_numpy_linalg(dtype):
    rng = np.random.default_rng(12)
    a = (crandn(rng, (2, 5, 5)) + 2 * np.eye(5)).astype(dtype)
    b = crandn(rng, (2, 5, 3), dtype)
    t = crandn(rng, (6, 4), dtype)
    h = hpd(rng, (5, 5), dtype)
    w = a.astype(np.complex128)
    close(jnp.linalg.solve(a, b), np.linalg.solve(w, b), dtype, scale=50)
    close(jnp.linalg.inv(a), np.linalg.inv(w), dtype, scale=50)
    close(jnp.linalg.det(a), np.linalg.det(w), dtype, scale=50)
    sign, logdet = jnp.linalg.slogdet(a)
    want_sign, want_logdet = np.linalg.slogdet(w)
    assert sign.dtype == dtype and logdet.dtype == np.finfo(dtype).dtype
    close(sign, want_sign, dtype, scale=50)
    close(logdet, want_logdet, dtype, scale=50)
    close(jnp.linalg.pinv(t), np.linalg.pinv(t.astype(np.complex128)), dtype, scale=50)
    close(jnp.linalg.pinv(h, hermitian=True), np.linalg.pinv(h.astype(np.complex128)), dtype, scale=50)
    x, resid, rank, s = jnp.linalg.lstsq(t, b[0, :, :2].repeat(2, 0)[:6])
    wx, wresid, wrank, ws = np.linalg.lstsq(t.astype(np.complex128), b[0, :, :2].repeat(2, 0)[:6], rcond=None)
    close(x, wx, dtype, scale=50)
    close(resid, wresid, dtype, scale=50)
    assert int(rank) == wrank and resid.dtype == np.finfo(dtype).dtype
    assert int(jnp.linalg.matrix_rank(t)) == np.linalg.matrix_rank(t)
    assert int(jnp.linalg.matrix_rank(t @ t.conj().T)) == 4
    close(jnp.linalg.cond(a), np.linalg.cond(w), dtype, scale=50)
    for ord in (None, "fro", "nuc", 2, -2, 1, np.inf):
        close(jnp.linalg.norm(a[0], ord), np.linalg.norm(w[0], ord), dtype, scale=50)
    ew, ev = jnp.linalg.eigh(h, UPLO="U")
    close(ew, np.linalg.eigh(h.astype(np.complex128), UPLO="U")[0], dtype, scale=50)
    u, s, vh = jnp.linalg.svd(t, full_matrices=False)
    close(s, np.linalg.svd(t.astype(np.complex128), compute_uv=False), dtype, scale=50)
    s_h = jnp.linalg.svd(h - 6 * np.eye(5), hermitian=True)
    close((s_h[0] * s_h[1][None]) @ s_h[2], (h - 6 * np.eye(5)).astype(np.complex128), dtype, scale=50)
    q, r = jnp.linalg.qr(t)
    close(q @ r, t.astype(np.complex128), dtype, scale=50)
    close(jnp.linalg.cholesky(h), np.linalg.cholesky(h.astype(np.complex128)), dtype, scale=50)
    close(jnp.linalg.cholesky(h, upper=True), H(np.linalg.cholesky(h.astype(np.complex128))), dtype, scale=50)
    close(jnp.linalg.matrix_power(a[0], -3), np.linalg.matrix_power(w[0], -3), dtype, scale=200)
    ta = crandn(rng, (2, 3, 6), dtype)
    tb = crandn(rng, (2, 3), dtype)
    close(jnp.linalg.tensorsolve(ta, tb), np.linalg.tensorsolve(ta.astype(np.complex128), tb), dtype, scale=200)
    close(jnp.linalg.tensorinv(ta.reshape(6, 2, 3), ind=1),
          np.linalg.tensorinv(ta.reshape(6, 2, 3).astype(np.complex128), ind=1), dtype, scale=200)


@pytest.mark.parametrize("dtype", CTYPES)
def test_scipy_linalg(dtype):
    rng = np.random.default_rng(13)
    a = (crandn(rng, (5, 5)) + 2 * np.eye(5)).astype(dtype)
    b = crandn(rng, (5, 2), dtype)
    h = hpd(rng, (5, 5), dtype)
    w, wh = a.astype(np.complex128), h.astype(np.complex128)
    p, l, u = jsl.lu(a)
    sp, sl, su = scipy.linalg.lu(w)
    close(p, sp, dtype)
    close(l, sl, dtype, scale=10)
    close(u, su, dtype, scale=10)
    lu_piv = jsl.lu_factor(a)
    s_lu_piv = scipy.linalg.lu_factor(w)
    for trans in (0, 1, 2):
        close(jsl.lu_solve(lu_piv, b, trans=trans), scipy.linalg.lu_solve(s_lu_piv, b, trans=trans), dtype, scale=50)
    for lower in (True, False):
        close(jsl.cholesky(h, lower=lower), scipy.linalg.cholesky(wh, lower=lower), dtype, scale=50)
        c = jsl.cho_factor(h, lower=lower)
        close(jsl.cho_solve(c, b), scipy.linalg.cho_solve(scipy.linalg.cho_factor(wh, lower=lower), b), dtype, scale=50)
        for trans in (0, 1, 2, "N", "T", "C"):
            close(jsl.solve_triangular(a, b, trans=trans, lower=lower),
                  scipy.linalg.solve_triangular(w, b, trans=trans, lower=lower), dtype, scale=50)
    close(jsl.qr(a)[1], scipy.linalg.qr(w)[1], dtype, scale=50)
    close(jsl.svd(a)[1], scipy.linalg.svd(w)[1], dtype, scale=50)
    close(jsl.eigh(h)[0], scipy.linalg.eigh(wh)[0], dtype, scale=50)
    close(jsl.det(a), scipy.linalg.det(w), dtype, scale=50)
    close(jsl.inv(a), scipy.linalg.inv(w), dtype, scale=50)
    close(jsl.solve(a, b), scipy.linalg.solve(w, b), dtype, scale=50)
    close(jsl.solve(h, b, assume_a="pos"), scipy.linalg.solve(wh, b, assume_a="pos"), dtype, scale=50)
    for scale in (0.05, 0.5, 4.0):
        close(jsl.expm(a * scale), scipy.linalg.expm(w * scale), dtype, scale=500)
    close(jsl.expm(np.triu(a), upper_triangular=True), scipy.linalg.expm(np.triu(w)), dtype, scale=500)


# The dtypes of the results for complex64 operands, recorded from JAX 0.10.2 (real where JAX's are: the
# permutation matrix of scipy's lu, eigenvalues of Hermitian matrices, singular values, norms, logdet).
_C4 = (np.eye(4) * 3 + 1j * np.tri(4)).astype(np.complex64)
_H4 = (_C4 @ _C4.conj().T).astype(np.complex64)
RESULT_DTYPES = [
    (lambda: jsl.lu(_C4), "float32 complex64 complex64"),
    (lambda: jsl.lu_factor(_C4), "complex64 int32"),
    (lambda: jsl.svd(_C4), "complex64 float32 complex64"),
    (lambda: jsl.eigh(_H4), "float32 complex64"),
    (lambda: jsl.cho_factor(_H4), "complex64 bool"),
    (lambda: jnp.linalg.slogdet(_C4), "complex64 float32"),
    (lambda: jnp.linalg.norm(_C4, 2), "float32"),
    (lambda: jnp.linalg.cond(_C4, 1), "float32"),
    (lambda: jnp.linalg.lstsq(_C4, _C4[:, :2]), "complex64 float32 int32 float32"),
    (lambda: jnp.linalg.matrix_rank(_C4), "int32"),
    (lambda: jnp.linalg.eig(_C4), "complex64 complex64"),
    (lambda: jnp.linalg.svd(_H4, hermitian=True), "complex64 float32 complex64"),
    (lambda: jsl.expm(_C4), "complex64"),
]


@pytest.mark.parametrize("i", range(len(RESULT_DTYPES)))
def test_result_dtypes_as_jax(i):
    with xjax.enable_x64(False):
        f, want = RESULT_DTYPES[i]
        got = " ".join(str(np.asarray(x).dtype) for x in xjax.tree_util.tree_leaves(f()))
    assert got == want


def test_slogdet_qr_method_refuses_complex_as_jax():
    with pytest.raises(NotImplementedError, match="complex"):
        jnp.linalg.slogdet(jnp.eye(3, dtype=jnp.complex64), method="qr")


# ---- without LAPACK: triangular_solve substitutes, the factorizations say what is missing ----------------

def test_without_lapack():
    out = run_isolated("""
        import numpy as np
        import xjax
        from xjax.lax import linalg
        xjax.config.update("jax_enable_x64", True)
        rng = np.random.default_rng(0)
        worst = 0.0
        for m in (4, 30):
            a = rng.standard_normal((m, m)) + 1j * rng.standard_normal((m, m)) + 3 * np.eye(m)
            b = rng.standard_normal((m, 2)) + 1j * rng.standard_normal((m, 2))
            for t, c in ((False, False), (True, False), (True, True), (False, True)):
                x = np.asarray(linalg.triangular_solve(a, b, left_side=True, lower=True, transpose_a=t, conjugate_a=c))
                op = np.tril(a).T if t else np.tril(a)
                op = op.conj() if c else op
                worst = max(worst, float(np.abs(op @ x - b).max()))
        print(worst < 1e-12)
        try:
            linalg.cholesky(np.eye(3, dtype=np.complex64))
        except RuntimeError as e:
            print(e)
    """, env={"XJAX_DISABLE_BLAS": "1"})
    assert out.splitlines()[0] == "True"
    assert "[cholesky] needs LAPACK, which is not loaded" in out


# ---- bits independent of the thread count ----------------------------------------------------------------

_HASH_SCRIPT = """
import hashlib
import numpy as np
import xjax
from xjax.lax import linalg
xjax.config.update("jax_enable_x64", True)
rng = np.random.default_rng(5)
h = hashlib.sha1()
for n, batch in [(240, ()), (24, (16,))]:  # one blocked (threaded) matrix; a batch split over the pool
    a = rng.standard_normal(batch + (n, n)) + 1j * rng.standard_normal(batch + (n, n))
    spd = a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)
    for x in (linalg.cholesky(spd), *linalg.lu(a), *linalg.eigh(spd)):
        h.update(np.asarray(x).tobytes())
print(h.hexdigest())
"""


def test_bits_do_not_depend_on_the_thread_count():
    first, second = digests_by_thread_count(_HASH_SCRIPT)
    assert first == second
