"""Student's t distribution with df degrees of freedom, location loc and scale `scale`."""
import numpy as np

from xjax._src import lax
from xjax._src.numpy.util import promote_args_inexact
from xjax._src.scipy.stats._util import const


def logpdf(x, df, loc=0, scale=1):
    """log density."""
    x, df, loc, scale = promote_args_inexact("t.logpdf", x, df, loc, scale)
    two = const(x, 2)
    scaled_x = lax.div(lax.sub(x, loc), scale)
    df_over_two = lax.div(df, two)
    df_plus_one_over_two = lax.add(df_over_two, const(x, 0.5))
    normalize_term_const = lax.mul(lax.mul(scale, scale), const(x, np.pi))
    normalize_term_tmp = lax.div(lax.log(lax.mul(normalize_term_const, df)), two)
    normalize_term = lax.sub(lax.add(lax.lgamma(df_over_two), normalize_term_tmp), lax.lgamma(df_plus_one_over_two))
    quadratic = lax.div(lax.mul(scaled_x, scaled_x), df)
    return lax.neg(lax.add(normalize_term, lax.mul(df_plus_one_over_two, lax.log1p(quadratic))))


def pdf(x, df, loc=0, scale=1):
    """The density exp(logpdf)."""
    return lax.exp(logpdf(x, df, loc, scale))
