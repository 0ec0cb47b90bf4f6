"""xjax.numpy.linalg: norms and linear-algebra helpers (jax.numpy.linalg's names)."""
from xjax._src.numpy.decompositions import (cholesky, cond, det, eig, eigh, eigvals, eigvalsh, inv,  # noqa: F401
                                            lstsq, matrix_rank, pinv, qr, slogdet, solve, svd, svdvals,
                                            tensorinv, tensorsolve)
from xjax._src.numpy.linalg import (cross, diagonal, matrix_norm, matrix_power, multi_dot, norm,  # noqa: F401
                                    outer, tensordot, trace, vector_norm)
from xjax._src.numpy.manipulation import matrix_transpose  # noqa: F401
from xjax._src.numpy.products import matmul, vecdot  # noqa: F401
