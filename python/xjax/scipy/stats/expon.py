"""xjax.scipy.stats.expon: the exponential distribution, as jax.scipy.stats.expon."""
from xjax._src.scipy.stats.expon import (  # noqa: F401
    cdf as cdf,
    logcdf as logcdf,
    logpdf as logpdf,
    logsf as logsf,
    pdf as pdf,
    ppf as ppf,
    sf as sf)
