"""Linear solves from factors, shared by jnp.linalg and jax.scipy.linalg: lu_solve, cho_solve, the
differentiable square solves (general by LU, positive definite by Cholesky) whose derivatives are
JAX's custom_linear_solve's: x' = A^-1 (b' - A' x), through the factors of the primal solve, and inv.

Operands here are already promoted and broadcast: a [..., m, m], b [..., m, k] with equal batch dims.
"""
from xjax._src.custom_derivatives import SymbolicZero, custom_jvp
from xjax._src.lax.elementwise import broadcasted_iota, convert_element_type, eq, neg, sub
from xjax._src.lax.layout import broadcast_in_dim
from xjax._src.lax.linalg import (_H, _inverse_permutation, _matmul, _permute_rows, _scalar, cholesky, lu,
                                  triangular_solve)


def lu_solve(lu_, permutation, b, trans=0):
    """X with A X = B (trans 0), A^T X = B (1) or A^H X = B (2), given P A = L U as lax.linalg.lu gives it."""
    if trans == 0:
        x = _permute_rows(b, permutation)
        x = triangular_solve(lu_, x, left_side=True, lower=True, unit_diagonal=True)
        return triangular_solve(lu_, x, left_side=True, lower=False)
    if trans in (1, 2):  # A^T = U^T L^T P (A^H: conjugated)
        conj = trans == 2
        x = triangular_solve(lu_, b, left_side=True, lower=False, transpose_a=True, conjugate_a=conj)
        x = triangular_solve(lu_, x, left_side=True, lower=True, transpose_a=True, conjugate_a=conj,
                             unit_diagonal=True)
        return _permute_rows(x, _inverse_permutation(permutation))
    raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")


def cho_solve(c, b, lower):
    """X with A X = B, given A's Cholesky factor c (lower: A = c c^H, else A = c^H c)."""
    b = triangular_solve(c, b, left_side=True, lower=lower, transpose_a=not lower, conjugate_a=not lower)
    return triangular_solve(c, b, left_side=True, lower=lower, transpose_a=lower, conjugate_a=lower)


def _tangent_rhs(a_dot, b_dot, x):
    """b' - A' x, the right-hand side of the tangent solve (None where both tangents are zero)."""
    a_zero, b_zero = type(a_dot) is SymbolicZero, type(b_dot) is SymbolicZero
    if a_zero and b_zero:
        return None
    if a_zero:
        return b_dot
    ax = _matmul(a_dot, x)
    return neg(ax) if b_zero else sub(b_dot, ax)


def _zeros_like(x):
    return _scalar(x, 0)


@custom_jvp
def solve(a, b):
    """X with A X = B for square A (one LU factorisation); singular A gives infs/NaNs."""
    lu_, _, permutation = lu(a)
    return lu_solve(lu_, permutation, b)


def _solve_jvp(primals, tangents):
    # The factors serve the primal and the tangent solve alike: the tangent is linear in (a', b')
    # through triangular solves of known factors, so reverse mode needs no second factorisation.
    (a, b), (a_dot, b_dot) = primals, tangents
    lu_, _, permutation = lu(a)
    x = lu_solve(lu_, permutation, b)
    rhs = _tangent_rhs(a_dot, b_dot, x)
    return x, (_zeros_like(x) if rhs is None else lu_solve(lu_, permutation, rhs))


solve.defjvp(_solve_jvp, symbolic_zeros=True)


def _inv_from_lu(lu_, permutation):
    """A^-1 = U^-1 L^-1 P, P (the identity's rows in the permutation's order) made by a compare: cheaper
    than gathering the rows of an identity."""
    shape = lu_.aval.shape
    nd = len(shape)
    cols = broadcasted_iota(permutation.aval.dtype, shape, nd - 1)
    rows = broadcast_in_dim(permutation, shape, tuple(range(nd - 1)))
    p = convert_element_type(eq(rows, cols), lu_.aval.dtype)
    x = triangular_solve(lu_, p, left_side=True, lower=True, unit_diagonal=True)
    return triangular_solve(lu_, x, left_side=True, lower=False)


@custom_jvp
def inv(a):
    """The inverse of each square matrix (one LU factorisation); a singular one gives infs/NaNs."""
    lu_, _, permutation = lu(a)
    return _inv_from_lu(lu_, permutation)


def _inv_jvp(primals, tangents):
    # (A^-1)' = -A^-1 A' A^-1: what the linear-solve rule of solve(A, I) gives, as two products.
    (a,), (a_dot,) = primals, tangents
    lu_, _, permutation = lu(a)
    x = _inv_from_lu(lu_, permutation)
    return x, neg(_matmul(_matmul(x, a_dot), x))


inv.defjvp(_inv_jvp)


def cholesky_factor(a, lower):
    """The Cholesky factor of A read from its lower (or upper) triangle only, as scipy.linalg.cholesky
    (upper: U with A = U^H U, the conjugate transpose of the lower factor of A^H, as JAX)."""
    if lower:
        return cholesky(a, symmetrize_input=False)
    return _H(cholesky(_H(a), symmetrize_input=False))


def _pos_solve_impl(lower, a, b):
    return cho_solve(cholesky_factor(a, lower), b, lower)


pos_solve = custom_jvp(_pos_solve_impl, nondiff_argnums=(0,))
pos_solve.__doc__ = "X with A X = B for symmetric positive-definite A, read from one triangle (Cholesky)."


def _pos_solve_jvp(lower, primals, tangents):
    (a, b), (a_dot, b_dot) = primals, tangents
    c = cholesky_factor(a, lower)
    x = cho_solve(c, b, lower)
    rhs = _tangent_rhs(a_dot, b_dot, x)
    return x, (_zeros_like(x) if rhs is None else cho_solve(c, rhs, lower))


pos_solve.defjvp(_pos_solve_jvp, symbolic_zeros=True)
