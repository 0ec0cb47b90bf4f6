"""xjax.scipy.optimize (jax.scipy.optimize): minimize with BFGS."""
from xjax._src.scipy.optimize import OptimizeResults, minimize  # noqa: F401
