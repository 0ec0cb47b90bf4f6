"""xjax.custom_batching (jax.custom_batching): functions with their own vmap rules."""
from xjax._src.custom_batching import custom_vmap, sequential_vmap  # noqa: F401
