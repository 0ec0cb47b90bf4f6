"""jax.scipy.sparse.linalg: the Krylov solvers cg, bicgstab and gmres, as JAX defines them. A (and the
preconditioner M) is a matrix or a function computing A @ x; b and x0 are pytrees of arrays, every vector
operation running leaf by leaf. Each solve runs as a lax.while_loop inside lax.custom_linear_solve, so
derivatives come from solving again (implicitly), not from differentiating the iterations. As in JAX,
cg and bicgstab return info=None and gmres an info of -1 when its solution holds a NaN, 0 otherwise."""
from functools import partial
import operator

import numpy as np

from xjax._src import dtypes, lax, tree_util
from xjax._src.array import Array
from xjax._src.linear_solve import custom_linear_solve
from xjax._src.scipy import linalg as scipy_linalg
from xjax._src.tree_util import Partial, tree_leaves, tree_map, tree_structure
import xjax.numpy as jnp

_HIGHEST = lax.Precision.HIGHEST
_dot = partial(jnp.dot, precision=_HIGHEST)


# ---- vector operations on pytrees -----------------------------------------------------------------

def _vdot_real_part(x, y):
    """Re(x^H y), which is z^H M z for the Hermitian positive definite uses below."""
    result = jnp.vdot(x.real, y.real, precision=_HIGHEST)
    if jnp.iscomplexobj(x) or jnp.iscomplexobj(y):
        result = result + jnp.vdot(x.imag, y.imag, precision=_HIGHEST)
    return result


def _vdot_real_tree(x, y):
    return sum(tree_leaves(tree_map(_vdot_real_part, x, y)))


def _vdot_tree(x, y):
    return sum(tree_leaves(tree_map(partial(jnp.vdot, precision=_HIGHEST), x, y)))


def _norm(x):
    leaves = tree_leaves(x)
    return jnp.sqrt(sum(map(_vdot_real_part, leaves, leaves)))


def _mul(scalar, tree):
    return tree_map(partial(operator.mul, scalar), tree)


_add = partial(tree_map, operator.add)
_sub = partial(tree_map, operator.sub)


@Partial
def _identity(x):
    return x


def _as_matvec(f):
    """A function x -> A x, from a function, a square matrix or anything with __matmul__."""
    if callable(f):
        return f
    if isinstance(f, (np.ndarray, Array)):
        if f.ndim != 2 or f.shape[0] != f.shape[1]:
            raise ValueError(f"linear operator must be a square matrix, but has shape: {f.shape}")
        return partial(_dot, f)
    if hasattr(f, "__matmul__"):
        if hasattr(f, "shape") and (len(f.shape) != 2 or f.shape[0] != f.shape[1]):
            raise ValueError(f"linear operator must be a square matrix, but has shape: {f.shape}")
        return partial(operator.matmul, f)
    raise TypeError(f"linear operator must be either a function or ndarray: {f}")


def _result_dtype(tree):
    return dtypes.result_type(*tree_leaves(tree))


def _one_like(tree):
    dtype, weak = dtypes.result_type(*tree_leaves(tree), return_weak_type_flag=True)
    return lax.convert_element_type(1, dtype) if not weak else jnp.asarray(1, dtype)


# ---- cg and bicgstab ------------------------------------------------------------------------------

def _cg_solve(A, b, x0, *, maxiter, tol, atol, M):
    """Preconditioned conjugate gradients until |r|^2 <= max(tol^2 |b|^2, atol^2) (SciPy's new criterion)."""
    atol2 = jnp.maximum(jnp.square(tol) * _vdot_real_tree(b, b), jnp.square(atol))
    r0 = _sub(b, A(x0))
    p0 = z0 = M(r0)
    dtype = _result_dtype(p0)
    gamma0 = _vdot_real_tree(r0, z0).astype(dtype)

    def cond(state):
        _, r, gamma, _, k = state
        rs = gamma.real if M is _identity else _vdot_real_tree(r, r)
        return (rs > atol2) & (k < maxiter)

    def body(state):
        x, r, gamma, p, k = state
        Ap = A(p)
        alpha = gamma / _vdot_real_tree(p, Ap).astype(dtype)
        x = _add(x, _mul(alpha, p))
        r = _sub(r, _mul(alpha, Ap))
        z = M(r)
        gamma_next = _vdot_real_tree(r, z).astype(dtype)
        p = _add(z, _mul(gamma_next / gamma, p))
        return x, r, gamma_next, p, k + 1

    return lax.while_loop(cond, body, (x0, r0, gamma0, p0, 0))[0]


def _bicgstab_solve(A, b, x0, *, maxiter, tol, atol, M):
    """Preconditioned BiCGSTAB; stops at the tolerance, at maxiter, or on breakdown (rho, alpha or omega 0)."""
    atol2 = jnp.maximum(jnp.square(tol) * _vdot_real_tree(b, b), jnp.square(atol))

    def cond(state):
        x, r, *_, k = state
        return (_vdot_real_tree(r, r) > atol2) & (k < maxiter) & (k >= 0)

    def body(state):
        x, r, rhat, alpha, omega, rho, p, q, k = state
        rho_next = _vdot_tree(rhat, r)
        beta = rho_next / rho * alpha / omega
        p = _add(r, _mul(beta, _sub(p, _mul(omega, q))))
        phat = M(p)
        q = A(phat)
        alpha = rho_next / _vdot_tree(rhat, q)
        s = _sub(r, _mul(alpha, q))
        exit_early = _vdot_real_tree(s, s) < atol2
        shat = M(s)
        t = A(shat)
        omega = _vdot_tree(t, s) / _vdot_tree(t, t)
        x = tree_map(partial(jnp.where, exit_early), _add(x, _mul(alpha, phat)),
                     _add(x, _add(_mul(alpha, phat), _mul(omega, shat))))
        r = tree_map(partial(jnp.where, exit_early), s, _sub(s, _mul(omega, t)))
        k = jnp.where((omega == 0) | (alpha == 0), -11, k + 1)
        k = jnp.where(rho_next == 0, -10, k)
        return x, r, rhat, alpha, omega, rho_next, p, q, k

    r0 = _sub(b, A(x0))
    one = _one_like(b)
    return lax.while_loop(cond, body, (x0, r0, r0, one, one, one, r0, r0, 0))[0]


def _shapes(tree):
    return [np.shape(leaf) for leaf in tree_leaves(tree)]


def _check_x0(b, x0):
    if tree_structure(x0) != tree_structure(b):
        raise ValueError(f"x0 and b must have matching tree structure: {tree_structure(x0)} vs {tree_structure(b)}")
    if _shapes(x0) != _shapes(b):
        raise ValueError(f"arrays in x0 and b must have matching shapes: {_shapes(x0)} vs {_shapes(b)}")


def _as_arrays(tree):
    return tree_map(jnp.asarray, tree)


def _isolve(solver, A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None, check_symmetric=False):
    b = _as_arrays(b)
    x0 = tree_map(jnp.zeros_like, b) if x0 is None else _as_arrays(x0)
    if maxiter is None:
        maxiter = 10 * sum(leaf.size for leaf in tree_leaves(b))  # SciPy's default
    A, M = _as_matvec(A), _as_matvec(_identity if M is None else M)
    _check_x0(b, x0)
    solve = partial(solver, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)
    # A real positive definite operator is symmetric, so its transpose solve is the solve itself.
    symmetric = check_symmetric and all(not jnp.iscomplexobj(leaf) for leaf in tree_leaves(b))
    x = custom_linear_solve(A, b, solve=solve, transpose_solve=solve, symmetric=symmetric)
    return x, None


def cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solves A x = b for Hermitian positive definite A by conjugate gradients: (x, None)."""
    return _isolve(_cg_solve, A, b, x0, tol=tol, atol=atol, maxiter=maxiter, M=M, check_symmetric=True)


def bicgstab(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solves A x = b for general A by the biconjugate gradient stabilized method: (x, None)."""
    return _isolve(_bicgstab_solve, A, b, x0, tol=tol, atol=atol, maxiter=maxiter, M=M)


# ---- gmres ----------------------------------------------------------------------------------------

def _safe_normalize(x, thresh=None):
    """(x / |x|, |x|), or (0, 0) where |x| <= thresh (epsilon by default)."""
    norm = _norm(x)
    dtype, weak = dtypes.result_type(*tree_leaves(x), return_weak_type_flag=True)
    if thresh is None:
        thresh = jnp.asarray(dtypes.finfo(norm.dtype).eps, norm.dtype)
    thresh = thresh.astype(dtype).real
    use_norm = norm > thresh
    norm_cast = norm.astype(dtype)
    return tree_map(lambda y: jnp.where(use_norm, y / norm_cast, 0.0), x), jnp.where(use_norm, norm, 0.0)


def _project_on_columns(Q, v):
    projections = tree_map(lambda X, y: jnp.einsum("...n,...->n", X.conj(), y, precision=_HIGHEST), Q, v)
    return tree_util.tree_reduce(operator.add, projections)


def _gram_schmidt(Q, x, xnorm, max_iterations=2):
    """x orthogonalised against Q's columns by classical Gram-Schmidt, repeated while it lost more than
    half its norm ("twice is enough"); the coefficients r."""
    Q0 = tree_leaves(Q)[0]
    r = jnp.zeros(Q0.shape[-1], dtype=Q0.dtype)

    def body(carry):
        k, q, r, qnorm_scaled = carry
        h = _project_on_columns(Q, q)
        q = _sub(q, tree_map(lambda X: _dot(X, h), Q))
        r = _add(r, h)

        def again(carry):
            return carry[0], False, carry[2], _safe_normalize(carry[2])[1] / jnp.sqrt(2.0)

        _, _, q, qnorm_scaled = lax.while_loop(lambda c: c[1] & (c[0] < max_iterations - 1), again,
                                               (k, True, q, qnorm_scaled))
        return k + 1, q, r, qnorm_scaled

    def cond(carry):
        k, _, r, qnorm_scaled = carry
        return (k < max_iterations - 1) & (_safe_normalize(r)[1] < qnorm_scaled)

    carry = body((0, x, r, xnorm / jnp.sqrt(2.0)))
    _, q, r, _ = lax.while_loop(cond, body, carry)
    return q, r


def _arnoldi_step(k, A, M, V, H):
    """The k-th Arnoldi step: V[:, k+1] and row k of H; breakdown when the new vector vanishes."""
    dtype = _result_dtype(V)
    v = M(A(tree_map(lambda X: X[..., k], V)))
    _, v_norm_0 = _safe_normalize(v)
    v, h = _gram_schmidt(V, v, v_norm_0)
    unit_v, v_norm_1 = _safe_normalize(v, thresh=dtypes.finfo(dtype).eps * v_norm_0)
    V = tree_map(lambda X, y: X.at[..., k + 1].set(y), V, unit_v)
    H = H.at[k, :].set(h.at[k + 1].set(v_norm_1.astype(dtype)))
    return V, H, v_norm_1 == 0.0


def _rotate(H, i, cs, sn):
    x, y = H[i], H[i + 1]
    return H.at[i].set(cs.conj() * x - sn.conj() * y).at[i + 1].set(sn * x + cs * y)


def _givens(a, b):
    b_zero, a_lt_b = abs(b) == 0, abs(a) < abs(b)
    t = -jnp.where(a_lt_b, a, b) / jnp.where(a_lt_b, b, a)
    r = lax.rsqrt(1 + abs(t) ** 2).astype(t.dtype)
    return jnp.where(b_zero, 1, jnp.where(a_lt_b, r * t, r)), jnp.where(b_zero, 0, jnp.where(a_lt_b, r, r * t))


def _apply_givens(row, givens, k):
    row = lax.fori_loop(0, k, lambda i, row: _rotate(row, i, *givens[i, :]), row)
    factors = _givens(row[k], row[k + 1])
    return _rotate(row, k, *factors), givens.at[k, :].set(jnp.stack(factors))


def _krylov_basis(unit_residual, restart):
    return tree_map(lambda x: jnp.pad(x[..., None], ((0, 0),) * x.ndim + ((0, restart),)), unit_residual)


def _restart_result(A, b, M, x0, V, y):
    x = _add(x0, tree_map(lambda X: _dot(X[..., :-1], y), V))
    unit_residual, residual_norm = _safe_normalize(M(_sub(b, A(x))))
    return x, unit_residual, residual_norm


def _gmres_incremental(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
    """One restart, QR-factorising the Hessenberg matrix by Givens rotations as it grows, so the
    residual is known at every step and the restart stops at ptol."""
    V = _krylov_basis(unit_residual, restart)
    dtype = _result_dtype(b)
    R = jnp.eye(restart, restart + 1, dtype=dtype)  # the identity keeps R regular if the loop stops early
    givens = jnp.zeros((restart, 2), dtype=dtype)
    beta = jnp.zeros(restart + 1, dtype=dtype).at[0].set(residual_norm.astype(dtype))

    def step(carry):
        k, _, V, R, beta, givens = carry
        V, H, _ = _arnoldi_step(k, A, M, V, R)
        row, givens = _apply_givens(H[k, :], givens, k)
        beta = _rotate(beta, k, *givens[k, :])
        return k + 1, abs(beta[k + 1]), V, R.at[k, :].set(row), beta, givens

    _, _, V, R, beta, _ = lax.while_loop(lambda c: (c[0] < restart) & (c[1] > ptol), step,
                                         (0, residual_norm, V, R, beta, givens))
    y = scipy_linalg.solve_triangular(R[:, :-1].T, beta[:-1])
    return _restart_result(A, b, M, x0, V, y)


def _gmres_batched(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
    """One restart of `restart` Arnoldi steps (fewer on breakdown), then the least-squares problem once,
    by the normal equations."""
    del ptol
    V = _krylov_basis(unit_residual, restart)
    dtype, weak = dtypes.result_type(*tree_leaves(b), return_weak_type_flag=True)
    H = jnp.eye(restart, restart + 1, dtype=dtype)

    def step(carry):
        V, H, _, k = carry
        V, H, breakdown = _arnoldi_step(k, A, M, V, H)
        return V, H, breakdown, k + 1

    V, H, _, _ = lax.while_loop(lambda c: (c[3] < restart) & ~c[2], step, (V, H, False, 0))
    beta = jnp.zeros(restart + 1, dtype=dtype).at[0].set(residual_norm.astype(dtype))
    Ht = H.T
    y = scipy_linalg.solve(_dot(Ht.T.conj(), Ht), _dot(Ht.T.conj(), beta), assume_a="pos")
    return _restart_result(A, b, M, x0, V, y)


def _gmres_solve(A, b, x0, atol, ptol, restart, maxiter, M, restart_fn):
    unit_residual, residual_norm = _safe_normalize(M(_sub(b, A(x0))))

    def body(state):
        x, k, unit_residual, residual_norm = state
        x, unit_residual, residual_norm = restart_fn(A, b, x, unit_residual, residual_norm, ptol, restart, M)
        return x, k + 1, unit_residual, residual_norm

    return lax.while_loop(lambda s: (s[1] < maxiter) & (s[3] > atol), body, (x0, 0, unit_residual, residual_norm))[0]


def gmres(A, b, x0=None, *, tol=1e-5, atol=0.0, restart=20, maxiter=None, M=None, solve_method="batched"):
    """Solves A x = b by restarted GMRES: at most maxiter restarts of `restart` Arnoldi steps until the
    preconditioned residual falls to max(tol |b|, atol). solve_method 'batched' solves each restart's
    least-squares problem once at its end; 'incremental' updates a QR factorisation step by step and
    can stop a restart early. Returns (x, info), info -1 where x holds a NaN, else 0."""
    if solve_method == "incremental":
        restart_fn = _gmres_incremental
    elif solve_method == "batched":
        restart_fn = _gmres_batched
    else:
        raise ValueError(f"invalid solve_method {solve_method}, must be either 'incremental' or 'batched'")
    b = _as_arrays(b)
    x0 = tree_map(jnp.zeros_like, b) if x0 is None else _as_arrays(x0)
    A, M = _as_matvec(A), _as_matvec(_identity if M is None else M)
    size = sum(leaf.size for leaf in tree_leaves(b))
    if maxiter is None:
        maxiter = 10 * size  # SciPy's default
    restart = min(restart, size)
    if tree_structure(x0) != tree_structure(b):
        raise ValueError(f"x0 and b must have matching tree structure: {tree_structure(x0)} vs {tree_structure(b)}")
    b_norm = _norm(b)
    atol = jnp.maximum(tol * b_norm, atol)
    ptol = _norm(M(b)) * jnp.minimum(1.0, atol / b_norm)

    def solve(A, b):
        return _gmres_solve(A, b, x0, atol, ptol, restart, maxiter, M, restart_fn)

    x = custom_linear_solve(A, b, solve=solve, transpose_solve=solve)
    return x, jnp.where(jnp.isnan(_norm(x)), -1, 0)
