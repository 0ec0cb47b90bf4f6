"""xjax.scipy.integrate (jax.scipy.integrate): the trapezoidal rule."""
from xjax._src.numpy.misc import trapezoid  # noqa: F401
