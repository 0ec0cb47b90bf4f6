"""xjax.scipy.stats.geom: the geometric distribution, as jax.scipy.stats.geom."""
from xjax._src.scipy.stats.geom import logpmf as logpmf, pmf as pmf  # noqa: F401
