"""jax.scipy.linalg's constructors of special matrices (SciPy's circulant, hankel, leslie, companion,
fiedler, fiedler_companion, convolution_matrix, hilbert, invhilbert, pascal, invpascal, helmert,
hadamard, dft), with JAX's semantics: vector arguments may carry leading batch axes (jnp.vectorize),
the integer-order constructors are jits of static n, and every entry is computed in floating point
(no exact=True: pascal and the inverses use lgamma-based binomials, as JAX's do)."""
from functools import partial
import math
import operator

import numpy as np

from xjax._src import dtypes, lax
from xjax._src.jit import jit
from xjax._src.numpy.util import check_arraylike, promote_args_inexact, promote_dtypes
from xjax._src.numpy.vectorize import vectorize
from xjax._src.scipy.linalg import toeplitz
from xjax._src.scipy.special_misc import comb
import xjax.numpy as jnp


def _at_least_vector(name, *args):
    check_arraylike(name, *args)
    return [jnp.atleast_1d(jnp.asarray(a)) for a in args]


# ---- from vectors ---------------------------------------------------------------------------------

def circulant(c):
    """The circulant matrix of first column c: A[i, j] = c[(i - j) mod n]."""
    c, = _at_least_vector("circulant", c)
    return _circulant(c)


@partial(vectorize, signature="(n)->(n,n)")
def _circulant(c):
    n = c.shape[0]
    return c[(np.arange(n)[:, None] - np.arange(n)[None, :]) % n]


def hankel(c, r=None):
    """The Hankel matrix H[i, j] = v[i + j] with v = concatenate([c, r[1:]]) (r defaults to zeros)."""
    check_arraylike("hankel", c, *([] if r is None else [r]))
    c = jnp.asarray(c)
    r = jnp.zeros_like(c) if r is None else jnp.asarray(r)
    if c.ndim == 0:
        raise ValueError("hankel: c must be at least 1-dimensional, got a scalar.")
    if r.ndim == 0:
        raise ValueError("hankel: r must be at least 1-dimensional, got a scalar.")
    return _hankel(c, r)


@partial(vectorize, signature="(m),(n)->(m,n)")
def _hankel(c, r):
    m, n = c.shape[0], r.shape[0]
    if m == 0 or n == 0:
        return jnp.zeros((m, n), dtype=jnp.result_type(c, r))
    v = jnp.concatenate(promote_dtypes(c, r[1:]))
    return v[np.arange(m)[:, None] + np.arange(n)[None, :]]


def leslie(f, s):
    """The Leslie matrix: fecundities f as its first row, survivals s on its first sub-diagonal."""
    f, s = _at_least_vector("leslie", f, s)
    if f.shape[-1] < 2:
        raise ValueError(f"The length of f along the last axis must be at least 2; got shape {f.shape}.")
    if s.shape[-1] != f.shape[-1] - 1:
        raise ValueError("Incorrect lengths for f and s. The length of s along the last axis must be one less "
                         f"than the length of f; got f shape {f.shape} and s shape {s.shape}.")
    return _leslie(f, s)


@partial(vectorize, signature="(n),(m)->(n,n)")
def _leslie(f, s):
    f, s = promote_dtypes(f, s)
    return jnp.diag(s, k=-1).at[0].set(f)


def companion(a):
    """The companion matrix of the polynomial a: first row -a[1:] / a[0], ones below the diagonal.
    As in JAX, a zero a[0] is not checked (the row is then inf/nan)."""
    a, = promote_args_inexact("companion", a)
    a = jnp.atleast_1d(a)
    if a.shape[-1] < 2:
        raise ValueError(f"The length of `a` along the last axis must be at least 2; got shape {a.shape}.")
    return _companion(a)


@partial(vectorize, signature="(n)->(m,m)")
def _companion(a):
    m = a.shape[0] - 1
    return jnp.eye(m, k=-1, dtype=a.dtype).at[0].set(-a[1:] / a[0])


def fiedler(a):
    """The symmetric Fiedler matrix F[i, j] = |a[i] - a[j]|."""
    a, = _at_least_vector("fiedler", a)
    return jnp.abs(a[..., :, None] - a[..., None, :])


def fiedler_companion(a):
    """The pentadiagonal Fiedler companion matrix of the polynomial a (its eigenvalues are a's roots)."""
    a, = promote_args_inexact("fiedler_companion", a)
    a = jnp.atleast_1d(a)
    if a.shape[-1] == 0:
        raise ValueError("fiedler_companion requires the last axis of 'a' to have nonzero length, "
                         f"but got an array of shape {a.shape}.")
    return _fiedler_companion(a)


@partial(vectorize, signature="(n)->(m,m)")
def _fiedler_companion(a):
    n = a.shape[0] - 1
    if n == 0:
        return jnp.zeros((0, 0), a.dtype)
    a = a / a[0]
    if n == 1:
        return -a[1:].reshape(1, 1)
    # Each nonzero cell as a (row, column) mask over the grid, so shapes stay static:
    # rows 0 and 1 of column 0 hold -a[1] and 1; an even row i holds -a[i+2], 1 at columns i+1, i+2
    # and -a[i+1] at column i-1 (i >= 2); an odd row i >= 3 holds 1 at column i-2.
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    even, odd = i % 2 == 0, i % 2 == 1
    super_values = -a[np.minimum(i + 2, n)]
    sub_values = -a[np.minimum(i + 1, n)]
    one, zero = jnp.ones((), a.dtype), jnp.zeros((), a.dtype)
    conditions = [(i == 0) & (j == 0), (i == 1) & (j == 0), (j == i + 1) & even, (j == i + 2) & even,
                  (j == i - 1) & even & (i >= 2), (j == i - 2) & odd & (i >= 3)]
    return jnp.select([jnp.asarray(c) for c in conditions], [-a[1], one, super_values, one, sub_values, one],
                      default=zero)


def convolution_matrix(a, n, mode="full"):
    """The Toeplitz matrix A with A @ v == jnp.convolve(a, v, mode) for v of length n."""
    n = operator.index(n)
    if n <= 0:
        raise ValueError(f"n must be a positive integer; got {n}.")
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"mode must be one of 'full', 'valid', 'same'; got {mode!r}.")
    check_arraylike("convolution_matrix", a)
    a = jnp.asarray(a)
    if a.ndim == 0:
        raise ValueError("convolution_matrix: a must be at least 1-dimensional, got a scalar.")
    if a.shape[-1] < 1:
        raise ValueError(f"len(a) must be at least 1; got shape {a.shape}.")
    return _convolution_matrix(a, n, mode)


@jit(static_argnames=("n", "mode"))
def _convolution_matrix(a, n, mode):
    m = a.shape[-1]
    pad = [(0, 0)] * (a.ndim - 1) + [(0, n - 1)]
    column, reversed_row = jnp.pad(a, pad), jnp.pad(jnp.flip(a, axis=-1), pad)
    length = m + n - 1
    if mode == "same":
        trim = min(n, m) - 1
        begin, end = trim // 2, trim - trim // 2
    elif mode == "valid":
        begin = end = min(n, m) - 1
    else:
        begin = end = 0
    return toeplitz(lax.slice_in_dim(column, begin, length - end, axis=-1),
                    lax.slice_in_dim(reversed_row, length - n - begin, length - begin, axis=-1))


# ---- of an order n --------------------------------------------------------------------------------

@jit(static_argnames=("n",))
def hilbert(n):
    """The Hilbert matrix H[i, j] = 1 / (i + j + 1)."""
    a = lax.broadcasted_iota(dtypes.default_float_dtype(), (n, 1), 0)
    return 1 / (a + a.T + 1)


@jit(static_argnames=("n",))
def invhilbert(n):
    """The inverse of the Hilbert matrix from its closed form in binomial coefficients."""
    a = jnp.arange(n, dtype=dtypes.default_float_dtype())
    i, j = a[:, None], a[None, :]
    s = i + j
    return (-1.0) ** s * (s + 1.0) * comb(n + i, n - j - 1) * comb(n + j, n - i - 1) * comb(s, i) ** 2


def _binomial(n, k):
    return lax.exp(lax.lgamma(n + 1.0) - lax.lgamma(n - k + 1.0) - lax.lgamma(k + 1.0))


def _check_kind(kind):
    kind = "symmetric" if kind is None else kind
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"Expected kind to be one of: ['symmetric', 'lower', 'upper']; got {kind}")
    return kind


@jit(static_argnames=("n", "kind"))
def pascal(n, kind=None):
    """The Pascal matrix (binomial coefficients, float32 as in JAX): lower, upper or symmetric L L^T."""
    kind = _check_kind(kind)
    a = jnp.arange(n, dtype=np.float32)
    lower = _binomial(a[:, None], a[None, :])
    if kind == "lower":
        return lower
    return lower.T if kind == "upper" else jnp.dot(lower, lower.T)


@jit(static_argnames=("n", "kind"))
def invpascal(n, kind=None):
    """The inverse Pascal matrix: L^-1[i, j] = (-1)^(i-j) binom(i, j), U^-1 = L^-T, S^-1 = U^-1 L^-1."""
    kind = _check_kind(kind)
    a = jnp.arange(n, dtype=dtypes.default_float_dtype())
    i, j = a[:, None], a[None, :]
    lower = (-1.0) ** (i - j) * _binomial(i, j)
    if kind == "lower":
        return lower
    return lower.T if kind == "upper" else jnp.dot(lower.T, lower)


@jit(static_argnames=("n", "full"))
def helmert(n, full=False):
    """The Helmert matrix: row k-1 is (1, ..., 1, -k, 0, ...) / sqrt(k (k+1)); full prepends 1/sqrt(n)."""
    if n < 1:
        raise ValueError(f"n must be a positive integer; got {n}.")
    i, j = np.arange(n - 1)[:, None], np.arange(n)[None, :]
    k = jnp.asarray(i + 1, dtypes.default_float_dtype())
    denominator = jnp.sqrt(k * (k + 1))
    h = jnp.where(j <= i, 1.0 / denominator, jnp.where(j == i + 1, -k / denominator, jnp.zeros_like(denominator)))
    if full:
        h = jnp.concatenate([jnp.full((1, n), 1.0 / jnp.sqrt(n), dtype=h.dtype), h], axis=0)
    return h


@jit(static_argnames=("n", "dtype"))
def hadamard(n, dtype=int):
    """The Sylvester Hadamard matrix of order n (a power of 2): H_2m = [[H, H], [H, -H]]."""
    if n < 1 or not math.log2(n).is_integer():
        raise ValueError(f"n must be a positive power of 2; got {n}.")
    h = jnp.ones((1, 1), dtype=dtype)
    for _ in range(int(math.log2(n))):
        h = jnp.block([[h, h], [h, -h]])
    return h


@jit(static_argnames=("n", "scale", "dtype"))
def dft(n, scale=None, *, dtype=None):
    """The DFT matrix W[i, j] = exp(-2 pi i j / n), unscaled or scaled by 1/sqrt(n) ('sqrtn') or 1/n."""
    if scale not in (None, "sqrtn", "n"):
        raise ValueError(f"scale must be None, 'sqrtn', or 'n'; got {scale!r}.")
    if dtype is None:
        dtype = dtypes.default_complex_dtype()
    else:
        dtype = dtypes.check_user_dtype(dtype)
        if not np.issubdtype(dtype, np.complexfloating):
            raise ValueError(f"dtype must be a complex floating-point type; got {dtype}.")
    a = jnp.arange(n).astype(dtype)  # the core has no complex iota
    omegas = jnp.exp(-2j * np.pi * a[:, None] * a[None, :] / n)
    if scale == "sqrtn":
        return omegas / jnp.sqrt(n)
    return omegas / n if scale == "n" else omegas
