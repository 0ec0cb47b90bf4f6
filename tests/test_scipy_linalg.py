"""xjax.scipy.linalg against SciPy in float64 over random batched shapes (SciPy applied matrix by
matrix), its options (lower, trans, unit_diagonal, permute_l, mode, pivoting, assume_a, eigvals_only),
expm over the Pade degrees and scalings, JAX's errors, check_grads in x64, jit and vmap."""
import itertools
import warnings

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings, strategies as st

import xjax
import xjax.scipy.linalg as sl
from xjax.test_util import check_grads

batch_shapes = st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple)


@pytest.fixture
def x64():
    xjax.config.update("jax_enable_x64", True)
    yield
    xjax.config.update("jax_enable_x64", False)


def per_matrix(f, *arrays, batch_dims):
    """SciPy's f applied to each matrix of the batch, results stacked back."""
    outs = []
    for idx in itertools.product(*[range(d) for d in batch_dims]):
        outs.append(f(*[a[idx] for a in arrays]))
    if isinstance(outs[0], tuple):
        return tuple(np.stack(o).reshape(batch_dims + np.shape(o[0])) for o in zip(*outs))
    return np.stack(outs).reshape(batch_dims + np.shape(outs[0]))


def spd(rng, shape):
    a = rng.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def close(got, want, tol):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            close(g, w, tol)
        return
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


@settings(max_examples=10, deadline=None)
@given(batch=batch_shapes, n=st.integers(1, 5), k=st.integers(1, 3), seed=st.integers(0, 2**31))
def test_solvers_match_scipy(batch, n, k, seed):
    xjax.config.update("jax_enable_x64", True)
    try:
        rng = np.random.default_rng(seed)
        a = rng.standard_normal(batch + (n, n)) + 3 * np.eye(n)
        s = spd(rng, batch + (n, n))
        b = rng.standard_normal(batch + (n, k))

        def want(f, *arrays):
            return per_matrix(f, *arrays, batch_dims=batch)

        for lower in (False, True):
            close(sl.cholesky(s, lower=lower), want(lambda x: scipy.linalg.cholesky(x, lower=lower), s), 1e-10)
            c = sl.cho_factor(s, lower=lower)
            assert c[1] is lower
            close(sl.cho_solve(c, b), want(lambda x, y: scipy.linalg.cho_solve((scipy.linalg.cholesky(x, lower=lower),
                                                                               lower), y), s, b), 1e-9)
            close(sl.solve(s, b, assume_a="pos", lower=lower), want(np.linalg.solve, s, b), 1e-9)
            for trans, unit in itertools.product((0, 1, 2, "N", "T", "C"), (False, True)):
                got = sl.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit)
                ref = want(lambda x, y: scipy.linalg.solve_triangular(x, y, trans=trans, lower=lower,
                                                                      unit_diagonal=unit), a, b)
                close(got, ref, 1e-8)
        lu_piv = sl.lu_factor(a)
        ref_lu = want(scipy.linalg.lu_factor, a)
        close(lu_piv, ref_lu, 1e-10)
        for trans in (0, 1, 2):
            close(sl.lu_solve(lu_piv, b, trans=trans),
                  want(lambda x, y: scipy.linalg.lu_solve(scipy.linalg.lu_factor(x), y, trans=trans), a, b), 1e-9)
        for assume in ("gen", "sym", "her"):
            close(sl.solve(sym(a) if assume != "gen" else a, b, assume_a=assume),
                  want(np.linalg.solve, sym(a) if assume != "gen" else a, b), 1e-9)
        close(sl.det(a), want(scipy.linalg.det, a), 1e-9)
        close(sl.inv(a), want(scipy.linalg.inv, a), 1e-9)
        close(sl.expm(a / n), want(scipy.linalg.expm, a / n), 1e-9)
    finally:
        xjax.config.update("jax_enable_x64", False)


def sym(a):
    return (a + np.swapaxes(a, -1, -2)) / 2


@settings(max_examples=10, deadline=None)
@given(batch=batch_shapes, m=st.integers(1, 5), n=st.integers(1, 5), seed=st.integers(0, 2**31))
def test_factorisations_match_scipy(batch, m, n, seed):
    xjax.config.update("jax_enable_x64", True)
    try:
        rng = np.random.default_rng(seed)
        x = rng.standard_normal(batch + (m, n))

        def want(f, *arrays):
            return per_matrix(f, *arrays, batch_dims=batch)

        close(sl.lu(x), want(scipy.linalg.lu, x), 1e-10)
        close(sl.lu(x, permute_l=True), want(lambda y: scipy.linalg.lu(y, permute_l=True), x), 1e-10)
        k = min(m, n)
        for mode, pivoting in itertools.product(("full", "economic", "r"), (False, True)):
            got = sl.qr(x, mode=mode, pivoting=pivoting)
            ref = want(lambda y: tuple(np.atleast_1d(t) for t in
                                       scipy.linalg.qr(y, mode=mode, pivoting=pivoting)), x)
            # R's rows (and Q's columns) up to sign: normalise by the sign of R's diagonal.
            r_got, r_ref = got[0 if mode == "r" else 1], ref[0 if mode == "r" else 1]
            d_got = np.sign(np.diagonal(np.asarray(r_got), 0, -2, -1))
            d_ref = np.sign(np.diagonal(r_ref, 0, -2, -1))
            close(np.asarray(r_got)[..., :k, :] * d_got[..., :, None], r_ref[..., :k, :] * d_ref[..., :, None], 1e-9)
            if mode != "r":
                close(np.asarray(got[0])[..., :k] * d_got[..., None, :], ref[0][..., :k] * d_ref[..., None, :], 1e-9)
            if pivoting:
                close(got[-1], ref[-1], 0)
        close(sl.svd(x, compute_uv=False), want(lambda y: scipy.linalg.svd(y, compute_uv=False), x), 1e-10)
        u, s, vh = sl.svd(x, full_matrices=False)
        close((np.asarray(u) * np.asarray(s)[..., None, :]) @ np.asarray(vh), x, 1e-10)
        if m == n:
            h = sym(x)
            w, v = sl.eigh(h, lower=False)
            close(w, want(lambda y: scipy.linalg.eigh(y, eigvals_only=True), h), 1e-10)
            close(np.asarray(v) * np.asarray(w)[..., None, :], h @ np.asarray(v), 1e-9)
            close(sl.eigh(h, eigvals_only=True), w, 1e-12)
    finally:
        xjax.config.update("jax_enable_x64", False)


def test_one_triangle_is_read(x64):
    rng = np.random.default_rng(1)
    s = spd(rng, (4, 4))
    junk_upper, junk_lower = np.tril(s) + np.triu(rng.standard_normal((4, 4)), 1), \
        np.triu(s) + np.tril(rng.standard_normal((4, 4)), -1)
    close(sl.cholesky(junk_upper, lower=True), scipy.linalg.cholesky(s, lower=True), 1e-12)
    close(sl.cholesky(junk_lower), scipy.linalg.cholesky(s), 1e-12)
    b = rng.standard_normal(4)
    close(sl.solve(junk_upper, b, assume_a="pos", lower=True), np.linalg.solve(s, b), 1e-10)
    close(sl.solve(junk_lower, b, assume_a="pos"), np.linalg.solve(s, b), 1e-10)
    # (eigh symmetrizes its input first, as JAX's does: both triangles count there)


@pytest.mark.parametrize("scale", [1e-4, 0.05, 0.5, 1.5, 4.0, 40.0, 700.0])
def test_expm_over_pade_degrees_and_squarings(x64, scale):
    # The 1-norm picks the Pade degree (3 to 13) and the number of squarings.
    rng = np.random.default_rng(int(scale * 10))
    a = rng.standard_normal((5, 5))
    a *= scale / np.abs(a).sum(0).max()
    want = scipy.linalg.expm(a)
    np.testing.assert_allclose(sl.expm(a), want, rtol=1e-12 * max(1, scale), atol=1e-13 * np.abs(want).max())
    xjax.config.update("jax_enable_x64", False)
    got32 = np.asarray(sl.expm(a.astype(np.float32)))
    if np.abs(want).max() < 1e30:
        np.testing.assert_allclose(got32, want, rtol=2e-5 * max(1, scale), atol=2e-6 * np.abs(want).max())
    else:  # beyond float32's range
        assert not np.isfinite(got32).all()


def test_expm_special_cases(x64):
    t = np.triu(np.random.default_rng(0).standard_normal((4, 4)))
    close(sl.expm(t, upper_triangular=True), scipy.linalg.expm(t), 1e-12)
    close(sl.expm(np.zeros((3, 3))), np.eye(3), 0)
    rot = np.array([[0.0, -np.pi], [np.pi, 0.0]])
    close(sl.expm(rot), -np.eye(2), 1e-12)
    assert np.isnan(np.asarray(sl.expm(np.diag([1e8, 1.0]), max_squarings=4))).all()  # needs > 4 squarings
    e = np.random.default_rng(1).standard_normal((4, 4))
    value, frechet = sl.expm_frechet(t, e)
    want_value, want_frechet = scipy.linalg.expm_frechet(t, e)
    close(value, want_value, 1e-12)
    close(frechet, want_frechet, 1e-11)
    close(sl.expm_frechet(t, e, compute_expm=False), want_frechet, 1e-11)


def test_block_diag_matches_scipy():
    blocks = [np.float32(2), np.arange(3, dtype=np.float32), np.ones((2, 2), np.float32), np.zeros((0, 2), np.float32)]
    close(sl.block_diag(*blocks), scipy.linalg.block_diag(*blocks), 0)
    assert sl.block_diag(np.ones((1, 1), np.int32), np.ones((1, 1), np.int32)).dtype == np.int32


def test_batched_vector_rhs_is_deprecated_as_in_jax():
    a = np.stack([np.eye(3), 2 * np.eye(3)])
    b = np.ones((2, 3))
    with pytest.warns(FutureWarning, match="batched 1D solves with b.ndim > 1 are deprecated"):
        x = sl.solve_triangular(a, b)
    close(x, [[1, 1, 1], [0.5, 0.5, 0.5]], 1e-6)
    with pytest.warns(FutureWarning):
        sl.cho_solve((a, False), b)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sl.solve_triangular(a, np.ones((2, 3, 1)))


@pytest.mark.parametrize("call, exc, match", [
    (lambda: sl.solve_triangular(np.eye(3), np.ones(4)), ValueError,
     r"inconsistent size for core dimension 'n': 4 vs 3 .*signature='\(n,n\),\(n\)->\(n\)'"),
    (lambda: sl.solve_triangular(np.eye(3), np.ones((2, 3))), ValueError,
     r"inconsistent size for core dimension 'n': 2 vs 3 .*signature='\(n,n\),\(n,k\)->\(n,k\)'"),
    (lambda: sl.solve_triangular(np.eye(3), np.ones((3, 2)), trans=3), ValueError, "Invalid 'trans' value 3"),
    (lambda: sl.solve(np.eye(3), np.ones(3), assume_a="foo"), ValueError,
     r"Expected assume_a to be one of \['gen', 'sym', 'her', 'pos'\]; got 'foo'"),
    (lambda: sl.solve(np.eye(3), np.ones(4), assume_a="pos"), ValueError,
     r"The arguments to solve must have shapes a=\[..., m, m\] and b=\[..., m, k\] or b=\[..., m\]; got a=\(3, 3\) "
     r"and b=\(4,\)"),
    (lambda: sl.solve(np.ones((2, 3, 3)), np.ones(3), assume_a="pos"), ValueError, "The arguments to solve must"),
    (lambda: sl.cho_solve((np.eye(3), True), np.ones(4)), ValueError, "inconsistent size for core dimension 'n'"),
    (lambda: sl.lu_solve((np.eye(3), np.zeros(3, np.int32)), np.ones(4)), ValueError,
     r"inconsistent size for core dimension 'n': 4 vs 3 .*signature='\(n,n\),\(n\),\(n\)->\(n\)'"),
    (lambda: sl.lu_solve((np.eye(3), np.zeros(3, np.int32)), np.ones(3), trans=3), ValueError,
     "'trans' value must be 0, 1, or 2, got 3"),
    (lambda: sl.lu(np.ones(3)), TypeError, r"Input 0 to lu must have rank at least 2, but got shape=\(3,\)"),
    (lambda: sl.cholesky(np.ones((3, 4))), ValueError, r"The input to cholesky must be a square matrix"),
    (lambda: sl.expm(np.ones((3, 4))), ValueError,
     r"Expected A to be a \(batched\) square matrix, got A.shape=\(3, 4\)."),
    (lambda: sl.expm_frechet(np.ones((3, 3)), np.ones((2, 2))), ValueError,
     r"expected A and E to be the same shape, got A.shape=\(3, 3\) E.shape=\(2, 2\)"),
    (lambda: sl.qr(np.ones((3, 4)), mode="raw"), ValueError, "Unsupported QR decomposition mode 'raw'"),
    (lambda: sl.eigh(np.eye(3), np.eye(3)), NotImplementedError, "Only the b=None case of eigh is implemented"),
    (lambda: sl.eigh(np.eye(3), type=2), NotImplementedError, "Only the type=1 case of eigh is implemented."),
    (lambda: sl.eigh(np.eye(3), eigvals=(0, 1)), NotImplementedError, "Only the eigvals=None case"),
    (lambda: sl.block_diag(np.ones((2, 2, 2))), ValueError,
     r"Arguments to jax.scipy.linalg.block_diag must have at most 2 dimensions, got float32\[2,2,2\] at argument 0."),
])
def test_errors_as_jax(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# ---- derivatives -----------------------------------------------------------------------------------

RNG = np.random.default_rng(3)
A = RNG.standard_normal((4, 4)) + 4 * np.eye(4)
B = RNG.standard_normal((4, 2))
SPD = A @ A.T
PIV = np.array([1, 1, 2, 3], np.int32)

GRAD_CASES = [
    ("cholesky", lambda a: sl.cholesky(sym(a)), (SPD,), 2),
    ("cho_solve", lambda c, b: sl.cho_solve((c, True), b), (np.linalg.cholesky(SPD), B), 2),
    ("solve_triangular", lambda a, b: sl.solve_triangular(a, b, trans=1, lower=True), (A, B), 2),
    ("solve_triangular_unit", lambda a, b: sl.solve_triangular(a, b, unit_diagonal=True), (A, B), 1),
    ("lu", sl.lu, (A,), 1),
    ("lu_factor", lambda a: sl.lu_factor(a)[0], (A,), 1),
    ("lu_solve", lambda lu, b: sl.lu_solve((lu, PIV), b), (A, B), 2),
    ("lu_solve_trans", lambda lu, b: sl.lu_solve((lu, PIV), b, trans=1), (A, B), 1),
    ("solve_gen", lambda a, b: sl.solve(a, b), (A, B), 2),
    ("solve_pos", lambda a, b: sl.solve(sym(a), b, assume_a="pos"), (SPD, B), 2),
    ("solve_pos_lower", lambda a, b: sl.solve(sym(a), b[:, 0], assume_a="pos", lower=True), (SPD, B), 1),
    ("det", sl.det, (A,), 2),
    ("inv", sl.inv, (A,), 1),
    ("qr", lambda a: sl.qr(a, mode="economic"), (A[:, :3],), 1),
    ("eigh", lambda a: sl.eigh(sym(a)), (SPD,), 1),
    ("svd", lambda a: sl.svd(a, full_matrices=False), (A[:3],), 1),
    ("expm", lambda a: sl.expm(a / 4), (A,), 1),
    ("expm_small", lambda a: sl.expm(a / 40), (A,), 2),
    ("expm_batched", sl.expm, (np.stack([A / 8, A / 2]),), 1),
    ("expm_frechet", lambda a, e: sl.expm_frechet(a, e, compute_expm=False), (A / 4, SPD / 40), 1),
    ("block_diag", lambda a, b: sl.block_diag(a, b), (A, B), 1),
]


@pytest.mark.parametrize("name, f, args, order", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_check_grads(x64, name, f, args, order):
    check_grads(f, args, order=order, modes=("fwd", "rev"))


def test_pos_solve_gradient_reuses_the_factor(x64):
    jaxpr = str(xjax.make_jaxpr(xjax.grad(lambda a, b: sl.solve(a, b, assume_a="pos").sum(), (0, 1)))(SPD, B))
    assert jaxpr.count(" cholesky ") == 1, jaxpr


# ---- jit and vmap ------------------------------------------------------------------------------------

def test_jit_and_vmap_match_eager():
    a = np.stack([A, A.T, 2 * A]).astype(np.float32)
    b = np.stack([B, -B, B]).astype(np.float32)
    close(xjax.vmap(sl.expm)(a / 8), sl.expm(a / 8), 1e-5)
    close(xjax.jit(sl.expm)(a / 8), sl.expm(a / 8), 1e-5)
    close(xjax.vmap(lambda x, y: sl.solve_triangular(x, y, lower=True))(a, b),
          sl.solve_triangular(a, b, lower=True), 1e-5)
    close(xjax.vmap(lambda x, y: sl.lu_solve(sl.lu_factor(x), y))(a, b), sl.lu_solve(sl.lu_factor(a), b), 1e-5)
    spds = a @ np.swapaxes(a, 1, 2)
    close(xjax.jit(lambda x, y: sl.cho_solve(sl.cho_factor(x), y))(spds, b),
          sl.cho_solve(sl.cho_factor(spds), b), 1e-4)
    close(xjax.vmap(lambda x: sl.lu(x, permute_l=True))(a), sl.lu(a, permute_l=True), 1e-6)
    close(xjax.vmap(xjax.grad(lambda x: sl.expm(x).sum()))(a / 8), xjax.grad(lambda x: sl.expm(x).sum())(a / 8), 1e-4)


def test_lists_where_jax_takes_them():
    # JAX's jax.scipy.linalg runs jnp.asarray on the matrices of these; det/inv/solve/expm reject lists.
    m = [[2.0, 1.0], [1.0, 3.0]]
    close(sl.cholesky(m, lower=True), np.linalg.cholesky(np.array(m)), 1e-6)
    close(sl.solve_triangular(m, [1.0, 2.0]), scipy.linalg.solve_triangular(np.array(m), [1.0, 2.0]), 1e-6)
    close(sl.solve(m, [1.0, 2.0], assume_a="pos"), np.linalg.solve(np.array(m), [1.0, 2.0]), 1e-6)
    for call in (lambda: sl.det(m), lambda: sl.expm(m), lambda: sl.lu_solve((np.array(m), [0, 1]), np.ones(2))):
        with pytest.raises(TypeError):
            call()


def test_signatures_match_jax():
    import inspect
    # Recorded with inspect.signature on jax.scipy.linalg 0.10.2 (type annotations dropped).
    want = {
        "cholesky": "(a, lower=False, overwrite_a=False, check_finite=True)",
        "cho_factor": "(a, lower=False, overwrite_a=False, check_finite=True)",
        "cho_solve": "(c_and_lower, b, overwrite_b=False, check_finite=True)",
        "solve_triangular": "(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, debug=None, "
                            "check_finite=True)",
        "lu": "(a, permute_l=False, overwrite_a=False, check_finite=True)",
        "lu_factor": "(a, overwrite_a=False, check_finite=True)",
        "lu_solve": "(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True)",
        "qr": "(a, overwrite_a=False, lwork=None, mode='full', pivoting=False, check_finite=True)",
        "eigh": "(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False, turbo=True, "
                "eigvals=None, type=1, check_finite=True)",
        "svd": "(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True, lapack_driver='gesdd')",
        "det": "(a, overwrite_a=False, check_finite=True)", "inv": "(a, overwrite_a=False, check_finite=True)",
        "solve": "(a, b, lower=False, overwrite_a=False, overwrite_b=False, debug=False, check_finite=True, "
                 "assume_a='gen')",
        "expm": "(A, *, upper_triangular=False, max_squarings=16)",
        "expm_frechet": "(A, E, *, method=None, compute_expm=True)", "block_diag": "(*arrs)",
    }
    for name, sig in want.items():
        assert str(inspect.signature(getattr(sl, name))) == sig, name
    assert "linalg" in dir(xjax.scipy)
