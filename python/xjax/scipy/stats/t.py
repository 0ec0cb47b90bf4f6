"""xjax.scipy.stats.t: Student's t distribution, as jax.scipy.stats.t."""
from xjax._src.scipy.stats.t import logpdf as logpdf, pdf as pdf  # noqa: F401
