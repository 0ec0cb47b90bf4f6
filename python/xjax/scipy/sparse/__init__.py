"""xjax.scipy.sparse: as jax.scipy.sparse, the iterative solvers of its linalg module."""
from xjax.scipy.sparse import linalg as linalg  # noqa: F401
