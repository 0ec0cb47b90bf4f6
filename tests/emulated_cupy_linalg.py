"""The emulated CuPy's linear algebra (tests/emulated_cupy.py): cupy.linalg's cholesky, qr, eigh and svd and
cupyx.scipy.linalg.solve_triangular as CuPy 14 gives them, on NumPy, SciPy and LAPACK.

What is kept of CuPy's behaviour: the signatures and results (eigh returns (w, v), svd (u, s, vh));
float32 stays float32; batches are taken (qr and solve_triangular only from CuPy 14 on: an emulated
version below 14 refuses them as CuPy 13 does; eigh's only of matrices up to order 32, syevjBatched's
limit); nothing is raised for a failed factorisation (CuPy's
default `linalg='ignore'`): cholesky returns what potrf leaves, a matrix that is not positive definite
keeping its non-positive pivot on the diagonal (LAPACK's potrf; cuSOLVER's is taken to do the same, which
the tests check on a real GPU), and solve_triangular divides by a zero diagonal (trsm does not check).
"""
import types

import numpy as np
import scipy.linalg.blas as blas
import scipy.linalg.lapack as lapack

import emulated_cupy

LinAlgError = np.linalg.LinAlgError


class CUSOLVERError(RuntimeError):
    pass


def _wrap(x):
    return np.asarray(x).view(emulated_cupy.ndarray)


def _major():
    return int(emulated_cupy.__version__.split(".")[0])


def _float(a):
    if a.dtype not in (np.float32, np.float64):
        raise TypeError(f"emulated CuPy linalg: only float32 and float64 are emulated, got {a.dtype}")
    return np.asarray(a)


def _square(a):
    if a.ndim < 2:
        raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be at least two-dimensional")
    if a.shape[-1] != a.shape[-2]:
        raise LinAlgError("Last 2 dimensions of the array must be square")


def _each(a, fn, core=2):
    """fn over the matrices of a (..., core dims), results stacked back to a's batch shape."""
    flat = a.reshape((-1,) + a.shape[a.ndim - core:])
    outs = [fn(m) for m in flat]
    return np.stack(outs).reshape(a.shape[:a.ndim - core] + outs[0].shape) if outs else None


def cholesky(a):
    _square(a)
    a = _float(a)
    potrf = lapack.spotrf if a.dtype == np.float32 else lapack.dpotrf

    def one(m):
        c, _info = potrf(m, lower=True, clean=False)  # (info ignored, as CuPy's default)
        return np.tril(c)

    if a.size == 0:
        return _wrap(np.zeros(a.shape, a.dtype))
    return _wrap(_each(a, one).astype(a.dtype))


def qr(a, mode="reduced"):
    if a.ndim != 2 and (_major() < 14 or a.ndim < 2):
        raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
    if mode not in ("reduced", "complete", "r", "raw"):
        raise ValueError(f"Unrecognized mode '{mode}'")
    q, r = np.linalg.qr(_float(a), mode=mode)  # (LAPACK's geqrf and orgqr, as cuSOLVER's)
    return _wrap(q), _wrap(r)


def eigh(a, UPLO="L"):  # noqa: N803 - (CuPy's name)
    if UPLO not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    _square(a)
    if a.ndim > 2 and a.shape[-1] > 32:  # (CuPy's batches go to syevjBatched, which refuses them)
        raise CUSOLVERError("CUSOLVER_STATUS_INVALID_VALUE")
    w, v = np.linalg.eigh(_float(a), UPLO=UPLO)
    return _wrap(w), _wrap(v)


def svd(a, full_matrices=True, compute_uv=True):
    if a.ndim < 2:
        raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be at least two-dimensional")
    out = np.linalg.svd(_float(a), full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(_wrap(x) for x in out) if compute_uv else _wrap(out)


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, check_finite=False):
    a, b = _float(a), _float(b)
    if a.ndim == 2:
        if a.shape[0] != a.shape[1]:
            raise ValueError("expected square matrix")
        if len(a) != len(b):
            raise ValueError("incompatible dimensions")
    elif a.ndim > 2 and _major() >= 14:
        if a.shape[-1] != a.shape[-2]:
            raise ValueError("expected a batch of square matrices")
        if a.shape[:-2] != b.shape[:a.ndim - 2]:
            raise ValueError("incompatible batch count")
        if b.ndim < a.ndim - 1 or a.shape[-2] != b.shape[a.ndim - 2]:
            raise ValueError("incompatible dimensions")
    else:
        raise ValueError("expected square matrix")
    if check_finite and not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("array must not contain infs or NaNs")
    trans = {0: 0, 1: 1, 2: 1, "N": 0, "T": 1, "C": 1}[trans]
    trsm = blas.strsm if a.dtype == np.float32 else blas.dtrsm
    vector = b.ndim == a.ndim - 1
    bm = b[..., None] if vector else b
    flat_a = a.reshape((-1,) + a.shape[-2:])
    flat_b = bm.reshape((-1,) + bm.shape[-2:])
    out = np.stack([trsm(1.0, ai, bi, lower=int(lower), trans_a=trans, diag=int(unit_diagonal))
                    for ai, bi in zip(flat_a, flat_b)]).reshape(bm.shape).astype(a.dtype)
    return _wrap(out[..., 0] if vector else out)


linalg = types.SimpleNamespace(cholesky=cholesky, qr=qr, eigh=eigh, svd=svd, LinAlgError=LinAlgError)
cupyx = types.SimpleNamespace(scipy=types.SimpleNamespace(linalg=types.SimpleNamespace(
    solve_triangular=solve_triangular)))
