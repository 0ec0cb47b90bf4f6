"""xjax.flatten_util (jax.flatten_util)."""
from xjax._src.flatten_util import ravel_pytree  # noqa: F401
