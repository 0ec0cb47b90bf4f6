"""xjax.scipy.stats.pareto: the Pareto distribution, as jax.scipy.stats.pareto."""
from xjax._src.scipy.stats.pareto import (  # noqa: F401
    cdf as cdf,
    logcdf as logcdf,
    logpdf as logpdf,
    logsf as logsf,
    pdf as pdf,
    ppf as ppf,
    sf as sf)
