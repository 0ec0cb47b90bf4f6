"""xjax.extend.source_info_util (jax.extend.source_info_util): which files' frames tracebacks leave out."""
from xjax._src.traceback_util import register_exclusion  # noqa: F401
