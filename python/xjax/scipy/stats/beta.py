"""xjax.scipy.stats.beta: the beta distribution, as jax.scipy.stats.beta."""
from xjax._src.scipy.stats.beta import (  # noqa: F401
    cdf as cdf,
    logcdf as logcdf,
    logpdf as logpdf,
    logsf as logsf,
    pdf as pdf,
    sf as sf)
