"""Elementwise math built from several primitives: hypot, logaddexp, fmax/fmin, copysign/signbit,
heaviside, sinc, i0, ldexp/frexp/modf, isclose/allclose/array_equal, gcd/lcm, nan_to_num, angle."""
import functools
import math

import numpy as np

from xjax._src import dtypes, lax
from xjax._src.autodiff import jvp
from xjax._src.custom_derivatives import custom_jvp
from xjax._src.jit import jit
from xjax._src.numpy import util
from xjax._src.numpy.reductions import all as _all, any as _any
from xjax._src.numpy.ufuncs import (_FLOATING, _c, _const, absolute, equal, isfinite, log2, promote_args,
                                    promote_args_inexact, rad2deg, trunc)


def hypot(x1, x2, /):
    """sqrt(x1**2 + x2**2) without intermediate overflow."""
    x1, x2 = promote_args_inexact("hypot", x1, x2)
    a, b = lax.abs(x1), lax.abs(x2)
    hi, lo = lax.max(a, b), lax.min(a, b)
    zero = _c(hi, 0)
    safe = lax.select(lax.eq(hi, zero), _const(hi, 1), hi)
    r = lax.div(lo, safe)
    out = lax.mul(hi, lax.sqrt(lax.add(_c(r, 1), lax.mul(r, r))))
    inf = _const(hi, float("inf"))
    return lax.select(lax.bitwise_or(lax.eq(a, inf), lax.eq(b, inf)), inf, out)


def _logaddexp_formula(x1, x2):
    amax = lax.max(x1, x2)
    if dtypes.is_complex(amax.aval.dtype):
        return _complex_logaddexp(x1, x2, amax, lax.exp, _const(amax, 1), math.pi)
    delta = lax.sub(x1, x2)
    return lax.select(_isnan(delta), lax.add(x1, x2), lax.add(amax, lax.log1p(lax.exp(lax.neg(lax.abs(delta))))))


def _logaddexp2_formula(x1, x2):
    amax = lax.max(x1, x2)
    inv_ln2 = _c(amax, 1 / math.log(2))
    if dtypes.is_complex(amax.aval.dtype):
        return _complex_logaddexp(x1, x2, amax, lax.exp2, inv_ln2, math.pi / math.log(2))
    delta = lax.sub(x1, x2)
    return lax.select(_isnan(delta), lax.add(x1, x2),
                      lax.add(amax, lax.mul(inv_ln2, lax.log1p(lax.exp2(lax.neg(lax.abs(delta)))))))


def _complex_logaddexp(x1, x2, amax, exp, scale, half_period):
    """amax + scale log1p(exp(other - amax)) (amax the lexicographic maximum), its imaginary part wrapped
    into [-half_period, half_period), as JAX's."""
    other_minus_max = lax.sub(lax.add(x1, x2), lax.mul(amax, _c(amax, 2)))
    out = lax.add(amax, lax.mul(scale, lax.log1p(exp(other_minus_max))))
    imag = lax.imag(out)
    a, two_a = _const(imag, half_period), _const(imag, 2 * half_period)
    wrapped = lax.rem(lax.add(imag, a), two_a)
    wrapped = lax.select(lax.lt(wrapped, _const(imag, 0)), lax.add(wrapped, two_a), wrapped)
    return lax.complex(lax.real(out), lax.sub(wrapped, a))


def _replace_inf(x):
    return lax.select(lax.eq(x, _c(x, math.inf)), _const(x, 0), x)


def _custom_logaddexp(formula, exp, name):
    """JAX's custom_jvp `name`: t1 * exp(x1 - out) + t2 * exp(x2 - out), with +inf read as 0 so inf - inf
    gives no NaN (each term computed in JAX's order, so derivatives print JAX's equations).

    Differentiating the max/abs formula instead would give 0 rather than 1/2 for each input at x1 == x2.
    """
    formula.__name__ = name
    fn = custom_jvp(formula)

    def jvp(primals, tangents):
        (x1, x2), (t1, t2) = [util.asarray(x) for x in primals], tangents  # a jaxpr's literal may come as a scalar
        out = fn(x1, x2)
        term1 = lax.mul(t1, exp(lax.sub(_replace_inf(x1), _replace_inf(out))))
        term2 = lax.mul(t2, exp(lax.sub(_replace_inf(x2), _replace_inf(out))))
        return out, lax.add(term1, term2)

    jvp.__name__ = f"_{name}_jvp"
    fn.defjvp(jvp)
    return fn


_lax_logaddexp = _custom_logaddexp(_logaddexp_formula, lax.exp, "logaddexp")
_lax_logaddexp2 = _custom_logaddexp(_logaddexp2_formula, lax.exp2, "logaddexp2")


# Inline jits, as JAX's binary ufuncs: an eager call is a compiled-cache hit, a trace sees the equations.
@functools.partial(jit, inline=True)
def logaddexp(x1, x2, /):
    """log(exp(x1) + exp(x2)) without overflow."""
    x1, x2 = promote_args_inexact("logaddexp", x1, x2, implicit=True)
    return _lax_logaddexp(x1, x2)


@functools.partial(jit, inline=True)
def logaddexp2(x1, x2, /):
    """log2(2**x1 + 2**x2) without overflow."""
    x1, x2 = promote_args_inexact("logaddexp2", x1, x2, implicit=True)
    return _lax_logaddexp2(x1, x2)


def fmax(x1, x2, /):
    """Elementwise maximum that ignores NaNs (NaN only where both are NaN)."""
    x1, x2 = promote_args("fmax", x1, x2)
    out = lax.max(x1, x2)
    if x1.aval.dtype not in _FLOATING:
        return out
    return lax.select(_isnan(x1), x2, lax.select(_isnan(x2), x1, out))


def fmin(x1, x2, /):
    """Elementwise minimum that ignores NaNs (NaN only where both are NaN)."""
    x1, x2 = promote_args("fmin", x1, x2)
    out = lax.min(x1, x2)
    if x1.aval.dtype not in _FLOATING:
        return out
    return lax.select(_isnan(x1), x2, lax.select(_isnan(x2), x1, out))


def _isnan(x):
    return lax.ne(x, x)


def copysign(x1, x2, /):
    """|x1| with the sign of x2."""
    x1, x2 = promote_args_inexact("copysign", x1, x2)
    a = lax.abs(x1)
    return lax.select(signbit(x2), lax.neg(a), a)


_SIGNED_OF_WIDTH = {2: np.int16, 4: np.int32, 8: np.int64}


def signbit(x, /):
    """True where the sign bit is set: -0.0 and negative NaNs included, as in NumPy and JAX."""
    x = util.operand("signbit", x)
    dt = x.aval.dtype
    if dt.kind == "u" or dt == dtypes.bool_:
        return util.full(x.aval.shape, False, dtypes.bool_)
    if dt.kind == "i":
        return lax.lt(x, _c(x, 0))
    # Only the bits tell a NaN's sign: shift the sign bit over the whole word (JAX's lowering).
    bits = lax.bitcast_convert_type(x, _SIGNED_OF_WIDTH[dt.itemsize])
    shifted = lax.shift_right_arithmetic(bits, _c(bits, 8 * dt.itemsize - 1))
    return lax.convert_element_type(shifted, dtypes.bool_)


def heaviside(x1, x2, /):
    """0 where x1 < 0, x2 where x1 == 0, 1 where x1 > 0."""
    x1, x2 = promote_args_inexact("heaviside", x1, x2)
    zero = _const(x1, 0, weak=False)  # JAX's constants here are strongly typed
    return lax.select(lax.lt(x1, zero), zero, lax.select(lax.gt(x1, zero), _const(x1, 1, weak=False), x2))


def sinc(x, /):
    """sin(pi x) / (pi x), with sinc(0) = 1."""
    x = util.to_inexact(util.operand("sinc", x))
    zero = _c(x, 0)
    is_zero = lax.eq(x, zero)
    pix = lax.mul(lax.select(is_zero, _const(x, 1), x), _c(x, math.pi))
    return lax.select(is_zero, _const(x, 1), lax.div(lax.sin(pix), pix))


def ldexp(x1, x2, /):
    """x1 * 2 ** x2 (x2 integer)."""
    util.check_arraylike("ldexp", x1, x2)
    e = util.asarray(x2)
    if e.aval.dtype.kind not in "iub":
        raise TypeError(f"ldexp second argument must be of integer dtype, got {e.aval.dtype.name}")
    x = util.to_inexact(util.asarray(x1))
    x, e = util.broadcast_operands("ldexp", [x, util.convert(e, x.aval.dtype)])
    return lax.mul(x, lax.exp2(e))


def frexp(x, /):
    """(mantissa, exponent) with x = mantissa * 2 ** exponent and 0.5 <= |mantissa| < 1."""
    x = util.to_inexact(util.operand("frexp", x))
    dt = x.aval.dtype
    a = lax.abs(x)
    finite_nonzero = lax.bitwise_and(lax.is_finite(x), lax.ne(a, _c(a, 0)))
    safe = lax.select(finite_nonzero, a, _const(a, 1))
    e = lax.add(lax.floor(log2(safe)), _c(a, 1))
    m = lax.div(x, lax.exp2(e))
    am = lax.abs(m)
    big = lax.ge(am, _c(am, 1))
    m = lax.select(big, lax.mul(m, _c(m, 0.5)), m)
    e = lax.select(big, lax.add(e, _c(e, 1)), e)
    small = lax.lt(lax.abs(m), _c(m, 0.5))
    m = lax.select(small, lax.mul(m, _c(m, 2)), m)
    e = lax.select(small, lax.sub(e, _c(e, 1)), e)
    m = lax.select(finite_nonzero, m, x)
    e = lax.select(finite_nonzero, e, _const(e, 0))
    del dt
    return m, lax.convert_element_type(e, dtypes.int32)


def modf(x, /):
    """(fractional part, integral part), both with x's sign."""
    x = util.to_inexact(util.operand("modf", x))
    whole = trunc(x)
    return lax.sub(x, whole), whole


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|a - b| <= atol + rtol * |b| elementwise, with infinities equal only to themselves."""
    a, b = promote_args("isclose", a, b)
    dt = a.aval.dtype
    if dtypes.is_complex(dt):  # distances and tolerances are real; a complex value is finite where both parts are
        dist, scale = lax.abs(lax.sub(a, b)), lax.abs(b)
        close = lax.le(dist, lax.add(_c(dist, atol), lax.mul(_c(dist, rtol), scale)))
        fin = lax.bitwise_and(isfinite(a), isfinite(b))
        out = lax.select(fin, close, lax.eq(a, b))
        if equal_nan:
            out = lax.bitwise_or(out, lax.bitwise_and(_isnan(a), _isnan(b)))
        return out
    if dt not in _FLOATING:
        if dt == dtypes.bool_:
            return lax.eq(a, b)
        a, b = util.convert(a, dtypes.default_float_dtype()), util.convert(b, dtypes.default_float_dtype())
    rt, at = _c(a, rtol), _c(a, atol)
    close = lax.le(lax.abs(lax.sub(a, b)), lax.add(at, lax.mul(rt, lax.abs(b))))
    fin = lax.bitwise_and(lax.is_finite(a), lax.is_finite(b))
    out = lax.select(fin, close, lax.eq(a, b))
    if equal_nan:
        out = lax.bitwise_or(out, lax.bitwise_and(_isnan(a), _isnan(b)))
    return out


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True if isclose holds everywhere."""
    return _all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan=False):
    """True if a1 and a2 have the same shape and elements."""
    util.check_arraylike("array_equal", a1, a2)
    x, y = util.asarray(a1), util.asarray(a2)
    if x.aval.shape != y.aval.shape:
        return util.scalar(False, dtypes.bool_, False)
    x, y = util.promote_dtypes(x, y)
    eq = lax.eq(x, y)
    if equal_nan and (x.aval.dtype in _FLOATING or dtypes.is_complex(x.aval.dtype)):
        eq = lax.bitwise_or(eq, lax.bitwise_and(_isnan(x), _isnan(y)))
    return _all(eq)


def array_equiv(a1, a2):
    """True if a1 and a2 broadcast together and are equal elementwise."""
    util.check_arraylike("array_equiv", a1, a2)
    try:
        return _all(equal(a1, a2))
    except TypeError:
        return util.scalar(False, dtypes.bool_, False)


def _gcd_loop(a, b):
    """Euclid's algorithm on |a|, |b| (a fixed number of steps under tracing)."""
    zero = _const(a, 0)
    if util.is_concrete(a) and util.is_concrete(b):
        while bool(_any(lax.ne(b, zero))):
            nz = lax.ne(b, zero)
            safe_b = lax.select(nz, b, _const(b, 1))
            a, b = lax.select(nz, b, a), lax.select(nz, lax.rem(a, safe_b), zero)
        return a
    steps = {1: 12, 2: 24, 4: 48, 8: 94}[a.aval.dtype.itemsize]
    for _ in range(steps):
        nz = lax.ne(b, zero)
        safe_b = lax.select(nz, b, _const(b, 1))
        a, b = lax.select(nz, b, a), lax.select(nz, lax.rem(a, safe_b), zero)
    return a


def gcd(x1, x2, /):
    """Greatest common divisor of |x1| and |x2|."""
    x1, x2 = promote_args("gcd", x1, x2)
    if x1.aval.dtype.kind not in "iu":
        raise TypeError("Arguments to jax.numpy.gcd must be integers.")
    return _gcd_loop(absolute(x1), absolute(x2))


def lcm(x1, x2, /):
    """Least common multiple of |x1| and |x2|."""
    x1, x2 = promote_args("lcm", x1, x2)
    if x1.aval.dtype.kind not in "iu":
        raise TypeError("Arguments to jax.numpy.lcm must be integers.")
    a, b = absolute(x1), absolute(x2)
    d = _gcd_loop(a, b)
    zero = _const(d, 0)
    safe = lax.select(lax.eq(d, zero), _const(d, 1), d)
    return lax.select(lax.eq(d, zero), zero, lax.mul(a, lax.div(b, safe)))


def angle(z, deg=False):
    """The argument of z (0 or pi for real arrays)."""
    z = util.operand("angle", z)
    if dtypes.is_complex(z.aval.dtype):
        out = lax.atan2(lax.imag(z), lax.real(z))
        return rad2deg(out) if deg else out
    x = util.to_default_float(z)
    out = lax.atan2(_c(x, 0, weak=False), x)
    return rad2deg(out) if deg else out


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """x with NaN, +inf and -inf replaced by finite numbers (the dtype's extremes by default)."""
    x = util.operand("nan_to_num", x)
    dt = x.aval.dtype
    if dt not in _FLOATING:
        return x
    info = dtypes.finfo(dt)
    posinf = float(info.max) if posinf is None else posinf
    neginf = float(info.min) if neginf is None else neginf
    out = lax.select(_isnan(x), _const(x, nan), x)
    out = lax.select(lax.eq(out, _c(x, float("inf"))), _const(x, posinf), out)
    return lax.select(lax.eq(out, _c(x, float("-inf"))), _const(x, neginf), out)


@custom_jvp
def _i0(x):
    abs_x = lax.abs(x)
    return lax.mul(lax.exp(abs_x), lax.bessel_i0e(abs_x))


@_i0.defjvp
def _i0_jvp(primals, tangents):
    # |x| has no derivative at 0, but I0 is even and smooth there: its slope is 0.
    primal_out, tangent_out = jvp(_i0.fun, primals, tangents)
    return primal_out, lax.select(lax.eq(primals[0], _c(primals[0], 0)), lax.full_like(tangent_out, 0), tangent_out)


@jit
def i0(x):
    """I0(x), the modified Bessel function of the first kind of order 0 (real floating x)."""
    (x,) = promote_args_inexact("i0", x)
    if not dtypes.issubdtype(x.aval.dtype, np.floating):
        raise ValueError(f"Unsupported input type to jax.numpy.i0: {x.aval.dtype}")
    return _i0(x)
