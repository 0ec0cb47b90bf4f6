"""xjax.image (jax.image): image resizing and resampling."""
from xjax._src.image import ResizeMethod, resize, scale_and_translate  # noqa: F401
