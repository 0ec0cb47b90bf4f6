"""xjax.scipy.stats.cauchy: the Cauchy distribution, as jax.scipy.stats.cauchy."""
from xjax._src.scipy.stats.cauchy import (  # noqa: F401
    cdf as cdf,
    isf as isf,
    logcdf as logcdf,
    logpdf as logpdf,
    logsf as logsf,
    pdf as pdf,
    ppf as ppf,
    sf as sf)
