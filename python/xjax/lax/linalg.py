"""xjax.lax.linalg: the linear-algebra primitives under JAX's names."""
from xjax._src.lax.linalg import (  # noqa: F401
    EighImplementation, SvdAlgorithm, cholesky, cholesky_p, eig, eig_p, eigh, eigh_p, lu, lu_p, lu_pivots_to_permutation,
    lu_pivots_to_permutation_p, qr, qr_p, svd, svd_p, triangular_solve, triangular_solve_p)
