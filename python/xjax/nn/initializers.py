"""jax.nn.initializers: functions init(key, shape, dtype) -> array (the non-random ones for now)."""
from xjax._src.nn.initializers import constant, ones, zeros  # noqa: F401
