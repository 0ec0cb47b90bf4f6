"""xjax.scipy.stats.gumbel_r: the right-skewed Gumbel distribution, as jax.scipy.stats.gumbel_r."""
from xjax._src.scipy.stats.gumbel_r import (  # noqa: F401
    cdf as cdf,
    logcdf as logcdf,
    logpdf as logpdf,
    logsf as logsf,
    pdf as pdf,
    ppf as ppf,
    sf as sf)
