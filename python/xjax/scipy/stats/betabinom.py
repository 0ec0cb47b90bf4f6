"""xjax.scipy.stats.betabinom, as jax.scipy.stats.betabinom."""
from xjax._src.scipy.stats.betabinom import (  # noqa: F401
    logpmf as logpmf,
    pmf as pmf)
