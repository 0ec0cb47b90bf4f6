"""Samplers derived from the basic ones, as JAX composes them: rayleigh, wald, triangular,
double_sided_maxwell, generalized_normal, geometric, f."""
import numpy as np

import xjax.numpy as jnp
from xjax._src import core, dtypes
from xjax._src.lax import elementwise as ew
from xjax._src.numpy import util
from xjax._src.random import prng
from xjax._src.random.gamma import _chisquare, generalized_normal_raw
from xjax._src.random.keys import check_key
from xjax._src.random.samplers import _maxwell, _rademacher, normal_raw, uniform_raw
from xjax._src.random.util import broadcast_shape, canonical_shape, float_dtype, int_dtype, staged


def _jnp():
    return jnp


@staged(2, 3)
def _rayleigh(key, scale, shape, dtype):
    jnp = _jnp()
    u = uniform_raw(key, 0.0, 1.0, shape, dtype)
    scale = jnp.broadcast_to(jnp.asarray(scale).astype(dtype), shape)
    return ew.mul(scale, ew.sqrt(ew.mul(ew.log(u), np.array(-2, dtype))))


def rayleigh(key, scale, shape=None, dtype=None):
    """Rayleigh floats of the given scale."""
    data, _ = check_key("rayleigh", key)
    dtype = float_dtype("rayleigh", dtype)
    return _rayleigh(data, scale, broadcast_shape("rayleigh", shape, scale), dtype)


@staged(2, 3)
def _wald(key, mean, shape, dtype):
    jnp = _jnp()
    k1, k2 = prng.split_keys(key, 2)
    mean = jnp.broadcast_to(jnp.asarray(mean).astype(dtype), shape)
    v = normal_raw(k1, shape, dtype)
    z = uniform_raw(k2, 0.0, 1.0, shape, dtype)
    y = ew.integer_pow(v, 2)
    y_sq = ew.integer_pow(y, 2)
    mean_sq = ew.integer_pow(mean, 2)
    sqrt_term = jnp.sqrt(4 * mean * y + mean_sq * y_sq)
    x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
    return ew.select(ew.le(z, mean / (mean + x)), x, mean_sq / x)


def wald(key, mean, shape=None, dtype=None):
    """Wald (inverse Gaussian) floats of the given mean (shape parameter 1)."""
    data, _ = check_key("wald", key)
    dtype = float_dtype("wald", dtype)
    return _wald(data, mean, broadcast_shape("wald", shape, mean), dtype)


@staged(4, 5)
def _triangular(key, left, mode, right, shape, dtype):
    jnp = _jnp()
    left, mode, right = (jnp.broadcast_to(ew.convert_element_type(v, dtype), shape) for v in (left, mode, right))
    fc = (mode - left) / (right - left)
    u = uniform_raw(key, 0.0, 1.0, shape, dtype)
    out1 = left + ew.sqrt(u * (right - left) * (mode - left))
    out2 = right - ew.sqrt((1 - u) * (right - left) * (right - mode))
    return ew.select(ew.lt(u, fc), out1, out2)


def triangular(key, left, mode, right, shape=None, dtype=None):
    """Triangular floats on [left, right] peaking at mode."""
    data, _ = check_key("triangular", key)
    dtype = float_dtype("triangular", dtype)
    return _triangular(data, left, mode, right, broadcast_shape("triangular", shape, left, mode, right), dtype)


@staged(3, 4)
def _double_sided_maxwell(key, loc, scale, shape, dtype):
    params_shape = util.broadcast_shapes(tuple(np.shape(loc)), tuple(np.shape(scale)))
    if not shape:
        shape = params_shape
    shape = tuple(shape) + tuple(params_shape)
    k_maxwell, k_sign = prng.split_keys(key, 2)
    return _maxwell(k_maxwell, shape, dtype) * _rademacher(k_sign, shape, dtype) * scale + loc


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Double-sided Maxwell floats of the given location and scale."""
    data, _ = check_key("double_sided_maxwell", key)
    dtype = float_dtype("double_sided_maxwell", dtype, "a float dtype")
    return _double_sided_maxwell(data, loc, scale, canonical_shape(shape), dtype)


def generalized_normal(key, p, shape=(), dtype=None):
    """Generalized normal floats with density proportional to exp(-|x|^p)."""
    shape = canonical_shape(shape)
    data, _ = check_key("generalized_normal", key)
    dtype = float_dtype("generalized_normal", dtype)
    return generalized_normal_raw(data, p, shape, dtype)


@staged(2, 3)
def _geometric(key, p, shape, dtype):
    jnp = _jnp()
    (p,) = util.promote_dtypes_inexact(p)
    u = uniform_raw(key, 0.0, 1.0, shape, core.get_aval(p).dtype)
    u = jnp.where(u == 0, 1, u)
    log_one_minus_p = jnp.broadcast_to(ew.log1p(-p), shape)
    g = ew.floor(ew.div(ew.log(u), log_one_minus_p)) + 1
    return g.astype(dtype)


def geometric(key, p, shape=None, dtype=None):
    """The number of Bernoulli(p) trials up to the first success."""
    data, _ = check_key("geometric", key)
    dtype = int_dtype(dtype)
    if not dtypes.is_int(dtype):
        raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {dtype}")
    return _geometric(data, p, broadcast_shape("geometric", shape, p), dtype)


@staged(3, 4)
def _f(key, dfnum, dfden, shape, dtype):
    dfden = ew.convert_element_type(dfden, dtype)
    dfnum = ew.convert_element_type(dfnum, dtype)
    key_den, key_num = prng.split_keys(key, 2)
    num = ew.div(_chisquare(key_num, dfnum, shape, dtype), dfnum)
    den = ew.div(_chisquare(key_den, dfden, shape, dtype), dfden)
    return ew.div(num, den)


def f(key, dfnum, dfden, shape=None, dtype=None):
    """F-distributed floats with dfnum and dfden degrees of freedom."""
    data, _ = check_key("f", key)
    dtype = float_dtype("f", dtype)
    return _f(data, dfnum, dfden, broadcast_shape("f", shape, dfnum, dfden), dtype)
