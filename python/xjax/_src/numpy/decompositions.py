"""jnp.linalg's decompositions (cholesky, qr, eigh, eigvalsh, svd, svdvals) on lax.linalg, with JAX's
signatures, result tuples and promotion (integer input becomes the default float type).

Complex matrices go through LAPACK's c/z routines (eigh's eigenvalues and svd's singular values are
real). eig and eigvals: LAPACK's geev, complex results.
"""
from typing import NamedTuple

import numpy as np

from xjax._src import lax
from xjax._src.jit import jit
from xjax._src.lax import linalg as lax_linalg, linalg_forms
from xjax._src.numpy import manipulation, util
from xjax._src.numpy.take import take_along_axis


class EighResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class EigResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class QRResult(NamedTuple):
    Q: object  # noqa: N815 - JAX's field names
    R: object  # noqa: N815


class SlogdetResult(NamedTuple):
    sign: object
    logabsdet: object


class SVDResult(NamedTuple):
    U: object  # noqa: N815
    S: object  # noqa: N815
    Vh: object  # noqa: N815


def _matrix(name, a, square=False):
    """The operand as an inexact array of rank >= 2 (square in its last two axes if `square`)."""
    util.check_arraylike(f"jnp.linalg.{name}", a)
    a, = util.promote_dtypes_inexact(util.asarray(a))
    shape = a.aval.shape
    if len(shape) < 2:
        raise TypeError(f"Input 0 to {name} must have rank at least 2, but got shape={shape}")
    if square and shape[-1] != shape[-2]:
        raise ValueError(f"Argument to {name} must have shape [..., n, n], got {shape}.")
    return a


@jit(static_argnames=("upper", "symmetrize_input"))
def _cholesky(a, upper, symmetrize_input):
    factor = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
    return lax_linalg._H(factor) if upper else factor


def cholesky(a, *, upper=False, symmetrize_input=True):
    """The Cholesky factor L of a (a = L L^H), or its conjugate transpose U (a = U^H U) with
    upper=True; a matrix that is not positive definite gives NaNs."""
    return _cholesky(_matrix("cholesky", a, square=True), bool(upper), bool(symmetrize_input))


@jit(static_argnames=("full_matrices", "compute_uv", "subset_by_index"))
def _svd(a, full_matrices, compute_uv, subset_by_index):
    if compute_uv:
        return SVDResult(*lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=True,
                                         subset_by_index=subset_by_index))
    return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=False, subset_by_index=subset_by_index)


@jit(static_argnames=("compute_uv", "subset_by_index"))
def _svd_hermitian(a, compute_uv, subset_by_index):
    # A Hermitian matrix's singular values are its eigenvalues' magnitudes (descending), U its
    # eigenvectors in that order and Vh = (U times the eigenvalues' signs)^H.
    v, w = lax_linalg.eigh(a, subset_by_index=subset_by_index)
    s = lax.abs(w)
    last = s.aval.ndim - 1
    if not compute_uv:
        return lax.rev(lax.sort(s, dimension=last), (last,))
    idx = lax.broadcasted_iota(np.int32, s.aval.shape, last)
    s, idx, sign = lax.sort((s, idx, lax.sign(w)), dimension=last, num_keys=1)
    s, idx, sign = (lax.rev(t, (last,)) for t in (s, idx, sign))
    u = take_along_axis(v, idx[..., None, :], axis=-1)
    return SVDResult(u, s, lax_linalg._H(u * sign[..., None, :].astype(u.dtype)))


def svd(a, full_matrices=True, compute_uv=True, hermitian=False, subset_by_index=None):
    """The singular value decomposition (U, S, Vh) of a, S descending, or S alone when compute_uv is
    False; hermitian=True reads a as symmetric and takes it from eigh."""
    a = _matrix("svd", a)
    subset = None if subset_by_index is None else tuple(subset_by_index)
    if hermitian:
        return _svd_hermitian(a, bool(compute_uv), subset)
    return _svd(a, bool(full_matrices), bool(compute_uv), subset)


def svdvals(x, /):
    """The singular values of x, descending (Array API)."""
    return svd(_matrix("svdvals", x), compute_uv=False)


_QR_MODES = ("reduced", "complete", "r", "raw", "full")


@jit(static_argnames=("mode",))
def _qr(a, mode):
    q, r = lax_linalg.qr(a, full_matrices=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


def qr(a, mode="reduced"):
    """The QR decomposition of a: Q with orthonormal columns and upper-triangular R ("reduced": k =
    min(m, n) columns, "complete": Q square), or R alone ("r")."""
    a = _matrix("qr", a)
    if mode not in _QR_MODES:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    if mode == "raw":  # LAPACK's packed form, transposed (NumPy's), and the reflectors' scales
        packed, taus = linalg_forms.geqrf(a)
        return QRResult(manipulation.swapaxes(packed, -1, -2), taus)
    return _qr(a, "reduced" if mode == "full" else mode)


def eig(a):
    """Eigenvalues and right eigenvectors (in columns) of general square matrices, complex."""
    w, v = lax_linalg.eig(_matrix("eig", a, square=True), compute_left_eigenvectors=False)
    return EigResult(w, v)


def eigvals(a):
    """Eigenvalues of general square matrices, complex."""
    return lax_linalg.eig(_matrix("eigvals", a, square=True), compute_left_eigenvectors=False,
                          compute_right_eigenvectors=False)[0]


def _lower(uplo):
    if uplo is None or uplo == "L":
        return True
    if uplo == "U":
        return False
    raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {uplo}")


@jit(static_argnames=("lower", "symmetrize_input"))
def _eigh(a, lower, symmetrize_input):
    v, w = lax_linalg.eigh(a, lower=lower, symmetrize_input=symmetrize_input)
    return EighResult(w, v)


def eigh(a, UPLO=None, symmetrize_input=True):  # noqa: N803 - JAX's name
    """Eigenvalues (ascending) and eigenvectors (columns) of a symmetric matrix; without
    symmetrize_input only the triangle UPLO names is read."""
    lower = _lower(UPLO)
    return _eigh(_matrix("eigh", a, square=True), lower, bool(symmetrize_input))


def eigvalsh(a, UPLO="L", *, symmetrize_input=True):  # noqa: N803 - JAX's name
    """Eigenvalues (ascending) of a symmetric matrix."""
    return eigh(_matrix("eigvalsh", a, square=True), UPLO, symmetrize_input).eigenvalues
