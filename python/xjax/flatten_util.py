"""xjax.flatten_util (jax.flatten_util): a pytree of arrays as one flat vector, and back."""
from xjax._src.flatten_util import ravel_pytree  # noqa: F401
