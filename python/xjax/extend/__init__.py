"""xjax.extend (jax.extend): the machinery libraries build on (primitives, tracing state)."""
from xjax.extend import core, linear_util, source_info_util  # noqa: F401
