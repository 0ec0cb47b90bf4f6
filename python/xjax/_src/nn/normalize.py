"""jax.nn's reductions over an axis: logsumexp, softmax, log_softmax, standardize, and one_hot.

They subtract the maximum before exponentiating; the maximum is held constant under
differentiation (stop_gradient, or softmax's custom JVP), as JAX does, so the shift is exact and
costs no gradient work.
"""
import operator

import numpy as np

from xjax._src import dtypes, lax
from xjax._src.config import config
from xjax._src.custom_derivatives import custom_jvp
from xjax._src.jit import jit
from xjax._src.numpy import util
import xjax.numpy as jnp


def _reduction_axes(ndim, axis):
    return tuple(sorted(util.canonicalize_axes(axis, ndim)))


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """log(sum(b * exp(a))) over `axis`, computed stably (jax.nn.logsumexp / jax.scipy.special.logsumexp).

    With return_sign=True returns (log|sum|, sign(sum)); otherwise a negative real sum gives NaN, and a
    complex one the principal logarithm (the maximum is over the real parts). As JAX's
    (not jitted): the maximum, held constant (stop_gradient; 0 where not finite, so an all -inf slice
    gives log(0) = -inf), is subtracted before exponentiating and added back.
    """
    util.check_arraylike("logsumexp", a)
    if where is not None:
        a = jnp.where(where, a, 0)
    if b is not None:
        a, b = util.promote_args_inexact("logsumexp", a, b)
        a = jnp.where(b != 0, a, -np.inf)  # a zero weight removes its term even where a is +inf
    else:
        (a,) = util.promote_args_inexact("logsumexp", a)
    dims = _reduction_axes(a.ndim, _static_axis(axis))
    complex_input = dtypes.is_complex(a.dtype)
    amax = jnp.max(jnp.real(a), axis=dims, keepdims=keepdims, where=where, initial=-np.inf)
    amax = lax.stop_gradient(lax.select(jnp.isfinite(amax), amax, lax.full_like(amax, 0)))
    amax_with_dims = amax if keepdims else lax.expand_dims(amax, dims)
    exp_a = lax.exp(lax.sub(a, amax_with_dims.astype(a.dtype)))
    if b is not None:
        exp_a = lax.mul(exp_a, b)
    sumexp = exp_a.sum(axis=dims, keepdims=keepdims, where=where)
    sign = lax.sign(sumexp)
    if return_sign or not complex_input:  # a complex sum keeps its phase in the logarithm's imaginary part
        sumexp = abs(sumexp)
    out = lax.add(lax.log(sumexp), amax.astype(sumexp.dtype))
    if return_sign:
        return out, sign
    if b is not None and not complex_input:
        out = jnp.where(sign < 0, jnp.array(np.nan, dtype=out.dtype), out)
    return out


def _static_axis(axis):
    return tuple(axis) if isinstance(axis, list) else axis


def _log_softmax(x, axis=-1, where=None):
    util.check_arraylike("log_softmax", x)
    x = util.asarray(x)
    x_max = jnp.max(x, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = x if where is None else jnp.where(where, x, -np.inf)
    shifted = x_safe - lax.stop_gradient(x_max)
    shifted_lse = jnp.log(jnp.sum(jnp.exp(shifted), axis, where=where, keepdims=True))
    out = shifted - shifted_lse
    return out if where is None else jnp.where(where, out, -np.inf)


_log_softmax.__name__ = "log_softmax"
_log_softmax_jit = jit(_log_softmax, static_argnames=("axis",))


def log_softmax(x, axis=-1, where=None):
    """x - logsumexp(x, axis): the log of softmax, stable for large |x|; masked-out entries are -inf."""
    return _log_softmax_jit(x, axis=_static_axis(axis), where=where)


def _softmax_fwd(x, axis, where, initial=-np.inf):
    x_max = jnp.max(x, axis, where=where, initial=initial, keepdims=True)
    x_safe = x if where is None else jnp.where(where, x, initial)
    unnormalized = jnp.exp(x_safe - x_max)
    out = unnormalized / jnp.sum(unnormalized, axis, where=where, keepdims=True)
    return out if where is None else jnp.where(where, out, 0)


_softmax_cjvp = custom_jvp(_softmax_fwd, nondiff_argnums=(1,))


@_softmax_cjvp.defjvp
def _softmax_jvp(axis, primals, tangents):
    # d softmax = y * (dx - <y, dx>): the shift by the max drops out without differentiating it.
    (x, where, initial), (x_dot, _, _) = primals, tangents
    y = _softmax_cjvp(x, axis, where, initial)
    return y, y * (x_dot - (y * x_dot).sum(axis, where=where, keepdims=True))


def _softmax_deprecated(x, axis=-1, where=None, initial=-np.inf):
    x_max = jnp.max(x, axis, where=where, initial=initial, keepdims=True)
    x_safe = x if where is None else jnp.where(where, x, initial)
    unnormalized = jnp.exp(x_safe - lax.stop_gradient(x_max))
    result = unnormalized / jnp.sum(unnormalized, axis, where=where, keepdims=True)
    if where is not None:
        result = jnp.where(where, result, 0)
    return result


def softmax(x, axis=-1, where=None):
    """exp(x) / sum(exp(x)) over `axis`; masked-out entries (where=False) are 0.

    As JAX's (not jitted): the maximum is subtracted under stop_gradient, or, with the
    jax_softmax_custom_jvp option, a custom JVP y * (dx - <y, dx>) is used."""
    util.check_arraylike("softmax", x)
    x = util.asarray(x)
    axis = _static_axis(axis)
    if config.jax_softmax_custom_jvp:
        return _softmax_cjvp(x, axis, where, -np.inf)
    return _softmax_deprecated(x, axis, where)


def _standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, algorithm="fast"):
    if mean is None:
        mean = jnp.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = jnp.mean(jnp.square(x - mean), axis, keepdims=True, where=where)
        else:
            # E[x^2] - E[x]^2 can round below 0: clipped so the rsqrt stays finite.
            variance = jnp.clip(jnp.mean(jnp.square(x), axis, keepdims=True, where=where) - jnp.square(mean), 0)
    return (x - mean) * lax.rsqrt(variance + epsilon)


_standardize.__name__ = "standardize"  # a jit named standardize, as JAX's
_standardize_jit = jit(_standardize, static_argnames=("axis", "algorithm"))


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *, algorithm="fast"):
    """(x - mean) / sqrt(variance + epsilon) with the mean and variance over `axis` unless given.

    algorithm="fast" computes the variance as E[x^2] - E[x]^2 (JAX's default), "stable" as E[(x - E[x])^2].
    """
    util.check_arraylike("standardize", x)
    for name, v in (("mean", mean), ("variance", variance), ("where", where)):
        if v is not None:
            util.check_arraylike(f"standardize {name}", v)
    if algorithm not in ("fast", "stable"):
        raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    # As JAX's jit: arguments left at their defaults are constants of the trace, not its inputs.
    given = {k: v for k, v in (("mean", mean), ("variance", variance), ("where", where)) if v is not None}
    if not (type(epsilon) is float and epsilon == 1e-5):
        given["epsilon"] = epsilon
    return _standardize_jit(x, axis=_static_axis(axis), algorithm=algorithm, **given)


def _one_hot(x, num_classes, dtype, axis):
    out_axis = util.canonicalize_axis(axis, x.ndim + 1)
    classes_shape = [1] * x.ndim
    classes_shape.insert(out_axis, num_classes)
    labels = lax.expand_dims(x, (out_axis,))
    classes = lax.broadcasted_iota(x.dtype, tuple(classes_shape), out_axis)
    return (labels == classes).astype(dtype)


_one_hot_jit = jit(_one_hot, static_argnums=(1, 2, 3))


def one_hot(x, num_classes, *, dtype=None, axis=-1):
    """x's integer labels as one-hot vectors of length num_classes along `axis`; out-of-range labels give zeros."""
    try:
        num_classes = operator.index(num_classes)
    except TypeError:
        raise TypeError(f"jax.nn.one_hot: num_classes must be a concrete integer, got {num_classes!r}") from None
    if isinstance(axis, str):
        raise NotImplementedError("jax.nn.one_hot: named axes (axis given as a string) are not supported yet")
    dtype = dtypes.default_float_dtype() if dtype is None else dtypes.canonicalize_dtype(dtype)
    return _one_hot_jit(jnp.asarray(x), num_classes, dtype, axis)
