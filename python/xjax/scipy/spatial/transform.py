"""xjax.scipy.spatial.transform (jax.scipy.spatial.transform): rotations and their interpolation."""
from xjax._src.scipy.rotation import Rotation, Slerp  # noqa: F401
