"""xjax.ops (jax.ops): segment reductions."""
from xjax._src.ops import segment_max, segment_min, segment_prod, segment_sum  # noqa: F401
