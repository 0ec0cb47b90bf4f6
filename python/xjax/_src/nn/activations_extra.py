"""jax.nn's smooth and sparse activations (squareplus, sparse_plus, sparse_sigmoid, mish), log1mexp and
logmeanexp, each as JAX defines it, in xjax.numpy."""
import functools

import numpy as np

from xjax._src.custom_derivatives import custom_jvp
from xjax._src.jit import jit
from xjax._src.nn.activations import _arraylike, softplus
from xjax._src.nn.normalize import logsumexp
import xjax.numpy as jnp


@jit
def squareplus(x, b=4):
    """(x + sqrt(x^2 + b)) / 2: a smooth, algebraic softplus."""
    x, b = _arraylike("squareplus", x), _arraylike("squareplus", b)
    return (x + jnp.sqrt(jnp.square(x) + b)) / 2


@jit
def sparse_plus(x):
    """0 for x <= -1, (x + 1)^2 / 4 between -1 and 1, x for x >= 1."""
    x = _arraylike("sparse_plus", x)
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


@jit
def sparse_sigmoid(x):
    """clip(x + 1, 0, 2) / 2: the derivative of sparse_plus."""
    x = _arraylike("sparse_sigmoid", x)
    return 0.5 * jnp.clip(x + 1.0, 0.0, 2.0)


@jit
def mish(x):
    """x * tanh(softplus(x))."""
    x = _arraylike("mish", x)
    return x * jnp.tanh(softplus(x))


@jit
def _log1mexp(x):
    x = _arraylike("log1mexp", x)
    # log(-expm1(-x)) is accurate for small x, log1p(-exp(-x)) for large x; they cross at log 2.
    return jnp.where(x < np.log(2.0), jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


log1mexp = custom_jvp(_log1mexp)
log1mexp.__doc__ = "log(1 - exp(-x)) for x > 0, accurate over the whole range; derivative 1 / expm1(x)."
log1mexp.defjvps(lambda g, ans, x: g / jnp.expm1(x))


@functools.partial(jit, static_argnames=("axis", "keepdims"))
def logmeanexp(x, axis=None, where=None, keepdims=False):
    """log(mean(exp(x))) over `axis` (the elements where `where` holds), computed stably."""
    x = _arraylike("logmeanexp", x)
    lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    ones = jnp.ones_like(x, dtype=lse.dtype) if where is None else jnp.where(where, 1, 0).astype(lse.dtype)
    count = jnp.sum(jnp.broadcast_to(ones, x.shape), axis=axis, keepdims=keepdims)
    return lse - jnp.log(count)
