"""jax.scipy.linalg: SciPy's linear-algebra API on lax.linalg, as JAX defines it (factors, solves from
factors, the positive-definite solve with custom_linear_solve's derivative, block_diag; expm lives
in expm.py). SciPy's overwrite_*/check_finite/lapack_driver arguments are accepted and ignored."""
import warnings

import numpy as np

import xjax.numpy as jnp
from xjax._src import dtypes, lax
from xjax._src.jit import jit
from xjax._src.lax import linalg as lax_linalg
from xjax._src.numpy import (creation, decompositions, determinants, factor_solve, linalg_solve as jnp_solve,
                             manipulation, util)
from xjax._src.numpy.linalg_solve import _gufunc_operands


def _inexact(*args):
    """The operands as arrays (lists too, as JAX's jnp.asarray takes them) promoted to a float dtype."""
    return util.promote_dtypes_inexact(*[creation.asarray(a) for a in args])


def _matrix(name, a, square=False):
    a, = _inexact(a)
    shape = a.aval.shape
    if len(shape) < 2:
        raise TypeError(f"Input 0 to {name} must have rank at least 2, but got shape={shape}")
    if square and shape[-1] != shape[-2]:
        raise ValueError(f"The input to {name} must be a square matrix. Got shape {shape}.")
    return a


def _solve_operands(name, a, b, *factors):
    """(a, *factors, b, vector?) broadcast over batch dims with jnp.vectorize's checks: b is one vector
    [n], a batch of vectors when b has one dim less than a and ends in n (JAX's deprecated reading), or
    matrices [..., n, k]."""
    a, b = _inexact(a, b)
    sa, sb = a.aval.shape, b.aval.shape
    vector = len(sb) == 1
    if not vector and len(sa) == len(sb) + 1 and len(sa) >= 2 and sa[-1] == sb[-1]:
        warnings.warn(f"jax.scipy.linalg.{name}: batched 1D solves with b.ndim > 1 are deprecated, and in the future "
                      f"will be treated as a batched 2D solve. Use {name}(..., b[..., None]).squeeze(-1) to avoid "
                      "this warning.", FutureWarning, stacklevel=3)
        vector = True
    rhs = ("n",) if vector else ("n", "k")
    sig = ",".join(["(n,n)"] + ["(n)"] * len(factors) + ["(" + ",".join(rhs) + ")"]) + "->(" + ",".join(rhs) + ")"
    ops = _gufunc_operands(sig, (a, ("n", "n")), *[(f, ("n",)) for f in factors], (b, rhs))
    if vector:
        ops[-1] = ops[-1][..., None]
    return ops, vector


def _unvector(x, vector):
    return x[..., 0] if vector else x


# ---- Cholesky ----------------------------------------------------------------------------------

@jit(static_argnames=("lower",))
def _cholesky(a, lower):
    return factor_solve.cholesky_factor(a, lower)


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """The Cholesky factor of a, read from one triangle: upper U (a = U^H U) or lower L (a = L L^H)."""
    del overwrite_a, check_finite
    return _cholesky(_matrix("cholesky", a, square=True), bool(lower))


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """(c, lower): the Cholesky factor of a, for cho_solve."""
    del overwrite_a, check_finite
    return cholesky(a, lower=lower), lower


@jit(static_argnames=("lower",))
def _cho_solve(c, b, lower):
    return factor_solve.cho_solve(c, b, lower)


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """x with a @ x == b, given (c, lower) = cho_factor(a)."""
    del overwrite_b, check_finite
    c, lower = c_and_lower
    (c, b), vector = _solve_operands("cho_solve", c, b)
    return _unvector(_cho_solve(c, b, bool(lower)), vector)


# ---- triangular solve -----------------------------------------------------------------------------

_TRANS = {0: "N", "N": "N", 1: "T", "T": "T", 2: "C", "C": "C"}


@jit(static_argnames=("trans", "lower", "unit_diagonal"))
def _solve_triangular(a, b, trans, lower, unit_diagonal):
    return lax_linalg.triangular_solve(a, b, left_side=True, lower=lower, transpose_a=trans != "N",
                                       conjugate_a=trans == "C", unit_diagonal=unit_diagonal)


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, debug=None,
                     check_finite=True):
    """x with op(a) @ x == b for triangular a (only its lower or upper triangle is read); op is the
    identity (trans 0 or 'N'), the transpose (1, 'T') or the conjugate transpose (2, 'C')."""
    del overwrite_b, debug, check_finite
    if isinstance(trans, (bool, np.bool_)) or trans not in _TRANS:
        raise ValueError(f"Invalid 'trans' value {trans}")
    (a, b), vector = _solve_operands("solve_triangular", a, b)
    return _unvector(_solve_triangular(a, b, _TRANS[trans], bool(lower), bool(unit_diagonal)), vector)


# ---- LU ----------------------------------------------------------------------------------------

@jit(static_argnames=("permute_l",))
def _lu(a, permute_l):
    lu, _, permutation = lax_linalg.lu(a)
    m, n = a.aval.shape[-2:]
    k = min(m, n)
    dt = a.aval.dtype
    # P[i, j] = 1 where row i of a went to row j of L U: a = P L U.
    rows = lax.broadcasted_iota(permutation.aval.dtype, (m, m), 0)
    p = (permutation[..., None, :] == rows).astype(dt)
    lower = creation.tril(lu, -1)[..., :, :k] + creation.eye(m, k, dtype=dt)
    upper = creation.triu(lu)[..., :k, :]
    if permute_l:
        return p @ lower, upper
    if dtypes.is_complex(dt):  # JAX's p of a complex matrix is real
        p = p.real
    return p, lower, upper


def lu(a, permute_l=False, overwrite_a=False, check_finite=True):
    """(p, l, u) with a = p @ l @ u (l unit lower [m, k], u upper [k, n]), or (p @ l, u) with permute_l."""
    del overwrite_a, check_finite
    return _lu(_matrix("lu", a), bool(permute_l))


@jit
def _lu_factor(a):
    lu, pivots, _ = lax_linalg.lu(a)
    return lu, pivots


def lu_factor(a, overwrite_a=False, check_finite=True):
    """(lu, piv): L (unit diagonal, not stored) and U in one matrix, and LAPACK's row swaps (0-based)."""
    del overwrite_a, check_finite
    return _lu_factor(_matrix("lu_factor", a))


@jit(static_argnames=("trans",))
def _lu_solve(lu, permutation, b, trans):
    return factor_solve.lu_solve(lu, permutation, b, trans)


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """x with a @ x == b (trans 0), a^T @ x == b (1) or a^H @ x == b (2), given (lu, piv) = lu_factor(a)."""
    del overwrite_b, check_finite
    lu_, pivots = lu_and_piv
    lu_, = _inexact(lu_)
    if trans not in (0, 1, 2):
        raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")
    m = lu_.aval.shape[-2] if lu_.aval.ndim >= 2 else 0
    permutation = lax_linalg.lu_pivots_to_permutation(util.asarray(pivots), m)
    (lu_, permutation, b), vector = _solve_operands("lu_solve", lu_, b, permutation)
    return _unvector(_lu_solve(lu_, permutation, b, trans), vector)


# ---- QR, eigh, svd, det, inv ----------------------------------------------------------------------

@jit(static_argnames=("mode", "pivoting"))
def _qr(a, mode, pivoting):
    q, r, *p = lax_linalg.qr(a, pivoting=pivoting, full_matrices=mode != "economic")
    if mode == "r":
        return (r, *p)
    return (q, r, *p)


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """The QR decomposition (q, r), (r,) for mode "r", with the column permutation p appended when
    pivoting (a[:, p] = q @ r); mode "full" gives a square q, "economic" k = min(m, n) columns."""
    del overwrite_a, lwork, check_finite
    if mode not in ("full", "r", "economic"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    return _qr(_matrix("qr", a), mode, bool(pivoting))


@jit(static_argnames=("lower", "eigvals_only"))
def _eigh(a, lower, eigvals_only):
    v, w = lax_linalg.eigh(a, lower=lower)
    return w if eigvals_only else (w, v)


def eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False, turbo=True,
         eigvals=None, type=1, check_finite=True):  # noqa: A002 - SciPy's name
    """Eigenvalues (ascending) and eigenvectors of a symmetric matrix, or the eigenvalues alone."""
    del overwrite_a, overwrite_b, turbo, check_finite
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if type != 1:
        raise NotImplementedError("Only the type=1 case of eigh is implemented.")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    return _eigh(_matrix("eigh", a, square=True), bool(lower), bool(eigvals_only))


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True, lapack_driver="gesdd"):
    """The singular value decomposition (u, s, vh), or s alone when compute_uv is False."""
    del overwrite_a, check_finite, lapack_driver
    out = decompositions.svd(_matrix("svd", a), full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(out) if compute_uv else out


def det(a, overwrite_a=False, check_finite=True):
    """The determinant of each square matrix (jnp.linalg.det)."""
    del overwrite_a, check_finite
    return determinants.det(a)


def inv(a, overwrite_a=False, check_finite=True):
    """The inverse of each square matrix (jnp.linalg.inv)."""
    del overwrite_a, check_finite
    return jnp_solve.inv(a)


# ---- solve ---------------------------------------------------------------------------------------

_ASSUME_A = ["gen", "sym", "her", "pos"]


@jit(static_argnames=("lower",))
def _pos_solve(a, b, lower):
    return factor_solve.pos_solve(lower, a, b)


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, debug=False, check_finite=True, assume_a="gen"):
    """x with a @ x == b. assume_a "pos" solves by Cholesky of the triangle `lower` names (a must be
    positive definite); "gen", "sym" and "her" by LU, as jnp.linalg.solve."""
    del overwrite_a, overwrite_b, debug, check_finite
    if assume_a not in _ASSUME_A:
        raise ValueError(f"Expected assume_a to be one of {_ASSUME_A}; got {assume_a!r}")
    if assume_a != "pos":
        return jnp_solve.solve(a, b)
    a, b = _inexact(a, b)
    sa, sb = a.aval.shape, b.aval.shape
    if not (len(sa) >= 2 and len(sb) in (len(sa), len(sa) - 1) and sa[-1] == sa[-2] == sb[len(sa) - 2]):
        raise ValueError("The arguments to solve must have shapes a=[..., m, m] and b=[..., m, k] or b=[..., m]; "
                         f"got a={sa} and b={sb}")
    vector = len(sb) == len(sa) - 1
    rhs = ("m",) if vector else ("m", "k")
    a, b = _gufunc_operands("(m,m),(m)->(m)" if vector else "(m,m),(m,k)->(m,k)", (a, ("m", "m")), (b, rhs))
    return _unvector(_pos_solve(a, b[..., None] if vector else b, bool(lower)), vector)


# ---- block_diag ------------------------------------------------------------------------------------

def block_diag(*arrs):
    """The matrix with the given blocks (scalars and 1-D arrays read as single rows) on its diagonal."""
    if not arrs:
        arrs = (creation.zeros((1, 0)),)
    util.check_arraylike("jax.scipy.linalg.block_diag", *arrs)
    arrs = util.promote_dtypes(*[util.asarray(a) for a in arrs])
    for i, a in enumerate(arrs):
        if a.aval.ndim > 2:
            shape = ",".join(map(str, a.aval.shape))
            raise ValueError(f"Arguments to jax.scipy.linalg.block_diag must have at most 2 dimensions, got "
                             f"{a.aval.dtype.name}[{shape}] at argument {i}.")
    blocks = [manipulation.atleast_2d(a) for a in arrs]
    total = sum(b.aval.shape[1] for b in blocks)
    rows, col = [], 0
    for b in blocks:
        cols = b.aval.shape[1]
        rows.append(lax.pad(b, util.full((), 0, b.aval.dtype), ((0, 0, 0), (col, total - col - cols, 0))))
        col += cols
    return manipulation.concatenate(rows, axis=0)


def toeplitz(c, r=None):
    """The Toeplitz matrix with first column c and first row r (r[0] is ignored; r defaults to conj(c)):
    A[i, j] = c[i - j] for i >= j, r[j - i] for i < j. Leading axes of c and r broadcast."""
    c = jnp.asarray(c)
    r = jnp.conjugate(c) if r is None else jnp.asarray(r)
    if c.ndim < 1 or r.ndim < 1:
        raise ValueError(f"toeplitz: c and r need at least one axis, got shapes {c.shape} and {r.shape}")
    batch = np.broadcast_shapes(c.shape[:-1], r.shape[:-1])
    c = jnp.broadcast_to(c, batch + c.shape[-1:])
    r = jnp.broadcast_to(r, batch + r.shape[-1:])
    m, n = c.shape[-1], r.shape[-1]
    diagonals = jnp.concatenate([jnp.flip(c, -1), r[..., 1:]], axis=-1)  # index m-1+j-i holds A[i, j]
    index = (m - 1) - np.arange(m)[:, None] + np.arange(n)[None, :]
    return diagonals[..., index]
