"""xjax.scipy.stats.gamma: the gamma distribution, as jax.scipy.stats.gamma."""
from xjax._src.scipy.stats.gamma import (  # noqa: F401
    cdf as cdf,
    logcdf as logcdf,
    logpdf as logpdf,
    logsf as logsf,
    pdf as pdf,
    sf as sf)
