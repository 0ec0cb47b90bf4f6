"""Linear-algebra calls whose results tests/test_linalg_jax_values.py compares with JAX's: singular and
non-finite matrices, integer inputs, empty matrices, options whose conventions NumPy does not share.

CASES: (label, expression, how). The expression runs unchanged with `jnp`, `sl` (scipy.linalg) and
`jax` bound to either library, on the NumPy inputs below. `how`: an rtol (atol the same), or
("abs", rtol) where results hold eigen/singular vectors or QR factors: their signs are a convention,
so magnitudes are compared. The recorded values are in jax_linalg_values.py (tools/record_linalg_values.py).
"""
import numpy as np

SING = np.array([[1., 2., 3.], [2., 4., 6.], [1., 0., 1.]], np.float32)  # rank 2
SING4 = np.array([[1., 2., 3., 4.], [2., 4., 6., 8.], [1., 0., 1., 0.], [0., 1., 1., 2.]], np.float32)  # rank 3
RANK2_4 = np.array([[1., 2., 3., 4.], [2., 4., 6., 8.], [3., 6., 9., 12.], [0., 1., 1., 2.]], np.float32)
INT3 = np.array([[2, 1, 0], [1, 3, 1], [0, 1, 4]], np.int32)
VEC3 = np.array([1, 2, 3], np.int32)
ONES3 = np.ones(3, np.float32)
GRADED = np.diag(np.array([1., 1e-3, 1e-6], np.float32))
SYM2 = np.array([[1., 2.], [2., -3.]], np.float32)
ASYM2 = np.array([[1., 9.], [2., -3.]], np.float32)
NAN2 = np.array([[np.nan, 1.], [1., 1.]], np.float32)
INF4 = np.array([[np.inf, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], np.float32)
TALL = np.arange(6., dtype=np.float32).reshape(3, 2)
WIDE = np.array([[1., 2., 3., 4.], [0., 1., 5., 2.], [3., 1., 0., 1.]], np.float32)
EMPTY = np.zeros((0, 0), np.float32)

CASES = [
    # singular: infs and NaNs as JAX gives them, never an exception
    ("solve_singular", "jnp.linalg.solve(SING, ONES3)", 1e-5),
    ("inv_singular", "jnp.linalg.inv(SING)", 1e-5),
    ("det_singular", "jnp.linalg.det(SING)", 1e-5),
    ("det_singular4", "jnp.linalg.det(SING4)", 1e-5),
    ("slogdet_singular4", "jnp.linalg.slogdet(SING4)", 1e-5),
    ("slogdet_singular", "jnp.linalg.slogdet(SING)", 1e-5),
    ("grad_det_singular4", "jax.grad(jnp.linalg.det)(SING4)", 1e-4),
    ("grad_det_rank2", "jax.grad(jnp.linalg.det)(RANK2_4)", 1e-4),
    ("grad_slogdet_singular4", "jax.grad(lambda x: jnp.linalg.slogdet(x)[1])(SING4)", 1e-5),
    ("cholesky_not_pd", "jnp.linalg.cholesky(SING)", 1e-5),
    ("pinv_singular", "jnp.linalg.pinv(SING)", 1e-4),
    ("lstsq_singular", "jnp.linalg.lstsq(SING, ONES3)", 1e-4),
    ("lstsq_singular_numpy_resid", "jnp.linalg.lstsq(SING, ONES3, numpy_resid=True)", 1e-4),
    ("matrix_rank_singular", "jnp.linalg.matrix_rank(SING)", 0),
    # The smallest singular value of a singular matrix is rounding noise, which differs with the CPU's
    # BLAS kernels, JAX's too (3.56e7 recorded on one machine, 5.03e7 on another): the order of magnitude.
    ("cond_singular", "jnp.linalg.cond(SING)", 1.0),
    ("cond_singular_1", "jnp.linalg.cond(SING, 1)", 1e-3),
    ("cond_singular_inf", "jnp.linalg.cond(SING4, np.inf)", 1e-3),
    ("lu_factor_singular", "sl.lu_factor(SING)", 1e-6),
    # non-finite input
    ("solve_nan", "jnp.linalg.solve(NAN2, np.ones(2, np.float32))", 0),
    ("det_inf", "jnp.linalg.det(INF4)", 0),
    ("expm_nan", "sl.expm(np.array([[np.nan, 0], [0, 1.]], np.float32))", 0),
    ("expm_huge", "sl.expm(np.array([[1e6, 0], [0, 1.]], np.float32))", 0),
    # integer input: promoted to the default float type
    ("cholesky_int", "jnp.linalg.cholesky(INT3)", 1e-6),
    ("solve_int", "jnp.linalg.solve(INT3, VEC3)", 1e-6),
    ("inv_int", "jnp.linalg.inv(INT3)", 1e-6),
    ("det_int", "jnp.linalg.det(INT3)", 1e-6),
    ("det_int4", "jnp.linalg.det(np.eye(4, dtype=np.int32) * 2)", 1e-6),
    ("slogdet_int", "jnp.linalg.slogdet(INT3)", 1e-6),
    ("eigvalsh_int", "jnp.linalg.eigvalsh(INT3)", 1e-5),
    ("svdvals_int", "jnp.linalg.svdvals(INT3)", 1e-5),
    ("qr_r_int", "jnp.linalg.qr(INT3, mode='r')", 1e-5),
    ("pinv_int", "jnp.linalg.pinv(INT3)", 1e-5),
    ("lstsq_int", "jnp.linalg.lstsq(INT3, VEC3)", 1e-5),
    ("matrix_rank_int", "jnp.linalg.matrix_rank(INT3)", 0),
    ("cond_fro_int", "jnp.linalg.cond(INT3, 'fro')", 1e-5),
    ("norm_2_int", "jnp.linalg.norm(INT3, 2)", 1e-6),
    ("matrix_power_int", "jnp.linalg.matrix_power(INT3, 3)", 0),
    ("matrix_power_int_neg", "jnp.linalg.matrix_power(INT3, -2)", 1e-5),
    ("matrix_power_0", "jnp.linalg.matrix_power(INT3, 0)", 0),
    ("expm_int", "sl.expm(INT3)", 1e-5),
    ("scipy_solve_pos_int", "sl.solve(INT3, VEC3, assume_a='pos')", 1e-6),
    ("scipy_cholesky_int", "sl.cholesky(INT3)", 1e-6),
    ("scipy_lu_int", "sl.lu(INT3)", 1e-6),
    ("scipy_solve_triangular_int", "sl.solve_triangular(INT3, VEC3)", 1e-6),
    ("scipy_lu_solve_int", "sl.lu_solve(sl.lu_factor(INT3), VEC3)", 1e-6),
    ("block_diag_int", "sl.block_diag(np.array([[1, 2]], np.int32), np.float32(3))", 0),
    ("block_diag_weak", "sl.block_diag(np.array([[1, 2]], np.int32), 3.5)", 0),
    ("block_diag_none", "sl.block_diag()", 0),
    # empty matrices
    ("det_empty", "jnp.linalg.det(EMPTY)", 0),
    ("slogdet_empty", "jnp.linalg.slogdet(EMPTY)", 0),
    ("inv_empty", "jnp.linalg.inv(np.zeros((2, 0, 0), np.float32))", 0),
    ("solve_empty", "jnp.linalg.solve(EMPTY, np.zeros((0,), np.float32))", 0),
    ("pinv_empty", "jnp.linalg.pinv(np.zeros((0, 3), np.float32))", 0),
    ("svd_empty", "jnp.linalg.svd(np.zeros((0, 3), np.float32))", 0),
    ("cholesky_empty", "jnp.linalg.cholesky(EMPTY)", 0),
    ("eigh_empty", "jnp.linalg.eigh(EMPTY)", 0),
    # options
    ("solve_broadcast",
     "jnp.linalg.solve(np.stack([INT3, 2 * INT3]).astype(np.float32), np.ones((1, 3, 2), np.float32))", 1e-6),
    ("svd_hermitian", "jnp.linalg.svd(SYM2, hermitian=True)", ("abs", 1e-5)),
    ("eigh_upper_unsymmetrized", "jnp.linalg.eigh(ASYM2, UPLO='U', symmetrize_input=False)", ("abs", 1e-5)),
    ("eigh_lower_unsymmetrized", "jnp.linalg.eigh(ASYM2, UPLO='L', symmetrize_input=False)", ("abs", 1e-5)),
    ("scipy_eigh_upper", "sl.eigh(ASYM2, lower=False)", ("abs", 1e-5)),
    ("qr_complete", "jnp.linalg.qr(TALL, mode='complete')", ("abs", 1e-5)),
    ("matrix_rank_rtol", "jnp.linalg.matrix_rank(GRADED, rtol=1e-4)", 0),
    ("matrix_rank_default", "jnp.linalg.matrix_rank(GRADED)", 0),
    ("pinv_rtol", "jnp.linalg.pinv(GRADED, rtol=1e-4)", 1e-6),
    ("pinv_hermitian", "jnp.linalg.pinv(SYM2, hermitian=True)", 1e-6),
    ("lstsq_rcond", "jnp.linalg.lstsq(GRADED, ONES3, rcond=1e-4)", 1e-6),
    ("lstsq_rcond_negative", "jnp.linalg.lstsq(np.diag(np.array([1., 1e-3, 1e-9], np.float32)), ONES3, rcond=-1)",
     1e-6),
    ("norm_nuc_keepdims", "jnp.linalg.norm(np.ones((2, 3, 4), np.float32), 'nuc', axis=(0, 2), keepdims=True)", 1e-5),
    ("norm_minus2_axes", "jnp.linalg.norm(np.arange(24, dtype=np.float32).reshape(2, 3, 4), -2, axis=(2, 0))", 1e-4),
    ("tensorinv", "jnp.linalg.tensorinv(np.arange(16.).reshape(4, 2, 2).astype(np.float32) "
     "+ np.eye(4).reshape(4, 2, 2), 1)", 1e-5),
    ("tensorsolve", "jnp.linalg.tensorsolve(np.eye(6).reshape(2, 3, 6).astype(np.float32) * 2, "
     "np.ones((2, 3), np.float32))", 1e-6),
    ("expm_frechet", "sl.expm_frechet(SYM2, ASYM2)", 1e-5),
    ("scipy_lu_permute_l_wide", "sl.lu(WIDE, permute_l=True)", 1e-6),
    ("scipy_qr_pivoting_r", "sl.qr(WIDE, mode='r', pivoting=True)", ("abs", 1e-5)),
]
