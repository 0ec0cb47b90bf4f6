"""The linear-algebra ops on the GPU (gpu/cuda_linalg.py through the CUDA executor): every op jitted
and eager, batched and not, float32 and float64, against what the CPU computes from the same inputs --
exactly where the result is unique, by its defining properties (and magnitudes) where signs are a
convention -- plus gradients through jnp.linalg. On the emulated CuPy everywhere, and on a real GPU where
there is one (see gpu_runtime).
"""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax._src.gpu.gpu_array import GpuArray
from xjax.lax import linalg
from gpu_runtime import gpu, to_gpu  # noqa: F401 - the fixture

RNG = np.random.default_rng(11)
DTYPES = [np.float32, np.float64]
TOL = {np.float32: 2e-4, np.float64: 1e-9}
BATCHES = [(), (3,), (2, 2)]


@pytest.fixture(scope="module", autouse=True)
def x64():
    with xjax.enable_x64():
        yield


def rand(shape, dtype):
    return RNG.standard_normal(shape).astype(dtype)


def spd(batch, n, dtype):
    a = RNG.standard_normal(batch + (n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


def run(fun, args, gpu, jit):
    """fun on GPU copies of args (jitted or eager): its results, each checked to be a GPU array, as NumPy."""
    f = xjax.jit(fun) if jit else fun
    out = f(*[to_gpu(a, gpu) for a in args])
    leaves = xjax.tree_util.tree_leaves(out)
    for leaf in leaves:
        assert type(leaf) is GpuArray and leaf.device is gpu, type(leaf)
    return [np.asarray(leaf) for leaf in leaves]


def cpu(fun, args):
    return [np.asarray(leaf) for leaf in xjax.tree_util.tree_leaves(fun(*args))]


def same(got, want, dtype, scale=1.0):
    """GPU results equal to the CPU's (dtype, shape, values; NaN where the CPU has NaN)."""
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        if g.dtype.kind == "f":
            np.testing.assert_allclose(g, w, rtol=TOL[dtype] * scale, atol=TOL[dtype] * scale)
        else:
            np.testing.assert_array_equal(g, w)


def orthonormal_columns(q, dtype):
    k = q.shape[-1]
    np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(k), q.shape[:-2] + (k, k)),
                               atol=TOL[dtype] * 10)


def up_to_column_signs(got, want, dtype, scale=10.0):
    """Matrices whose columns agree up to sign: each column of `got` flipped to `want`'s sign first."""
    signs = np.sign(np.sum(got * want, axis=-2, keepdims=True))
    np.testing.assert_allclose(got * np.where(signs == 0, 1, signs), want, rtol=TOL[dtype] * scale,
                               atol=TOL[dtype] * scale)


# ---- cholesky --------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("jit", [False, True])
def test_cholesky_matches_the_cpu(gpu, dtype, batch, jit):
    a = spd(batch, 5, dtype)
    fun = lambda x: linalg.cholesky(x, symmetrize_input=False)  # noqa: E731
    same(run(fun, [a], gpu, jit), cpu(fun, [a]), dtype, 5)


@pytest.mark.parametrize("dtype", DTYPES)
def test_cholesky_of_a_matrix_that_is_not_positive_definite_is_nan_below_the_diagonal(gpu, dtype):
    a = spd((4,), 4, dtype)
    a[1] = -a[1]  # negative definite: fails at the first pivot
    a[2, 3, 3] = -50.0  # fails at the last
    a[3, 0, 0] = np.nan
    fun = lambda x: linalg.cholesky(x, symmetrize_input=False)  # noqa: E731
    (got,) = run(fun, [a], gpu, True)
    (want,) = cpu(fun, [a])
    lower = np.tril(np.ones((4, 4), bool))
    for i in (1, 2, 3):
        assert np.isnan(got[i][lower]).all() and not got[i][~lower].any()
    same([got], [want], dtype, 5)


def test_cholesky_failure_is_found_whatever_potrf_leaves_where_it_stops(gpu, monkeypatch):
    """A potrf that left A's own (positive) entry at the failing pivot is caught by the rows' sums of
    squares (LAPACK's leaves the non-positive pivot there, which the diagonal's sign catches)."""
    import emulated_cupy

    from xjax._src.gpu import gpu_devices

    if gpu_devices.cupy() is not emulated_cupy:
        pytest.skip("a stand-in potrf needs the emulated runtime")
    potrf = emulated_cupy.linalg.cholesky

    def leaves_a(a):
        l = np.array(potrf(a))
        d = np.diagonal(l, axis1=-2, axis2=-1).copy()
        d[d <= 0] = np.diagonal(np.asarray(a), axis1=-2, axis2=-1)[d <= 0]
        i = np.arange(a.shape[-1])
        l[..., i, i] = d
        return emulated_cupy.asarray(l)

    monkeypatch.setattr(emulated_cupy.linalg, "cholesky", leaves_a)
    a = np.array([[[4., 0.], [0., 9.]], [[1., 2.], [2., 1.]]], np.float32)  # (the second: 1 - 2 * 2 < 0)
    (got,) = run(lambda x: linalg.cholesky(x, symmetrize_input=False), [a], gpu, True)
    np.testing.assert_array_equal(got[0], [[2, 0], [0, 3]])
    assert np.isnan(got[1][np.tril_indices(2)]).all() and got[1][0, 1] == 0


def test_cholesky_reads_only_the_lower_triangle(gpu):
    a = spd((2,), 4, np.float64)
    garbage = a + np.triu(np.full((4, 4), 9.0), 1)
    fun = lambda x: linalg.cholesky(x, symmetrize_input=False)  # noqa: E731
    same(run(fun, [garbage], gpu, False), cpu(fun, [a]), np.float64)


# ---- lu, lu_pivots_to_permutation ---------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 5), (3, 6, 4), (2, 2, 3, 5), (1, 1)])
@pytest.mark.parametrize("jit", [False, True])
def test_lu_matches_the_cpu(gpu, dtype, shape, jit):
    """getf2 on both sides: the same pivots, permutation and factors."""
    a = rand(shape, dtype)
    same(run(linalg.lu, [a], gpu, jit), cpu(linalg.lu, [a]), dtype, 10)


def test_lu_of_singular_matrices_and_ties(gpu):
    sing = np.array([[1., 2., 3.], [2., 4., 6.], [1., 0., 1.]], np.float32)
    ties = np.array([[1., 2., 0.], [-1., 1., 1.], [1., 0., 2.]], np.float32)  # equal magnitudes: the first wins
    zero_col = np.array([[0., 1., 2.], [0., 3., 1.], [0., 1., 1.]], np.float32)
    a = np.stack([sing, ties, zero_col])
    got, want = run(linalg.lu, [a], gpu, True), cpu(linalg.lu, [a])
    same(got, want, np.float32)
    assert got[1][1, 0] == 0 and got[2][2, 0] == 0  # (equal magnitudes: the first; an all-zero column: no swap)


@pytest.mark.parametrize("jit", [False, True])
def test_lu_pivots_to_permutation_matches_the_cpu(gpu, jit):
    pivots = RNG.integers(0, 6, (2, 3, 4)).astype(np.int32)
    pivots[0, 0] = [-1, 7, 2, -9]  # a negative pivot counts from the end; one out of range swaps nothing in
    for size in (4, 6):
        fun = lambda p: linalg.lu_pivots_to_permutation(p, size)  # noqa: E731
        same(run(fun, [pivots], gpu, jit), cpu(fun, [pivots]), np.float32)


# ---- qr ---------------------------------------------------------------------------------------------

def check_qr(q, r, a, dtype):
    orthonormal_columns(q, dtype)
    np.testing.assert_allclose(q @ r, a, atol=TOL[dtype] * 20)
    assert not np.tril(r, -1).any()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 5), (3, 6, 4), (2, 3, 5), (1, 4, 4)])
@pytest.mark.parametrize("full", [True, False])
@pytest.mark.parametrize("jit", [False, True])
def test_qr_is_a_qr_with_the_cpus_factors_up_to_signs(gpu, dtype, shape, full, jit):
    """Q's columns and R's rows are the CPU's up to a sign each (geqrf's Householder convention makes them
    equal in practice; the property is what is promised)."""
    a = rand(shape, dtype)
    fun = lambda x: linalg.qr(x, full_matrices=full)  # noqa: E731
    q, r = run(fun, [a], gpu, jit)
    cq, cr = cpu(fun, [a])
    assert (q.shape, r.shape, q.dtype, r.dtype) == (cq.shape, cr.shape, cq.dtype, cr.dtype)
    check_qr(q, r, a, dtype)
    k = min(shape[-2:])
    up_to_column_signs(q[..., :k], cq[..., :k], dtype)
    up_to_column_signs(np.swapaxes(r, -1, -2)[..., :k], np.swapaxes(cr, -1, -2)[..., :k], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(6, 6), (2, 7, 4), (3, 4, 6)])
@pytest.mark.parametrize("jit", [False, True])
def test_pivoted_qr_takes_geqp3s_columns(gpu, dtype, shape, jit):
    a = rand(shape, dtype)
    fun = lambda x: linalg.qr(x, pivoting=True, full_matrices=False)  # noqa: E731
    q, r, p = run(fun, [a], gpu, jit)
    cq, cr, cp = cpu(fun, [a])
    assert p.dtype == np.int32 and p.shape == cp.shape
    np.testing.assert_array_equal(p, cp)
    check_qr(q, r, np.take_along_axis(a, np.broadcast_to(p[..., None, :], a.shape), -1), dtype)
    d = np.abs(np.diagonal(r, axis1=-2, axis2=-1))
    assert (d[..., :-1] >= d[..., 1:] * (1 - 1e-5)).all()  # non-increasing |R_jj|
    np.testing.assert_allclose(np.abs(r), np.abs(cr), rtol=TOL[dtype] * 10, atol=TOL[dtype] * 10)


# ---- eigh, svd --------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("jit", [False, True])
def test_eigh_matches_the_cpu_up_to_eigenvector_signs(gpu, dtype, batch, lower, jit):
    n = 5
    a = rand(batch + (n, n), dtype)  # not symmetric: only the triangle `lower` names is read
    fun = lambda x: linalg.eigh(x, lower=lower, symmetrize_input=False)  # noqa: E731
    v, w = run(fun, [a], gpu, jit)
    cv, cw = cpu(fun, [a])
    same([w], [cw], dtype, 10)
    assert (np.diff(w, axis=-1) >= 0).all()
    tri = np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2) if lower else np.triu(a) + np.swapaxes(np.triu(a, 1), -1, -2)
    orthonormal_columns(v, dtype)
    np.testing.assert_allclose(tri @ v, v * w[..., None, :], atol=TOL[dtype] * 50)
    up_to_column_signs(v, cv, dtype, 50)


def test_eigh_of_a_batch_of_large_matrices(gpu):
    """Beyond order 32 (syevjBatched's limit) a batch goes one matrix at a time."""
    a = spd((2,), 40, np.float64)
    v, w = run(lambda x: linalg.eigh(x, symmetrize_input=False), [a], gpu, True)
    same([w], [np.linalg.eigvalsh(a)], np.float64, 1e3)
    np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=1e-8 * np.abs(w).max())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 5), (3, 6, 4), (2, 2, 3, 5)])
@pytest.mark.parametrize("full", [True, False])
@pytest.mark.parametrize("jit", [False, True])
def test_svd_matches_the_cpu_up_to_vector_signs(gpu, dtype, shape, full, jit):
    a = rand(shape, dtype)
    fun = lambda x: linalg.svd(x, full_matrices=full)  # noqa: E731
    u, s, vt = run(fun, [a], gpu, jit)
    cu, cs, cvt = cpu(fun, [a])
    same([s], [cs], dtype, 10)
    assert (u.shape, vt.shape, u.dtype, vt.dtype) == (cu.shape, cvt.shape, cu.dtype, cvt.dtype)
    k = min(shape[-2:])
    np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vt[..., :k, :], a, atol=TOL[dtype] * 20)
    orthonormal_columns(u, dtype)
    orthonormal_columns(np.swapaxes(vt, -1, -2), dtype)
    signs = np.sign(np.sum(u[..., :k] * cu[..., :k], axis=-2, keepdims=True))  # paired: u's column, vt's row
    up_to_column_signs(u[..., :k], cu[..., :k], dtype, 50)
    np.testing.assert_allclose(vt[..., :k, :] * np.swapaxes(signs, -1, -2), cvt[..., :k, :], atol=TOL[dtype] * 50)
    same(run(lambda x: linalg.svd(x, compute_uv=False), [a], gpu, jit),
         cpu(lambda x: linalg.svd(x, compute_uv=False), [a]), dtype, 10)


def test_eigh_and_svd_of_non_finite_matrices_are_nan_as_on_the_cpu(gpu):
    a = spd((3,), 4, np.float32)
    a[1, 2, 0] = np.nan
    a[2, 0, 3] = np.inf  # above the diagonal: eigh (lower) does not read it, svd does
    eig = lambda x: linalg.eigh(x, symmetrize_input=False)  # noqa: E731
    v, w = run(eig, [a], gpu, True)
    assert np.isnan(v[1]).all() and np.isnan(w[1]).all() and np.isfinite(w[[0, 2]]).all()
    same([w], [cpu(eig, [a])[1]], np.float32, 10)
    u, s, vt = run(linalg.svd, [a], gpu, True)
    want = cpu(linalg.svd, [a])[1]
    assert np.isnan(s[1:]).all() and np.isnan(u[1:]).all() and np.isnan(vt[1:]).all() and np.isnan(want[1:]).all()
    same([s[0]], [want[0]], np.float32, 10)


# ---- triangular_solve --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch", [(), (3,), (2, 2)])
@pytest.mark.parametrize("jit", [False, True])
def test_triangular_solve_matches_the_cpu_in_every_variant(gpu, dtype, batch, jit):
    m = 5
    a = rand(batch + (m, m), dtype) + 4 * np.eye(m, dtype=dtype)  # (well conditioned either triangle)
    for left_side in (True, False):
        b = rand(batch + ((m, 3) if left_side else (3, m)), dtype)
        for lower in (True, False):
            for transpose_a in (True, False):
                for unit_diagonal in (True, False):
                    fun = lambda x, y: linalg.triangular_solve(  # noqa: E731
                        x, y, left_side=left_side, lower=lower, transpose_a=transpose_a, unit_diagonal=unit_diagonal)
                    same(run(fun, [a, b], gpu, jit), cpu(fun, [a, b]), dtype, 10)


def test_triangular_solve_with_a_vector_and_a_zero_diagonal(gpu):
    a = np.triu(rand((4, 4), np.float32)) + 3 * np.eye(4, dtype=np.float32)
    b = rand((4,), np.float32)
    fun = lambda x, y: linalg.triangular_solve(x, y, left_side=True)  # noqa: E731
    same(run(fun, [a, b], gpu, True), cpu(fun, [a, b]), np.float32, 10)
    a[2, 2] = 0.0  # singular: infinities and NaNs as on the CPU, no error
    (got,) = run(fun, [a, b], gpu, True)
    assert not np.isfinite(got).all()


# ---- empty operands --------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0), (0, 3, 3), (3, 0), (2, 0, 4)])
def test_empty_operands(gpu, shape):
    a = np.zeros(shape, np.float32)
    square = shape[-1] == shape[-2]
    funs = [linalg.lu, lambda x: linalg.qr(x), lambda x: linalg.qr(x, full_matrices=False),
            lambda x: linalg.qr(x, pivoting=True), linalg.svd, lambda x: linalg.svd(x, full_matrices=False)]
    if square:
        funs += [lambda x: linalg.cholesky(x, symmetrize_input=False), lambda x: linalg.eigh(x, symmetrize_input=False),
                 lambda x: linalg.triangular_solve(x, x, left_side=True)]
    for fun in funs:
        same(run(fun, [a], gpu, True), cpu(fun, [a]), np.float32)


# ---- jnp.linalg and gradients ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_jnp_linalg_functions(gpu, dtype):
    a = rand((2, 4, 4), dtype) + 4 * np.eye(4, dtype=dtype)
    b = rand((2, 4, 3), dtype)

    def f(x, y):
        sign, logdet = jnp.linalg.slogdet(x)
        return (jnp.linalg.solve(x, y), jnp.linalg.inv(x), jnp.linalg.det(x), sign, logdet,
                jnp.linalg.eigvalsh(x @ jnp.swapaxes(x, -1, -2)), jnp.linalg.norm(x, ord=2, axis=(-2, -1)),
                jnp.linalg.matrix_rank(x), jnp.linalg.pinv(x))

    same(run(f, [a, b], gpu, True), cpu(f, [a, b]), dtype, 50)
    same(run(f, [a, b], gpu, False), cpu(f, [a, b]), dtype, 50)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("jit", [False, True])
def test_gradients_through_decompositions(gpu, dtype, jit):
    """One loss through solve, inv, cholesky, qr, eigh, svd and slogdet, each term blind to the signs of
    the factors that are not unique: its gradient on the GPU is the CPU's."""
    a = rand((4, 4), dtype) + 3 * np.eye(4, dtype=dtype)
    c = rand((4, 4), dtype)
    wts = np.abs(rand((4, 4), dtype))

    def loss(x):
        s = x @ x.T + 4 * jnp.eye(4, dtype=x.dtype)
        q, r = jnp.linalg.qr(x)
        w, v = jnp.linalg.eigh(s)
        u, sv, vt = jnp.linalg.svd(x)
        return (jnp.sum(jnp.linalg.solve(x, c) * wts) + jnp.sum(jnp.linalg.inv(x) * c)
                + jnp.sum(jnp.linalg.cholesky(s) * wts) + jnp.sum(r * r * wts) + jnp.sum((q * q) @ c)
                + jnp.sum(w * wts[0]) + jnp.sum((v * v) @ c) + jnp.sum(sv * wts[1]) + jnp.sum((u * u) * c)
                + jnp.linalg.slogdet(x)[1])

    grad = xjax.grad(loss)
    same(run(grad, [a], gpu, jit), cpu(grad, [a]), dtype, 200)
    same(run(xjax.grad(lambda x: jnp.sum(lax.linalg.cholesky(x))), [a @ a.T + 4 * np.eye(4, dtype=dtype)], gpu, jit),
         cpu(xjax.grad(lambda x: jnp.sum(lax.linalg.cholesky(x))), [a @ a.T + 4 * np.eye(4, dtype=dtype)]), dtype, 50)


# ---- complex matrices: refused clearly (the routes are written for real ones) ---------------------------

@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("name", ["cholesky", "lu", "qr", "eigh", "svd", "triangular_solve"])
def test_complex_matrices_are_refused(gpu, name, jit):
    fun = {"cholesky": lambda a: linalg.cholesky(a, symmetrize_input=False), "lu": linalg.lu, "qr": linalg.qr,
           "eigh": lambda a: linalg.eigh(a, symmetrize_input=False), "svd": linalg.svd,
           "triangular_solve": lambda a: linalg.triangular_solve(a, a, left_side=True, lower=True)}[name]
    a = (4 * np.eye(3) + 1j * np.tril(np.ones((3, 3)))).astype(np.complex64)
    with pytest.raises(NotImplementedError, match=rf"\[{name}\] complex matrices are not supported on the CUDA"):
        run(fun, [a], gpu, jit)


# ---- CuPy 13: qr and solve_triangular one matrix at a time -----------------------------------------

def test_before_cupy_14_batches_go_one_matrix_at_a_time(gpu, monkeypatch):
    import emulated_cupy

    from xjax._src.gpu import gpu_devices

    if gpu_devices.cupy() is not emulated_cupy:
        pytest.skip("the emulated runtime stands in for CuPy 13")
    monkeypatch.setattr(emulated_cupy, "__version__", "13.3.0")
    with pytest.raises(np.linalg.LinAlgError):
        emulated_cupy.linalg.qr(emulated_cupy.zeros((2, 3, 3)))  # (as CuPy 13 refuses them)
    a = rand((3, 4, 4), np.float64) + 4 * np.eye(4)
    b = rand((3, 4, 2), np.float64)
    q, r = run(linalg.qr, [a], gpu, True)
    check_qr(q, r, a, np.float64)
    fun = lambda x, y: linalg.triangular_solve(x, y, left_side=True, lower=True)  # noqa: E731
    same(run(fun, [a, b], gpu, True), cpu(fun, [a, b]), np.float64)


@pytest.mark.parametrize("jit", [False, True])
def test_matrix_forms_have_no_gpu_route_yet(gpu, jit):
    a = rand((3, 3), np.float64)
    with pytest.raises(NotImplementedError, match=r"\[schur\] has no GPU implementation yet"):
        run(lambda x: linalg.schur(x)[0], [a], gpu, jit)
