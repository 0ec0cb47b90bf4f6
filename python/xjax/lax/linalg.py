"""xjax.lax.linalg: the linear-algebra primitives under JAX's names."""
from xjax._src.lax.linalg import (  # noqa: F401
    EighImplementation, SvdAlgorithm, cholesky, cholesky_p, eig, eig_p, eigh, eigh_p, lu, lu_p, lu_pivots_to_permutation,
    lu_pivots_to_permutation_p, qr, qr_p, svd, svd_p, triangular_solve, triangular_solve_p)
from xjax._src.lax.linalg_forms import (  # noqa: F401
    EigImplementation, cholesky_update, cholesky_update_p, hessenberg, hessenberg_p, householder_product,
    householder_product_p, ormqr, ormqr_p, schur, schur_p, symmetric_product, symmetric_product_p, tridiagonal,
    tridiagonal_p, tridiagonal_solve, tridiagonal_solve_p)
from xjax._src.lax.qdwh import qdwh  # noqa: F401
