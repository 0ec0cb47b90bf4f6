"""xjax.scipy.stats.chi2: the chi-squared distribution, as jax.scipy.stats.chi2."""
from xjax._src.scipy.stats.chi2 import (  # noqa: F401
    cdf as cdf,
    logcdf as logcdf,
    logpdf as logpdf,
    logsf as logsf,
    pdf as pdf,
    sf as sf)
