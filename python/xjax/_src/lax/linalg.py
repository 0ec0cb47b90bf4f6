"""Linear-algebra primitives (jax.lax.linalg): cholesky, lu, qr, eigh, svd, triangular_solve and
lu_pivots_to_permutation, with JAX's signatures and params. Each lowers to one C++ core op that
runs LAPACK over the batch of matrices in the leading dims; batching moves the mapped axis there."""
import enum

import numpy as np

from xjax._src import core, dtypes
from xjax._src.lax.base import asarray, define_core_primitive
from xjax._src.lax.contraction import dot_general
from xjax._src.lax.elementwise import add, broadcasted_iota, convert_element_type, div, ge, select
from xjax._src.lax.layout import broadcast_in_dim, expand_dims, transpose

__all__ = ["EighImplementation", "SvdAlgorithm", "cholesky", "cholesky_p", "eigh", "eigh_p", "lu", "lu_p",
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
    return dict(full_matrices=full_matrices)


def _eigh_attrs(lower, sort_eigenvalues, subset_by_index, algorithm):
    return dict(lower=lower)  # LAPACK always sorts the eigenvalues (ascending)


def _svd_attrs(full_matrices, compute_uv, subset_by_index, algorithm):
    return dict(full_matrices=full_matrices, compute_uv=compute_uv)


cholesky_p = _primitive("cholesky", multiple_results=False)
lu_p = _primitive("lu")
qr_p = _primitive("qr", attrs=_qr_attrs)
eigh_p = _primitive("eigh", attrs=_eigh_attrs)
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


def _qr_check(aval, *, pivoting, full_matrices, use_magma=None):
    if pivoting:
        raise NotImplementedError("qr with pivoting=True is not implemented in xjax yet")


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


_check_params(qr_p, _qr_check)
_check_params(eigh_p, _eigh_check)
_check_params(svd_p, _svd_check)


# ---- matrix helpers (last two dims), in lax primitives --------------------------------------

def _ndim(x):
    return core.get_aval(x).ndim


def _T(x):
    """The transpose of each matrix."""
    nd = _ndim(x)
    return transpose(x, (*range(nd - 2), nd - 1, nd - 2))


def _full(shape, value, dtype):
    return broadcast_in_dim(asarray(value, dtype), tuple(shape), ())


def _tri_mask(shape, k):
    """True where column - row <= k, over the last two dims of `shape` (broadcast over the rest)."""
    m, n = shape[-2:]
    rows = broadcasted_iota(np.int32, (m, n), 0)
    cols = broadcasted_iota(np.int32, (m, n), 1)
    mask = ge(add(rows, asarray(k, np.int32)), cols)
    return broadcast_in_dim(mask, tuple(shape), (len(shape) - 2, len(shape) - 1))


def _tril(x, k=0):
    aval = core.get_aval(x)
    return select(_tri_mask(aval.shape, k), x, _full(aval.shape, 0, aval.dtype))


def _triu(x, k=0):
    aval = core.get_aval(x)
    return select(_tri_mask(aval.shape, k - 1), _full(aval.shape, 0, aval.dtype), x)


def _eye(dtype, shape):
    """Identity matrices of `shape` (..., m, n)."""
    aval_mask = _tri_mask(shape, 0)
    upper = _tri_mask(shape, -1)
    one, zero = _full(shape, 1, dtype), _full(shape, 0, dtype)
    return select(aval_mask, select(upper, zero, one), zero)


def _matmul(a, b):
    """Batched matrix product over the last two dims (same batch dims)."""
    nb = _ndim(a) - 2
    batch = tuple(range(nb))
    return dot_general(a, b, (((nb + 1,), (nb,)), (batch, batch)))


def _to_inexact(x):
    """Integer input promoted to the default float type (JAX's symmetrize divides by two)."""
    dt = core.get_aval(x).dtype
    return x if dtypes.is_float(dt) else convert_element_type(x, dtypes.default_float_dtype())


def symmetrize(x):
    """(x + x^T) / 2."""
    x = _to_inexact(asarray(x))
    return div(add(x, _T(x)), asarray(2, core.get_aval(x).dtype))


# ---- the public functions (jax.lax.linalg's) ------------------------------------------------

def cholesky(x, *, symmetrize_input=True):
    """The lower Cholesky factor L of each symmetric positive-definite matrix (A = L L^T); a
    matrix that is not positive definite gives NaNs. Without symmetrize_input only the lower
    triangle of x is read."""
    x = asarray(x)
    if symmetrize_input:
        x = symmetrize(x)
    return _tril(cholesky_p.bind(x))


def lu(x):
    """LU decomposition with partial pivoting, P A = L U: (lu, pivots, permutation), L (unit
    diagonal, not stored) below U in lu, pivots the row swaps and permutation their product."""
    return tuple(lu_p.bind(asarray(x)))


def lu_pivots_to_permutation(pivots, permutation_size):
    """The permutation (int32[..., permutation_size]) that the row swaps `pivots` make."""
    return lu_pivots_to_permutation_p.bind(asarray(pivots), permutation_size=int(permutation_size))


def qr(x, *, pivoting=False, full_matrices=True, use_magma=None):
    """QR decomposition A = Q R: q [..., m, m] and r [..., m, n] (full_matrices), or q [..., m, k]
    and r [..., k, n] with k = min(m, n)."""
    q, r = qr_p.bind(asarray(x), pivoting=bool(pivoting), full_matrices=bool(full_matrices), use_magma=use_magma)
    return q, r


def eigh(x, *, lower=True, symmetrize_input=True, sort_eigenvalues=True, subset_by_index=None,
         implementation=None):
    """Eigenvectors v (in columns) and eigenvalues w (ascending) of symmetric matrices. Without
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
    """Solves op(A) X = B (left_side) or X op(A) = B for X, op(A) = A or A^T, reading only the
    lower or upper triangle of A; b of rank one less than a is a single vector."""
    a, b = asarray(a), asarray(b)
    singleton = _ndim(b) == _ndim(a) - 1
    if singleton:
        b = expand_dims(b, (_ndim(b) if left_side else _ndim(b) - 1,))
    out = triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower),
                                  transpose_a=bool(transpose_a), conjugate_a=False,
                                  unit_diagonal=bool(unit_diagonal))
    if singleton:
        from xjax._src.lax.layout import squeeze
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


for _p in (cholesky_p, lu_p, qr_p, eigh_p, svd_p, lu_pivots_to_permutation_p):
    _front_batch(_p)


def _triangular_solve_batch(axis, vals, dims, **params):
    (a, b), (da, db) = vals, dims
    if da is batching.not_mapped:
        # One A for every example: the examples become more right-hand sides of one solve.
        nd = _ndim(b)
        from xjax._src.lax.layout import reshape
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
