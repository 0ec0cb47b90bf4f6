"""Samplers built on uniform bits, as JAX computes them: bits, uniform, normal, truncated_normal,
exponential, laplace, logistic, gumbel, cauchy, lognormal, pareto, weibull_min, maxwell,
bernoulli, rademacher, randint.

Each public function checks its arguments, unwraps the key and calls a body over raw key data
written in lax operations; the body runs as one cached jit call when called eagerly (`staged`).
Floats come from bits as in JAX: the top mantissa bits under the exponent of 1.0 give a float in
[1, 2), minus 1; normals are sqrt(2) erf_inv of uniforms in (-1, 1).
"""
import numpy as np

from xjax._src import core, dtypes
from xjax._src.config import config
from xjax._src.lax import complex_parts, elementwise as ew, layout
from xjax._src.lax.base import asarray
from xjax._src.lax.stop_gradient import stop_gradient
from xjax._src.numpy import creation, linalg, ufuncs
from xjax._src.random import prng
from xjax._src.random.keys import check_key
from xjax._src.random.threefry import UINT_DTYPES
from xjax._src.random.util import broadcast_shape, canonical_shape, check_shape, float_dtype, int_dtype, staged


def _np_shape(x):
    return tuple(np.shape(x))


# ---- bits and uniform ------------------------------------------------------------------------------

def bits(key, shape=(), dtype=None):
    """Uniform random bits as unsigned integers of `dtype` (default uint32; uint64 with x64)."""
    data, _ = check_key("bits", key)
    dt = dtypes.default_uint_dtype() if dtype is None else dtypes.check_user_dtype(dtype)
    if dt.kind != "u":
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dt}")
    return prng.random_bits(data, dt.itemsize * 8, canonical_shape(shape))


@staged(3, 4)
def uniform_raw(key, minval, maxval, shape, dtype):
    """uniform() on raw key data (the sampler bodies' building block). Keys with leading dims give
    one array of `shape` per key (the vectorised rejection loops of gamma draw so)."""
    full = core.get_aval(key).shape[:-1] + tuple(shape)
    minval = layout.broadcast_to_rank(ew.convert_element_type(minval, dtype), len(full))
    maxval = layout.broadcast_to_rank(ew.convert_element_type(maxval, dtype), len(full))
    finfo = dtypes.finfo(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    rng_bits = 8 if nmant < 8 else nbits  # bfloat16: 8 random bits for its 7 mantissa bits
    bits_ = prng.random_bits(key, rng_bits, shape)
    udt = UINT_DTYPES[nbits]
    if rng_bits != nbits:
        bits_ = ew.convert_element_type(bits_, udt)
    float_bits = ew.bitwise_or(ew.shift_right_logical(bits_, np.array(rng_bits - nmant, udt)),
                               np.array(1.0, dtype).view(udt))
    floats = ew.sub(ew.bitcast_convert_type(float_bits, dtype), np.array(1.0, dtype))
    # floats * (maxval - minval) + minval, rounded once: XLA's CPU code fuses it (JAX's errors
    # name the multiply).
    span = ew.sub(maxval, minval)
    ew.broadcast_shapes("mul", [core.get_aval(floats).shape, core.get_aval(span).shape])
    return ew.max(minval, layout.reshape(ew.fma(floats, span, minval), full))


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
    """Uniform floats in [minval, maxval) of the given shape and float dtype."""
    data, _ = check_key("uniform", key)
    dtype = dtypes.check_user_dtype(float if dtype is None else dtype)
    shape = canonical_shape(shape)
    if not dtypes.is_float(dtype):
        raise ValueError(f"dtype argument to `uniform` must be a float dtype, got {dtype}")
    return uniform_raw(data, minval, maxval, shape, dtype)


# ---- normal and its relatives ------------------------------------------------------------------------

@staged(1, 2)
def normal_raw(key, shape, dtype):
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype), dtype=dtype)
    u = uniform_raw(key, lo, np.array(1.0, dtype), shape, dtype)
    return ew.mul(np.array(np.sqrt(2), dtype), ew.erf_inv(u))


def normal(key, shape=(), dtype=None):
    """Standard normal values of the given shape and float or complex dtype (complex: real and imaginary
    parts independent normals of variance 1/2, from the key's two halves, as JAX draws them)."""
    data, _ = check_key("normal", key)
    shape = canonical_shape(shape)
    if dtype is None:  # the default float dtype: nothing to check
        return normal_raw(data, shape, dtypes.default_float_dtype())
    dt = dtypes.check_user_dtype(dtype)
    if dtypes.is_complex(dt):
        return _complex_normal(data, shape, dt)
    dtype = float_dtype("normal", dtype, "a float or complex dtype")
    return normal_raw(data, shape, dtype)


@staged(1, 2)
def _complex_normal(key, shape, dtype):
    key_re, key_im = (layout.index_in_dim(prng.random_split(key, (2,)), i, keepdims=False) for i in range(2))
    real = np.array(0, dtype).real.dtype
    # JAX divides re + 1j im by sqrt(2) + 0j, which XLA compiles as a product with the constant's
    # reciprocal (rounded in the dtype), part by part
    scale = np.reciprocal(np.array(np.sqrt(2), real))
    re = ew.mul(normal_raw(key_re, shape, real), scale)
    im = ew.mul(normal_raw(key_im, shape, real), scale)
    return complex_parts.complex(re, im)


@staged(3, 4)
def _truncated_normal(key, lower, upper, shape, dtype):
    if shape is None:
        shape = broadcast_shape("truncated_normal", None, lower, upper)
    else:
        check_shape("truncated_normal", shape, _np_shape(lower), _np_shape(upper))
    sqrt2 = np.array(np.sqrt(2), dtype)
    lower = ew.convert_element_type(lower, dtype)
    upper = ew.convert_element_type(upper, dtype)
    a = ew.erf(ew.div(lower, sqrt2))
    b = ew.erf(ew.div(upper, sqrt2))
    u = uniform_raw(key, a, b, shape, dtype)
    out = ew.mul(sqrt2, ew.erf_inv(u))
    lo = ew.nextafter(stop_gradient(lower), np.array(np.inf, dtype))
    hi = ew.nextafter(stop_gradient(upper), np.array(-np.inf, dtype))
    return ufuncs.minimum(ufuncs.maximum(out, lo), hi)


def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Standard normal floats truncated to (lower, upper)."""
    if shape is not None:
        shape = canonical_shape(shape)
    data, _ = check_key("truncated_normal", key)
    dtype = float_dtype("truncated_normal", dtype)
    return _truncated_normal(data, lower, upper, shape, dtype)


def _float_sampler(name, body):
    """The public function of a sampler with only key, shape and dtype arguments."""
    staged_body = staged(1, 2)(body)

    def sampler(key, shape=(), dtype=None):
        data, _ = check_key(name, key)
        dt = float_dtype(name, dtype)
        return staged_body(data, canonical_shape(shape), dt)

    sampler.__name__ = sampler.__qualname__ = name
    return sampler, staged_body


def _exponential(key, shape, dtype):
    u = uniform_raw(key, 0.0, 1.0, shape, dtype)
    return ew.neg(ew.log1p(ew.neg(u)))


def _laplace(key, shape, dtype):
    u = uniform_raw(key, -1.0 + float(dtypes.finfo(dtype).epsneg), 1.0, shape, dtype)
    return ew.mul(ew.sign(u), ew.log1p(ew.neg(ew.abs(u))))


def _logistic(key, shape, dtype):
    x = uniform_raw(key, float(dtypes.finfo(dtype).tiny), 1.0, shape, dtype)
    return ew.sub(ew.log(x), ew.log1p(ew.neg(x)))


def _cauchy(key, shape, dtype):
    u = uniform_raw(key, float(dtypes.finfo(dtype).eps), 1.0, shape, dtype)
    return ew.tan(ew.mul(np.array(np.pi, dtype), ew.sub(u, np.array(0.5, dtype))))


def _maxwell(key, shape, dtype):
    return linalg.norm(normal_raw(key, shape + (3,), dtype), axis=-1)


exponential, exponential_raw = _float_sampler("exponential", _exponential)
laplace, _ = _float_sampler("laplace", _laplace)
logistic, _ = _float_sampler("logistic", _logistic)
cauchy, _ = _float_sampler("cauchy", _cauchy)
maxwell, _ = _float_sampler("maxwell", _maxwell)
exponential.__doc__ = "Exponential floats (rate 1)."
laplace.__doc__ = "Laplace floats (location 0, scale 1)."
logistic.__doc__ = "Logistic floats (location 0, scale 1)."
cauchy.__doc__ = "Standard Cauchy floats."
maxwell.__doc__ = "Maxwell floats: norms of 3-vectors of standard normals."


@staged(1, 2, 3)
def _gumbel(key, shape, dtype, mode):
    info = dtypes.finfo(dtype)
    if dtype == np.float32 and mode == "highest":
        return _gumbel_highest(key, shape)
    if mode in ("high", "highest"):
        high, low = prng.unstack(uniform_raw(key, 0.0, 1.0, (2,) + shape, dtype))
        x = ew.select(ew.ge(high, np.array(0.5, dtype)), high,
                      ew.add(ew.add(high, ew.mul(np.array(2.0 ** -info.nmant, dtype), low)),
                             np.array(info.tiny, dtype)))
        return ew.neg(ew.log(ew.neg(ew.log1p(ew.neg(x)))))
    u = uniform_raw(key, float(info.tiny), 1.0, shape, dtype)
    return ew.neg(ew.log(ew.neg(ew.log(u))))


def _gumbel_highest(key, shape):
    """float32 gumbel from 64 random bits per value: the uniform keeps its leading zeros' precision."""
    u32 = np.uint32
    bits_ = prng.random_bits(key, 32, (2,) + shape)
    hi, lo = prng.unstack(bits_)
    neg_hi, neg_lo = ew.bitwise_not(hi), ew.bitwise_not(lo)
    neg_hi = ew.add(neg_hi, ew.convert_element_type(ew.eq(neg_lo, np.array(0xFFFFFFFF, u32)), u32))
    neg_lo = ew.add(neg_lo, np.array(1, u32))
    flip = ew.lt(hi, np.array(1 << 31, u32))
    x = _safe_int_to_float(ew.select(flip, hi, neg_hi), ew.select(flip, lo, neg_lo))
    return ew.select(flip, ew.neg(ew.log(ew.neg(ew.log1p(ew.neg(x))))), ew.neg(ew.log(ew.neg(ew.log(x)))))


def _safe_int_to_float(hi, lo):
    """The float32 nearest below the 64-bit fraction (hi, lo) / 2**64, without losing leading zeros."""
    u32 = np.uint32
    finfo = dtypes.finfo(np.float32)
    hiclz, loclz = ew.clz(hi), ew.clz(lo)
    all_lo = ew.eq(hiclz, np.array(32, u32))
    mantissa = ew.bitwise_or(ew.shift_left(hi, hiclz),
                             ew.select(all_lo, ew.shift_left(lo, loclz),
                                       ew.shift_right_logical(lo, ew.sub(np.array(finfo.bits, u32), hiclz))))
    mantissa = ew.shift_right_logical(mantissa, np.array(finfo.bits - finfo.nmant - 1, u32))
    mantissa = ew.bitwise_and(mantissa, np.array((1 << finfo.nmant) - 1, u32))
    zeros = ew.select(all_lo, ew.add(np.array(32, u32), loclz), hiclz)
    exp = ew.shift_left(ew.sub(np.array(-finfo.minexp, u32), zeros), np.array(finfo.nmant, u32))
    exp = ew.bitwise_and(exp, np.array((1 << (finfo.bits - 2)) - (1 << (finfo.nmant - 1)), u32))
    return ew.bitcast_convert_type(ew.bitwise_or(exp, mantissa), np.float32)


def gumbel(key, shape=(), dtype=None, mode=None):
    """Standard Gumbel floats; mode "high" / "highest" spends more bits on small uniforms."""
    data, _ = check_key("gumbel", key)
    dtype = float_dtype("gumbel", dtype)
    shape = canonical_shape(shape)
    if mode is None:
        mode = "high" if config.jax_use_high_dynamic_range_gumbel else "low"
    if mode not in ("highest", "high", "low"):
        raise ValueError("Must provide valid mode for gumbel got: %s" % mode)
    return _gumbel(data, shape, dtype, mode)


@staged(2, 3)
def _lognormal(key, sigma, shape, dtype):
    return ew.exp(ew.mul(normal_raw(key, shape, dtype), ew.convert_element_type(sigma, dtype)))


def lognormal(key, sigma=np.float32(1), shape=None, dtype=None):
    """exp(sigma * N(0, 1))."""
    data, _ = check_key("lognormal", key)
    dtype = float_dtype("lognormal", dtype, "a float or complex dtype")
    return _lognormal(data, sigma, broadcast_shape("lognormal", shape, sigma), dtype)


@staged(2, 3)
def _pareto(key, b, shape, dtype):
    return ew.exp(ew.div(exponential_raw(key, shape, dtype), ew.convert_element_type(b, dtype)))


def pareto(key, b, shape=None, dtype=None):
    """Pareto floats of shape parameter b (scale 1)."""
    data, _ = check_key("pareto", key)
    dtype = float_dtype("pareto", dtype)
    return _pareto(data, b, broadcast_shape("pareto", shape, b), dtype)


@staged(3, 4)
def _weibull_min(key, scale, concentration, shape, dtype):
    u = uniform_raw(key, 0, 1, shape, dtype)
    return ufuncs.multiply(ufuncs.power(ew.neg(ew.log1p(ew.neg(u))), ufuncs.divide(1.0, concentration)), scale)


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull floats of the given scale and concentration."""
    data, _ = check_key("weibull_min", key)
    dtype = float_dtype("weibull_min", dtype)
    return _weibull_min(data, scale, concentration, canonical_shape(shape), dtype)


# ---- integer and boolean samplers ---------------------------------------------------------------------

@staged(2, 3)
def _bernoulli(key, p, shape, mode):
    if shape is None:
        shape = _np_shape(p)
    else:
        check_shape("bernoulli", shape, _np_shape(p))
    dtype = core.get_aval(p).dtype
    if mode == "high":
        u1, u2 = prng.unstack(uniform_raw(key, 0.0, 1.0, (2,) + shape, dtype))
        u2 = ew.mul(u2, np.array(2.0 ** -dtypes.finfo(dtype).nmant, dtype))
        return ew.lt(u2, ew.sub(p, u1))
    return ew.lt(uniform_raw(key, 0.0, 1.0, shape, dtype), p)


def bernoulli(key, p=0.5, shape=None, mode="low"):
    """Booleans that are True with probability p."""
    if shape is not None:
        shape = canonical_shape(shape)
    if mode not in ("high", "low"):
        raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
    data, _ = check_key("bernoulli", key)
    p = asarray(p)
    dtype = core.get_aval(p).dtype
    if not dtypes.is_float(dtype):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {dtype}.")
    return _bernoulli(data, ew.convert_element_type(p, dtype), shape, mode)


@staged(1, 2)
def _rademacher(key, shape, dtype):
    b = ew.convert_element_type(_bernoulli(key, ew.convert_element_type(0.5, dtypes.default_float_dtype()), shape,
                                           "low"), dtype)
    return ew.convert_element_type(ew.sub(ew.mul(b, np.array(2, dtype)), np.array(1, dtype)), dtype)


def rademacher(key, shape=(), dtype=None):
    """-1 or +1 with equal probability (default dtype int)."""
    data, _ = check_key("rademacher", key)
    return _rademacher(data, canonical_shape(shape), int_dtype(dtype))


def _clip_to(val, dtype):
    """Integer `val` converted to integer `dtype`, clipped to its range instead of wrapping."""
    vdt = core.get_aval(val).dtype
    lo = max(int(dtypes.iinfo(dtype).min), int(dtypes.iinfo(vdt).min))
    hi = min(int(dtypes.iinfo(dtype).max), int(dtypes.iinfo(vdt).max))
    clipped = ew.clamp(np.array(lo, vdt), val, np.array(hi, vdt))
    return ew.convert_element_type(clipped, dtype)


@staged(3, 4)
def _randint(key, minval, maxval, shape, dtype):
    check_shape("randint", shape, _np_shape(minval), _np_shape(maxval))
    minval, maxval = creation.asarray(minval), creation.asarray(maxval)
    if not dtypes.is_int(core.get_aval(minval).dtype):
        minval = ew.convert_element_type(minval, dtypes.default_int_dtype())
    if not dtypes.is_int(core.get_aval(maxval).dtype):
        maxval = ew.convert_element_type(maxval, dtypes.default_int_dtype())
    mdt = core.get_aval(maxval).dtype
    maxval_out_of_range = ew.gt(maxval, _clip_to(np.array(dtypes.iinfo(dtype).max, dtype), mdt))
    minval = layout.broadcast_to_rank(_clip_to(minval, dtype), len(shape))
    maxval = layout.broadcast_to_rank(_clip_to(maxval, dtype), len(shape))
    maxval_out_of_range = layout.broadcast_to_rank(maxval_out_of_range, len(shape))
    nbits = dtypes.iinfo(dtype).bits
    k1, k2 = prng.split_keys(key, 2)
    higher_bits = prng.random_bits(k1, nbits, shape)
    lower_bits = prng.random_bits(k2, nbits, shape)
    udt = UINT_DTYPES[nbits]
    span = ew.convert_element_type(ew.sub(maxval, minval), udt)
    one = np.array(1, udt)
    span = ew.select(ew.le(maxval, minval), ew.add(ew.sub(span, span), one), span)
    span = ew.select(ew.bitwise_and(maxval_out_of_range, ew.gt(maxval, minval)), ew.add(span, one), span)
    multiplier = ew.rem(np.array(2 ** (nbits // 2), udt), span)
    multiplier = ew.rem(ew.mul(multiplier, multiplier), span)
    offset = ew.add(ew.mul(ew.rem(higher_bits, span), multiplier), ew.rem(lower_bits, span))
    offset = ew.rem(offset, span)
    return ew.add(minval, ew.convert_element_type(offset, dtype))


def randint(key, shape, minval, maxval, dtype=None):
    """Uniform integers in [minval, maxval) (modulo-based, as JAX: slightly biased for large spans)."""
    data, _ = check_key("randint", key)
    dtype = int_dtype(dtype)
    shape = canonical_shape(shape)
    if not dtypes.is_int(dtype):
        raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
    info = dtypes.iinfo(dtype)
    sampling_dtype = dtype
    if info.bits < 32:  # narrow types sample at 32 bits, bounds clipped to the type's range
        sampling_dtype = np.dtype(np.int32)
        minval = creation.asarray(minval).astype("int32").clip(int(info.min), int(info.max))
        maxval = creation.asarray(maxval).astype("int32").clip(int(info.min), int(info.max) + 1)
    out = _randint(data, minval, maxval, shape, sampling_dtype)
    return out if sampling_dtype == dtype else ew.convert_element_type(out, dtype)
