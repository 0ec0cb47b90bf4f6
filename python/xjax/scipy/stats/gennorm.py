"""xjax.scipy.stats.gennorm: the generalised normal distribution, as jax.scipy.stats.gennorm."""
from xjax._src.scipy.stats.gennorm import (  # noqa: F401
    cdf as cdf,
    logpdf as logpdf,
    pdf as pdf)
