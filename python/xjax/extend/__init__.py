"""xjax.extend (jax.extend): the tracing machinery's names for libraries that extend it."""
from xjax.extend import core, linear_util, source_info_util  # noqa: F401
