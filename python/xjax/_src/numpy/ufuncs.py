"""Elementwise math of xjax.numpy (NumPy's ufuncs), on lax primitives with JAX's promotion rules.

The hot binary ops take a fast path when both operands are already runtime values of one dtype
and shape: straight to the primitive, no promotion or broadcasting work.
"""
import math

import numpy as np

from xjax._src import dtypes, lax
from xjax._src.lax import elementwise as _ew
from xjax._src.numpy import util
from xjax._src.numpy.util import promote_args, promote_args_inexact

_P = _ew.PRIMITIVES
_SELECT_N = _ew.select_n_p
_FLOATING = frozenset(dtypes.FLOATING)
_PY_SCALARS = (int, float, bool)


def _const(x, value, weak=None):
    """A constant of x's dtype and shape (weakly typed if x is, so it never strengthens a result)."""
    aval = x.aval
    return util.full(aval.shape, value, aval.dtype, aval.weak_type if weak is None else weak)


def _c(x, value, weak=None):
    """A 0-d constant of x's dtype for lax binary ops (which broadcast it), weak if x is."""
    return util.scalar(value, x.aval.dtype, x.aval.weak_type if weak is None else weak)


def _operand(name, x):
    aval = getattr(x, "aval", None)
    if aval is not None:
        return x
    util.check_arraylike(name, x)
    return util.asarray(x)


# ---- factories ------------------------------------------------------------------------------

def _binary(name, prim, doc, inexact=False):
    """A ufunc applying `prim` after JAX's promotion and broadcasting.

    Fast paths: two runtime values of one dtype and shape go straight to the primitive; an array
    and a Python scalar that does not change the array's dtype become array op 0-d scalar (the lax
    op broadcasts it).
    """
    bind = prim.bind
    promote = promote_args_inexact if inexact else promote_args

    def fn(x1, x2, /):
        a1 = getattr(x1, "aval", None)
        a2 = getattr(x2, "aval", None)
        if a1 is not None:
            if a2 is not None:
                if a1.dtype == a2.dtype and a1.shape == a2.shape and (not inexact or a1.dtype in _FLOATING):
                    return bind(x1, x2)
            elif type(x2) in _PY_SCALARS:
                dt, weak = util.scalar_promotion(a1.dtype, a1.weak_type, type(x2))
                if dt == a1.dtype and (not inexact or dt in _FLOATING):
                    return bind(x1, util.scalar(x2, dt, weak))
        elif a2 is not None and type(x1) in _PY_SCALARS:
            dt, weak = util.scalar_promotion(a2.dtype, a2.weak_type, type(x1))
            if dt == a2.dtype and (not inexact or dt in _FLOATING):
                return bind(util.scalar(x1, dt, weak), x2)
        x1, x2 = promote(name, x1, x2, implicit=True)
        return bind(x1, x2)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _unary(name, prim, doc, inexact=False):
    """A ufunc applying `prim`; inexact=True promotes integer and bool inputs to the default float."""

    def fn(x, /):
        aval = getattr(x, "aval", None)
        if aval is None:
            util.check_arraylike(name, x)
            x = util.to_inexact(x) if inexact else util.asarray(x)
        elif inexact and aval.dtype not in _FLOATING:
            x = util.to_inexact(x)
        return prim.bind(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


add = _binary("add", _P["add"], "x1 + x2 elementwise (logical or for bools).")
subtract = _binary("subtract", _P["sub"], "x1 - x2 elementwise.")
multiply = _binary("multiply", _P["mul"], "x1 * x2 elementwise (logical and for bools).")
maximum = _binary("maximum", _P["max"], "Elementwise maximum (NaN propagates).")
minimum = _binary("minimum", _P["min"], "Elementwise minimum (NaN propagates).")
bitwise_and = _binary("bitwise_and", _P["and"], "Bitwise (or logical, for bools) and.")
bitwise_or = _binary("bitwise_or", _P["or"], "Bitwise (or logical, for bools) or.")
bitwise_xor = _binary("bitwise_xor", _P["xor"], "Bitwise (or logical, for bools) xor.")
equal = _binary("equal", _P["eq"], "x1 == x2 elementwise.")
not_equal = _binary("not_equal", _P["ne"], "x1 != x2 elementwise.")
less = _binary("less", _P["lt"], "x1 < x2 elementwise.")
less_equal = _binary("less_equal", _P["le"], "x1 <= x2 elementwise.")
greater = _binary("greater", _P["gt"], "x1 > x2 elementwise.")
greater_equal = _binary("greater_equal", _P["ge"], "x1 >= x2 elementwise.")

exp = _unary("exp", _P["exp"], "e ** x elementwise.", True)
exp2 = _unary("exp2", _P["exp2"], "2 ** x elementwise.", True)
expm1 = _unary("expm1", _P["expm1"], "exp(x) - 1, accurate near zero.", True)
log = _unary("log", _P["log"], "Natural logarithm.", True)
log1p = _unary("log1p", _P["log1p"], "log(1 + x), accurate near zero.", True)
sqrt = _unary("sqrt", _P["sqrt"], "Square root.", True)
cbrt = _unary("cbrt", _P["cbrt"], "Cube root.", True)
sin = _unary("sin", _P["sin"], "Sine.", True)
cos = _unary("cos", _P["cos"], "Cosine.", True)
tan = _unary("tan", _P["tan"], "Tangent.", True)
arcsin = _unary("arcsin", _P["asin"], "Inverse sine.", True)
arccos = _unary("arccos", _P["acos"], "Inverse cosine.", True)
arctan = _unary("arctan", _P["atan"], "Inverse tangent.", True)
sinh = _unary("sinh", _P["sinh"], "Hyperbolic sine.", True)
cosh = _unary("cosh", _P["cosh"], "Hyperbolic cosine.", True)
tanh = _unary("tanh", _P["tanh"], "Hyperbolic tangent.", True)
arcsinh = _unary("arcsinh", _P["asinh"], "Inverse hyperbolic sine.", True)
arccosh = _unary("arccosh", _P["acosh"], "Inverse hyperbolic cosine.", True)
arctanh = _unary("arctanh", _P["atanh"], "Inverse hyperbolic tangent.", True)
square = _unary("square", _P["square"], "x * x elementwise.")
sign = _unary("sign", _P["sign"], "-1, 0 or 1 by the sign of x (NaN stays NaN).")
asin, acos, atan, asinh, acosh, atanh = arcsin, arccos, arctan, arcsinh, arccosh, arctanh


def negative(x, /):
    """-x elementwise."""
    return _P["neg"].bind(_operand("negative", x))


def positive(x, /):
    """+x: x itself."""
    return _operand("positive", x)


def absolute(x, /):
    """|x| elementwise (bools and unsigned integers unchanged)."""
    x = _operand("absolute", x)
    if x.aval.dtype.kind in "bu":
        return x
    return _P["abs"].bind(x)


abs = absolute  # noqa: A001 - NumPy's name


def fabs(x, /):
    """|x| as a float."""
    return _P["abs"].bind(util.to_inexact(_operand("fabs", x)))


true_divide = _binary("true_divide", _P["div"], "x1 / x2 with a floating result (integers are promoted to the "
                      "default float type).", inexact=True)
divide = true_divide


def _float_mod(x1, x2):
    """(mod, needs_adjustment) with mod = rem(x1, x2) and the adjustment where signs differ."""
    mod = lax.rem(x1, x2)
    zero = _c(mod, 0)
    adjust = lax.bitwise_and(lax.ne(mod, zero), lax.ne(lax.lt(mod, zero), lax.lt(x2, zero)))
    return mod, adjust


def floor_divide(x1, x2, /):
    """x1 // x2 with Python's flooring semantics."""
    x1, x2 = promote_args("floor_divide", x1, x2)
    dt = x1.aval.dtype
    if dt.kind == "u":
        return lax.div(x1, x2)
    if dt.kind == "i":
        q = lax.div(x1, x2)
        zero = _c(q, 0)
        adjust = lax.bitwise_and(lax.ne(lax.lt(x1, zero), lax.lt(x2, zero)), lax.ne(lax.rem(x1, x2), zero))
        return lax.select(adjust, lax.sub(q, _c(q, 1)), q)
    if dt == dtypes.bool_:
        raise TypeError("floor_divide does not accept dtype bool.")
    mod, adjust = _float_mod(x1, x2)
    div = lax.div(lax.sub(x1, mod), x2)
    div = lax.select(adjust, lax.sub(div, _c(div, 1)), div)
    return lax.round(div, lax.RoundingMethod.TO_NEAREST_EVEN)


def remainder(x1, x2, /):
    """x1 % x2 with the sign of the divisor (Python's semantics)."""
    x1, x2 = promote_args("remainder", x1, x2)
    dt = x1.aval.dtype
    if dt.kind == "u":
        return lax.rem(x1, x2)
    if dt == dtypes.bool_:
        raise TypeError("remainder does not accept dtype bool.")
    mod, adjust = _float_mod(x1, x2)
    return lax.select(adjust, lax.add(mod, x2), mod)


mod = remainder


def fmod(x1, x2, /):
    """C's fmod: the remainder with the sign of the dividend."""
    x1, x2 = promote_args("fmod", x1, x2, implicit=True)
    return lax.rem(x1, x2)


def divmod(x1, x2, /):  # noqa: A001 - NumPy's name
    """(floor_divide(x1, x2), remainder(x1, x2))."""
    return floor_divide(x1, x2), remainder(x1, x2)


def _is_static_int(x):
    return type(x) is int or isinstance(x, np.integer)


def power(x1, x2, /):
    """x1 ** x2: integer powers of integers stay integers; a static int exponent uses repeated squaring."""
    if _is_static_int(x2) and not isinstance(x2, bool):
        x = _operand("power", x1)
        y = int(x2)
        if x.aval.dtype.kind in "iu" and y < 0:
            raise TypeError(f"Integers cannot be raised to negative powers, got integer_pow({x.aval.str_short()}, "
                            f"{y})")
        if x.aval.dtype == dtypes.bool_:
            x = util.convert(x, dtypes.default_int_dtype())
        return lax.integer_pow(x, y)
    x1, x2 = promote_args("power", x1, x2, implicit=True)
    if x1.aval.dtype == dtypes.bool_:
        raise TypeError("power does not accept dtype bool.")
    return lax.pow(x1, x2)


pow = power  # noqa: A001 - NumPy's name


def float_power(x1, x2, /):
    """x1 ** x2 computed in floating point."""
    x1, x2 = promote_args_inexact("float_power", x1, x2, implicit=True)
    return lax.pow(x1, x2)


def reciprocal(x, /):
    """1 / x (floating result)."""
    x = util.to_inexact(_operand("reciprocal", x))
    return lax.div(_c(x, 1, x.aval.weak_type), x)


def _ln_const_div(x, value):
    return lax.div(x, _c(x, value, weak=False))  # JAX's log2/log10 results are strongly typed


def log2(x, /):
    """Base-2 logarithm."""
    x = util.to_inexact(_operand("log2", x))
    return _ln_const_div(lax.log(x), math.log(2))


def log10(x, /):
    """Base-10 logarithm."""
    x = util.to_inexact(_operand("log10", x))
    return _ln_const_div(lax.log(x), math.log(10))


def deg2rad(x, /):
    """Degrees to radians."""
    x = util.to_inexact(_operand("deg2rad", x))
    return lax.mul(x, _c(x, math.pi / 180, True))


def rad2deg(x, /):
    """Radians to degrees."""
    x = util.to_inexact(_operand("rad2deg", x))
    return lax.mul(x, _c(x, 180 / math.pi, True))


radians = deg2rad
degrees = rad2deg


def arctan2(x1, x2, /):
    """The angle of (x2, x1), in (-pi, pi]."""
    x1, x2 = promote_args_inexact("arctan2", x1, x2, implicit=True)
    return lax.atan2(x1, x2)


atan2 = arctan2


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


def logaddexp(x1, x2, /):
    """log(exp(x1) + exp(x2)) without overflow."""
    x1, x2 = promote_args_inexact("logaddexp", x1, x2)
    amax = lax.max(x1, x2)
    delta = lax.sub(x1, x2)
    out = lax.add(amax, lax.log1p(lax.exp(lax.neg(lax.abs(delta)))))
    return lax.select(lax.ne(delta, delta), lax.add(x1, x2), out)


def logaddexp2(x1, x2, /):
    """log2(2**x1 + 2**x2) without overflow."""
    x1, x2 = promote_args_inexact("logaddexp2", x1, x2)
    amax = lax.max(x1, x2)
    delta = lax.sub(x1, x2)
    tail = lax.div(lax.log1p(lax.exp2(lax.neg(lax.abs(delta)))), _c(delta, math.log(2)))
    return lax.select(lax.ne(delta, delta), lax.add(x1, x2), lax.add(amax, tail))


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


def nextafter(x1, x2, /):
    """The next representable float after x1 towards x2."""
    x1, x2 = promote_args_inexact("nextafter", x1, x2, implicit=True)
    return lax.nextafter(x1, x2)


def copysign(x1, x2, /):
    """|x1| with the sign of x2."""
    x1, x2 = promote_args_inexact("copysign", x1, x2)
    a = lax.abs(x1)
    return lax.select(signbit(x2), lax.neg(a), a)


def signbit(x, /):
    """True where the sign bit is set (-0.0 included; NaNs report False)."""
    x = _operand("signbit", x)
    dt = x.aval.dtype
    if dt.kind == "u" or dt == dtypes.bool_:
        return util.full(x.aval.shape, False, dtypes.bool_)
    zero = _c(x, 0)
    neg = lax.lt(x, zero)
    if dt.kind == "i":
        return neg
    negzero = lax.bitwise_and(lax.eq(x, zero), lax.lt(lax.div(_c(x, 1), x), zero))
    return lax.bitwise_or(neg, negzero)


def heaviside(x1, x2, /):
    """0 where x1 < 0, x2 where x1 == 0, 1 where x1 > 0."""
    x1, x2 = promote_args_inexact("heaviside", x1, x2)
    zero = _const(x1, 0)
    return lax.select(lax.lt(x1, zero), zero, lax.select(lax.gt(x1, zero), _const(x1, 1), x2))


def sinc(x, /):
    """sin(pi x) / (pi x), with sinc(0) = 1."""
    x = util.to_inexact(_operand("sinc", x))
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
    x = util.to_inexact(_operand("frexp", x))
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
    x = util.to_inexact(_operand("modf", x))
    whole = trunc(x)
    return lax.sub(x, whole), whole


# ---- rounding -------------------------------------------------------------------------------

def floor(x, /):
    """Largest integer <= x (integers unchanged)."""
    x = _operand("floor", x)
    return lax.floor(x) if x.aval.dtype in _FLOATING else x


def ceil(x, /):
    """Smallest integer >= x (integers unchanged)."""
    x = _operand("ceil", x)
    return lax.ceil(x) if x.aval.dtype in _FLOATING else x


def trunc(x, /):
    """x rounded towards zero (integers unchanged)."""
    x = _operand("trunc", x)
    if x.aval.dtype not in _FLOATING:
        return x
    return lax.select(lax.lt(x, _c(x, 0)), lax.ceil(x), lax.floor(x))


fix = trunc


def rint(x, /):
    """Round to the nearest integer, ties to even (floating result)."""
    x = util.to_inexact(_operand("rint", x))
    return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)


def round(a, decimals=0, out=None):  # noqa: A001 - NumPy's name
    """Round to `decimals` decimal places, ties to even (integers unchanged)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.round is not supported.")
    x = _operand("round", a)
    decimals = int(decimals)
    dt = x.aval.dtype
    if dt not in _FLOATING:
        if decimals < 0:
            raise NotImplementedError("integer np.round not implemented for decimals < 0")
        return x
    even = lax.RoundingMethod.TO_NEAREST_EVEN
    if decimals == 0:
        return lax.round(x, even)
    if decimals > math.log10(float(dtypes.finfo(dt).max)):
        return x
    y = lax.convert_element_type(x, dtypes.float32) if dt in (dtypes.float16, dtypes.bfloat16) else x
    factor = _c(y, 10.0 ** decimals)
    out = lax.div(lax.round(lax.mul(y, factor), even), factor)
    return lax.convert_element_type(out, dt) if out.aval.dtype != dt else out


around = round


def clip(arr=None, /, min=None, max=None, *, a_min=None, a_max=None):  # noqa: A002 - NumPy's names
    """arr limited to [min, max] (either bound optional; a_min/a_max are the older names)."""
    if a_min is not None:
        min = a_min  # noqa: A001
    if a_max is not None:
        max = a_max  # noqa: A001
    util.check_arraylike("clip", arr)
    out = arr
    if min is not None:
        out = maximum(min, out)
    if max is not None:
        out = minimum(max, out)
    return util.asarray(out)


# ---- predicates -----------------------------------------------------------------------------

def isnan(x, /):
    """True where x is NaN."""
    x = _operand("isnan", x)
    if x.aval.dtype not in _FLOATING:
        return util.full(x.aval.shape, False, dtypes.bool_)
    return lax.ne(x, x)


def isinf(x, /):
    """True where x is +inf or -inf."""
    x = _operand("isinf", x)
    if x.aval.dtype not in _FLOATING:
        return util.full(x.aval.shape, False, dtypes.bool_)
    return lax.eq(lax.abs(x), _c(x, float("inf")))


def isposinf(x, /):
    """True where x is +inf."""
    x = _operand("isposinf", x)
    if x.aval.dtype not in _FLOATING:
        return util.full(x.aval.shape, False, dtypes.bool_)
    return lax.eq(x, _c(x, float("inf")))


def isneginf(x, /):
    """True where x is -inf."""
    x = _operand("isneginf", x)
    if x.aval.dtype not in _FLOATING:
        return util.full(x.aval.shape, False, dtypes.bool_)
    return lax.eq(x, _c(x, float("-inf")))


def isfinite(x, /):
    """True where x is neither infinite nor NaN."""
    x = _operand("isfinite", x)
    if x.aval.dtype not in _FLOATING:
        return util.full(x.aval.shape, True, dtypes.bool_)
    return lax.is_finite(x)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|a - b| <= atol + rtol * |b| elementwise, with infinities equal only to themselves."""
    a, b = promote_args("isclose", a, b)
    dt = a.aval.dtype
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
    from xjax._src.numpy.reductions import all as _all

    return _all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan=False):
    """True if a1 and a2 have the same shape and elements."""
    from xjax._src.numpy.reductions import all as _all

    util.check_arraylike("array_equal", a1, a2)
    x, y = util.asarray(a1), util.asarray(a2)
    if x.aval.shape != y.aval.shape:
        return util.scalar(False, dtypes.bool_, False)
    x, y = util.promote_dtypes(x, y)
    eq = lax.eq(x, y)
    if equal_nan and x.aval.dtype in _FLOATING:
        eq = lax.bitwise_or(eq, lax.bitwise_and(_isnan(x), _isnan(y)))
    return _all(eq)


def array_equiv(a1, a2):
    """True if a1 and a2 broadcast together and are equal elementwise."""
    from xjax._src.numpy.reductions import all as _all

    util.check_arraylike("array_equiv", a1, a2)
    try:
        return _all(equal(a1, a2))
    except TypeError:
        return util.scalar(False, dtypes.bool_, False)


# ---- logical and bitwise --------------------------------------------------------------------

def _to_bool(x):
    if x.aval.dtype == dtypes.bool_:
        return x
    return lax.ne(x, _c(x, 0))


def logical_not(x, /):
    """not x elementwise (nonzero is True)."""
    return lax.bitwise_not(_to_bool(_operand("logical_not", x)))


def _logical(name, prim):
    def fn(x1, x2, /):
        util.check_arraylike(name, x1, x2)
        a, b = util.broadcast_operands(name, [_to_bool(util.asarray(x1)), _to_bool(util.asarray(x2))])
        return prim.bind(a, b)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name.split('_')[1]} of the truth values."
    return fn


logical_and = _logical("logical_and", _P["and"])
logical_or = _logical("logical_or", _P["or"])
logical_xor = _logical("logical_xor", _P["xor"])


def bitwise_not(x, /):
    """~x: bitwise not (logical not for bools)."""
    return lax.bitwise_not(_operand("bitwise_not", x))


invert = bitwise_invert = bitwise_not


def left_shift(x1, x2, /):
    """x1 << x2."""
    x1, x2 = promote_args("left_shift", x1, x2, implicit=True)
    return lax.shift_left(x1, x2)


def right_shift(x1, x2, /):
    """x1 >> x2 (arithmetic for signed integers, logical for unsigned)."""
    x1, x2 = promote_args("right_shift", x1, x2, implicit=True)
    if x1.aval.dtype.kind == "u":
        return lax.shift_right_logical(x1, x2)
    return lax.shift_right_arithmetic(x1, x2)


bitwise_left_shift = left_shift
bitwise_right_shift = right_shift


def _gcd_loop(a, b):
    """Euclid's algorithm on |a|, |b| (a fixed number of steps under tracing)."""
    zero = _const(a, 0)
    if util.is_concrete(a) and util.is_concrete(b):
        from xjax._src.numpy.reductions import any as _any

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


# ---- complex parts of real arrays -----------------------------------------------------------

def conjugate(x, /):
    """The complex conjugate: x itself for real arrays."""
    return _operand("conjugate", x)


conj = conjugate


def real(val, /):
    """The real part: x itself for real arrays."""
    return _operand("real", val)


def imag(val, /):
    """The imaginary part: zeros for real arrays."""
    x = _operand("imag", val)
    return _const(x, 0, x.aval.weak_type)


def angle(z, deg=False):
    """The argument of z: 0 or pi for real arrays."""
    x = util.to_inexact(_operand("angle", z))
    out = lax.atan2(_c(x, 0), x)
    return rad2deg(out) if deg else out


# ---- where / nan_to_num ---------------------------------------------------------------------

def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """x where condition else y (broadcast, promoted); with one argument, nonzero(condition)."""
    ac, ax, ay = getattr(condition, "aval", None), getattr(x, "aval", None), getattr(y, "aval", None)
    if ac is not None and ax is not None and ay is not None and ac.dtype == dtypes.bool_ and \
            ax.dtype == ay.dtype and ac.shape == ax.shape == ay.shape:
        return _SELECT_N.bind(condition, y, x)  # fast path: nothing to promote or broadcast
    if x is None and y is None:
        from xjax._src.numpy.sorting import nonzero

        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError("Either both or neither of the x and y arguments should be provided to jax.numpy.where, "
                         f"got {x} and {y}.")
    util.check_arraylike("where", condition, x, y)
    c = _to_bool(util.asarray(condition))
    xv, yv = util.promote_dtypes(x, y)
    c, xv, yv = util.broadcast_operands("select_n", [c, xv, yv])
    return lax.select(c, xv, yv)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """x with NaN, +inf and -inf replaced by finite numbers (the dtype's extremes by default)."""
    x = _operand("nan_to_num", x)
    dt = x.aval.dtype
    if dt not in _FLOATING:
        return x
    info = dtypes.finfo(dt)
    posinf = float(info.max) if posinf is None else posinf
    neginf = float(info.min) if neginf is None else neginf
    out = lax.select(_isnan(x), _const(x, nan), x)
    out = lax.select(lax.eq(out, _c(x, float("inf"))), _const(x, posinf), out)
    return lax.select(lax.eq(out, _c(x, float("-inf"))), _const(x, neginf), out)
