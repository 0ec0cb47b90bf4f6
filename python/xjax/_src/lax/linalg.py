"""Linear-algebra primitives (jax.lax.linalg): cholesky, lu, qr, eigh, svd, triangular_solve and
lu_pivots_to_permutation, with JAX's signatures and params. Each lowers to one C++ core op that
runs LAPACK over the batch of matrices in the leading dims; batching moves the mapped axis there."""
import enum

import numpy as np

from xjax._src import core, dtypes
from xjax._src.lax.base import asarray, define_core_primitive
from xjax._src.lax.complex_parts import conj, real as _real_part
from xjax._src.lax.contraction import dot_general
from xjax._src.lax.elementwise import add, broadcasted_iota, convert_element_type, div, ge, select
from xjax._src.lax.layout import broadcast_in_dim, expand_dims, reshape, squeeze, transpose
from xjax._src.lax.reduction import reduce_sum
from xjax._src.lax.sharding_rules_batched import BATCH_RANKS, batched, triangular_solve_rule
from xjax._src.lax.sorting import _take_along, sort

__all__ = ["EighImplementation", "SvdAlgorithm", "cholesky", "cholesky_p", "eig", "eig_p", "eigh", "eigh_p", "lu", "lu_p",
           "lu_pivots_to_permutation", "lu_pivots_to_permutation_p", "qr", "qr_p", "svd", "svd_p",
           "triangular_solve", "triangular_solve_p"]


class EighImplementation(enum.Enum):
    """Implementation for symmetric/Hermitian eigendecomposition (CPU: QR, i.e. LAPACK's syevd)."""
    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


class SvdAlgorithm(enum.Enum):
    """Enum for SVD algorithm (CPU: LAPACK's divide and conquer, gesdd)."""
    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


def _primitive(name, attrs=None, multiple_results=True):
    """A primitive whose shape rule and lowering are the C++ op's; the core's list of results is
    returned as a list (or the one result) as bind expects."""
    prim = define_core_primitive(name, attrs=attrs, multiple_results=multiple_results)
    inner = prim.abstract_eval

    def abstract_eval(*avals, **params):
        out = inner(*avals, **params)
        if not multiple_results:
            return out
        return out if isinstance(out, list) else [out]

    prim.abstract_eval = abstract_eval
    return prim


def _qr_attrs(pivoting, full_matrices, use_magma=None):
    return dict(full_matrices=full_matrices, pivoting=pivoting)


def _eigh_attrs(lower, sort_eigenvalues, subset_by_index, algorithm):
    return dict(lower=lower)  # LAPACK always sorts the eigenvalues (ascending)


def _eig_attrs(compute_left_eigenvectors, compute_right_eigenvectors, use_magma=None):
    return dict(compute_left_eigenvectors=compute_left_eigenvectors,
                compute_right_eigenvectors=compute_right_eigenvectors)


def _svd_attrs(full_matrices, compute_uv, subset_by_index, algorithm):
    return dict(full_matrices=full_matrices, compute_uv=compute_uv)


cholesky_p = _primitive("cholesky", multiple_results=False)
lu_p = _primitive("lu")
qr_p = _primitive("qr", attrs=_qr_attrs)
eigh_p = _primitive("eigh", attrs=_eigh_attrs)
eig_p = _primitive("eig", attrs=_eig_attrs)
svd_p = _primitive("svd", attrs=_svd_attrs)
triangular_solve_p = _primitive("triangular_solve", multiple_results=False)
lu_pivots_to_permutation_p = _primitive("lu_pivots_to_permutation", multiple_results=False)


# ---- params the core does not take: checked before the core's shape rule --------------------

def _check_params(prim, checker):
    inner = prim.abstract_eval

    def abstract_eval(*avals, **params):
        checker(*avals, **params)
        return inner(*avals, **params)

    prim.abstract_eval = abstract_eval


def _eigh_check(aval, *, lower, sort_eigenvalues, subset_by_index, algorithm):
    n = aval.shape[-1] if aval.ndim else 0
    if not (subset_by_index is None or tuple(subset_by_index) == (0, n)):
        raise NotImplementedError("subset_by_index not supported on CPU and GPU")
    if algorithm == EighImplementation.QDWH:
        raise NotImplementedError("QDWH implementation is only supported on TPU")
    if algorithm == EighImplementation.JACOBI:
        raise NotImplementedError("Jacobi implementation is not supported on CPU")


def _svd_check(aval, *, full_matrices, compute_uv, subset_by_index, algorithm):
    if subset_by_index is not None and aval.ndim >= 2:
        rank = min(aval.shape[-2:])
        if tuple(subset_by_index) != (0, rank):
            if full_matrices:
                raise ValueError("full_matrices and subset_by_index cannot both be set")
            raise NotImplementedError("subset_by_index not implemented for CPU and GPU")
    if algorithm in (SvdAlgorithm.JACOBI, SvdAlgorithm.POLAR):
        raise NotImplementedError("The SVD Jacobi and Polar algorithms are not implemented on CPU.")


_check_params(eigh_p, _eigh_check)
_check_params(svd_p, _svd_check)


# ---- matrix helpers (last two dims), in lax primitives --------------------------------------

def _ndim(x):
    return core.get_aval(x).ndim


def _T(x):
    """The transpose of each matrix."""
    nd = _ndim(x)
    return transpose(x, (*range(nd - 2), nd - 1, nd - 2))


def _is_complex(x):
    return dtypes.is_complex(core.get_aval(x).dtype)


def _H(x):
    """The conjugate transpose of each matrix (the transpose of a real one)."""
    xt = _T(x)
    return conj(xt) if _is_complex(xt) else xt


def _full(shape, value, dtype):
    return broadcast_in_dim(asarray(value, dtype), tuple(shape), ())


def tri_mask(shape, k):
    """True where column - row <= k, over the last two dims of `shape` (broadcast over the rest): the
    triangles of tril, triu and tri (jnp's too)."""
    m, n = shape[-2:]
    rows = broadcasted_iota(np.int32, (m, n), 0)
    cols = broadcasted_iota(np.int32, (m, n), 1)
    mask = ge(add(rows, asarray(k, np.int32)) if k else rows, cols)
    return broadcast_in_dim(mask, tuple(shape), (len(shape) - 2, len(shape) - 1))


def _tril(x, k=0):
    aval = core.get_aval(x)
    return select(tri_mask(aval.shape, k), x, _full(aval.shape, 0, aval.dtype))


def _triu(x, k=0):
    aval = core.get_aval(x)
    return select(tri_mask(aval.shape, k - 1), _full(aval.shape, 0, aval.dtype), x)


def _eye(dtype, shape):
    """Identity matrices of `shape` (..., m, n)."""
    on_or_below, below = tri_mask(shape, 0), tri_mask(shape, -1)
    one, zero = _full(shape, 1, dtype), _full(shape, 0, dtype)
    return select(on_or_below, select(below, zero, one), zero)


def _matmul(a, b):
    """Batched matrix product over the last two dims (same batch dims)."""
    nb = _ndim(a) - 2
    batch = tuple(range(nb))
    return dot_general(a, b, (((nb + 1,), (nb,)), (batch, batch)))


def _to_inexact(x):
    """Integer input promoted to the default float type (JAX's symmetrize divides by two)."""
    dt = core.get_aval(x).dtype
    return x if dtypes.is_float(dt) or dtypes.is_complex(dt) else convert_element_type(x, dtypes.default_float_dtype())


def symmetrize(x):
    """(x + x^H) / 2 (the conjugate transpose for complex matrices)."""
    x = _to_inexact(asarray(x))
    return div(add(x, _H(x)), asarray(2, core.get_aval(x).dtype))


# ---- the public functions (jax.lax.linalg's) ------------------------------------------------

def cholesky(x, *, symmetrize_input=True):
    """The lower Cholesky factor L of each Hermitian positive-definite matrix (A = L L^H); a
    matrix that is not positive definite gives NaNs. Without symmetrize_input only the lower
    triangle of x is read."""
    x = asarray(x)
    if symmetrize_input:
        x = symmetrize(x)
    return cholesky_p.bind(x)  # zero above the diagonal already, NaN below where it fails (JAX's tril'd result)


def lu(x):
    """LU decomposition with partial pivoting, P A = L U: (lu, pivots, permutation), L (unit
    diagonal, not stored) below U in lu, pivots the row swaps and permutation their product."""
    return tuple(lu_p.bind(asarray(x)))


def lu_pivots_to_permutation(pivots, permutation_size):
    """The permutation (int32[..., permutation_size]) that the row swaps `pivots` make."""
    return lu_pivots_to_permutation_p.bind(asarray(pivots), permutation_size=int(permutation_size))


def qr(x, *, pivoting=False, full_matrices=True, use_magma=None):
    """QR decomposition A = Q R: q [..., m, m] and r [..., m, n] (full_matrices), or q [..., m, k]
    and r [..., k, n] with k = min(m, n). With pivoting, also p (int32 [..., n]) such that
    A[..., :, p] = Q R with R's diagonal non-increasing in magnitude (LAPACK's geqp3)."""
    return tuple(qr_p.bind(asarray(x), pivoting=bool(pivoting), full_matrices=bool(full_matrices),
                           use_magma=use_magma))


def eig(x, *, compute_left_eigenvectors=True, compute_right_eigenvectors=True, use_magma=None):
    """Eigenvalues of general matrices (complex), then the left and the right eigenvectors (in
    columns, unit norm, largest component real: LAPACK's geev) where asked for."""
    return eig_p.bind(asarray(x), compute_left_eigenvectors=bool(compute_left_eigenvectors),
                      compute_right_eigenvectors=bool(compute_right_eigenvectors), use_magma=use_magma)


def eigh(x, *, lower=True, symmetrize_input=True, sort_eigenvalues=True, subset_by_index=None,
         implementation=None):
    """Eigenvectors v (in columns) and eigenvalues w (ascending, real) of Hermitian matrices. Without
    symmetrize_input only the triangle chosen by `lower` is read."""
    x = asarray(x)
    if symmetrize_input:
        x = symmetrize(x)
    v, w = eigh_p.bind(x, lower=bool(lower), sort_eigenvalues=bool(sort_eigenvalues),
                       subset_by_index=None if subset_by_index is None else tuple(subset_by_index),
                       algorithm=implementation)
    return v, w


def svd(x, *, full_matrices=True, compute_uv=True, subset_by_index=None, algorithm=None):
    """Singular value decomposition: (u, s, vh) with s descending, or s alone."""
    result = svd_p.bind(asarray(x), full_matrices=bool(full_matrices), compute_uv=bool(compute_uv),
                        subset_by_index=None if subset_by_index is None else tuple(subset_by_index),
                        algorithm=algorithm)
    if compute_uv:
        s, u, vt = result
        return u, s, vt
    return result[0]


def triangular_solve(a, b, *, left_side=False, lower=False, transpose_a=False, conjugate_a=False,
                     unit_diagonal=False):
    """Solves op(A) X = B (left_side) or X op(A) = B for X, op(A) = A, A^T, conj(A) or A^H
    (transpose_a, conjugate_a), reading only the lower or upper triangle of A; b of rank one less
    than a is a single vector."""
    a, b = asarray(a), asarray(b)
    singleton = _ndim(b) == _ndim(a) - 1
    if singleton:
        b = expand_dims(b, (_ndim(b) if left_side else _ndim(b) - 1,))
    out = triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower),
                                  transpose_a=bool(transpose_a), conjugate_a=bool(conjugate_a) and _is_complex(a),
                                  unit_diagonal=bool(unit_diagonal))
    if singleton:
        out = squeeze(out, (_ndim(out) - 1 if left_side else _ndim(out) - 2,))
    return out


# ---- batching (vmap) ----------------------------------------------------------------------------
# The ops batch over leading dims: the mapped axis moves to the front, every result is mapped there.
from xjax._src.interpreters import batching  # noqa: E402


def _front_batch(prim):
    def rule(axis, vals, dims, **params):
        (x,), (d,) = vals, dims
        out = prim.bind(batching.moveaxis(x, d, 0), **params)
        return out, ([0] * len(out) if prim.multiple_results else 0)

    prim.def_rules(batch=rule)


for _p in (cholesky_p, lu_p, qr_p, eig_p, eigh_p, svd_p, lu_pivots_to_permutation_p):
    _front_batch(_p)


def _triangular_solve_batch(axis, vals, dims, **params):
    (a, b), (da, db) = vals, dims
    if da is batching.not_mapped:
        # One A for every example: the examples become more right-hand sides of one solve.
        nd = _ndim(b)
        if params["left_side"]:  # columns of B
            bm = batching.moveaxis(b, db, nd - 1)
            shape = core.get_aval(bm).shape
            out = triangular_solve_p.bind(a, reshape(bm, shape[:-2] + (shape[-2] * shape[-1],)), **params)
            return reshape(out, shape), nd - 1
        bm = batching.moveaxis(b, db, nd - 2)  # rows of B
        shape = core.get_aval(bm).shape
        out = triangular_solve_p.bind(a, reshape(bm, shape[:-3] + (shape[-3] * shape[-2], shape[-1])), **params)
        return reshape(out, shape), nd - 2
    a = batching.bdim_at_front(a, da, axis.size)
    b = batching.bdim_at_front(b, db, axis.size)
    return triangular_solve_p.bind(a, b, **params), 0


triangular_solve_p.def_rules(batch=_triangular_solve_batch)


# ---- differentiation rules (JAX's) ----------------------------------------------------------------
from xjax._src.interpreters import ad  # noqa: E402
from xjax._src.lax.elementwise import eq, integer_pow, mul, neg, sub  # noqa: E402
from xjax._src.lax.layout import concatenate, pad, slice as _slice  # noqa: E402


def _shape(x):
    return core.get_aval(x).shape


def _real(x):
    """The real part of a complex x; x itself when real."""
    return _real_part(x) if _is_complex(x) else x


def _dtype(x):
    return core.get_aval(x).dtype


def _sub(x, rows=None, cols=None):
    """x[..., r0:r1, c0:c1]."""
    shape = _shape(x)
    r0, r1 = rows or (0, shape[-2])
    c0, c1 = cols or (0, shape[-1])
    nb = len(shape) - 2
    return _slice(x, (0,) * nb + (r0, c0), shape[:-2] + (r1, c1))


def _scalar(x, v):
    return _full(_shape(x), v, _dtype(x))


def _as_rows(s, k):
    """s[..., None, :] broadcast to (..., k, n): every row is s."""
    shape = _shape(s)
    nb = len(shape) - 1
    return broadcast_in_dim(s, shape[:-1] + (k, shape[-1]), tuple(range(nb)) + (nb + 1,))


def _as_cols(s, k):
    """s[..., :, None] broadcast to (..., n, k): every column is s."""
    shape = _shape(s)
    nb = len(shape) - 1
    return broadcast_in_dim(s, shape[:-1] + (shape[-1], k), tuple(range(nb)) + (nb,))


def _eye_like(x, n=None):
    shape = _shape(x)
    n = shape[-1] if n is None else n
    return _eye(_dtype(x), shape[:-2] + (n, n))


def _diag(x):
    """The diagonal of each matrix (..., min(m, n)); read with a select, so off-diagonal infs stay out."""
    shape = _shape(x)
    k = min(shape[-2:])
    sq = _sub(x, (0, k), (0, k))
    return reduce_sum(select(_eye(np.bool_, _shape(sq)), sq, _scalar(sq, 0)), (len(shape) - 1,))


def _diag_matrix(s):
    n = _shape(s)[-1]
    rows = _as_rows(s, n)
    return select(_eye(np.bool_, _shape(rows)), rows, _scalar(rows, 0))


def _permute_rows(x, perm):
    """x[..., perm, :] (perm int32 [..., m] with x's batch dims): a gather that transposes to a scatter-add."""
    shape = _shape(x)
    nb = len(shape) - 2
    idx = broadcast_in_dim(perm, shape, tuple(range(nb + 1)))
    return _take_along(x, idx, nb)


def _permute_cols(x, perm):
    """x[..., :, perm] (perm int32 [..., n] with x's batch dims)."""
    return _T(_permute_rows(_T(x), perm))


def _inverse_permutation(perm):
    shape = _shape(perm)
    iota = broadcasted_iota(np.int32, shape, len(shape) - 1)
    return sort((perm, iota), dimension=len(shape) - 1, num_keys=1)[1]


def _cholesky_jvp(primals, tangents):
    (x,), (sigma_dot,) = primals, tangents
    L = cholesky_p.bind(x)  # already zero above the diagonal
    # Forward-mode rule from https://arxiv.org/pdf/1602.07527.pdf: L_dot = L phi(L^-1 sigma_dot L^-H),
    # phi taking the lower triangle with its diagonal halved.
    tmp = triangular_solve(L, sigma_dot, left_side=False, transpose_a=True, conjugate_a=True, lower=True)
    inner = triangular_solve(L, tmp, left_side=True, transpose_a=False, lower=True)
    phi = div(_tril(inner), add(_scalar(inner, 1), _eye_like(inner)))
    return L, _matmul(L, phi)


cholesky_p.def_rules(jvp=_cholesky_jvp)


def _triangular_solve_jvp_a(g_a, ans, a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    m, n = _shape(b)[-2:]
    k = 1 if unit_diagonal else 0
    g_a = _tril(g_a, -k) if lower else _triu(g_a, k)
    g_a = neg(g_a)
    g_a = _T(g_a) if transpose_a else g_a
    g_a = conj(g_a) if conjugate_a else g_a

    def a_inverse(rhs):
        return triangular_solve(a, rhs, left_side=left_side, lower=lower, transpose_a=transpose_a,
                                conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)

    # A solve costs about a product: order the two as is cheaper.
    if left_side:
        return a_inverse(_matmul(g_a, ans)) if m > n else _matmul(a_inverse(g_a), ans)
    return a_inverse(_matmul(ans, g_a)) if m < n else _matmul(ans, a_inverse(g_a))


def _triangular_solve_transpose(ct, a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    # Linear in b only (as div in its numerator): the cotangent goes through the transposed solve
    # (transposed, not conjugated: JAX's linear transposition).
    assert not ad.is_undefined(a) and ad.is_undefined(b)
    if type(ct) is ad.Zero:
        return [None, None]
    ct_b = triangular_solve(a, ct, left_side=left_side, lower=lower, transpose_a=not transpose_a,
                            conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    return [None, ct_b]


ad.defjvp2(triangular_solve_p, _triangular_solve_jvp_a,
           lambda g_b, ans, a, b, **params: triangular_solve_p.bind(a, g_b, **params))
triangular_solve_p.def_rules(transpose=_triangular_solve_transpose)


def _lu_jvp(primals, tangents):
    # Differentiation of Matrix Functionals Using Triangular Factorization (De Hoog, Anderssen, Lukas):
    # L' = L tril(L^-1 A' U^-1, -1), U' = triu(L^-1 A' U^-1) U (A' with P's rows).
    (a,), (a_dot,) = primals, tangents
    lu_, pivots, permutation = lu_p.bind(a)
    shape = _shape(a)
    m, n = shape[-2:]
    k = min(m, n)
    nb = len(shape) - 2
    zero = asarray(0, _dtype(a))
    no_pad = ((0, 0, 0),) * nb
    l = pad(_tril(_sub(lu_, cols=(0, k)), -1), zero, no_pad + ((0, 0, 0), (0, m - k, 0)))
    l = add(l, _eye_like(l))
    u_eye = pad(_eye(_dtype(a), shape[:-2] + (n - k, n - k)), zero, no_pad + ((k, 0, 0), (k, 0, 0)))
    u = add(pad(_triu(_sub(lu_, rows=(0, k))), zero, no_pad + ((0, n - k, 0), (0, 0, 0))), u_eye)
    la = triangular_solve(l, _permute_rows(a_dot, permutation), left_side=True, lower=True, unit_diagonal=True)
    lau = triangular_solve(u, la, left_side=False, lower=False)
    lu_dot = add(_matmul(l, _tril(lau, -1)), _matmul(_triu(lau), u))
    return [lu_, pivots, permutation], [lu_dot, None, None]


lu_p.def_rules(jvp=_lu_jvp)
lu_pivots_to_permutation_p.def_rules(jvp=lambda primals, tangents, **params: (
    lu_pivots_to_permutation_p.bind(*primals, **params), None))


def _lu_solve_adjoint(lu_, permutation, b):
    """X with A^H X = B, given P A = L U (lu_, permutation): A^H = U^H L^H P."""
    y = triangular_solve(lu_, b, left_side=True, lower=False, transpose_a=True, conjugate_a=True)
    z = triangular_solve(lu_, y, left_side=True, lower=True, transpose_a=True, conjugate_a=True, unit_diagonal=True)
    return _permute_rows(z, _inverse_permutation(permutation))


def _thin_qr_jvp(q, r, dx):
    """JVP of the QR decomposition of [..., m, n] matrices with m >= n (j-towns.github.io/papers/qr-derivative.pdf)."""
    dx_rinv = triangular_solve(r, dx)  # right side: dx R^-1
    qt_dx_rinv = _matmul(_H(q), dx_rinv)
    lower = _tril(qt_dx_rinv, -1)
    do = sub(lower, _H(lower))  # skew-Hermitian
    if _is_complex(do):  # and the imaginary part of the diagonal, which R's real diagonal leaves to Q
        imag_part = sub(qt_dx_rinv, convert_element_type(_real(qt_dx_rinv), _dtype(do)))
        do = add(do, select(_eye(np.bool_, _shape(do)), imag_part, _scalar(do, 0)))
    dq = add(_matmul(q, sub(do, qt_dx_rinv)), dx_rinv)
    dr = _matmul(sub(qt_dx_rinv, do), r)
    return dq, dr


def _qr_jvp(primals, tangents, *, pivoting, full_matrices, use_magma=None):
    (x,), (dx,) = primals, tangents
    outs = qr_p.bind(x, pivoting=pivoting, full_matrices=full_matrices, use_magma=use_magma)
    dq, dr = _qr_tangents(x, dx, *outs, full_matrices=full_matrices)
    return outs, [dq, dr] + [None] * (len(outs) - 2)


def _qr_tangents(x, dx, q, r, p=None, *, full_matrices):
    """(dq, dr) of A = Q R, or of A[:, p] = Q R with pivoting (the permutation does not move)."""
    if p is not None:
        x, dx = _permute_cols(x, p), _permute_cols(dx, p)
    m, n = _shape(x)[-2:]
    if m < n:  # wide: X = [X1 X2] = Q [R1 R2]; (Q, R1) is the QR of the square X1, R2 = Q^T X2
        x2, dx1, dx2 = _sub(x, cols=(m, n)), _sub(dx, cols=(0, m)), _sub(dx, cols=(m, n))
        dq, dr1 = _thin_qr_jvp(q, _sub(r, cols=(0, m)), dx1)
        dr2 = add(_matmul(_H(dq), x2), _matmul(_H(q), dx2))
        return dq, concatenate((dr1, dr2), len(_shape(x)) - 1)
    q_mn = _sub(q, cols=(0, n)) if full_matrices else q
    r_nn = _sub(r, rows=(0, n)) if full_matrices else r
    dq_mn, dr_nn = _thin_qr_jvp(q_mn, r_nn, dx)
    if not full_matrices or m == n:
        return dq_mn, dr_nn
    # The complete Q of a tall matrix (https://arxiv.org/pdf/2409.13374, eqs. 32-33).
    q_nn, q_pn, q_mp = _sub(q_mn, rows=(0, n)), _sub(q_mn, rows=(n, m)), _sub(q, cols=(n, m))
    dq_nn, dq_pn = _sub(dq_mn, rows=(0, n)), _sub(dq_mn, rows=(n, m))
    lu_, _, perm = lu(sub(q_nn, _eye_like(q_nn)))
    z_pn_h = _lu_solve_adjoint(lu_, perm, _H(q_pn))  # (Q_nn - I)^H Z^H = Q_pn^H
    z_pn = _H(z_pn_h)
    dq_mp = sub(_matmul(dq_mn, z_pn_h),
                _matmul(add(q_mn, _matmul(q_mp, z_pn)), _H(sub(dq_pn, _matmul(z_pn, dq_nn)))))
    nd = len(_shape(x))
    zeros = _full(_shape(x)[:-2] + (m - n, n), 0, _dtype(x))
    return concatenate((dq_mn, dq_mp), nd - 1), concatenate((dr_nn, zeros), nd - 2)


qr_p.def_rules(jvp=_qr_jvp)


def _eigh_jvp(primals, tangents, *, lower, sort_eigenvalues, subset_by_index, algorithm):
    # Distinct eigenvalues (nondegenerate perturbation theory, see
    # https://people.maths.ox.ac.uk/gilesm/files/NA-08-01.pdf).
    (a,), (a_dot,) = primals, tangents
    n = _shape(a)[-1]
    if not (subset_by_index is None or tuple(subset_by_index) == (0, n)):
        raise NotImplementedError("Derivatives not defined for partial eigen decomposition.")
    v, w_real = eigh_p.bind(symmetrize(a), lower=lower, sort_eigenvalues=sort_eigenvalues,
                            subset_by_index=subset_by_index, algorithm=algorithm)
    w = convert_element_type(w_real, _dtype(v))  # real eigenvalues, in v's (complex) dtype
    eye_n = _eye_like(v)
    # 1 / (w_j - w_i) off the diagonal, 0 on it, without dividing by zero there.
    fmat = sub(integer_pow(add(eye_n, sub(_as_rows(w, n), _as_cols(w, n))), -1), eye_n)
    vh_adot_v = _matmul(_matmul(_H(v), a_dot), v)
    return [v, w_real], [_matmul(v, mul(fmat, vh_adot_v)), _real(_diag(vh_adot_v))]


eigh_p.def_rules(jvp=_eigh_jvp)


def _eig_jvp(primals, tangents, *, compute_left_eigenvectors, compute_right_eigenvectors, use_magma=None):
    # Eigenvalues only, as JAX: dw_i = (u_i^H dA v_i) / (u_i^H v_i) with u, v the left and right
    # eigenvectors (distinct eigenvalues).
    if compute_left_eigenvectors or compute_right_eigenvectors:
        raise NotImplementedError("The derivatives of eigenvectors are not implemented, only eigenvalues. See "
                                  "https://github.com/jax-ml/jax/issues/2748 for discussion.")
    (a,), (a_dot,) = primals, tangents
    w, vl, vr = eig_p.bind(a, compute_left_eigenvectors=True, compute_right_eigenvectors=True, use_magma=use_magma)
    ul = conj(vl)
    a_dot = convert_element_type(a_dot, _dtype(w))
    num = _diag(_matmul(_matmul(_T(ul), a_dot), vr))
    den = reduce_sum(mul(ul, vr), (len(_shape(vr)) - 2,))
    return [w], [div(num, den)]


eig_p.def_rules(jvp=_eig_jvp)


def _svd_jvp(primals, tangents, *, full_matrices, compute_uv, subset_by_index, algorithm=None):
    (a,), (da,) = primals, tangents
    m, n = _shape(a)[-2:]
    s, u, vt = svd_p.bind(a, full_matrices=False, compute_uv=True, subset_by_index=subset_by_index,
                          algorithm=algorithm)
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError("Singular value decomposition JVP not implemented for full matrices")
    ut, v = _H(u), _H(vt)
    k = _shape(s)[-1]
    ds_mat = _matmul(_matmul(ut, da), v)
    ds = _real(_diag(ds_mat))
    if not compute_uv:
        return [s], [ds]
    dt = _dtype(a)  # s and f are real; they enter the products in a's (complex) dtype
    s_row, s_col = _as_rows(s, k), _as_cols(s, k)  # s[..., None, :] and s[..., :, None]
    eye_k = _eye_like(s_row)
    s_diffs = mul(add(s_row, s_col), sub(s_row, s_col))
    f = convert_element_type(sub(div(_scalar(eye_k, 1), add(s_diffs, eye_k)), eye_k), dt)
    dss, sds = mul(convert_element_type(s_row, dt), ds_mat), mul(convert_element_type(s_col, dt), ds_mat)
    s_zeros = convert_element_type(eq(s, _scalar(s, 0)), _dtype(s))
    s_inv = convert_element_type(sub(div(_scalar(s, 1), add(s, s_zeros)), s_zeros), dt)
    du_dv_diag = mul(mul(_scalar(ds_mat, 0.5), sub(ds_mat, _H(ds_mat))), _diag_matrix(s_inv))
    du = _matmul(u, add(mul(f, add(dss, _H(dss))), du_dv_diag))
    dv = _matmul(v, mul(f, add(sds, _H(sds))))
    if m > n:
        dav = _matmul(da, v)
        du = add(du, div(sub(dav, _matmul(u, _matmul(ut, dav))), convert_element_type(_as_rows(s, m), dt)))
    if n > m:
        dahu = _matmul(_H(da), u)
        dv = add(dv, div(sub(dahu, _matmul(v, _matmul(vt, dahu))), convert_element_type(_as_rows(s, n), dt)))
    return [s, u, vt], [ds, du, _H(dv)]


svd_p.def_rules(jvp=_svd_jvp)


def _register_sharding_rules():
    for p in (cholesky_p, lu_p, qr_p, eigh_p, eig_p, svd_p):
        p.def_rules(sharding=batched(p, (2,)))
    lu_pivots_to_permutation_p.def_rules(sharding=batched(lu_pivots_to_permutation_p, (1,)))
    triangular_solve_p.def_rules(sharding=triangular_solve_rule)
    BATCH_RANKS[triangular_solve_p] = (2, 2)


_register_sharding_rules()
