"""xjax.scipy.stats.logistic: the logistic distribution, as jax.scipy.stats.logistic."""
from xjax._src.scipy.stats.logistic import (  # noqa: F401
    cdf as cdf,
    isf as isf,
    logpdf as logpdf,
    pdf as pdf,
    ppf as ppf,
    sf as sf)
