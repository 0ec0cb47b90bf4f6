"""The GPU plan's linear-algebra library steps (core/ops/linalg.cpp defines the ops): cuSOLVER and cuBLAS
through CuPy (cupy.linalg, cupyx.scipy.linalg), and CuPy array operations on the device where CuPy has
no exact match. Nothing is copied to the host and nothing waits for the GPU.

Conventions kept from the CPU ops: the same results in the same order, dtypes and shapes; cholesky reads
the lower triangle and gives NaN in the lower triangle of a matrix that is not positive definite; eigh
reads the triangle `lower` names, eigenvalues ascending; svd's singular values descending; eigh and svd
of a matrix with a non-finite entry (in the triangle read) give NaN; LU's pivots are getf2's (the first
entry of largest magnitude, NaN never chosen). Factors that are not unique may differ from the CPU's:
Q and R of qr by the signs of Q's columns and R's rows (cuSOLVER's geqrf makes them LAPACK's), eigh's
eigenvectors and svd's singular vectors by sign (and within repeated eigen/singular values by a rotation),
qr's column pivots where column norms tie to rounding.

Each route takes CuPy arrays of the operands and the plan's types, and returns C-contiguous results.
"""
import numpy as np

from xjax._src.gpu import gpu_devices


def _cp():
    return gpu_devices.cupy()


def _cupyx():
    """cupyx beside the CuPy in use (a stand-in CuPy, the tests' emulation, carries its own)."""
    cp = _cp()
    if hasattr(cp, "cupyx"):
        return cp.cupyx
    import cupyx.scipy.linalg  # noqa: F401 - lazy (CuPy is optional); imports the submodule
    import cupyx  # lazy: CuPy is optional
    return cupyx


def _cupy_major():
    try:
        return int(str(_cp().__version__).split(".")[0])
    except ValueError:
        return 0


def _batched_since_14():
    """Whether cupy.linalg.qr and cupyx.scipy.linalg.solve_triangular take batches (CuPy 14 on); before,
    each matrix of a batch is a call of its own."""
    return _cupy_major() >= 14


def _flag(attrs, name, default):
    return bool(int(attrs.get(name, int(default))))


def _c(x):
    return _cp().ascontiguousarray(x)


def _batch(x, core):
    """x as (count, *core shape) and its batch shape."""
    batch = tuple(x.shape[:x.ndim - core])
    count = int(np.prod(batch, dtype=np.int64))
    return x.reshape((count,) + tuple(x.shape[x.ndim - core:])), batch


def _per_matrix(fn, *arrays):
    """fn over the matrices of (count, ...) arrays, one call each, results stacked (for CuPy calls that
    take no batch)."""
    cp = _cp()
    outs = [fn(*(a[i] for a in arrays)) for i in range(arrays[0].shape[0])]
    if isinstance(outs[0], tuple):
        return tuple(cp.stack(parts) for parts in zip(*outs))
    return cp.stack(outs)


def _nan_where(bad, x, mask=None):
    """x with NaN in the matrices (or vectors) whose `bad` (batch shape) is set; only where `mask` is, if given."""
    cp = _cp()
    sel = bad.reshape(bad.shape + (1,) * (x.ndim - bad.ndim))
    if mask is not None:
        sel = sel & mask
    return cp.where(sel, cp.asarray(np.nan, dtype=x.dtype), x)


def _tri_mask(n, lower):
    cp = _cp()
    i = cp.arange(n)
    return i[:, None] >= i[None, :] if lower else i[:, None] <= i[None, :]


# ---- cholesky ----

def cholesky(ins, attrs, out_types, in_types):
    """potrf on the lower triangle. CuPy reports no failure (its info stays on the device), so a failed
    factorisation is recognised from the result: a diagonal entry that is not positive (where LAPACK's
    potrf stops it leaves the non-positive pivot), a non-finite entry, or a row whose squares do not sum
    to A's diagonal entry as a computed factor's do (|a_ii - sum_k l_ik^2| <= (n+1) eps sum_k l_ik^2,
    doubled for the rounding of the check), whatever potrf leaves where it stopped. Its lower triangle
    becomes NaN, as on the CPU."""
    cp = _cp()
    a = ins[0]
    n = a.shape[-1]
    if a.size == 0:
        return [cp.zeros(a.shape, a.dtype)]
    lower = _tri_mask(n, True)
    l = cp.linalg.cholesky(a)
    l = cp.where(lower, l, cp.zeros((), l.dtype))  # (what is above the diagonal is not the factor's)
    diag = cp.diagonal(l, axis1=-2, axis2=-1)
    rows = cp.sum(l * l, axis=-1)
    slack = (4 * (n + 1) * np.finfo(a.dtype).eps) * rows
    bad = ~(diag > 0).all(axis=-1) | ~cp.isfinite(l).all(axis=(-2, -1))
    bad |= ~(cp.abs(cp.diagonal(a, axis1=-2, axis2=-1) - rows) <= slack).all(axis=-1)
    return [_c(_nan_where(bad, l, lower))]


# ---- lu, lu_pivots_to_permutation ----

def _swap_rows(x, rows, i, j):
    """Swaps entries i and j (arrays of the batch) along axis 1 of x (count, m, ...) in place."""
    xi = x[rows, i].copy()
    x[rows, i] = x[rows, j]
    x[rows, j] = xi


def lu(ins, attrs, out_types, in_types):
    """Partial-pivot LU (LAPACK's getf2, as the CPU's) of every matrix of the batch at once, one column
    per step as CuPy array operations: the pivot is the first entry of largest magnitude at or below the
    diagonal (a NaN diagonal stays), its row is swapped up, the column below it scaled by the pivot's
    reciprocal (divided by it if the reciprocal would overflow) and the trailing block updated."""
    cp = _cp()
    a = ins[0]
    (_, dtype), (piv_shape, _), (perm_shape, _) = out_types
    m, n = a.shape[-2:]
    k = min(m, n)
    x, batch = _batch(a, 2)
    x = x.copy()
    count = x.shape[0]
    piv = cp.zeros((count, k), np.int32)
    perm = cp.broadcast_to(cp.arange(m, dtype=np.int32), (count, m)).copy()
    rows = cp.arange(count)
    sfmin = dtype.type(np.finfo(dtype).tiny)
    zero = cp.zeros((), dtype)
    for j in range(k):
        col = cp.abs(x[:, j:, j])
        best = cp.argmax(cp.where(cp.isnan(col), -1, col), axis=1)
        p = cp.where(cp.isnan(col[:, 0]), 0, best).astype(np.int32) + j
        piv[:, j] = p
        _swap_rows(x, rows, j, p)
        _swap_rows(perm, rows, j, p)
        d = x[:, j, j][:, None]
        below = x[:, j + 1:, j]
        safe = cp.where(d == zero, 1, d)  # (a zero pivot scales nothing)
        scaled = cp.where(cp.abs(d) >= sfmin, below * (1 / safe), below / safe)
        x[:, j + 1:, j] = cp.where(d != zero, scaled, below)
        x[:, j + 1:, j + 1:] -= x[:, j + 1:, j:j + 1] * x[:, j:j + 1, j + 1:]
    return [_c(x.reshape(a.shape)), _c(piv.reshape(piv_shape)), _c(perm.reshape(perm_shape))]


def lu_pivots_to_permutation(ins, attrs, out_types, in_types):
    """The permutation the row swaps make, applied in order on device (the CPU's rule: a negative pivot
    counts from the end; one out of range swaps nothing in but reads the nearest row)."""
    cp = _cp()
    pivots = ins[0]
    (shape, _), = out_types
    m = int(attrs["permutation_size"])
    p, _ = _batch(pivots, 1)
    count, k = p.shape
    perm = cp.broadcast_to(cp.arange(m, dtype=np.int32), (count, m)).copy()
    rows = cp.arange(count)
    for i in range(min(k, m)):
        j = p[:, i].astype(np.int64)
        j = cp.where(j < 0, j + m, j)
        inside = (j >= 0) & (j < m)
        read = cp.clip(j, 0, m - 1)
        x, y = perm[:, i].copy(), perm[rows, read]
        perm[:, i] = y
        write = cp.where(inside, j, i)  # (out of range: perm[i] takes y, and keeps it)
        perm[rows, write] = cp.where(inside, x, y)
    return [_c(perm.reshape(shape))]


# ---- qr ----

def _geqp3_pivots(x):
    """geqp3's column order for each (count, m, n) matrix: at step j, of the columns not yet taken (kept
    in geqp3's arrangement, where taking column p swaps it with column j), the first whose part outside
    the span of those taken has the largest norm. The residual is kept by Gram-Schmidt."""
    cp = _cp()
    count, m, n = x.shape
    r = x.astype(x.dtype, copy=True)
    order = cp.broadcast_to(cp.arange(n, dtype=np.int32), (count, n)).copy()
    rows = cp.arange(count)
    for j in range(min(m, n)):
        norms = cp.sqrt(cp.sum(r[:, :, j:] * r[:, :, j:], axis=1))
        p = (cp.argmax(norms, axis=1) + j).astype(np.int32)
        rj = r[rows, :, j].copy()
        r[rows, :, j] = r[rows, :, p]
        r[rows, :, p] = rj
        _swap_rows(order, rows, j, p)
        q = r[:, :, j]
        nq = cp.sqrt(cp.sum(q * q, axis=1, keepdims=True))
        q = cp.where(nq > 0, q / cp.where(nq > 0, nq, 1), 0)
        r[:, :, j + 1:] -= q[:, :, None] * cp.matmul(q[:, None, :], r[:, :, j + 1:])
    return order


def qr(ins, attrs, out_types, in_types):
    """cuSOLVER's geqrf + orgqr (cupy.linalg.qr); with pivoting, QR of the columns in geqp3's order."""
    cp = _cp()
    a = ins[0]
    full = _flag(attrs, "full_matrices", True)
    pivoting = _flag(attrs, "pivoting", False)
    (q_shape, dtype), (r_shape, _) = out_types[:2]
    m, n = a.shape[-2:]
    x, batch = _batch(a, 2)
    count = x.shape[0]
    if min(m, n) == 0 or count == 0:
        q = cp.broadcast_to(cp.eye(m, q_shape[-1], dtype=dtype), q_shape)
        outs = [_c(q), cp.zeros(r_shape, dtype)]
        return outs + ([cp.zeros(out_types[2][0], np.int32)] if pivoting else [])
    order = None
    if pivoting:
        order = _geqp3_pivots(x)
        x = cp.take_along_axis(x, cp.broadcast_to(order[:, None, :].astype(np.int64), x.shape), axis=2)
    mode = "complete" if full else "reduced"
    if _batched_since_14() or count == 1:
        q, r = cp.linalg.qr(x if count > 1 else x[0], mode=mode)
    else:
        q, r = _per_matrix(lambda t: cp.linalg.qr(t, mode=mode), x)
    outs = [_c(q.reshape(q_shape)), _c(r.reshape(r_shape))]
    if pivoting:
        outs.append(_c(order.reshape(out_types[2][0])))
    return outs


# ---- eigh, svd ----

def _finite_matrices(x, mask=None):
    """Per matrix of x (..., m, n): whether every entry (where `mask` is set) is finite."""
    cp = _cp()
    ok = cp.isfinite(x)
    if mask is not None:
        ok = ok | ~mask
    return ok.all(axis=(-2, -1))


# CuPy's eigh of a batch is cuSOLVER's syevjBatched, which takes matrices up to this order only.
_SYEVJ_BATCHED_MAX = 32


def eigh(ins, attrs, out_types, in_types):
    """cupy.linalg.eigh (syevd; syevj for a batch of small matrices, syevd one at a time for larger ones)
    of the symmetric matrix the `lower` triangle makes (written out in full, so that which triangle
    cuSOLVER reads does not matter): eigenvalues ascending."""
    cp = _cp()
    a = ins[0]
    lower = _flag(attrs, "lower", True)
    (v_shape, dtype), (w_shape, _) = out_types
    n = a.shape[-1]
    if a.size == 0:
        return [cp.zeros(v_shape, dtype), cp.zeros(w_shape, dtype)]
    mask = _tri_mask(n, lower)
    zero = cp.zeros((), dtype)
    tri = cp.where(mask, a, zero)
    strict = cp.where(mask & ~cp.eye(n, dtype=bool), a, zero)
    sym = tri + cp.swapaxes(strict, -1, -2)
    finite = _finite_matrices(a, mask)
    sym = cp.where(finite[..., None, None], sym, zero)  # (cuSOLVER's iterations are not meant for NaN)
    batched, batch = _batch(sym, 2)
    if batched.shape[0] == 1:
        w, v = cp.linalg.eigh(batched[0], UPLO="L")
    elif n <= _SYEVJ_BATCHED_MAX:
        w, v = cp.linalg.eigh(batched, UPLO="L")
    else:
        w, v = _per_matrix(lambda t: cp.linalg.eigh(t, UPLO="L"), batched)
    w, v = w.reshape(w_shape), v.reshape(v_shape)
    return [_c(_nan_where(~finite, v).astype(dtype)), _c(_nan_where(~finite, w).astype(dtype))]


def svd(ins, attrs, out_types, in_types):
    """cupy.linalg.svd (gesvd; gesvdj for a batch of small matrices): (s descending, u, vt) or (s,)."""
    cp = _cp()
    a = ins[0]
    full = _flag(attrs, "full_matrices", True)
    uv = _flag(attrs, "compute_uv", True)
    (s_shape, dtype) = out_types[0]
    m, n = a.shape[-2:]
    if min(m, n) == 0 or a.size == 0:
        outs = [cp.zeros(s_shape, dtype)]
        if uv:
            outs += [_c(cp.broadcast_to(cp.eye(*t[0][-2:], dtype=dtype), t[0])) for t in out_types[1:]]
        return outs
    finite = _finite_matrices(a)
    x = cp.where(finite[..., None, None], a, cp.zeros((), dtype))
    if not uv:
        s = cp.linalg.svd(x, full_matrices=full, compute_uv=False)
        return [_c(_nan_where(~finite, s).astype(dtype))]
    u, s, vt = cp.linalg.svd(x, full_matrices=full, compute_uv=True)
    return [_c(_nan_where(~finite, r).astype(dtype)) for r in (s, u, vt)]


# ---- triangular_solve ----

def triangular_solve(ins, attrs, out_types, in_types):
    """cuBLAS's trsm (cupyx.scipy.linalg.solve_triangular, which solves op(A) X = B): X op(A) = B is
    op(A)^T X^T = B^T."""
    cp = _cp()
    a, b = ins
    left = _flag(attrs, "left_side", False)
    lower = _flag(attrs, "lower", False)
    trans = _flag(attrs, "transpose_a", False)
    unit = _flag(attrs, "unit_diagonal", False)
    (shape, dtype), = out_types
    if b.size == 0 or a.shape[-1] == 0:
        return [_c(b.astype(dtype, copy=True))]
    rhs = b if left else cp.swapaxes(b, -1, -2)
    t = int(trans) if left else int(not trans)
    solve = _cupyx().scipy.linalg.solve_triangular
    am, _ = _batch(a, 2)
    bm, _ = _batch(rhs, 2)

    def one(ai, bi):
        return solve(ai, bi, trans=t, lower=lower, unit_diagonal=unit, overwrite_b=False, check_finite=False)

    if am.shape[0] == 1:
        x = one(am[0], bm[0])[None]
    elif _batched_since_14():
        x = one(am, bm)
    else:
        x = _per_matrix(one, am, bm)
    x = x.reshape(rhs.shape)
    return [_c((x if left else cp.swapaxes(x, -1, -2)).astype(dtype, copy=False))]


def _real_only(name, route):
    """The route, refusing complex matrices: the routes above are written for real ones (a complex
    matrix would need conjugate transposes, Hermitian checks, real eigen/singular values and LAPACK's
    |re| + |im| pivots), so complex ones get a clear error rather than a wrong factor."""
    def run(ins, attrs, out_types, in_types):
        for _, dtype in list(in_types) + list(out_types):
            if np.dtype(dtype).kind == "c":
                raise NotImplementedError(f"[{name}] complex matrices are not supported on the CUDA backend yet "
                                          f"(got {np.dtype(dtype).name}); the CPU backend computes them")
        return route(ins, attrs, out_types, in_types)

    return run


ROUTES = {name: _real_only(name, route) for name, route in {
    "cholesky": cholesky, "lu": lu, "lu_pivots_to_permutation": lu_pivots_to_permutation, "qr": qr, "eigh": eigh,
    "svd": svd, "triangular_solve": triangular_solve}.items()}
