"""xjax.scipy.sparse.linalg: the Krylov solvers cg, bicgstab and gmres, as jax.scipy.sparse.linalg."""
from xjax._src.scipy.sparse_linalg import bicgstab as bicgstab, cg as cg, gmres as gmres  # noqa: F401
