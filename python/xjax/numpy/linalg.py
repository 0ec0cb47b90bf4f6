"""xjax.numpy.linalg: decompositions, solvers, determinants, norms and linear-algebra helpers
(jax.numpy.linalg's names)."""
from xjax._src.numpy.decompositions import (EighResult, EigResult, QRResult, SlogdetResult,  # noqa: F401
                                            SVDResult, cholesky, eig, eigh, eigvals, eigvalsh, qr, svd, svdvals)
from xjax._src.numpy.determinants import det, slogdet  # noqa: F401
from xjax._src.numpy.linalg import (cond, cross, diagonal, matmul, matrix_norm, matrix_power,  # noqa: F401
                                    multi_dot, norm, outer, tensordot, trace, vector_norm)
from xjax._src.numpy.linalg_solve import (inv, lstsq, matrix_rank, pinv, solve, tensorinv,  # noqa: F401
                                          tensorsolve)
from xjax._src.numpy.manipulation import matrix_transpose  # noqa: F401
from xjax._src.numpy.products import vecdot  # noqa: F401
