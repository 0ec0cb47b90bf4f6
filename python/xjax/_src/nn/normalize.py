"""jax.nn's reductions over an axis: logsumexp, softmax, log_softmax, standardize, and one_hot.

They subtract the maximum before exponentiating; the maximum is held constant under
differentiation (stop_gradient, or softmax's custom JVP), as JAX does, so the shift is exact and
costs no gradient work.
"""
import operator

import numpy as np

from xjax._src import dtypes, lax
from xjax._src.custom_derivatives import custom_jvp
from xjax._src.jit import jit
from xjax._src.numpy import util
import xjax.numpy as jnp


def _reduction_axes(ndim, axis):
    return tuple(sorted(util.canonicalize_axes(axis, ndim)))


def _logsumexp(a, b, where, axis, keepdims, return_sign):
    if b is not None:
        a, b = util.promote_args_inexact("logsumexp", a, b)
        a = jnp.where(b != 0, a, -np.inf)  # a zero weight removes its term even where a is +inf
    else:
        (a,) = util.promote_args_inexact("logsumexp", a)
    if where is not None:
        a = jnp.where(where, a, 0)
    dims = _reduction_axes(a.ndim, axis)
    amax = jnp.max(a, axis=dims, keepdims=keepdims, where=where, initial=-np.inf)
    # An all -inf (or empty) slice would give inf - inf; shifting by 0 there gives log(0) = -inf.
    amax = lax.stop_gradient(lax.select(jnp.isfinite(amax), amax, jnp.zeros_like(amax)))
    shift = amax if keepdims else lax.expand_dims(amax, dims)
    exp_a = jnp.exp(a - shift)
    if b is not None:
        exp_a = exp_a * b
    sumexp = jnp.sum(exp_a, axis=dims, keepdims=keepdims, where=where)
    sign = jnp.sign(sumexp)
    out = jnp.log(jnp.abs(sumexp)) + amax
    if return_sign:
        return out, sign
    if b is not None:
        out = jnp.where(sign < 0, np.nan, out)
    return out


_logsumexp_jit = jit(_logsumexp, static_argnums=(3, 4, 5))


def _static_axis(axis):
    return tuple(axis) if isinstance(axis, list) else axis


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """log(sum(b * exp(a))) over `axis`, computed stably (jax.nn.logsumexp / jax.scipy.special.logsumexp).

    With return_sign=True returns (log|sum|, sign(sum)); otherwise a negative sum gives NaN.
    """
    util.check_arraylike("logsumexp", a)
    return _logsumexp_jit(a, b, where, _static_axis(axis), bool(keepdims), bool(return_sign))


def _log_softmax(x, where, axis):
    util.check_arraylike("log_softmax", x)
    x = util.asarray(x)
    x_max = jnp.max(x, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = x if where is None else jnp.where(where, x, -np.inf)
    shifted = x_safe - lax.stop_gradient(x_max)
    shifted_lse = jnp.log(jnp.sum(jnp.exp(shifted), axis, where=where, keepdims=True))
    out = shifted - shifted_lse
    return out if where is None else jnp.where(where, out, -np.inf)


_log_softmax_jit = jit(_log_softmax, static_argnums=2)


def log_softmax(x, axis=-1, where=None):
    """x - logsumexp(x, axis): the log of softmax, stable for large |x|; masked-out entries are -inf."""
    return _log_softmax_jit(x, where, _static_axis(axis))


def _softmax_fwd(x, axis, where):
    x_max = jnp.max(x, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = x if where is None else jnp.where(where, x, -np.inf)
    unnormalized = jnp.exp(x_safe - x_max)
    out = unnormalized / jnp.sum(unnormalized, axis, where=where, keepdims=True)
    return out if where is None else jnp.where(where, out, 0)


_softmax_cjvp = custom_jvp(_softmax_fwd, nondiff_argnums=(1,))


@_softmax_cjvp.defjvp
def _softmax_jvp(axis, primals, tangents):
    # d softmax = y * (dx - <y, dx>): the shift by the max drops out without differentiating it.
    (x, where), (x_dot, _) = primals, tangents
    y = _softmax_cjvp(x, axis, where)
    return y, y * (x_dot - jnp.sum(y * x_dot, axis, where=where, keepdims=True))


def _softmax(x, where, axis):
    util.check_arraylike("softmax", x)
    return _softmax_cjvp(util.asarray(x), axis, where)


_softmax_jit = jit(_softmax, static_argnums=2)


def softmax(x, axis=-1, where=None):
    """exp(x) / sum(exp(x)) over `axis`; masked-out entries (where=False) are 0."""
    return _softmax_jit(x, where, _static_axis(axis))


def _standardize(x, mean, variance, epsilon, where, axis, algorithm):
    if mean is None:
        mean = jnp.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = jnp.mean(jnp.square(x - mean), axis, keepdims=True, where=where)
        else:
            # E[x^2] - E[x]^2 can round below 0: clipped so the rsqrt stays finite.
            variance = jnp.clip(jnp.mean(jnp.square(x), axis, keepdims=True, where=where) - jnp.square(mean), 0)
    return (x - mean) * lax.rsqrt(variance + epsilon)


_standardize_jit = jit(_standardize, static_argnums=(5, 6))


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
    return _standardize_jit(x, mean, variance, epsilon, where, _static_axis(axis), algorithm)


def _one_hot(x, num_classes, dtype, axis):
    out_axis = util.canonicalize_axis(axis, x.ndim + 1)
    classes_shape = [1] * x.ndim
    classes_shape.insert(out_axis, num_classes)
    classes = lax.broadcasted_iota(x.dtype, tuple(classes_shape), out_axis)
    return (lax.expand_dims(x, (out_axis,)) == classes).astype(dtype)


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
