"""QDWH (QR-based dynamically weighted Halley iteration) for the polar decomposition, as
jax.lax.linalg.qdwh: Nakatsukasa, Bai and Gygi, "Optimizing Halley's iteration for computing the
matrix polar decomposition", SIAM J. Matrix Anal. Appl. 31(5), 2010. The weights of the first
iterations are known in advance from the lower bound eps on the scaled singular values: iterations
with a large weight c go through a QR of [sqrt(c) U; I], the others through a Cholesky factor of
c U^T U + I; then plain Halley steps until the iterate stops moving."""
import numpy as np

from xjax._src import core, dtypes
from xjax._src.lax.base import asarray
from xjax._src.lax.complex_parts import conj
from xjax._src.lax.control_flow import fori_loop, while_loop
from xjax._src.lax.elementwise import (abs as _abs, add, bitwise_and, broadcasted_iota, convert_element_type, eq, gt,
                                       lt, mul, rsqrt, select, sqrt, sub)
from xjax._src.lax.layout import broadcast_in_dim, concatenate, dynamic_index_in_dim, slice as _slice
from xjax._src.lax.linalg import _eye, _matmul, _T, cholesky, qr, triangular_solve
from xjax._src.lax.reduction import reduce_max, reduce_sum

__all__ = ["qdwh"]

_CHOLESKY_CUTOFF = 100  # a weight c above this goes through QR, which is stabler there


def _H(x):
    return conj(_T(x)) if dtypes.is_complex(core.get_aval(x).dtype) else _T(x)


def _scalar(v, dtype):
    return asarray(v, dtype)


def _frobenius(x):
    ax = _abs(x)
    return sqrt(reduce_sum(mul(ax, ax), (0, 1)))


def _mask(x, dims):
    """x with the entries outside the leading `dims` (the true shape) zeroed."""
    shape = core.get_aval(x).shape
    keep = None
    for axis, d in enumerate(dims):
        if d is not None and d < shape[axis]:
            inside = lt(broadcasted_iota(np.int32, shape, axis), asarray(d, np.int32))
            keep = inside if keep is None else bitwise_and(keep, inside)
    return x if keep is None else select(keep, x, broadcast_in_dim(_scalar(0, core.get_aval(x).dtype), shape, ()))


def _use_qr(u, m, n, params):
    a_minus_e_by_sqrt_c, sqrt_c, e = params
    big_m, big_n = core.get_aval(u).shape
    dt = core.get_aval(u).dtype
    eye = _eye(dt, (big_n, big_n))
    # [sqrt(c) U; I] with the identity right after U's true rows, the padding's zero rows last
    parts = [_slice(mul(sqrt_c, u), (0, 0), (m, big_n)), eye]
    if big_m > m:
        parts.append(broadcast_in_dim(_scalar(0, dt), (big_m - m, big_n), ()))
    y = concatenate(parts, 0)
    q, _ = qr(y, full_matrices=False)
    q1 = _mask(_slice(q, (0, 0), (big_m, big_n)), (m, n))
    q2 = _H(_mask(_slice(q, (m, 0), (m + big_n, big_n)), (n, n)))
    return add(mul(e, u), mul(a_minus_e_by_sqrt_c, _matmul(q1, q2)))


def _use_cholesky(u, m, n, params):
    a_minus_e, c, e = params
    big_n = core.get_aval(u).shape[1]
    dt = core.get_aval(u).dtype
    eye = _eye(dt, (big_n, big_n))
    x = add(mul(c, _matmul(_H(u), u)), eye)
    if n < big_n:  # the padding's rows and columns of the identity
        x = select(bitwise_and(lt(broadcasted_iota(np.int32, (big_n, big_n), 0), asarray(n, np.int32)),
                               lt(broadcasted_iota(np.int32, (big_n, big_n), 1), asarray(n, np.int32))), x, eye)
    y = cholesky(x, symmetrize_input=False)
    # U X^-1 = U Y^-H Y^-1, as the adjoint of Y^-H (Y^-1 U^H): two triangular solves.
    z = triangular_solve(y, _H(u), left_side=True, lower=True)
    z = _H(triangular_solve(y, z, left_side=True, lower=True, transpose_a=True, conjugate_a=True))
    return add(mul(e, u), mul(a_minus_e, z))


def _coefficients(eps, max_iterations):
    """The weights (a, b, c) of the iterations fixed by the lower bound l: the QR ones, then the
    Cholesky ones, as parameter triples."""
    l, tol_l = eps, 10.0 * eps / 2.0
    qr_coefs, chol_coefs = [], []
    k = 0
    while l + tol_l < 1 and k < max_iterations:
        k += 1
        l2 = l * l
        dd = (4 * (1 / l2 - 1) / l2) ** (1 / 3)
        sqd = (1.0 + dd) ** (1 / 2)
        a = sqd + (2 - dd + 2 * (2 - l2) / (l2 * sqd)) ** (1 / 2)
        b = (a - 1) ** 2 / 4
        c = a + b - 1
        l = l * (a + b * l2) / (1 + c * l2)
        e = b / c
        if c > _CHOLESKY_CUTOFF:
            qr_coefs.append(((a - e) / c ** (1 / 2), c ** (1 / 2), e))
        else:
            chol_coefs.append((a - e, c, e))
    return qr_coefs, chol_coefs


def _qdwh(x, m, n, max_iterations, eps):
    dt = core.get_aval(x).dtype
    eps = float(dtypes.finfo(dt).eps) if eps is None else eps
    ax = _abs(x)
    one_norm, inf_norm = reduce_max(reduce_sum(ax, (0,)), (0,)), reduce_max(reduce_sum(ax, (1,)), (0,))
    real = core.get_aval(one_norm).dtype
    alpha_inverse = mul(rsqrt(one_norm), rsqrt(inf_norm))
    alpha_inverse = select(eq(one_norm, _scalar(0, real)), _scalar(1, real), alpha_inverse)
    u = mul(x, broadcast_in_dim(convert_element_type(alpha_inverse, dt), core.get_aval(x).shape, ()))
    tol_norm = _scalar((10.0 * eps / 2.0) ** (1 / 3), real)
    qr_coefs, chol_coefs = _coefficients(eps, max_iterations)

    def step(update, coefs, test_convergence):
        def body(k, state):
            u, _ = state
            params = tuple(dynamic_index_in_dim(coefs[i], k, keepdims=False) for i in range(3)) if coefs \
                else tuple(_scalar(v, dt) for v in (8 / 3, 3.0, 1 / 3))  # a - e, c, e of (a, b, c) = (3, 1, 3)
            new = update(u, m, n, params)
            moving = gt(_frobenius(sub(new, u)), tol_norm) if test_convergence else asarray(True)
            return new, moving
        return body

    def iterate(u, coefs, update, test_convergence):
        if not coefs:
            return u, asarray(True)
        columns = [asarray(np.array([c[i] for c in coefs]), dt) for i in range(3)]
        return fori_loop(0, len(coefs), step(update, columns, test_convergence), (u, asarray(True)))

    u, _ = iterate(u, qr_coefs, _use_qr, False)
    u, moving = iterate(u, chol_coefs, _use_cholesky, True)
    halley = step(_use_cholesky, None, True)

    def cond(state):
        k, _, moving = state
        return bitwise_and(moving, lt(k, asarray(max_iterations, np.int32)))

    def body(state):
        k, u, moving = state
        u, moving = halley(k, (u, moving))
        return add(k, asarray(1, np.int32)), u, moving

    num_iters, u, moving = while_loop(cond, body, (asarray(len(qr_coefs) + len(chol_coefs), np.int32), u, moving))
    u = sub(mul(_scalar(1.5, dt), u), mul(_scalar(0.5, dt), _matmul(u, _matmul(_H(u), u))))
    h = _matmul(_H(u), x)
    h = mul(add(h, _H(h)), _scalar(0.5, dt))
    return u, h, num_iters, eq(moving, asarray(False))


def qdwh(x, *, is_hermitian=False, max_iterations=None, eps=None, dynamic_shape=None):
    """The polar decomposition x = u h of a full-rank M x N matrix (M >= N) by QDWH: returns
    (u, h, num_iters, is_converged). dynamic_shape (m, n) is the true shape of a padded x;
    is_hermitian is unused (kept for compatibility, as in JAX)."""
    x = asarray(x)
    max_iterations = 10 if max_iterations is None else int(max_iterations)
    shape = core.get_aval(x).shape
    if len(shape) != 2:
        raise ValueError(f"qdwh expects a matrix, got shape {shape}")
    big_m, big_n = shape
    if big_m < big_n:
        raise ValueError('The input matrix of shape M x N must have M >= N.')
    if dynamic_shape is not None:
        m, n = (int(d) for d in dynamic_shape)
        x = _mask(x, (m, n))
    else:
        m, n = big_m, big_n
    return _qdwh(x, m, n, max_iterations, eps)
