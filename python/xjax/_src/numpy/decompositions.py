"""jnp.linalg's decompositions and the functions built on them, with JAX's signatures.

The core has no LAPACK kernels yet: each function checks its arguments as JAX does (so a program
with JAX's keywords fails at the missing kernel, not with a TypeError) and raises
NotImplementedError naming itself. The issue that adds the kernels fills in these bodies.
"""
from xjax._src.numpy import util


def _missing(name):
    raise NotImplementedError(f"jnp.linalg.{name} is not implemented in xjax yet (it needs a decomposition kernel "
                              "in the core)")


def _matrix(name, a, square=False):
    """The operand as an array of rank >= 2 (square in its last two axes if `square`)."""
    util.check_arraylike(f"jnp.linalg.{name}", a)
    shape = util.aval_of(a).shape
    if len(shape) < 2:
        raise TypeError(f"Input 0 to {name} must have rank at least 2, but got shape={shape}")
    if square and shape[-1] != shape[-2]:
        raise ValueError(f"Argument to {name} must have shape [..., n, n], got {shape}.")
    return a


def cholesky(a, *, upper=False, symmetrize_input=True):
    """The Cholesky factor of a (lower triangular; upper=True gives its transpose)."""
    _matrix("cholesky", a, square=True)
    _missing("cholesky")


def svd(a, full_matrices=True, compute_uv=True, hermitian=False, subset_by_index=None):
    """The singular value decomposition (U, S, Vh) of a, or S alone when compute_uv is False."""
    _matrix("svd", a)
    _missing("svd")


def svdvals(x, /):
    """The singular values of x (Array API): svd(x, compute_uv=False)."""
    _matrix("svdvals", x)
    _missing("svdvals")


_QR_MODES = ("reduced", "complete", "r", "raw", "full")


def qr(a, mode="reduced"):
    """The QR decomposition of a; mode is "reduced", "complete", "r" or "raw", as in NumPy."""
    _matrix("qr", a)
    if mode not in _QR_MODES:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    _missing("qr")


def eig(a):
    """Eigenvalues and right eigenvectors of a general square matrix."""
    _matrix("eig", a, square=True)
    _missing("eig")


def eigvals(a):
    """Eigenvalues of a general square matrix."""
    _matrix("eigvals", a, square=True)
    _missing("eigvals")


def _check_uplo(uplo):
    if uplo not in (None, "L", "U"):
        raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {uplo}")


def eigh(a, UPLO=None, symmetrize_input=True):  # noqa: N803 - JAX's name
    """Eigenvalues (ascending) and eigenvectors of a symmetric matrix."""
    _matrix("eigh", a, square=True)
    _check_uplo(UPLO)
    _missing("eigh")


def eigvalsh(a, UPLO="L", *, symmetrize_input=True):  # noqa: N803 - JAX's name
    """Eigenvalues (ascending) of a symmetric matrix."""
    _matrix("eigvalsh", a, square=True)
    _check_uplo(UPLO)
    _missing("eigvalsh")


def inv(a):
    """The inverse of a square matrix."""
    _matrix("inv", a, square=True)
    _missing("inv")


def det(a):
    """The determinant of a square matrix."""
    _matrix("det", a, square=True)
    _missing("det")


def slogdet(a, *, method=None):
    """(sign, log|det|) of a square matrix; method is None ("lu") or "qr"."""
    _matrix("slogdet", a, square=True)
    if method not in (None, "lu", "qr"):
        raise ValueError(f"Unknown slogdet method '{method}'. Supported methods are 'lu' (`None`), and 'qr'.")
    _missing("slogdet")


def solve(a, b):
    """x with a @ x == b, for square a."""
    _matrix("solve", a, square=True)
    util.check_arraylike("jnp.linalg.solve", b)
    _missing("solve")


def lstsq(a, b, rcond=None, *, numpy_resid=False):
    """The least-squares solution of a @ x == b, with residuals, rank and singular values."""
    _matrix("lstsq", a)
    util.check_arraylike("jnp.linalg.lstsq", b)
    _missing("lstsq")


def pinv(a, rtol=None, hermitian=False, *, rcond=None):
    """The Moore-Penrose pseudo-inverse (singular values below rtol * largest are dropped)."""
    _matrix("pinv", a)
    _missing("pinv")


def matrix_rank(M, rtol=None, *, hermitian=False, tol=None):  # noqa: N803 - JAX's name
    """The number of singular values above rtol * largest (or above tol)."""
    _matrix("matrix_rank", M)
    _missing("matrix_rank")


def cond(x, p=None):
    """The condition number of x in the p-norm (needs svd or inv)."""
    util.check_arraylike("jnp.linalg.cond", x)
    shape = util.aval_of(x).shape
    if len(shape) < 2:
        raise ValueError(f"jnp.linalg.cond: input array must be at least 2D; got arr.shape={shape}")
    _missing("cond")


def tensorinv(a, ind=2):
    """The inverse of a tensor seen as a square matrix (needs inv)."""
    util.check_arraylike("jnp.linalg.tensorinv", a)
    _missing("tensorinv")


def tensorsolve(a, b, axes=None):
    """x with tensordot(a, x) == b (needs solve)."""
    util.check_arraylike("jnp.linalg.tensorsolve", a, b)
    _missing("tensorsolve")
