"""xjax.stages (jax.stages): the stages of a jitted function (traced, lowered, compiled)."""
from xjax._src.stages import Compiled, Lowered, Traced  # noqa: F401
