"""xjax.scipy.stats.vonmises: the von Mises distribution, as jax.scipy.stats.vonmises."""
from xjax._src.scipy.stats.vonmises import (  # noqa: F401
    logpdf as logpdf,
    pdf as pdf)
