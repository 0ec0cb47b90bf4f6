"""jax.nn's elementwise activation functions, written in xjax.numpy / xjax.lax.

Each is jitted as in JAX (sigmoid inline): an eager call runs one fused kernel, and inside a trace
the jit is one equation that the enclosing lowering inlines. relu and relu6 are JAX's custom JVP
(derivative 0 at the kinks) of a jitted function, so they trace to JAX's equations.
"""
import functools

import numpy as np

from xjax._src import lax
from xjax._src.custom_derivatives import custom_jvp
from xjax._src.jit import jit
from xjax._src.numpy import util
import xjax.numpy as jnp


def _arraylike(name, x):
    util.check_arraylike(name, x)
    return util.asarray(x)


@jit
def relu(x):
    return jnp.maximum(x, 0)


relu = custom_jvp(relu)
relu.__doc__ = "Rectified linear unit, max(x, 0); its derivative at 0 is taken to be 0, as in JAX."
relu.defjvps(lambda g, ans, x: lax.select(x > 0, g, lax.full_like(g, 0)))


@jit
def relu6(x):
    return jnp.minimum(jnp.maximum(x, 0), 6.0)


relu6 = custom_jvp(relu6)
relu6.__doc__ = "min(max(x, 0), 6); its derivative at 0 and at 6 is 0, as in JAX."
relu6.defjvps(lambda g, ans, x: lax.select((x > 0) & (x < 6), g, lax.full_like(g, 0)))


def identity(x):
    """Returns x unchanged (as an array)."""
    return _arraylike("identity", x)


@functools.partial(jit, inline=True)
def sigmoid(x):
    """The logistic function 1 / (1 + exp(-x))."""
    return lax.logistic(x)


@jit
def softplus(x):
    """log(1 + exp(x)), computed as logaddexp(x, 0) so it neither overflows nor underflows."""
    return jnp.logaddexp(x, 0)


@jit
def soft_sign(x):
    """x / (|x| + 1)."""
    x = _arraylike("soft_sign", x)
    return x / (jnp.abs(x) + 1)


@jit
def silu(x):
    """x * sigmoid(x) (also called swish)."""
    x = _arraylike("silu", x)
    return x * sigmoid(x)


swish = silu


@jit
def log_sigmoid(x):
    """log(sigmoid(x)) = -softplus(-x), stable for large |x|."""
    x = _arraylike("log_sigmoid", x)
    return -softplus(-x)


@jit
def elu(x, alpha=1.0):
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""
    x = _arraylike("elu", x)
    # expm1 sees 0 where x > 0 so a large positive x cannot overflow into the unused branch's gradient.
    return jnp.where(x > 0, x, alpha * jnp.expm1(jnp.where(x > 0, 0.0, x)))


@jit
def leaky_relu(x, negative_slope=1e-2):
    """x for x >= 0, negative_slope * x otherwise."""
    x = _arraylike("leaky_relu", x)
    return jnp.where(x >= 0, x, negative_slope * x)


@jit
def hard_tanh(x):
    """x clipped to [-1, 1]."""
    x = _arraylike("hard_tanh", x)
    return jnp.where(x > 1, 1, jnp.where(x < -1, -1, x))


@jit
def celu(x, alpha=1.0):
    """max(x, 0) + alpha * (exp(min(x, 0) / alpha) - 1)."""
    return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@jit
def selu(x):
    """Scaled ELU with the self-normalising constants of Klambauer et al. (2017)."""
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


def _gelu(x, approximate):
    (x,) = util.promote_args_inexact("gelu", x)
    if approximate:
        c = util.scalar(float(np.sqrt(2 / np.pi).astype(x.dtype)), x.dtype, False)
        return x * (0.5 * (1.0 + jnp.tanh(c * (x + 0.044715 * (x ** 3)))))
    sqrt_half = util.scalar(float(np.sqrt(0.5).astype(x.dtype)), x.dtype, False)
    return jnp.array(0.5 * x * lax.erfc(-x * sqrt_half), dtype=x.dtype)  # a copy, as JAX's


def gelu(x, approximate=True):
    """Gaussian error linear unit: x * Phi(x), or its tanh approximation when approximate=True.

    Not jitted, as JAX's is not: its equations appear inline in a trace."""
    return _gelu(x, bool(approximate))


@jit
def hard_sigmoid(x):
    """relu6(x + 3) / 6."""
    return relu6(x + 3.0) / 6.0


@jit
def hard_silu(x):
    """x * hard_sigmoid(x) (also called hard_swish)."""
    x = _arraylike("hard_silu", x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


@functools.partial(jit, static_argnames=("axis",))
def glu(x, axis=-1):
    """Gated linear unit: x split in two halves a, b along axis; returns a * sigmoid(b)."""
    x = _arraylike("glu", x)
    size = x.shape[axis]
    if size % 2:
        raise ValueError(f"glu: the size of axis {axis} must be divisible by 2, got shape {x.shape}")
    a, b = jnp.split(x, 2, axis)
    return a * sigmoid(b)

