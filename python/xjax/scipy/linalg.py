"""xjax.scipy.linalg: SciPy's linear algebra on xjax arrays (jax.scipy.linalg's names)."""
from xjax._src.scipy.expm import expm, expm_frechet  # noqa: F401
from xjax._src.scipy.linalg import (block_diag, cho_factor, cho_solve, cholesky, det, eigh, inv, lu,  # noqa: F401
                                    lu_factor, lu_solve, qr, solve, solve_triangular, svd, toeplitz)
from xjax._src.scipy.eigh_tridiagonal import eigh_tridiagonal  # noqa: F401
from xjax._src.scipy.linalg_schur import (funm, hessenberg, polar, qr_multiply, rsf2csf, schur,  # noqa: F401
                                          solve_sylvester, sqrtm)
from xjax._src.scipy.special_matrices import (circulant, companion, convolution_matrix, dft, fiedler,  # noqa: F401
                                              fiedler_companion, hadamard, hankel, helmert, hilbert, invhilbert,
                                              invpascal, leslie, pascal)
