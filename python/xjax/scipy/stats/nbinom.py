"""xjax.scipy.stats.nbinom: the negative binomial distribution, as jax.scipy.stats.nbinom."""
from xjax._src.scipy.stats.nbinom import (  # noqa: F401
    logpmf as logpmf,
    pmf as pmf)
