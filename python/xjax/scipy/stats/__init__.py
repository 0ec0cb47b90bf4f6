"""xjax.scipy.stats: probability distributions (log-densities, CDFs, quantiles), as jax.scipy.stats."""
from xjax.scipy.stats import bernoulli as bernoulli  # noqa: F401
from xjax.scipy.stats import beta as beta  # noqa: F401
from xjax.scipy.stats import betabinom as betabinom  # noqa: F401
from xjax.scipy.stats import binom as binom  # noqa: F401
from xjax.scipy.stats import cauchy as cauchy  # noqa: F401
from xjax.scipy.stats import chi2 as chi2  # noqa: F401
from xjax.scipy.stats import dirichlet as dirichlet  # noqa: F401
from xjax.scipy.stats import expon as expon  # noqa: F401
from xjax.scipy.stats import gamma as gamma  # noqa: F401
from xjax.scipy.stats import gennorm as gennorm  # noqa: F401
from xjax.scipy.stats import geom as geom  # noqa: F401
from xjax.scipy.stats import gumbel_l as gumbel_l  # noqa: F401
from xjax.scipy.stats import gumbel_r as gumbel_r  # noqa: F401
from xjax.scipy.stats import laplace as laplace  # noqa: F401
from xjax.scipy.stats import logistic as logistic  # noqa: F401
from xjax.scipy.stats import multinomial as multinomial  # noqa: F401
from xjax.scipy.stats import multivariate_normal as multivariate_normal  # noqa: F401
from xjax.scipy.stats import nbinom as nbinom  # noqa: F401
from xjax.scipy.stats import norm as norm  # noqa: F401
from xjax.scipy.stats import pareto as pareto  # noqa: F401
from xjax.scipy.stats import poisson as poisson  # noqa: F401
from xjax.scipy.stats import t as t  # noqa: F401
from xjax.scipy.stats import truncnorm as truncnorm  # noqa: F401
from xjax.scipy.stats import uniform as uniform  # noqa: F401
from xjax.scipy.stats import vonmises as vonmises  # noqa: F401
from xjax.scipy.stats import wrapcauchy as wrapcauchy  # noqa: F401
from xjax._src.scipy.stats.descriptive import ModeResult, mode, rankdata, sem  # noqa: F401


class gaussian_kde:
    """SciPy's Gaussian kernel density estimate: not implemented in xjax yet."""

    def __init__(self, dataset, bw_method=None, weights=None):
        raise NotImplementedError("jax.scipy.stats.gaussian_kde is not implemented in xjax yet")
