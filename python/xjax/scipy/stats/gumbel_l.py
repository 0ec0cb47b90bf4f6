"""xjax.scipy.stats.gumbel_l, as jax.scipy.stats.gumbel_l."""
from xjax._src.scipy.stats.gumbel_l import (  # noqa: F401
    cdf as cdf,
    logcdf as logcdf,
    logpdf as logpdf,
    logsf as logsf,
    pdf as pdf,
    ppf as ppf,
    sf as sf)
