"""jnp.linalg's solvers and inverses: solve, inv, tensorsolve, tensorinv, pinv, lstsq, matrix_rank,
as JAX defines them (solve differentiates as a linear solve through its LU factors; pinv has JAX's
custom JVP; singular input gives infs/NaNs, never an exception)."""
import math
import operator

import numpy as np

from xjax._src import dtypes, lax
from xjax._src.custom_derivatives import custom_jvp
from xjax._src.jit import jit
from xjax._src.numpy import factor_solve
from xjax._src.numpy import creation, manipulation, reductions, ufuncs, util
from xjax._src.numpy.decompositions import svd
from xjax._src.numpy.vectorize import _record_core_sizes


def _eps(dtype):
    return float(np.finfo(dtype).eps)


def _gufunc_operands(signature, *operands_and_core):
    """Operands broadcast over their batch dims, their core dims checked as jnp.vectorize checks them
    (and worded as its errors): operands_and_core pairs each operand with its core dim names."""
    context = f"on vectorized function with excluded=frozenset() and signature={signature!r}"
    sizes = {}
    for x, core in operands_and_core:
        _record_core_sizes(sizes, x.aval.shape, core, context, is_input=True)
    batch = util.broadcast_shapes(*[x.aval.shape[:x.aval.ndim - len(core)] for x, core in operands_and_core])
    return [util.broadcast_to_shape(x, batch + x.aval.shape[x.aval.ndim - len(core):]) for x, core in operands_and_core]


@jit
def _solve_matrix(a, b):
    return factor_solve.solve(a, b)


def solve(a, b):
    """x with a @ x == b for square a (one LU factorisation); b is [..., m] (vectors) or [..., m, n]
    (matrices), broadcast against a's batch dims. A singular a gives infs/NaNs."""
    util.check_arraylike("jnp.linalg.solve", a, b)
    a, b = util.promote_dtypes_inexact(util.asarray(a), util.asarray(b))
    sa, sb = a.aval.shape, b.aval.shape
    if len(sa) < 2:
        raise ValueError(f"left hand array must be at least two dimensional; got a.shape={sa}")
    if len(sb) > 1 and len(sa) == len(sb) + 1 and sa[-1] == sb[-1] and sa[-1] != sb[-2]:
        raise ValueError(f"Invalid shapes for solve: {sa}, {sb}. Prior to JAX v0.5.0, this would have been treated "
                         "as a batched 1-dimensional solve. To recover this behavior, use "
                         "solve(a, b[..., None]).squeeze(-1).")
    if len(sb) == 1:
        a, b = _gufunc_operands("(m,m),(m)->(m)", (a, ("m", "m")), (b, ("m",)))
        return _solve_matrix(a, b[..., None])[..., 0]
    a, b = _gufunc_operands("(m,m),(m,n)->(m,n)", (a, ("m", "m")), (b, ("m", "n")))
    return _solve_matrix(a, b)


_inv = jit(factor_solve.inv)


def inv(a):
    """The inverse of each square matrix (LU factors solved against a permutation of the identity); a
    singular one gives infs/NaNs."""
    util.check_arraylike("jnp.linalg.inv", a)
    a, = util.promote_dtypes_inexact(util.asarray(a))
    shape = a.aval.shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"Argument to inv must have shape [..., n, n], got {shape}.")
    return _inv(a)


def tensorinv(a, ind=2):
    """The inverse of a tensor read as a square matrix: its first `ind` dims against the rest."""
    util.check_arraylike("tensorinv", a)
    a = util.asarray(a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"ind must be a positive integer; got ind={ind}")
    shape = a.aval.shape
    contracting, batch = shape[:ind], shape[ind:]
    rows, cols = math.prod(contracting), math.prod(batch)
    if rows != cols:
        raise ValueError("tensorinv is only possible when the product of the first `ind` dimensions equals that of "
                         f"the remaining dimensions. got arr.shape={shape} with ind={ind}.")
    return manipulation.reshape(inv(manipulation.reshape(a, (rows, cols))), (*batch, *contracting))


def tensorsolve(a, b, axes=None):
    """x with tensordot(a, x, x.ndim) == b (axes of a moved to the end first)."""
    util.check_arraylike("tensorsolve", a, b)
    a, b = util.asarray(a), util.asarray(b)
    if axes is not None:
        a = manipulation.moveaxis(a, axes, len(axes) * (a.aval.ndim - 1,))
    out_shape = a.aval.shape[b.aval.ndim:]
    if a.aval.shape[:b.aval.ndim] != b.aval.shape:
        raise ValueError("After moving axes to end, leading shape of a must match shape of b. "
                         f"got a.shape={a.aval.shape}, b.shape={b.aval.shape}")
    if b.aval.size != math.prod(out_shape):
        raise ValueError("Input arrays must have prod(a.shape[:b.ndim]) == prod(a.shape[b.ndim:]); "
                         f"got a.shape={a.aval.shape}, b.ndim={b.aval.ndim}.")
    a = manipulation.reshape(a, (b.aval.size, math.prod(out_shape)))
    return manipulation.reshape(solve(a, manipulation.ravel(b)), out_shape)


# ---- pinv ---------------------------------------------------------------------------------------

def _mT(x):  # noqa: N802
    """The conjugate transpose of each matrix (the transpose of a real one)."""
    xt = manipulation.matrix_transpose(x)
    return ufuncs.conj(xt) if dtypes.is_complex(xt.aval.dtype) else xt


def _real_dtype(dt):
    return dtypes.complex_part_dtype(dt) if dtypes.is_complex(dt) else dt


def _pinv_impl(hermitian, a, rtol):
    m, n = a.aval.shape[-2:]
    if m == 0 or n == 0:
        return creation.zeros(a.aval.shape[:-2] + (n, m), a.aval.dtype)
    u, s, vh = svd(a, full_matrices=False, hermitian=hermitian)
    # Singular values at or below rtol times the largest count as zero: their 1/s becomes 0 (1/inf).
    rtol = lax.expand_dims(rtol[..., None], tuple(range(s.aval.ndim - rtol.aval.ndim - 1)))
    cutoff = rtol * s[..., 0:1]
    s = ufuncs.where(s > cutoff, s, np.inf).astype(u.aval.dtype)
    return _mT(vh) @ (_mT(u) / s[..., None])


_pinv = custom_jvp(_pinv_impl, nondiff_argnums=(0,))


def _pinv_jvp(hermitian, primals, tangents):
    # JAX's rule (Golub and Pereyra): exact where the rank is locally constant.
    (a, rtol), (a_dot, _) = primals, tangents
    p = _pinv(hermitian, a, rtol)
    if hermitian:
        a, a_dot = (a + _mT(a)) / 2, (a_dot + _mT(a_dot)) / 2
    m, n = a.aval.shape[-2:]
    if m >= n:
        s = (p @ _mT(p)) @ _mT(a_dot)
        t = (_mT(a_dot) @ _mT(p)) @ p
        p_dot = -(p @ a_dot) @ p + s - (s @ a) @ p + t - (p @ a) @ t
    else:
        s = p @ (_mT(p) @ _mT(a_dot))
        t = _mT(a_dot) @ (_mT(p) @ p)
        p_dot = -p @ (a_dot @ p) + s - s @ (a @ p) + t - p @ (a @ t)
    return p, p_dot


_pinv.defjvp(_pinv_jvp)


@jit(static_argnames=("hermitian",))
def _pinv_jit(a, rtol, hermitian):
    return _pinv(hermitian, a, rtol)


def pinv(a, rtol=None, hermitian=False, *, rcond=None):
    """The Moore-Penrose pseudo-inverse: singular values at or below rtol times the largest are
    dropped (rtol defaults to 10 * max(m, n) * eps)."""
    if rcond is not None:
        if rtol is not None:
            raise ValueError("pinv: only one of rtol and rcond may be specified.")
        rtol = rcond
    util.check_arraylike("jnp.linalg.pinv", a)
    a, = util.promote_dtypes_inexact(util.asarray(a))
    if a.aval.ndim < 2:
        raise ValueError(f"jnp.linalg.pinv: input array must be at least 2D; got a.shape={a.aval.shape}")
    dt = _real_dtype(a.aval.dtype)  # of the singular values, which rtol scales
    if rtol is None:
        rtol = 10.0 * max(a.aval.shape[-2:]) * _eps(dt)
    rtol = util.asarray(rtol)
    rtol = lax.convert_element_type(rtol, dt) if rtol.aval.dtype != dt else rtol
    return _pinv_jit(a, rtol, bool(hermitian))


# ---- least squares and rank ---------------------------------------------------------------------

@jit(static_argnames=("numpy_resid",))
def _lstsq(a, b, rcond, numpy_resid):
    m, n = a.aval.shape
    dt = a.aval.dtype
    if a.aval.size == 0:
        s = creation.zeros((0,), _real_dtype(dt))
        rank = creation.zeros((), dtypes.default_int_dtype())
        x = creation.zeros((n, b.aval.shape[1]), dt)
    else:
        u, s, vt = svd(a, full_matrices=False)
        mask = (s > 0) & (s >= rcond * s[0])
        rank = reductions.sum(mask)
        safe_s = ufuncs.where(mask, s, 1)
        s_inv = ufuncs.where(mask, 1 / safe_s, 0)[:, None]
        x = _mT(vt) @ (s_inv * (_mT(u) @ b))
    resid = None
    if not numpy_resid:
        resid = _squared_norms(b - a @ x)
    return x, resid, rank, s


def _squared_norms(r):
    """The squared norms of r's columns (real for complex r)."""
    if dtypes.is_complex(r.aval.dtype):
        return reductions.sum(ufuncs.real(r) ** 2 + ufuncs.imag(r) ** 2, axis=0)
    return reductions.sum(r * r, axis=0)


def lstsq(a, b, rcond=None, *, numpy_resid=False):
    """The least-squares solution x of a @ x ~ b (2-D a), with the residual sums of squares, the
    rank and the singular values of a; singular values below rcond times the largest count as zero.
    numpy_resid=True gives NumPy's empty residuals where the rank is below n or m <= n."""
    util.check_arraylike("jnp.linalg.lstsq", a, b)
    a, b = util.promote_dtypes_inexact(util.asarray(a), util.asarray(b))
    if a.aval.shape[0] != b.aval.shape[0]:
        raise ValueError("Leading dimensions of input arrays must match")
    vector = b.aval.ndim == 1
    if vector:
        b = b[:, None]
    if a.aval.ndim != 2:
        raise TypeError(f"{a.aval.ndim}-dimensional array given. Array must be two-dimensional")
    if b.aval.ndim != 2:
        raise TypeError(f"{b.aval.ndim}-dimensional array given. Array must be one or two-dimensional")
    m, n = a.aval.shape
    dt = a.aval.dtype
    rdt = _real_dtype(dt)  # of the singular values, which rcond scales
    if rcond is None:
        rcond = util.full((), _eps(rdt) * max(n, m), rdt)
    else:
        rcond = util.asarray(rcond)
        rcond = ufuncs.where(rcond < 0, _eps(rdt), rcond).astype(rdt)
    x, resid, rank, s = _lstsq(a, b, rcond, bool(numpy_resid))
    if numpy_resid:
        if int(rank) < n or m <= n:  # NumPy's rule needs the rank's value (not traceable, as in JAX)
            resid = creation.zeros((0,), rdt)
        else:
            resid = _squared_norms(b - a @ x)
    if vector:
        x = manipulation.ravel(x)
    return x, resid, rank, s


@jit(static_argnames=("hermitian",))
def _matrix_rank(m, rtol, hermitian):
    s = svd(m, full_matrices=False, compute_uv=False, hermitian=hermitian)
    if rtol is None:
        rtol = reductions.max(s, axis=-1) * (max(m.aval.shape[-2:]) * _eps(s.aval.dtype))
    rtol = manipulation.expand_dims(rtol, rtol.aval.ndim)
    return reductions.sum(s > rtol, axis=-1)


def matrix_rank(M, rtol=None, *, hermitian=False, tol=None):  # noqa: N803 - JAX's name
    """The number of singular values above a threshold: rtol as given (JAX compares the singular values
    with it directly), by default the largest singular value times max(m, n) * eps; tol is an alias of
    rtol. A 1-D or 0-D M has rank 1 unless it is all zeros."""
    if tol is not None:
        if rtol is not None:
            raise ValueError("matrix_rank: only one of tol or rtol may be specified.")
        rtol = tol
    util.check_arraylike("jnp.linalg.matrix_rank", M)
    m, = util.promote_dtypes_inexact(util.asarray(M))
    if m.aval.ndim < 2:
        return reductions.any(m != 0).astype(np.int32)
    if rtol is not None:
        rtol = util.asarray(rtol).astype(_real_dtype(m.aval.dtype))
    return _matrix_rank(m, rtol, bool(hermitian))
