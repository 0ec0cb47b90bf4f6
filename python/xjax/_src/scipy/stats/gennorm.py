"""The generalised normal distribution with shape beta: density beta / (2 Gamma(1/beta)) exp(-|x|^beta)."""
from xjax._src import lax
from xjax._src.numpy.util import promote_args_inexact


def logpdf(x, beta):
    """log(beta / 2) - lgamma(1 / beta) - |x|^beta."""
    x, beta = promote_args_inexact("gennorm.logpdf", x, beta)
    return lax.log(0.5 * beta) - lax.lgamma(1 / beta) - lax.abs(x) ** beta


def pdf(x, beta):
    """The density."""
    return lax.exp(logpdf(x, beta))


def cdf(x, beta):
    """(1 + sign(x) P(1/beta, |x|^beta)) / 2, P the regularised lower incomplete gamma function."""
    x, beta = promote_args_inexact("gennorm.cdf", x, beta)
    return 0.5 * (1 + lax.sign(x) * lax.igamma(1 / beta, lax.abs(x) ** beta))
