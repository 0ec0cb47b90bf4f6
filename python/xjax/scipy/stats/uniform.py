"""xjax.scipy.stats.uniform: the uniform distribution, as jax.scipy.stats.uniform."""
from xjax._src.scipy.stats.uniform import cdf as cdf, logpdf as logpdf, pdf as pdf, ppf as ppf  # noqa: F401
