"""jax.scipy.linalg.eigh_tridiagonal: the eigenvalues of a real symmetric tridiagonal matrix by
bisection on Sturm counts, all wanted eigenvalues at once, from the Gershgorin interval (as JAX
computes them). Eigenvectors come from the dense eigh of the matrix, not from JAX's inverse
iteration: they span the same eigenspaces, with signs of their own (JAX's depend on a random
start)."""
import numpy as np

from xjax._src import lax
import xjax.numpy as jnp


def _sturm_count(alpha, beta_sq, pivmin, alpha0_perturbation, x):
    """The number of eigenvalues below each x: the negative pivots of the LDL^T factorisation of
    T - x I, a pivot of at most pivmin counted negative and kept away from zero."""
    q = alpha[0] - x
    count = (q < 0).astype(np.int32)
    q = jnp.where(alpha[0] == x, alpha0_perturbation, q)

    def step(carry, ab):
        q, count = carry
        a, b_sq = ab
        q = a - b_sq / q - x
        negative = q <= pivmin
        return (jnp.where(negative, jnp.minimum(q, -pivmin), q), count + negative.astype(np.int32)), None

    (_, count), _ = lax.scan(step, (q, count), (alpha[1:], beta_sq))
    return count


def _target_counts(n, select, select_range):
    if select == "a":
        return np.arange(n, dtype=np.int32)
    if select == "i":
        if select_range is None:
            raise ValueError("for select='i', select_range must be specified.")
        if select_range[0] > select_range[1]:
            raise ValueError("Got empty index range in select_range.")
        return np.arange(select_range[0], select_range[1] + 1, dtype=np.int32)
    if select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented")
    raise ValueError("'select must have a value in {'a', 'i', 'v'}.")


def _bisect(alpha, beta, targets, tol):
    beta_abs, beta_sq = jnp.abs(beta), jnp.square(beta)
    # Gershgorin's discs bound the spectrum.
    row_sums = jnp.concatenate([beta_abs[:1], beta_abs[:-1] + beta_abs[1:], beta_abs[-1:]])
    lambda_max = jnp.max(alpha + row_sums)
    lambda_min = jnp.min(alpha - row_sums)
    t_norm = jnp.maximum(jnp.abs(lambda_min), jnp.abs(lambda_max))

    finfo = np.finfo(alpha.dtype)
    one = np.ones([], alpha.dtype)
    safemin = np.maximum(one / finfo.max, (one + finfo.eps) * finfo.tiny)
    pivmin = safemin * jnp.maximum(1, jnp.max(beta_sq))
    alpha0_perturbation = jnp.square(finfo.eps * beta_abs[0])
    abs_tol = finfo.eps * t_norm
    if tol is not None:
        abs_tol = jnp.maximum(tol, abs_tol)
    # Each step halves the interval: past the mantissa's bits it cannot shrink further.
    max_steps = finfo.nmant + 1

    n = alpha.shape[0]
    slack = np.asarray(n * 2.1 * finfo.eps, alpha.dtype) * t_norm
    shape = targets.shape
    lower = jnp.broadcast_to(lambda_min - slack - 2 * 2.1 * pivmin, shape)
    upper = jnp.broadcast_to(lambda_max + slack + 2.1 * pivmin, shape)
    pivmin = jnp.broadcast_to(pivmin, shape)
    alpha0_perturbation = jnp.broadcast_to(alpha0_perturbation, shape)

    def unfinished(state):
        step, lower, _, upper = state
        return (step < max_steps) & (abs_tol < jnp.max(upper - lower))

    def halve(state):
        step, lower, mid, upper = state
        counts = _sturm_count(alpha, beta_sq, pivmin, alpha0_perturbation, mid)
        lower = jnp.where(counts <= targets, mid, lower)
        upper = jnp.where(counts > targets, mid, upper)
        return step + 1, lower, 0.5 * (lower + upper), upper

    _, _, mid, _ = lax.while_loop(unfinished, halve, (0, lower, 0.5 * (lower + upper), upper))
    return mid


def eigh_tridiagonal(d, e, *, eigvals_only=False, select="a", select_range=None, tol=None, key=None):
    """The eigenvalues (ascending) of the symmetric tridiagonal matrix with diagonal d and
    off-diagonal e: all of them (select='a') or those of indices select_range[0]..select_range[1]
    (select='i'); with eigvals_only=False also the eigenvectors, as columns. `tol` is the absolute
    tolerance of the bisection; `key` (JAX's start of inverse iteration) is not used."""
    alpha, beta = jnp.asarray(d), jnp.asarray(e)
    if alpha.dtype != beta.dtype:
        raise TypeError(f"diagonal and off-diagonal values must have same dtype, got {alpha.dtype} and {beta.dtype}")
    if alpha.dtype not in (np.float32, np.float64):
        raise TypeError("Only float32 and float64 inputs are supported as inputs to "
                        f"jax.scipy.linalg.eigh_tridiagonal, got {alpha.dtype} and {beta.dtype}")
    n = alpha.shape[0]
    if n <= 1:
        return alpha if eigvals_only else (alpha, jnp.eye(n, dtype=alpha.dtype))
    targets = _target_counts(n, select, select_range)
    eigvals = _bisect(alpha, beta, jnp.asarray(targets), tol)
    if eigvals_only:
        return eigvals
    matrix = jnp.diag(alpha) + jnp.diag(beta, 1) + jnp.diag(beta, -1)
    _, vectors = jnp.linalg.eigh(matrix)
    return eigvals, vectors[:, targets]
