"""jax.scipy.linalg's Schur-based functions and Householder products: schur, rsf2csf, sqrtm, funm,
polar, hessenberg, solve_sylvester, qr_multiply, in jnp on lax.linalg's schur, hessenberg,
householder_product, ormqr and qdwh, as JAX defines them.

The complex Schur form (output='complex') is the core's Schur decomposition of the matrix cast to
complex (LAPACK's cgees/zgees), as JAX's and SciPy's; a complex matrix gets it for either output. The
triangular recurrences (the square root's, Parlett's for funm, the Bartels-Stewart solve) compute
one superdiagonal (or anti-diagonal) at a time as matrix products, rather than one element at a
time as JAX's loops do: each entry reads only entries of earlier diagonals, so the values are the
same up to the order of the sums."""
import functools

import numpy as np

import xjax.numpy as jnp
from xjax._src import dtypes, lax
from xjax._src.jit import jit
from xjax._src.lax import linalg_forms
from xjax._src.lax.qdwh import qdwh
from xjax._src.lax import linalg as lax_linalg
from xjax._src.numpy import creation, util

__all__ = ["funm", "hessenberg", "polar", "qr_multiply", "rsf2csf", "schur", "solve_sylvester", "sqrtm"]


def _square(name, a, what="a"):
    a, = util.promote_dtypes_inexact(creation.asarray(a))
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name}: expected square matrices for '{what}', got shape {a.shape}")
    return a


def _H(x):
    return jnp.conj(jnp.swapaxes(x, -1, -2))


def _diagonal_mask(n, d):
    """True on the d-th superdiagonal of an n x n matrix."""
    return (jnp.arange(n)[None, :] - jnp.arange(n)[:, None]) == d


# ---- schur and rsf2csf --------------------------------------------------------------------------

@functools.partial(jit, static_argnames=("output",))
def _schur(a, output):
    if output == "complex" and not dtypes.is_complex(a.dtype):
        a = a.astype(dtypes.complex_dtype_of(a.dtype))
    t, z = linalg_forms.schur(a)
    return [t, z]  # a list, as JAX's (lax.linalg.schur's result)


def schur(a, output="real"):
    """The Schur decomposition A = Z T Z^H: T quasi-upper-triangular (output='real') or upper
    triangular and complex (output='complex'), Z orthogonal (unitary)."""
    if output not in ("real", "complex"):
        raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got {output=}.")
    return _schur(_square("schur", a), output)


def _rsf2csf_2d(t, z):
    dt = jnp.result_type(t, z)
    dt = dt if dtypes.is_complex(dt) else dtypes.complex_dtype_of(dt)
    t, z = t.astype(dt), z.astype(dt)
    n = t.shape[0]
    if n <= 1:
        return t, z
    eps = dtypes.finfo(t.dtype).eps
    cols = jnp.arange(n)

    def rotate(m, t, z):
        # The eigenvalue of the 2 x 2 block with positive imaginary part (the first that LAPACK's
        # zgeev gives, so the result is SciPy's), shifted by T[m, m].
        blk = lax.dynamic_slice(t, (m - 1, m - 1), (2, 2))
        half_trace = (blk[0, 0] + blk[1, 1]) / 2
        mu = half_trace + jnp.sqrt((blk[0, 0] - half_trace) ** 2 + blk[0, 1] * blk[1, 0]) - blk[1, 1]
        r = jnp.sqrt(jnp.abs(mu) ** 2 + jnp.abs(blk[1, 0]) ** 2).astype(t.dtype)
        c, s = mu / r, blk[1, 0] / r
        g = jnp.stack([jnp.stack([jnp.conj(c), s]), jnp.stack([-s, c])])
        rows = lax.dynamic_slice_in_dim(t, m - 1, 2, axis=0)
        right = cols >= m - 1
        rows = jnp.where(right, g @ jnp.where(right, rows, 0), rows)
        t = lax.dynamic_update_slice_in_dim(t, rows, m - 1, axis=0)
        tcols = lax.dynamic_slice_in_dim(t, m - 1, 2, axis=1)
        above = cols[:, None] < m + 1
        tcols = jnp.where(above, jnp.where(above, tcols, 0) @ _H(g), tcols)
        t = lax.dynamic_update_slice_in_dim(t, tcols, m - 1, axis=1)
        zcols = lax.dynamic_slice_in_dim(z, m - 1, 2, axis=1)
        z = lax.dynamic_update_slice_in_dim(z, zcols @ _H(g), m - 1, axis=1)
        return t, z

    def body(i, tz):
        m = n - i
        t, z = tz
        sub = t[m, m - 1]
        block = jnp.abs(sub) > eps * (jnp.abs(t[m - 1, m - 1]) + jnp.abs(t[m, m]))
        t, z = lax.cond(block, rotate, lambda m, t, z: (t, z), m, t, z)
        return t.at[m, m - 1].set(0), z

    return lax.fori_loop(1, n, body, (t, z))


def rsf2csf(T, Z, check_finite=True):
    """The complex Schur form (T, Z) of a real Schur form: each 2 x 2 block of a complex pair
    rotated to upper triangular, Z rotated alike."""
    t, z = creation.asarray(T), creation.asarray(Z)
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise ValueError("Input 'T' must be square.")
    if z.ndim < 2 or z.shape[-1] != z.shape[-2]:
        raise ValueError("Input 'Z' must be square.")
    if t.shape[-1] != z.shape[-1]:
        raise ValueError(f"Input array shapes must match: Z: {z.shape} vs. T: {t.shape}")
    return jnp.vectorize(jit(_rsf2csf_2d), signature="(n,n),(n,n)->(n,n),(n,n)")(t, z)


# ---- sqrtm and funm: triangular recurrences on the complex Schur form ----------------------------

def _sqrtm_triu(t):
    """U with U @ U = T for upper triangular T (Björck and Hammarling, 1983): U's diagonal is
    sqrt(diag(T)); superdiagonal d comes from those before it,
    U[i, j] = (T[i, j] - sum_{i<k<j} U[i, k] U[k, j]) / (U[i, i] + U[j, j])."""
    n = t.shape[-1]
    diag = jnp.sqrt(jnp.diagonal(t))
    den = diag[:, None] + diag[None, :]

    def step(d, u):
        strict = jnp.triu(u, 1)
        s = strict @ strict
        value = jnp.where(t == s, 0, (t - s) / den)
        return jnp.where(_diagonal_mask(n, d), value, u)

    return lax.fori_loop(1, n, step, jnp.diag(diag))


@jit
def _sqrtm(a):
    t, z = schur(a, output="complex")
    return z @ _sqrtm_triu(t) @ _H(z)


def sqrtm(A, blocksize=1):
    """The principal matrix square root, by the complex Schur method (Björck and Hammarling)."""
    if blocksize > 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    a = _square("sqrtm", A, "A")
    if a.ndim != 2:
        raise ValueError(f"sqrtm expects a matrix of shape (N, N), got shape {a.shape}")
    return _sqrtm(a)


def _parlett(f, t):
    """F = f(T) for upper triangular T given F's diagonal (Golub and Van Loan, Algorithm 11.1.1):
    F[i, j] = (T[i, j] (F[j, j] - F[i, i]) + sum_{i<k<j} (T[i, k] F[k, j] - F[i, k] T[k, j])) / (T[j, j] - T[i, i]),
    left undivided where the denominator is zero. Also the smallest |T[j, j] - T[i, i]| (and |T[0, 0]|)."""
    n = t.shape[-1]
    td = jnp.diagonal(t)
    den = td[None, :] - td[:, None]
    ts = jnp.triu(t, 1)

    def step(d, f):
        fs = jnp.triu(f, 1)
        fd = jnp.diagonal(f)
        s = t * (fd[None, :] - fd[:, None]) + (ts @ fs - fs @ ts)
        value = jnp.where(den != 0, s / jnp.where(den != 0, den, 1), s)
        return jnp.where(_diagonal_mask(n, d), value, f)

    f = lax.fori_loop(1, n, step, f)
    upper = jnp.triu(jnp.ones((n, n), bool), 1)
    minden = jnp.minimum(jnp.abs(td[0]), jnp.min(jnp.where(upper, jnp.abs(den), jnp.inf)))
    return f, minden


def funm(A, func, disp=True):
    """f(A) for a scalar function f applied to the eigenvalues, by Parlett's recurrence on the
    complex Schur form; with disp=False also an error estimate, as SciPy's."""
    a = creation.asarray(A)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError('expected square array_like input')
    t, z = schur(a, output="complex")
    f = jnp.diag(func(jnp.diagonal(t))).astype(t.dtype)
    f, minden = _parlett(f, t)
    f = z @ f @ _H(z)
    if disp:
        return f
    # (JAX's estimate, whose tolerance is float64's unless the result is float32's)
    tol = dtypes.finfo(np.float32 if f.dtype.char.lower() == "f" else np.float64).eps
    minden = jnp.where(minden == 0.0, tol, minden)
    err = jnp.where(jnp.any(jnp.isinf(f)), np.inf,
                    jnp.minimum(1, jnp.maximum(tol, (tol / minden) * jnp.linalg.norm(jnp.triu(t, 1), 1))))
    return f, err


# ---- polar --------------------------------------------------------------------------------------

@functools.partial(jit, static_argnames=("side", "method", "eps", "max_iterations"))
def _polar_2d(a, side, method, eps, max_iterations):
    m, n = a.shape
    if method == "qdwh":
        if m >= n and side == "right":
            unitary, posdef, _, _ = qdwh(a, eps=eps, max_iterations=max_iterations)
        elif m < n and side == "left":
            unitary, posdef, _, _ = qdwh(_H(a), eps=eps, max_iterations=max_iterations)
            unitary, posdef = _H(unitary), _H(posdef)
        else:
            raise NotImplementedError("method='qdwh' only supports mxn matrices where m < n where side='right' "
                                      f"and m >= n side='left', got {a.shape} with {side=}")
    elif method == "svd":
        u, s, vh = lax_linalg.svd(a, full_matrices=False)
        s = s.astype(u.dtype)
        unitary = u @ vh
        posdef = (_H(vh) * s[None, :]) @ vh if side == "right" else (u * s[None, :]) @ _H(u)
    else:
        raise ValueError(f"Unknown polar decomposition method {method}.")
    return unitary, posdef


def polar(a, side="right", *, method="qdwh", eps=None, max_iterations=None):
    """The polar decomposition a = u p (side='right') or a = p u (side='left'): u with orthonormal
    columns (rows when n > m), p positive semidefinite; by QDWH or the SVD."""
    arr = creation.asarray(a)
    if arr.ndim < 2:
        raise ValueError("The input `a` must be at least a 2-D array.")
    if side not in ["right", "left"]:
        raise ValueError("The argument `side` must be either 'right' or 'left'.")
    sig = "(m,n)->(m,n),(n,n)" if side == "right" else "(m,n)->(m,n),(m,m)"
    return jnp.vectorize(functools.partial(_polar_2d, side=side, method=method, eps=eps,
                                           max_iterations=max_iterations), signature=sig)(arr)


# ---- hessenberg ---------------------------------------------------------------------------------

@functools.partial(jit, static_argnames=("calc_q", "check_finite", "overwrite_a"))
def hessenberg(a, *, calc_q=False, overwrite_a=False, check_finite=True):
    """The Hessenberg form A = Q H Q^H: H zero below its first subdiagonal, Q orthogonal (calc_q)."""
    a = _square("hessenberg", a)
    n = a.shape[-1]
    if n == 0:
        return (jnp.zeros_like(a), jnp.zeros_like(a)) if calc_q else jnp.zeros_like(a)
    packed, taus = linalg_forms.hessenberg(a)
    h = jnp.triu(packed, -1)
    if not calc_q:
        return h
    # Q = diag(1, Q') with Q' the product of the reflectors stored below the subdiagonal.
    q = linalg_forms.householder_product(packed[..., 1:, :-1], taus)
    batch = packed.shape[:-2]
    q = jnp.block([[jnp.ones(batch + (1, 1), packed.dtype), jnp.zeros(batch + (1, n - 1), packed.dtype)],
                   [jnp.zeros(batch + (n - 1, 1), packed.dtype), q]])
    return h, q


# ---- solve_sylvester: Bartels-Stewart -----------------------------------------------------------

def _sylvester_triangular(r, s_lower, f):
    """Y with R Y + Y S = F, R upper and S lower triangular: Y[i, j] reads Y[k, j] (k > i) and
    Y[i, k] (k > j), so each anti-diagonal i + j = const comes from the ones after it."""
    m, n = f.shape
    den = jnp.diagonal(r)[:, None] + jnp.diagonal(s_lower)[None, :]
    r_strict, s_strict = jnp.triu(r, 1), jnp.tril(s_lower, -1)
    anti = jnp.arange(m)[:, None] + jnp.arange(n)[None, :]

    def step(k, y):
        level = m + n - 2 - k
        value = (f - r_strict @ y - y @ s_strict) / den
        return jnp.where(anti == level, value, y)

    return lax.fori_loop(0, m + n - 1, step, jnp.zeros_like(f))


@functools.partial(jit, static_argnames=("method",))
def _solve_sylvester_2d(a, b, c, *, method, tol):
    if method == "schur":
        r, u = schur(a, output="complex")
        s, v = schur(_H(b), output="complex")
        f = _H(u) @ c.astype(r.dtype) @ v
        x = u @ _sylvester_triangular(r, _H(s), f) @ _H(v)
    elif method == "eigen":
        ra, ua = jnp.linalg.eig(a)
        rb, ub = jnp.linalg.eig(b)
        f = jnp.linalg.solve(ua, c.astype(ra.dtype) @ ub)
        x = ua @ (f / (ra[:, None] + rb[None, :])) @ jnp.linalg.inv(ub)
    else:
        raise ValueError(f"Unrecognized method {method}. The two valid methods are either \"schur\" or \"eigen\".")
    if not dtypes.is_complex(c.dtype):
        x = x.real
    near_singular = jnp.any(jnp.abs(jnp.linalg.eigvals(a)[:, None] + jnp.linalg.eigvals(b)[None, :]) < tol)
    return jnp.where(near_singular, jnp.nan, x)


def solve_sylvester(A, B, C, *, method="schur", tol=1e-8):
    """X with A X + X B = C (Bartels-Stewart on the complex Schur forms, or eigendecompositions);
    NaN where eigenvalues of A and -B are closer than tol."""
    a, b, c = util.promote_dtypes_inexact(creation.asarray(A), creation.asarray(B), creation.asarray(C))
    m, n = c.shape[-2:]
    if a.shape[-2:] != (m, m) or b.shape[-2:] != (n, n):
        raise ValueError(f"Incompatible shapes for Sylvester equation:\nA: {a.shape}\nB: {b.shape}\nC: {c.shape}")
    return jnp.vectorize(functools.partial(_solve_sylvester_2d, method=method, tol=tol),
                         signature="(m,m),(n,n),(m,n)->(m,n)")(a, b, c)


# ---- qr_multiply --------------------------------------------------------------------------------

def qr_multiply(a, c, mode="right", pivoting=False, conjugate=False, overwrite_a=False, overwrite_c=False):
    """The QR decomposition of a with Q applied to c without forming it: (Q c, R) for mode='left'
    (c [..., min(m, n), p]), (c Q, R) for mode='right' (c [..., p, m]; the first min(m, n) columns);
    with pivoting also the column order p. conjugate uses conj(Q)."""
    a, c = util.promote_dtypes_inexact(creation.asarray(a), creation.asarray(c))
    if mode not in ("right", "left"):
        raise ValueError(f"mode must be 'right' or 'left', got {mode!r}")
    onedim = c.ndim == 1
    if onedim:
        c = c[:, None] if mode == "left" else c[None, :]
    m, n = a.shape[-2:]
    k = min(m, n)
    if mode == "left" and c.shape[-2] != k:
        raise ValueError(f"Array shapes are not compatible for Q @ c operation: a has shape {tuple(a.shape)} so Q "
                         f"has {k} columns, but c has {c.shape[-2]} rows (expected {k}).")
    if mode == "right" and c.shape[-1] != m:
        raise ValueError(f"Array shapes are not compatible for c @ Q operation: a has shape {tuple(a.shape)} so Q "
                         f"has {m} rows, but c has {c.shape[-1]} columns (expected {m}).")
    batch = jnp.broadcast_shapes(a.shape[:-2], c.shape[:-2])
    a = jnp.broadcast_to(a, batch + a.shape[-2:])
    c = jnp.broadcast_to(c, batch + c.shape[-2:])
    if pivoting:
        r, taus, p = linalg_forms.geqp3(a)
    else:
        r, taus = linalg_forms.geqrf(a)
    if m > n and mode == "left":  # Q's columns beyond k meet zero rows of c
        c = jnp.concatenate([c, jnp.zeros(c.shape[:-2] + (m - k,) + c.shape[-1:], c.dtype)], axis=-2)
    if conjugate:  # c conj(Q) = (Q^H c^T)^T: transposing c moves Q to the other side
        c = jnp.swapaxes(c, -1, -2)
    left = (mode == "left") != conjugate
    cq = linalg_forms.ormqr(r, taus, c, left=left, transpose=conjugate)
    if conjugate:
        cq = jnp.swapaxes(cq, -1, -2)
    if mode == "right":
        cq = cq[..., :k]
    if onedim:
        cq = cq.ravel()
    r = jnp.triu(r[..., :k, :])
    return (cq, r, p) if pivoting else (cq, r)
