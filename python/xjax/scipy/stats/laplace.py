"""xjax.scipy.stats.laplace: the Laplace distribution, as jax.scipy.stats.laplace."""
from xjax._src.scipy.stats.laplace import cdf as cdf, logpdf as logpdf, pdf as pdf  # noqa: F401
