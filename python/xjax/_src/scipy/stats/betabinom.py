"""The beta-binomial distribution: pmf C(n, y) B(y + a, n - y + b) / B(a, b), y = floor(k) - loc;
-inf outside 0 <= y <= n, NaN for n < 0, a <= 0 or b <= 0 (JAX's betabinom)."""
import numpy as np

from xjax._src import lax
from xjax._src.jit import jit
from xjax._src.numpy.util import promote_args_inexact
from xjax._src.scipy.special import betaln
from xjax._src.scipy.stats._util import const
import xjax.numpy as jnp


@jit
def logpmf(k, n, a, b, loc=0):
    """log C(n, y) + log B(y + a, n - y + b) - log B(a, b), log C(n, y) as -log1p(n) - betaln(n-y+1, y+1)."""
    k, n, a, b, loc = promote_args_inexact("betabinom.logpmf", k, n, a, b, loc)
    y = lax.floor(k) - loc
    one, zero = const(y, 1), const(y, 0)
    log_choose = -(lax.log1p(n) + betaln(n - y + one, y + one))
    log_probs = log_choose + (betaln(y + a, n - y + b) - betaln(a, b))
    log_probs = jnp.where((y == zero) & (n == zero), 0.0, log_probs)
    outside = (y < -loc) | (y > n) | (y + a <= zero)
    log_probs = jnp.where(outside, -np.inf, log_probs)
    return jnp.where((n < zero) | (a <= zero) | (b <= zero), np.nan, log_probs)


def pmf(k, n, a, b, loc=0):
    """exp(logpmf)."""
    return lax.exp(logpmf(k, n, a, b, loc))
