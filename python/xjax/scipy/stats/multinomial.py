"""xjax.scipy.stats.multinomial: the multinomial distribution, as jax.scipy.stats.multinomial."""
from xjax._src.scipy.stats.multinomial import (  # noqa: F401
    logpmf as logpmf,
    pmf as pmf)
