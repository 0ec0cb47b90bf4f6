"""Elementwise math of xjax.numpy (NumPy's ufuncs), on lax primitives with JAX's promotion rules.

The hot binary ops take a fast path when both operands are already runtime values of one dtype
and shape: straight to the primitive, no promotion or broadcasting work.
"""
import math
import operator

import numpy as np

from xjax._src import core, dtypes, lax
from xjax._src.jit import jit
from xjax._src.lax import elementwise as _ew
from xjax._src.lax.sharding_rules import broadcast_shardings as _broadcast_shardings
from xjax._src.numpy import util
from xjax._src.numpy.nonzero import nonzero
from xjax._src.numpy.util import promote_args, promote_args_inexact

_P = _ew.PRIMITIVES
_SELECT_N = _ew.select_n_p
_FLOATING = frozenset(dtypes.FLOATING)
_INEXACT = frozenset(dtypes.FLOATING + dtypes.COMPLEX)
_PY_SCALARS = (int, float, bool)


def _const(x, value, weak=None):
    """A constant of x's dtype and shape (weakly typed if x is, so it never strengthens a result)."""
    aval = x.aval
    return util.full(aval.shape, value, aval.dtype, aval.weak_type if weak is None else weak)


def _c(x, value, weak=None):
    """A 0-d constant of x's dtype for lax binary ops (which broadcast it), weak if x is."""
    return util.scalar(value, x.aval.dtype, x.aval.weak_type if weak is None else weak)


# ---- factories ------------------------------------------------------------------------------

def _binary(name, prim, doc, inexact=False):
    """A ufunc applying `prim` after JAX's promotion and broadcasting.

    Fast paths: two runtime values of one dtype, weak type and shape go straight to the primitive; an array
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
                if (a1.dtype == a2.dtype and a1.shape == a2.shape and a1.weak_type == a2.weak_type
                        and (not inexact or a1.dtype in _INEXACT)):
                    return bind(x1, x2)
            elif type(x2) in _PY_SCALARS:
                dt, weak = util.scalar_promotion(a1.dtype, a1.weak_type, type(x2))
                if dt == a1.dtype and (not inexact or dt in _INEXACT):
                    return bind(x1, util.scalar(x2, dt, weak))
        elif a2 is not None and type(x1) in _PY_SCALARS:
            dt, weak = util.scalar_promotion(a2.dtype, a2.weak_type, type(x1))
            if dt == a2.dtype and (not inexact or dt in _INEXACT):
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
        elif inexact and aval.dtype not in _INEXACT:
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


def _is_complex_operand(x):
    aval = getattr(x, "aval", None)
    return np.iscomplexobj(x) if aval is None else dtypes.is_complex(aval.dtype)


def _ordered(name, prim, doc):
    """A comparison; complex operands compare lexicographically (the real parts, or the imaginary
    parts where the real parts are equal), as JAX's."""
    plain = _binary(name, prim, doc)

    def fn(x1, x2, /):
        if not (_is_complex_operand(x1) or _is_complex_operand(x2)):
            return plain(x1, x2)
        x1, x2 = promote_args(name, x1, x2, implicit=True)
        by_imag = prim.bind(lax.imag(x1), lax.imag(x2))
        by_real = prim.bind(lax.real(x1), lax.real(x2))
        return lax.select(lax.eq(lax.real(x1), lax.real(x2)), by_imag, by_real)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


less = _ordered("less", _P["lt"], "x1 < x2 elementwise.")
less_equal = _ordered("less_equal", _P["le"], "x1 <= x2 elementwise.")
greater = _ordered("greater", _P["gt"], "x1 > x2 elementwise.")
greater_equal = _ordered("greater_equal", _P["ge"], "x1 >= x2 elementwise.")

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
def square(x, /):
    """x * x elementwise (bools as the default int, as JAX promotes them)."""
    x = util.operand("square", x)
    if x.aval.dtype == dtypes.bool_:
        x = util.convert(x, dtypes.default_int_dtype(), x.aval.weak_type)
    return _P["square"].bind(x)


sign = _unary("sign", _P["sign"], "-1, 0 or 1 by the sign of x (NaN stays NaN).")
asin, acos, atan, asinh, acosh, atanh = arcsin, arccos, arctan, arcsinh, arccosh, arctanh


def negative(x, /):
    """-x elementwise."""
    return _P["neg"].bind(util.operand("negative", x))


def positive(x, /):
    """+x: x itself."""
    return util.operand("positive", x)


def absolute(x, /):
    """|x| elementwise (bools and unsigned integers unchanged)."""
    x = util.operand("absolute", x)
    if x.aval.dtype.kind in "bu":
        return x
    return _P["abs"].bind(x)


abs = absolute  # noqa: A001 - NumPy's name


def fabs(x, /):
    """|x| as a float."""
    return _P["abs"].bind(util.to_inexact(util.operand("fabs", x)))


true_divide = _binary("true_divide", _P["div"], "x1 / x2 with a floating result (integers are promoted to the "
                      "default float type).", inexact=True)
divide = true_divide


def _float_mod(x1, x2):
    """(mod, needs_adjustment) with mod = rem(x1, x2) and the adjustment where signs differ."""
    mod = lax.rem(x1, x2)
    zero = _c(mod, 0)
    adjust = lax.bitwise_and(lax.ne(mod, zero), lax.ne(lax.lt(mod, zero), lax.lt(x2, zero)))
    return mod, adjust


def _nonzero_int_divisor(x2):
    """An integer divisor with its zeros replaced by ones: an integer remainder by zero is 0, as in JAX."""
    if x2.aval.dtype.kind not in "iu":
        return x2
    return lax.select(lax.eq(x2, _c(x2, 0)), util.full(x2.aval.shape, 1, x2.aval.dtype, x2.aval.weak_type), x2)


def floor_divide(x1, x2, /):
    """x1 // x2 with Python's flooring semantics."""
    x1, x2 = promote_args("floor_divide", x1, x2)
    dt = x1.aval.dtype
    if dt.kind == "u":
        return lax.div(x1, x2)
    if dt.kind == "i":
        # Signs compared with sign(), as JAX does: by zero, lax.div's -1 becomes -2 unless x1 is 0.
        q = lax.div(x1, x2)
        zero = _c(q, 0)
        adjust = lax.bitwise_and(lax.ne(lax.sign(x1), lax.sign(x2)), lax.ne(lax.rem(x1, x2), zero))
        return lax.select(adjust, lax.sub(q, _c(q, 1)), q)
    if dt == dtypes.bool_:
        raise TypeError("floor_divide does not accept dtype bool.")
    mod, adjust = _float_mod(x1, x2)
    # By zero: x1 / 0 (+-inf, or nan for 0 / 0) as in JAX and NumPy; x1 - rem(x1, 0) is nan.
    dividend = lax.select(lax.eq(x2, _c(x2, 0)), x1, lax.sub(x1, mod))
    div = lax.div(dividend, x2)
    div = lax.select(adjust, lax.sub(div, _c(div, 1)), div)
    return lax.round(div)


def remainder(x1, x2, /):
    """x1 % x2 with the sign of the divisor (Python's semantics)."""
    x1, x2 = promote_args("remainder", x1, x2)
    dt = x1.aval.dtype
    if dt.kind == "u":
        return lax.rem(x1, _nonzero_int_divisor(x2))
    if dt == dtypes.bool_:
        raise TypeError("remainder does not accept dtype bool.")
    x2 = _nonzero_int_divisor(x2)
    mod, adjust = _float_mod(x1, x2)
    return lax.select(adjust, lax.add(mod, x2), mod)


mod = remainder


def fmod(x1, x2, /):
    """C's fmod: the remainder with the sign of the dividend."""
    x1, x2 = promote_args("fmod", x1, x2, implicit=True)
    return lax.rem(x1, _nonzero_int_divisor(x2))


def divmod(x1, x2, /):  # noqa: A001 - NumPy's name
    """(floor_divide(x1, x2), remainder(x1, x2))."""
    return floor_divide(x1, x2), remainder(x1, x2)


def _concrete_int_exponent(x):
    """x as a Python int when it is a concrete integer scalar (tracers are not), else None."""
    t = type(x)
    if t is int or t is bool:  # operator.index accepts bools, as in JAX
        return int(x)
    if t is float:
        return None
    v = core.to_concrete_value(x)
    dtype = getattr(v, "dtype", None)
    if dtype is None or dtype.kind not in "iu" or v.ndim != 0:
        return None
    return operator.index(v)


def power(x1, x2, /):
    """x1 ** x2 with JAX's rules: a concrete integer scalar exponent uses repeated squaring (integer_pow);
    otherwise integer (and bool) operands give integer powers, a float base with integer exponents keeps
    the base's type, and anything else is promoted first."""
    y = _concrete_int_exponent(x2)
    if y is not None:
        x = util.operand("power", x1)
        if x.aval.dtype == dtypes.bool_:
            x = util.convert(x, dtypes.int32)  # JAX's numeric promotion of bool is int32, x64 or not
        if x.aval.dtype.kind in "iu" and y < 0:
            shape = ",".join(str(d) for d in x.aval.shape)
            raise TypeError(f"Integers cannot be raised to negative powers, got integer_pow({x.aval.dtype.name}"
                            f"[{shape}], {y})")
        return lax.integer_pow(x, y)
    util.check_arraylike("power", x1, x2)
    (d1, w1), (d2, _) = util._pair(x1), util._pair(x2)
    if d1 in _FLOATING and d2.kind in "iub":
        # A float base with integer exponents: no promotion of the base (JAX's rule); the result is
        # weak when a weak base needs no rank promotion (JAX's rank promotion makes it strong).
        w1 = w1 and util.aval_of(x1).ndim >= util.aval_of(x2).ndim
        a, b = util.convert(x1, d1, w1), util.convert(x2, d1, w1)
        a, b = util.broadcast_operands("power", [a, b], implicit=True)
        return lax.pow(a, b)
    a, b = promote_args("power", x1, x2, implicit=True)
    if a.aval.dtype.kind in "iub":
        # An integer power of integers by a non-concrete exponent: strongly typed, bools computed as
        # int32 (JAX's rules).
        dt = dtypes.int32 if a.aval.dtype == dtypes.bool_ else a.aval.dtype
        a, b = _ew._convert(a, dt, weak_type=False), util.convert(b, dt)
    return lax.pow(a, b)


pow = power  # noqa: A001 - NumPy's name


def float_power(x1, x2, /):
    """x1 ** x2 computed in floating point."""
    x1, x2 = promote_args_inexact("float_power", x1, x2, implicit=True)
    return lax.pow(x1, x2)


def reciprocal(x, /):
    """1 / x (floating result), as integer_pow(x, -1) (JAX's)."""
    x = util.to_inexact(util.operand("reciprocal", x))
    return lax.integer_pow(x, -1)


def log2(x, /):
    """Base-2 logarithm: log(x) / log(2), as JAX computes it."""
    x = util.to_inexact(util.operand("log2", x))
    return lax.div(lax.log(x), lax.log(_c(x, 2, weak=False)))


def log10(x, /):
    """Base-10 logarithm: log(x) * (1 / log(10)), as JAX computes it."""
    x = util.to_inexact(util.operand("log10", x))
    return lax.mul(lax.log(x), _c(x, 0.4342944819032518, weak=False))


def deg2rad(x, /):
    """Degrees to radians."""
    x = util.to_inexact(util.operand("deg2rad", x))
    return lax.mul(x, _c(x, math.pi / 180, True))


def rad2deg(x, /):
    """Radians to degrees."""
    x = util.to_inexact(util.operand("rad2deg", x))
    return lax.mul(x, _c(x, 180 / math.pi, True))


radians = deg2rad
degrees = rad2deg


def arctan2(x1, x2, /):
    """The angle of (x2, x1), in (-pi, pi]."""
    x1, x2 = promote_args_inexact("arctan2", x1, x2, implicit=True)
    return lax.atan2(x1, x2)


atan2 = arctan2


def nextafter(x1, x2, /):
    """The next representable float after x1 towards x2."""
    x1, x2 = promote_args_inexact("nextafter", x1, x2, implicit=True)
    return lax.nextafter(x1, x2)


# ---- rounding -------------------------------------------------------------------------------

def floor(x, /):
    """Largest integer <= x (integers unchanged)."""
    x = util.operand("floor", x)
    return lax.floor(x) if x.aval.dtype in _INEXACT else x  # (complex: lax's TypeError, as JAX)


def ceil(x, /):
    """Smallest integer >= x (integers unchanged)."""
    x = util.operand("ceil", x)
    return lax.ceil(x) if x.aval.dtype in _INEXACT else x


def trunc(x, /):
    """x rounded towards zero (integers unchanged)."""
    x = util.operand("trunc", x)
    if x.aval.dtype not in _INEXACT:
        return x
    return lax.select(lax.lt(x, _c(x, 0)), lax.ceil(x), lax.floor(x))


fix = trunc


def rint(x, /):
    """Round to the nearest integer, ties to even (floating result)."""
    x = util.to_default_float(util.operand("rint", x))
    if dtypes.is_complex(x.aval.dtype):  # each part (JAX's)
        return lax.complex(rint(lax.real(x)), rint(lax.imag(x)))
    return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)


def round(a, decimals=0, out=None):  # noqa: A001 - NumPy's name
    """Round to `decimals` decimal places, ties to even (integers unchanged)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.round is not supported.")
    x = util.operand("round", a)
    decimals = int(decimals)
    if dtypes.is_complex(x.aval.dtype):  # each part rounded (JAX's)
        return lax.complex(round(lax.real(x), decimals), round(lax.imag(x), decimals))
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


def _clip(arr, min, max):  # noqa: A002 - NumPy's names
    if min is not None:
        arr = maximum(min, arr)
    if max is not None:
        arr = minimum(max, arr)
    return util.asarray(arr)


_clip.__name__ = "clip"  # a jit named clip, as JAX's jnp.clip is
_clip = jit(_clip)


def clip(arr=None, /, min=None, max=None, *, a_min=None, a_max=None):  # noqa: A002 - NumPy's names
    """arr limited to [min, max] (either bound optional; a_min/a_max are the older names)."""
    if a_min is not None:
        min = a_min  # noqa: A001
    if a_max is not None:
        max = a_max  # noqa: A001
    if arr is None:
        raise ValueError("No input was provided to the clip function.")
    util.check_arraylike("clip", arr)
    if any(t is not None and dtypes.is_complex(util.aval_of(t).dtype) for t in (arr, min, max)):
        raise ValueError("Clip received a complex value either through the input or the min/max keywords. "
                         "Complex values have no ordering and cannot be clipped.")  # JAX's refusal
    return _clip(arr, min, max)


# ---- predicates -----------------------------------------------------------------------------

def isnan(x, /):
    """True where x is NaN."""
    x = util.operand("isnan", x)
    if x.aval.dtype not in _INEXACT:
        return util.full(x.aval.shape, False, dtypes.bool_)
    return lax.ne(x, x)


def isinf(x, /):
    """True where x is +inf or -inf."""
    x = util.operand("isinf", x)
    if dtypes.is_complex(x.aval.dtype):
        return lax.bitwise_or(isinf(lax.real(x)), isinf(lax.imag(x)))
    if x.aval.dtype not in _FLOATING:
        return util.full(x.aval.shape, False, dtypes.bool_)
    return lax.eq(lax.abs(x), _c(x, float("inf")))


def _no_complex(name, x):
    if dtypes.is_complex(x.aval.dtype):
        raise ValueError(f"jnp.{name} is not well defined for complex input.")


def isposinf(x, /):
    """True where x is +inf."""
    x = util.operand("isposinf", x)
    _no_complex("isposinf", x)
    if x.aval.dtype not in _FLOATING:
        return util.full(x.aval.shape, False, dtypes.bool_)
    return lax.eq(x, _c(x, float("inf")))


def isneginf(x, /):
    """True where x is -inf."""
    x = util.operand("isneginf", x)
    _no_complex("isneginf", x)
    if x.aval.dtype not in _FLOATING:
        return util.full(x.aval.shape, False, dtypes.bool_)
    return lax.eq(x, _c(x, float("-inf")))


def isfinite(x, /):
    """True where x is neither infinite nor NaN."""
    x = util.operand("isfinite", x)
    if dtypes.is_complex(x.aval.dtype):
        return lax.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    if x.aval.dtype not in _FLOATING:
        return util.full(x.aval.shape, True, dtypes.bool_)
    return lax.is_finite(x)


# ---- logical and bitwise --------------------------------------------------------------------

def _to_bool(x):
    if x.aval.dtype == dtypes.bool_:
        return x
    return lax.ne(x, _c(x, 0))


def logical_not(x, /):
    """not x elementwise (nonzero is True)."""
    return lax.bitwise_not(_to_bool(util.operand("logical_not", x)))


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
    return lax.bitwise_not(util.operand("bitwise_not", x))


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


# ---- complex parts ---------------------------------------------------------------------------

def conjugate(x, /):
    """The complex conjugate: x itself for real arrays."""
    x = util.operand("conjugate", x)
    return lax.conj(x) if dtypes.is_complex(x.aval.dtype) else x


conj = conjugate


def real(val, /):
    """The real part: x itself for real arrays."""
    x = util.operand("real", val)
    return lax.real(x) if dtypes.is_complex(x.aval.dtype) else x


def imag(val, /):
    """The imaginary part: zeros for real arrays."""
    x = util.operand("imag", val)
    return lax.imag(x) if dtypes.is_complex(x.aval.dtype) else _const(x, 0, x.aval.weak_type)


# ---- where ---------------------------------------------------------------------------------

def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """x where condition else y (broadcast, promoted); with one argument, nonzero(condition).

    As in JAX, the three-argument form is a jitted function (`_where`): traced, it is one jit
    equation; called eagerly, one compiled kernel that never materialises broadcast scalars."""
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError("Either both or neither of the x and y arguments should be provided to jax.numpy.where, "
                         f"got {x} and {y}.")
    if getattr(type(x), "is_typed_key_array", False) or getattr(type(y), "is_typed_key_array", False):
        return _where_keys(condition, x, y)
    util.check_arraylike("where", condition, x, y)
    return _where_jit()(condition, x, y)


def _where_keys(condition, x, y):
    """where over typed key arrays (random.keys.PRNGKeyArray) of one implementation: a select of
    their data, whose trailing dims are the key's own."""
    if not (type(x) is type(y) and x.dtype == y.dtype):
        key = x if getattr(type(x), "is_typed_key_array", False) else y
        raise ValueError(f"dtype={key.dtype.name} is not a valid dtype for JAX type promotion.")  # JAX's words
    c = util.asarray(condition)
    trailing = x._base_array.ndim - x.ndim
    c = lax.expand_dims(c, tuple(range(c.aval.ndim, c.aval.ndim + trailing)))  # (broadcasts over the key's dims)
    return x._wrap(where(c, x._base_array, y._base_array))


def _where(condition, x, y):
    c = _to_bool(util.asarray(condition))
    xv, yv = util.promote_dtypes(x, y)
    if c.aval.ndim == 0:  # select takes a scalar predicate as it is
        shape = util.broadcast_shapes(xv.aval.shape, yv.aval.shape)
        typed = _broadcast_shardings(xv.aval, yv.aval)
        xv, yv = (util.broadcast_to_shape(v, shape, typed) for v in (xv, yv))
    else:
        shape = util.broadcast_shapes(c.aval.shape, xv.aval.shape, yv.aval.shape)  # ValueError, as JAX's
        typed = _broadcast_shardings(c.aval, xv.aval, yv.aval)
        c, xv, yv = (util.broadcast_to_shape(v, shape, typed) for v in (c, xv, yv))
    return lax.select(c, xv, yv)


_WHERE = []


def _where_jit():
    if not _WHERE:
        _WHERE.append(jit(_where))
    return _WHERE[0]


