"""xjax.scipy.stats.poisson: the Poisson distribution, as jax.scipy.stats.poisson."""
from xjax._src.scipy.stats.poisson import cdf as cdf, entropy as entropy, logpmf as logpmf, pmf as pmf  # noqa: F401
