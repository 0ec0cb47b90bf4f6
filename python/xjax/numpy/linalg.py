"""xjax.numpy.linalg: norms and linear-algebra helpers (jax.numpy.linalg's names)."""
from xjax._src.numpy.creation import diagonal  # noqa: F401
from xjax._src.numpy.linalg import (cholesky, det, eig, eigh, eigvals, eigvalsh, inv, lstsq,  # noqa: F401
                                    matrix_norm, matrix_power, matrix_rank, norm, pinv, qr, slogdet, solve, svd,
                                    vector_norm)
from xjax._src.numpy.manipulation import matrix_transpose  # noqa: F401
from xjax._src.numpy.products import cross, matmul, outer, tensordot, trace, vecdot  # noqa: F401
