"""xjax.scipy.stats.multivariate_normal: the multivariate normal distribution, as jax.scipy.stats.multivariate_normal."""
from xjax._src.scipy.stats.multivariate_normal import logpdf as logpdf, pdf as pdf  # noqa: F401
