"""The Laplace distribution with location loc and scale `scale`."""
from xjax._src import lax
from xjax._src.numpy.util import promote_args_inexact
from xjax._src.scipy.stats._util import const


def logpdf(x, loc=0, scale=1):
    """-|x - loc| / scale - log(2 scale)."""
    x, loc, scale = promote_args_inexact("laplace.logpdf", x, loc, scale)
    linear_term = lax.div(lax.abs(lax.sub(x, loc)), scale)
    return lax.neg(lax.add(linear_term, lax.log(lax.mul(const(x, 2), scale))))


def pdf(x, loc=0, scale=1):
    """The density exp(logpdf)."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """exp(d) / 2 for d = (x - loc) / scale <= 0, 1 - exp(-d) / 2 above."""
    x, loc, scale = promote_args_inexact("laplace.cdf", x, loc, scale)
    half, one, zero = const(x, 0.5), const(x, 1), const(x, 0)
    diff = lax.div(lax.sub(x, loc), scale)
    return lax.select(lax.le(diff, zero), lax.mul(half, lax.exp(diff)),
                      lax.sub(one, lax.mul(half, lax.exp(lax.neg(diff)))))
