"""xjax.scipy.ndimage (jax.scipy.ndimage): interpolation at coordinates."""
from xjax._src.scipy.ndimage import map_coordinates  # noqa: F401
