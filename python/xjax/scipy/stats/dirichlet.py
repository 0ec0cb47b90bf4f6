"""xjax.scipy.stats.dirichlet: the Dirichlet distribution, as jax.scipy.stats.dirichlet."""
from xjax._src.scipy.stats.dirichlet import logpdf as logpdf, pdf as pdf  # noqa: F401
