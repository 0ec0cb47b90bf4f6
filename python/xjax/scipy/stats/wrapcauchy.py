"""xjax.scipy.stats.wrapcauchy, as jax.scipy.stats.wrapcauchy."""
from xjax._src.scipy.stats.wrapcauchy import (  # noqa: F401
    logpdf as logpdf,
    pdf as pdf)
