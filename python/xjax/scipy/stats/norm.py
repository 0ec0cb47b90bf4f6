"""xjax.scipy.stats.norm: the normal distribution, as jax.scipy.stats.norm."""
from xjax._src.scipy.stats.norm import (  # noqa: F401
    cdf as cdf,
    isf as isf,
    logcdf as logcdf,
    logpdf as logpdf,
    logsf as logsf,
    pdf as pdf,
    ppf as ppf,
    sf as sf)
