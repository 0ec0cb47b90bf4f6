"""xjax.scipy.stats.binom: the binomial distribution, as jax.scipy.stats.binom."""
from xjax._src.scipy.stats.binom import logpmf as logpmf, pmf as pmf  # noqa: F401
