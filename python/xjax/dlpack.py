"""xjax.dlpack: arrays from any DLPack producer (jax.dlpack). Exporting is the arrays' own __dlpack__."""
from xjax._src.dlpack import SUPPORTED_DTYPES, from_dlpack, is_supported_dtype  # noqa: F401
