"""Matrix forms and Householder products of jax.lax.linalg: schur, hessenberg, tridiagonal,
tridiagonal_solve, householder_product, ormqr (one C++ core op each, LAPACK's gees, gehrd, sytrd,
gtsv, orgqr, ormqr; hetrd, ungqr and unmqr for complex operands), the packed QR that ormqr reads (geqrf/geqp3, internal as in JAX), and
symmetric_product and cholesky_update, primitives that JAX computes on the CPU by lax code (lowered
here by the same code). Each primitive is defined with all its rules in its block; JAX defines
derivatives only for tridiagonal_solve (JVP and transpose), and none of the others may be
differentiated."""
import enum

from xjax._src import core, dtypes
from xjax._src.interpreters import ad, batching
from xjax._src.interpreters.python_lowering import PythonLowering
from xjax._src.lax.base import asarray
from xjax._src.lax.contraction import dot_general
from xjax._src.lax.elementwise import abs as _abs, add, div, eq, max as _max, mul, neg, rsqrt, select, sub
from xjax._src.lax.layout import broadcast_in_dim, concatenate, pad, reshape, slice as _slice
from xjax._src.lax.linalg import _primitive, _T, _tril
from xjax._src.lax.sharding_rules_batched import batched

__all__ = ["EigImplementation", "cholesky_update", "cholesky_update_p", "hessenberg", "hessenberg_p",
           "householder_product", "householder_product_p", "ormqr", "ormqr_p", "schur", "schur_p",
           "symmetric_product", "symmetric_product_p", "tridiagonal", "tridiagonal_p", "tridiagonal_solve",
           "tridiagonal_solve_p"]


class EigImplementation(enum.Enum):
    """Enum for eigendecomposition algorithm (CPU: LAPACK's geev)."""
    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


def _shape(x):
    return core.get_aval(x).shape


def _leading_batch(prim):
    """JAX's expand_dims batcher: every operand gets the batch axis in front (unmapped ones
    broadcast), and so do the results."""
    def rule(axis, vals, dims, **params):
        size = batching.size_of(vals, dims)
        vals = [batching.bdim_at_front(x, d, size) for x, d in zip(vals, dims)]
        out = prim.bind(*vals, **params)
        return out, ([0] * len(out) if prim.multiple_results else 0)

    prim.def_rules(batch=rule)


def _check(prim, checker):
    """Checks params the core op does not take, before its shape rule."""
    inner = prim.abstract_eval

    def abstract_eval(*avals, **params):
        checker(*avals, **params)
        return inner(*avals, **params)

    prim.abstract_eval = abstract_eval


# ---- schur: the Schur form A = Z T Z^H (gees, unsorted) --------------------------------------------

def _schur_attrs(compute_schur_vectors, sort_eig_vals, select_callable):
    return dict(compute_schur_vectors=compute_schur_vectors)


def _schur_check(aval, *, compute_schur_vectors, sort_eig_vals, select_callable):
    if sort_eig_vals:
        raise NotImplementedError("The sort feature of LAPACK's gees routine is not implemented.")


schur_p = _primitive("schur", attrs=_schur_attrs)
_check(schur_p, _schur_check)
_leading_batch(schur_p)


def schur(x, *, compute_schur_vectors=True, sort_eig_vals=False, select_callable=None):
    """The Schur decomposition A = Q U Q^H of square matrices: for real A, U quasi-upper-triangular
    (the real Schur form, 2 x 2 blocks for complex eigenvalue pairs, standardised as LAPACK does)
    and Q orthogonal; for complex A, U upper triangular and Q unitary. Returns [U, Q], or [U]
    without Schur vectors."""
    return schur_p.bind(asarray(x), compute_schur_vectors=bool(compute_schur_vectors),
                        sort_eig_vals=bool(sort_eig_vals), select_callable=select_callable)


# ---- hessenberg: A = Q H Q^T, packed (gehrd) -------------------------------------------------------

hessenberg_p = _primitive("hessenberg")
_leading_batch(hessenberg_p)


def hessenberg(a):
    """Reduces square matrices to upper Hessenberg form: [a, taus], H on and above the first
    subdiagonal of a, the Householder reflectors below it, taus their scalar factors."""
    return hessenberg_p.bind(asarray(a))


# ---- tridiagonal: A = Q T Q^T of symmetric A, packed (sytrd) ------------------------------------

tridiagonal_p = _primitive("tridiagonal", attrs=lambda lower: dict(lower=lower))
_leading_batch(tridiagonal_p)


def tridiagonal(a, *, lower=True):
    """Reduces symmetric (Hermitian) matrices to tridiagonal form, reading the triangle `lower`
    selects: [a, d, e, taus], the reflectors stored beyond the tridiagonal in a, d its diagonal, e
    its off-diagonal (both real) and taus the reflectors' scalar factors."""
    return tridiagonal_p.bind(asarray(a), lower=bool(lower))


# ---- householder_product: Q from packed reflectors (orgqr) ----------------------------------------

householder_product_p = _primitive("householder_product", multiple_results=False)
_leading_batch(householder_product_p)


def householder_product(a, taus):
    """The product of the Householder reflectors stored below the diagonal of a ([..., m, n],
    m >= n) with scalar factors taus ([..., k], k <= n): the first n columns of Q."""
    return householder_product_p.bind(asarray(a), asarray(taus))


# ---- ormqr: Q c, Q^T c, c Q or c Q^T without forming Q --------------------------------------------

ormqr_p = _primitive("ormqr", attrs=lambda left, transpose: dict(left=left, transpose=transpose),
                     multiple_results=False)
_leading_batch(ormqr_p)


def ormqr(a, taus, c, *, left=True, transpose=False):
    """Multiplies c by Q (or Q^T, Q^H when complex, with transpose) from the left or the right, Q given by the
    Householder reflectors of a packed QR (a [..., m, n], taus [..., k])."""
    return ormqr_p.bind(asarray(a), asarray(taus), asarray(c), left=bool(left), transpose=bool(transpose))


# ---- geqrf / geqp3: the packed QR (internal, for jax.scipy.linalg.qr_multiply) --------------------

geqrf_p = _primitive("geqrf", attrs=lambda pivoting: dict(pivoting=pivoting))
_leading_batch(geqrf_p)


def geqrf(a):
    """The packed QR of a: (a with R on and above its diagonal and the reflectors below, taus)."""
    packed, taus = geqrf_p.bind(asarray(a), pivoting=False)
    return packed, taus


def geqp3(a):
    """The packed QR with column pivoting: (packed, taus, p), A[:, p] = Q R (p 0-based)."""
    packed, taus, p = geqrf_p.bind(asarray(a), pivoting=True)
    return packed, taus, p


# ---- tridiagonal_solve: A X = B for tridiagonal A (gtsv) ------------------------------------------

def _tridiagonal_solve_check(*avals, perturb_singular):
    if perturb_singular:
        raise NotImplementedError("tridiagonal_solve with perturb_singular=True is not implemented in xjax")


tridiagonal_solve_p = _primitive("tridiagonal_solve", attrs=lambda perturb_singular: {}, multiple_results=False)
_check(tridiagonal_solve_p, _tridiagonal_solve_check)


def tridiagonal_solve(dl, d, du, b, *, perturb_singular=False):
    """Solves A X = B for tridiagonal A given by its diagonals ([..., m] each): dl[i] = A[i, i-1]
    (dl[0] unused), d[i] = A[i, i], du[i] = A[i, i+1] (du[m-1] unused); b is [..., m, k]. A
    singular system gives NaN."""
    return tridiagonal_solve_p.bind(asarray(dl), asarray(d), asarray(du), asarray(b),
                                    perturb_singular=bool(perturb_singular))


def _tridiagonal_product(dl, d, du, b):
    """A b for the tridiagonal A of (dl, d, du)."""
    shape = _shape(b)
    nd, m = len(shape), shape[-2]
    col = tuple(range(nd - 1))
    y = mul(broadcast_in_dim(d, shape, col), b)
    if m < 2:
        return y
    zero = asarray(0, core.get_aval(b).dtype)
    no_pad = ((0, 0, 0),) * (nd - 2)

    def rows(r0, r1):  # b[..., r0:r1, :]
        return _slice(b, (0,) * (nd - 2) + (r0, 0), shape[:-2] + (r1, shape[-1]))

    # y[i] += dl[i] b[i - 1] and du[i] b[i + 1]: b shifted down and up by a row.
    below = mul(broadcast_in_dim(dl, shape, col), pad(rows(0, m - 1), zero, no_pad + ((1, 0, 0), (0, 0, 0))))
    above = mul(broadcast_in_dim(du, shape, col), pad(rows(1, m), zero, no_pad + ((0, 1, 0), (0, 0, 0))))
    return add(add(y, below), above)


def _tridiagonal_solve_jvp(primals, tangents, *, perturb_singular):
    *diags, _ = primals
    *diags_dot, b_dot = tangents
    ans = tridiagonal_solve_p.bind(*primals, perturb_singular=perturb_singular)
    if all(type(t) is ad.Zero for t in diags_dot):
        rhs = b_dot
    else:
        matvec_dot = _tridiagonal_product(*[ad.instantiate_zero(t) for t in diags_dot], ans)
        rhs = sub(ad.instantiate_zero(b_dot), matvec_dot)
    return ans, tridiagonal_solve_p.bind(*diags, ad.instantiate_zero(rhs), perturb_singular=perturb_singular)


def _tridiagonal_solve_transpose(ct, dl, d, du, b, *, perturb_singular):
    # Linear in b only: the cotangent goes through the solve with the transposed matrix.
    assert not any(ad.is_undefined(x) for x in (dl, d, du)) and ad.is_undefined(b)
    if type(ct) is ad.Zero:
        return [None, None, None, None]
    nd = len(_shape(du))
    m = _shape(du)[-1]
    zero = asarray(0, core.get_aval(du).dtype)
    no_pad = ((0, 0, 0),) * (nd - 1)
    head = lambda x: _slice(x, (0,) * nd, _shape(x)[:-1] + (m - 1,))  # x[..., :-1]
    tail = lambda x: _slice(x, (0,) * (nd - 1) + (1,), _shape(x))  # x[..., 1:]
    dl_t = pad(head(du), zero, no_pad + ((1, 0, 0),))  # [0, du[:-1]]
    du_t = pad(tail(dl), zero, no_pad + ((0, 1, 0),))  # [dl[1:], 0]
    return [None, None, None, tridiagonal_solve(dl_t, d, du_t, ct, perturb_singular=perturb_singular)]


def _tridiagonal_solve_batch(axis, vals, dims, *, perturb_singular):
    dl, d, du, b = vals
    ddl, dd, ddu, db = dims
    if ddl is dd is ddu is batching.not_mapped:
        # One matrix for every example: the examples become more right-hand sides of one solve.
        nd = len(_shape(b))
        bm = batching.moveaxis(b, db, nd - 2)  # [..., m, batch, k]
        shape = _shape(bm)
        out = tridiagonal_solve(dl, d, du, reshape(bm, shape[:-2] + (shape[-2] * shape[-1],)),
                                perturb_singular=perturb_singular)
        return reshape(out, shape), nd - 2
    size = batching.size_of(vals, dims)
    vals = [batching.bdim_at_front(x, k, size) for x, k in zip(vals, dims)]
    return tridiagonal_solve(*vals, perturb_singular=perturb_singular), 0


tridiagonal_solve_p.def_rules(jvp=_tridiagonal_solve_jvp, transpose=_tridiagonal_solve_transpose,
                              batch=_tridiagonal_solve_batch)


# ---- symmetric_product: alpha A A^T + beta C (JAX: lax code on the CPU) ---------------------------

def _float_operands(name, *avals):
    for i, a in enumerate(avals):
        if not dtypes.is_float(a.dtype):
            raise TypeError(f"{name} does not accept dtype {a.dtype.name} at position {i}. "
                            "Accepted dtypes at position {i} are subtypes of floating.".replace("{i}", str(i)))
    if len({a.dtype for a in avals}) > 1:
        raise TypeError(f"{name} requires arguments to have the same dtypes, got "
                        f"{', '.join(a.dtype.name for a in avals)}.")


def _symmetric_product_abstract_eval(a, c, *, alpha, beta):
    _float_operands("symmetric_product", a, c)
    for i, (x, rank) in enumerate(((a, 2), (c, 2))):
        if x.ndim < rank:
            raise TypeError(f"Input {i} to symmetric_product must have rank at least {rank}, but got shape={x.shape}")
    if a.ndim != c.ndim:
        raise TypeError("All inputs to symmetric_product must have the same number of batch dimensions, but got "
                        f"{[a.ndim - 2, c.ndim - 2]} batch dimensions for the inputs.")
    if a.shape[-2] != c.shape[-1] or c.shape[-2] != c.shape[-1]:
        raise ValueError("symmetric_update expects a rectangular matrix of shape (m, n) and a square matrix of "
                         f"shape (n, n). Got shapes {a.shape[-2:]} and {c.shape[-2:]}.")
    if a.shape[:-2] != c.shape[:-2]:
        raise ValueError(f"symmetric_product: batch dimensions differ: {a.shape} and {c.shape}")
    return core.ShapedArray(c.shape, c.dtype)


def _symmetric_product_fun(a, c, *, alpha, beta):
    nb = len(_shape(a)) - 2
    batch = tuple(range(nb))
    aat = dot_general(a, a, (((nb + 1,), (nb + 1,)), (batch, batch)))
    dt = core.get_aval(c).dtype
    return add(mul(asarray(alpha, dt), aat), mul(asarray(beta, dt), c))


def _lax_primitive(name, abstract_eval, fun):
    """A primitive computed by lax code `fun`, inlined where it is lowered (JAX's mlir.lower_fun);
    eagerly, its operands are checked by abstract_eval first, as tracing would."""
    prim = core.Primitive(name)

    def impl(*args, **params):
        abstract_eval(*[core.get_aval(x) for x in args], **params)
        return fun(*args, **params)

    prim.def_rules(abstract_eval=abstract_eval, impl=impl)
    PythonLowering(fun, multiple_results=False).install(prim)
    return prim


symmetric_product_p = _lax_primitive("symmetric_product", _symmetric_product_abstract_eval, _symmetric_product_fun)
_leading_batch(symmetric_product_p)


def symmetric_product(a_matrix, c_matrix, *, alpha=1., beta=0., symmetrize_output=False):
    """alpha A A^T + beta C for A [..., m, n] and symmetric C [..., m, m]. Only the lower triangle
    is promised (as JAX); symmetrize_output copies it to the upper one."""
    result = symmetric_product_p.bind(asarray(a_matrix), asarray(c_matrix), alpha=alpha, beta=beta)
    if symmetrize_output:
        result = add(_tril(result), _T(_tril(result, -1)))
    return result


# ---- cholesky_update: the Cholesky factor of R^T R + w w^T (JAX: Givens rotations in lax) --------

def _cholesky_update_abstract_eval(r, w):
    _float_operands("cholesky_update", r, w)
    for i, (x, rank) in enumerate(((r, 2), (w, 1))):
        if x.ndim != rank:
            raise TypeError(f"Input {i} to cholesky_update must have a rank of exactly {rank}, but got shape={x.shape}")
    if r.shape[0] != r.shape[1] or w.shape[0] != r.shape[1]:
        raise ValueError("Rank-1 update to Cholesky decomposition takes a square matrix and a vector of the same "
                         f"size as input. Got shapes {r.shape} and {w.shape} instead")
    return core.ShapedArray(r.shape, r.dtype)


def _givens(x, y):
    """(c, s) rotating (x, y) onto (r, 0), scaled against overflow; (1, 0) when y is 0."""
    dt = core.get_aval(x).dtype
    ax, ay = _abs(x), _abs(y)
    scale = _max(ax, ay)
    safe = select(eq(scale, asarray(0, dt)), asarray(1, dt), scale)
    xs, ys = div(x, safe), div(y, safe)
    rh = rsqrt(add(mul(xs, xs), mul(ys, ys)))
    y_zero = eq(y, asarray(0, dt))
    return select(y_zero, asarray(1, dt), mul(xs, rh)), select(y_zero, asarray(0, dt), neg(mul(ys, rh)))


def _cholesky_update_fun(r, z):
    n = _shape(z)[0]
    rows = [reshape(_slice(r, (k, 0), (k + 1, n)), (n,)) for k in range(n)]
    for k in range(n):
        rk = rows[k]
        c, s = _givens(reshape(_slice(rk, (k,), (k + 1,)), ()), reshape(_slice(z, (k,), (k + 1,)), ()))
        c_v, s_v = broadcast_in_dim(c, (n,), ()), broadcast_in_dim(s, (n,), ())
        rows[k], z = sub(mul(c_v, rk), mul(s_v, z)), add(mul(c_v, z), mul(s_v, rk))
    return concatenate([reshape(x, (1, n)) for x in rows], 0) if n else r


cholesky_update_p = _lax_primitive("cholesky_update", _cholesky_update_abstract_eval, _cholesky_update_fun)


def cholesky_update(r_matrix, w_vector):
    """The upper Cholesky factor of R^T R + w w^T, given the upper factor R of A = R^T R: O(n^2)
    Givens rotations (one matrix, no batch dims, as JAX)."""
    return cholesky_update_p.bind(asarray(r_matrix), asarray(w_vector))


def _register_sharding_rules():
    ranks = {schur_p: (2,), hessenberg_p: (2,), tridiagonal_p: (2,), geqrf_p: (2,), householder_product_p: (2, 1),
             tridiagonal_solve_p: (1, 1, 1, 2), symmetric_product_p: (2, 2)}
    for p, r in ranks.items():
        p.def_rules(sharding=batched(p, r))


_register_sharding_rules()
