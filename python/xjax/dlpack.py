"""xjax.dlpack: arrays from any DLPack producer (jax.dlpack). Exporting is the arrays' own __dlpack__."""
from xjax._src.dlpack import SUPPORTED_DTYPES, is_supported_dtype  # noqa: F401
from xjax._src.transfer import from_dlpack  # noqa: F401
