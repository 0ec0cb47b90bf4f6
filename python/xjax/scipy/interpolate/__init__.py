"""xjax.scipy.interpolate (jax.scipy.interpolate): interpolation on a regular grid."""
from xjax._src.scipy.interpolate import RegularGridInterpolator  # noqa: F401
