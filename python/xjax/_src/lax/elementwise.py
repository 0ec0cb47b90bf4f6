"""Elementwise primitives: unary, binary, select_n, clamp, convert_element_type, bitcast_convert_type,
iota."""
import numpy as np

from xjax._src import core, dtypes
from xjax._src.array import Array
from xjax._src.lax.base import define_primitive, scalars_like, asarray

# Which dtypes each op accepts (JAX's error says "Accepted dtypes are subtypes of ...").
_FLOAT, _INT, _NUM, _INT_BOOL, _ANY = "floating", "integer", "number", "integer or bool", "any"


def _accepts(kind, dtype):
    if kind == _ANY:
        return True
    if kind == _FLOAT:
        return dtypes.is_float(dtype)
    if kind == _INT:
        return dtypes.is_int(dtype)
    if kind == _NUM:
        return dtype != dtypes.bool_
    return dtypes.is_int(dtype) or dtype == dtypes.bool_


def _check_dtype(name, kind, aval):
    if not _accepts(kind, aval.dtype):
        raise TypeError(f"{name} does not accept dtype {aval.dtype.name}. Accepted dtypes are subtypes of {kind}.")


def _unary_eval(name, kind, out_dtype=None):
    def abstract_eval(x, **params):
        _check_dtype(name, kind, x)
        if out_dtype is not None:
            return core.ShapedArray(x.shape, out_dtype, False)
        return x.update(weak_type=x.weak_type)

    return abstract_eval


def broadcast_shapes(name, shapes):
    """lax's implicit broadcasting: rank-0 operands, and size-1 dims between operands of equal rank."""
    full = [s for s in shapes if s]
    if not full:
        return ()
    if any(len(s) != len(full[0]) for s in full):
        raise TypeError(f"{name} got incompatible shapes for broadcasting: {', '.join(map(str, shapes))}.")
    out = []
    for dims in zip(*full):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            raise TypeError(f"{name} got incompatible shapes for broadcasting: {', '.join(map(str, shapes))}.")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def broadcasting_lowering(op_name):
    """Lowers an n-ary elementwise op, broadcasting operands with size-1 dims to the result shape.

    0-d operands go to the core as they are: its kernels expand them tile by tile.
    """

    def lower(ctx, *inputs, **params):
        shape = ctx.avals_out[0].shape
        args = []
        for v, aval in zip(inputs, ctx.avals_in):
            if aval.shape and aval.shape != shape:
                (v,) = ctx.op("broadcast_in_dim", v, shape=shape, broadcast_dimensions=list(range(len(shape))))
            args.append(v)
        return ctx.op(op_name, *args, **params)

    return lower


def _nary_eval(name, kind, out_dtype=None):
    def abstract_eval(*avals, **params):
        shape = broadcast_shapes(name, [a.shape for a in avals])
        dts = [a.dtype for a in avals]
        if any(d != dts[0] for d in dts):
            raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got "
                            f"{', '.join(d.name for d in dts)}.")
        _check_dtype(name, kind, avals[0])
        # Comparisons keep the weak type too, as in JAX (`jnp.arange(3) < 1.5` is weak bool).
        return core.ShapedArray(shape, out_dtype or dts[0], all(a.weak_type for a in avals))

    return abstract_eval


UNARY = {
    "neg": _NUM, "sign": _NUM, "floor": _FLOAT, "ceil": _FLOAT, "round": _FLOAT, "exp": _FLOAT,
    "exp2": _FLOAT, "log": _FLOAT, "log1p": _FLOAT, "expm1": _FLOAT, "tanh": _FLOAT, "logistic": _FLOAT,
    "sin": _FLOAT, "cos": _FLOAT, "tan": _FLOAT, "asin": _FLOAT, "acos": _FLOAT, "atan": _FLOAT,
    "sinh": _FLOAT, "cosh": _FLOAT, "asinh": _FLOAT, "acosh": _FLOAT, "atanh": _FLOAT, "sqrt": _FLOAT,
    "rsqrt": _FLOAT, "cbrt": _FLOAT, "abs": _NUM, "not": _INT_BOOL, "erf": _FLOAT, "erfc": _FLOAT,
    "erf_inv": _FLOAT, "lgamma": _FLOAT, "digamma": _FLOAT, "integer_pow": _NUM, "square": _NUM,
    "population_count": _INT, "clz": _INT, "copy": _ANY,
}
BINARY = {
    "add": _ANY, "sub": _NUM, "mul": _ANY, "div": _NUM, "rem": _NUM, "pow": _NUM, "max": _ANY, "min": _ANY,
    "atan2": _FLOAT, "nextafter": _FLOAT, "and": _INT_BOOL, "or": _INT_BOOL, "xor": _INT_BOOL,
    "shift_left": _INT, "shift_right_logical": _INT, "shift_right_arithmetic": _INT,
}
COMPARE = ("eq", "ne", "lt", "le", "gt", "ge")
# lax names that are C++ keywords-as-operators get a prefix in the core's catalogue.
_CORE_NAME = {"not": "bitwise_not", "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor"}

PRIMITIVES = {}
for _name, _kind in UNARY.items():
    PRIMITIVES[_name] = define_primitive(_name, _unary_eval(_name, _kind), op=_CORE_NAME.get(_name))
for _name, _kind in BINARY.items():
    PRIMITIVES[_name] = define_primitive(_name, _nary_eval(_name, _kind))
    PRIMITIVES[_name].lowering = broadcasting_lowering(_CORE_NAME.get(_name, _name))
for _name in COMPARE:
    PRIMITIVES[_name] = define_primitive(_name, _nary_eval(_name, _ANY, dtypes.bool_))
    PRIMITIVES[_name].lowering = broadcasting_lowering(_name)
PRIMITIVES["is_finite"] = define_primitive("is_finite", _unary_eval("is_finite", _FLOAT, dtypes.bool_))
# a * b + c rounded once: not a JAX primitive, but what XLA's CPU code computes where it fuses a
# multiply into an add (random.uniform's scaling), so xjax uses it there to give JAX's bits.
fma_p = define_primitive("fma", _nary_eval("fma", _FLOAT))
fma_p.lowering = broadcasting_lowering("fma")


def _select_n_eval(which, *cases):
    if not cases:
        raise ValueError("select_n called with no cases")
    shapes = {c.shape for c in cases}
    if len(shapes) != 1:
        raise TypeError(f"select_n cases must have the same shapes, got [{', '.join(str(c.shape) for c in cases)}].")
    if len({c.dtype for c in cases}) != 1:
        raise TypeError(f"select_n cases must have the same dtypes, got [{', '.join(c.dtype.name for c in cases)}].")
    if which.shape and which.shape != cases[0].shape:
        raise TypeError(f"select_n which must be scalar or have the same shape as cases, "
                        f"got which shape {which.shape} but case shape {cases[0].shape}.")
    if which.dtype == dtypes.bool_:
        if len(cases) > 2:
            raise TypeError("select_n with boolean which cannot have more than 2 cases.")
    elif which.dtype != dtypes.int32:
        raise TypeError(f"which must be a scalar boolean or int32 type, got {which.dtype.name}.")
    return core.ShapedArray(cases[0].shape, cases[0].dtype, all(c.weak_type for c in cases))


select_n_p = define_primitive("select_n", _select_n_eval)


def _clamp_eval(lo, x, hi):
    for name, b in (("min", lo), ("max", hi)):
        if b.shape and b.shape != x.shape:
            raise TypeError(f"clamp requires {name}.shape == operand.shape or {name}.shape == (), "
                            f"got {b.shape} and {x.shape}.")
        if b.dtype != x.dtype:
            raise TypeError(f"clamp requires {name}.dtype == operand.dtype, got {b.dtype.name} and {x.dtype.name}.")
    return x


clamp_p = define_primitive("clamp", _clamp_eval)


def _convert_eval(x, *, new_dtype, weak_type=False, sharding=None):
    return core.ShapedArray(x.shape, new_dtype, weak_type)


convert_element_type_p = define_primitive(
    "convert_element_type", _convert_eval, attrs=lambda new_dtype, weak_type=False, sharding=None: {"new_dtype": new_dtype})


def _bitcast_eval(x, *, new_dtype):
    if (x.dtype == dtypes.bool_) != (new_dtype == dtypes.bool_):
        raise TypeError("lax.bitcast_convert_type does not support bool or complex values unless the operand and "
                        f"destination types match. Got operand dtype={x.dtype.name}, new_dtype={new_dtype!r}. "
                        "Consider using the arr.view() method instead.")
    a, b = x.dtype.itemsize, new_dtype.itemsize
    if a > b:  # each element becomes a/b narrower ones along a new last axis
        return core.ShapedArray(x.shape + (a // b,), new_dtype, False)
    if a < b:  # the last axis's a/b... elements join into one
        if not x.shape or x.shape[-1] * a != b:
            last = x.shape[-1] if x.shape else 1
            raise ValueError(f"Attempting to convert array of shape {x.shape} from {x.dtype.name} of size {8 * a} bits "
                             f"to {new_dtype.name} of size {8 * b}, bits but {last} * {8 * a} != {8 * b}")
        return core.ShapedArray(x.shape[:-1], new_dtype, False)
    return core.ShapedArray(x.shape, new_dtype, False)


def _bitcast_lowering(ctx, x, *, new_dtype):
    """Across widths, in the core's same-width bitcast and integer ops (so every backend that runs those
    runs it, fused with its neighbours): the bytes in memory order, i.e. little-endian, as XLA on CPU and
    GPU -- the new last axis holds a wide element's pieces from its least significant one up."""
    src = ctx.avals_in[0]
    a, b = src.dtype.itemsize, new_dtype.itemsize

    def bitcast(v, frm, to):
        return v if frm == to else ctx.op("bitcast_convert_type", v, new_dtype=to)[0]

    if a == b:
        return ctx.op("bitcast_convert_type", x, new_dtype=new_dtype)
    wide, narrow = (np.dtype(f"uint{8 * n}") for n in (max(a, b), min(a, b)))
    k, rank = max(a, b) // min(a, b), len(src.shape)
    full = src.shape + (k,) if a > b else src.shape

    def shifts():  # the bit offset of each piece along the last axis of `full`
        data = (np.arange(k, dtype=wide) * wide.type(8 * narrow.itemsize)).tobytes()
        (c,) = ctx.op("constant", dtype=wide, shape=[k], data=data)
        return ctx.op("broadcast_in_dim", c, shape=list(full), broadcast_dimensions=[len(full) - 1])[0]

    if a > b:
        (u,) = ctx.op("broadcast_in_dim", bitcast(x, src.dtype, wide), shape=list(full),
                      broadcast_dimensions=list(range(rank)))
        (u,) = ctx.op("shift_right_logical", u, shifts())
        (u,) = ctx.op("convert_element_type", u, new_dtype=narrow)  # keeps the low bits
        return [bitcast(u, narrow, new_dtype)]
    (u,) = ctx.op("convert_element_type", bitcast(x, src.dtype, narrow), new_dtype=wide)  # zero-extends
    (u,) = ctx.op("shift_left", u, shifts())
    (u,) = ctx.op("reduce_sum", u, axes=[rank - 1])  # the pieces' bits do not overlap: the sum is their or
    return [bitcast(u, wide, new_dtype)]


bitcast_convert_type_p = define_primitive("bitcast_convert_type", _bitcast_eval)
bitcast_convert_type_p.lowering = _bitcast_lowering


def _iota_eval(*, dtype, shape, dimension, sharding=None):
    if not 0 <= dimension < len(shape):
        raise ValueError(f"iota dimension must be between 0 and len(shape), got dimension={dimension} "
                         f"for shape {shape}")
    return core.ShapedArray(shape, dtype, False)


iota_p = define_primitive("iota", _iota_eval,
                          attrs=lambda dtype, shape, dimension, sharding=None: dict(dtype=dtype, shape=shape,
                                                                                     dimension=dimension))




# ---- the lax functions ----------------------------------------------------------------------

def _unary_fn(name):
    prim = PRIMITIVES[name]

    def fn(x):
        return prim.bind(asarray(x))

    fn.__name__ = fn.__qualname__ = name if name not in ("not",) else "bitwise_not"
    fn.__doc__ = f"Elementwise {name}: the `{name}` primitive."
    return fn


def _binary_fn(name):
    prim = PRIMITIVES[name]

    def fn(x, y):
        return prim.bind(*scalars_like((x, y)))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name}: the `{name}` primitive (operands of equal shape and dtype)."
    return fn


_FUNCTIONS = {}
for _name in list(UNARY) + ["is_finite"]:
    if _name not in ("integer_pow", "round"):
        _FUNCTIONS[_name] = _unary_fn(_name)
for _name in list(BINARY) + list(COMPARE):
    _FUNCTIONS[_name] = _binary_fn(_name)
_FUNCTIONS["bitwise_not"] = _FUNCTIONS["not"]
_FUNCTIONS["bitwise_and"] = _FUNCTIONS["and"]
_FUNCTIONS["bitwise_or"] = _FUNCTIONS["or"]
_FUNCTIONS["bitwise_xor"] = _FUNCTIONS["xor"]
globals().update({k + "_p": v for k, v in PRIMITIVES.items()})
globals().update(_FUNCTIONS)


class RoundingMethod:
    """lax.round's rounding methods."""
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):  # noqa: A001 - lax's name
    """Rounds to the nearest integer (ties away from zero unless TO_NEAREST_EVEN)."""
    return PRIMITIVES["round"].bind(asarray(x), rounding_method=int(rounding_method))


def integer_pow(x, y):
    """x ** y for a static Python int y."""
    return PRIMITIVES["integer_pow"].bind(asarray(x), y=int(y))


def fma(a, b, c):
    """a * b + c with one rounding (operands of one float dtype, lax broadcasting)."""
    return fma_p.bind(*scalars_like((a, b, c)))


def select_n(which, *cases):
    """cases[which] elementwise (which: bool or int32, scalar or of the cases' shape)."""
    return select_n_p.bind(asarray(which), *scalars_like(cases))


def select(pred, on_true, on_false):
    """on_true where pred else on_false."""
    return select_n(pred, on_false, on_true)


def clamp(min, x, max):  # noqa: A002 - lax's names
    """min(max(x, min), max) with scalar or full-shape bounds."""
    lo, x, hi = scalars_like((min, x, max))
    return clamp_p.bind(lo, x, hi)


def convert_element_type(operand, new_dtype):
    """Casts to new_dtype (canonicalised; x64 off narrows 64-bit types)."""
    return _convert(operand, new_dtype, weak_type=False)


def pow(x, y):  # noqa: A001 - lax's name
    """Elementwise x ** y: operands of equal dtype, or a floating x and an integer y (converted to x's
    dtype, as JAX lowers it: exact for the integers a float holds)."""
    x, y = scalars_like((x, y))
    dx, dy = core.get_aval(x).dtype, core.get_aval(y).dtype
    if dx != dy and dtypes.issubdtype(dx, np.inexact) and dtypes.issubdtype(dy, np.integer):
        y = convert_element_type(y, dx)
    return PRIMITIVES["pow"].bind(x, y)


def _convert(operand, new_dtype, weak_type=False):
    """operand as new_dtype with weak type weak_type, as JAX's _convert_element_type: no equation when
    nothing changes; Python scalars (here: weakly typed concrete 0-d arrays, which only they make) are
    converted on the host, so a traced program holds the converted literal; a change of weak type
    alone re-tags a concrete array without running a kernel."""
    x = asarray(operand)
    new_dtype = dtypes.canonicalize_dtype(new_dtype)
    aval = core.get_aval(x)
    weak_type = bool(weak_type)
    if aval.dtype == new_dtype and aval.weak_type == weak_type:
        return x
    if type(x) is Array:
        if aval.dtype == new_dtype:
            return Array(x._value, aval.update(weak_type=weak_type))
        if aval.weak_type and not aval.shape and not weak_type:
            v = x._numpy()
            if dtypes.is_float(new_dtype) or not dtypes.is_float(aval.dtype) or np.isfinite(v):
                from xjax._src.backends import cpu

                return cpu.scalar(v.astype(new_dtype).item(), new_dtype, False)
    return convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type, sharding=None)


def bitcast_convert_type(operand, new_dtype):
    """Reinterprets the bits of each element as new_dtype. A narrower new_dtype adds a last axis holding each
    element's pieces in memory order; a wider one joins the operand's last axis (which must hold one element's
    pieces) into one element."""
    return bitcast_convert_type_p.bind(asarray(operand), new_dtype=dtypes.canonicalize_dtype(new_dtype))


def iota(dtype, size):
    """[0, 1, ..., size - 1] of the given dtype."""
    return broadcasted_iota(dtype, (size,), 0)


def broadcasted_iota(dtype, shape, dimension):
    """An array of `shape` whose value is the index along `dimension`."""
    shape = tuple(int(d) for d in shape)
    return iota_p.bind(dtype=dtypes.canonicalize_dtype(dtype), shape=shape, dimension=int(dimension), sharding=None)


# ---- jaxpr printing: the params JAX shows ---------------------------------------------------
from xjax._src.jaxpr import params_printer as _params_printer  # noqa: E402

convert_element_type_p.pp_params = _params_printer(drop=("sharding",))


# ---- differentiation rules ------------------------------------------------------------------
# The formulas are JAX's (lax.py), so that transformed programs print JAX's equations: per-operand
# JVP rules (ad.defjvp: rule(tangent, *primals); defjvp2 also gets the output), the transposes of
# the linear ops (a cotangent of a broadcasting operand is summed back to its shape), and the
# constants made as JAX makes them (`_const`, `_one`, `_zeros`, ...: weakly typed exactly when
# their example is), which decides the weak types of derivatives.
from xjax._src.interpreters import ad, batching  # noqa: E402

P = PRIMITIVES


def _py_scalar_of(dtype, val):
    if dtype == dtypes.bool_:
        return bool(val)
    if dtypes.is_int(dtype):
        return int(val)
    return float(val)


def _const(example, val):
    """val as a constant for arithmetic with `example`: a weakly typed scalar where `example` is one,
    else a strongly typed scalar of its dtype."""
    aval = core.get_aval(example)
    if aval.weak_type and not aval.shape:
        return asarray(_py_scalar_of(aval.dtype, val), aval.dtype, True)
    return asarray(_py_scalar_of(aval.dtype, val), aval.dtype, False)


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    """An array like x (its dtype and weak type, its shape unless given) filled with fill_value."""
    aval = core.get_aval(x)
    if dtype is not None:
        aval = aval.update(dtype=dtypes.canonicalize_dtype(dtype), weak_type=False)
    return ad.full_like_aval(aval if shape is None else aval.update(shape=tuple(shape)), fill_value)


def full(shape, fill_value, dtype=None, *, sharding=None):
    """An array of `shape` filled with the scalar fill_value, converted to dtype if given (a Python
    scalar without dtype stays weakly typed)."""
    if np.shape(fill_value):
        raise TypeError(f"full must be called with scalar fill_value, got fill_value.shape {np.shape(fill_value)}.")
    if sharding is not None:
        from xjax._src.sharding import check_trivial

        check_trivial(sharding, "lax.full")
    shape = tuple(int(d) for d in shape)
    aval = core.get_aval(fill_value)
    weak = dtype is None and aval.weak_type
    value = _convert(fill_value, aval.dtype if dtype is None else dtype, weak)
    from xjax._src.lax import layout

    return layout.broadcast_in_dim(value, shape, ()) if shape else value


def _zeros(x):
    return full_like(x, 0)


def _ones(x):
    return full_like(x, 1)


def _twos(x):
    return full_like(x, 2)


def _zero(x):
    return full_like(x, 0, shape=())


def _one(x):
    return full_like(x, 1, shape=())


def _replace_zero(x):
    return select(eq(x, _const(x, 0)), _ones(x), x)


def reciprocal(x):
    """1 / x, as integer_pow(x, -1)."""
    return integer_pow(x, -1)


def _eq_meet(a, b):
    da, db = core.get_aval(a).dtype, core.get_aval(b).dtype
    if da != db:
        if dtypes.promote_types(da, db) == da:
            a = convert_element_type(a, db)
        else:
            b = convert_element_type(b, da)
    return eq(a, b)


def _balanced_eq(x, z, y):
    """1 where x is the result z (1/2 where y is too), else 0: max/min's tangent weights."""
    return div(select(_eq_meet(x, z), _ones(z), _zeros(z)), select(_eq_meet(y, z), _twos(z), _ones(z)))


def _maybe_broadcast(shape, x):
    """x broadcast to `shape` (rank 0, or size-1 dims of equal rank)."""
    x_shape = core.get_aval(x).shape
    if x_shape == tuple(shape):
        return x
    from xjax._src.lax import layout

    if not x_shape:
        return layout.broadcast_in_dim(x, tuple(shape), ())
    dims = [i for i, (a, b) in enumerate(zip(x_shape, shape)) if a == b]
    return layout.broadcast_in_dim(layout.reshape(x, tuple(x_shape[i] for i in dims)), tuple(shape), tuple(dims))


# nextafter has no rule, as in JAX (its derivative is not zero: a zero rule would be silently wrong).
for _name in ("sign", "floor", "ceil", "round", "is_finite", "not", "population_count", "clz",
              "and", "or", "xor", "shift_left", "shift_right_logical", "shift_right_arithmetic", *COMPARE):
    ad.defjvp_zero(P[_name])
ad.defjvp_zero(iota_p)
ad.defjvp_zero(bitcast_convert_type_p)  # as JAX: reinterpreted bits carry no derivative

ad.defjvp2(P["exp"], lambda g, ans, x: mul(g, ans))
ad.defjvp2(P["exp2"], lambda g, ans, x: mul(log(_const(x, 2)), mul(g, ans)))
ad.defjvp(P["log"], lambda g, x: div(g, x))
ad.defjvp(P["log1p"], lambda g, x: div(g, add(x, _one(x))))
ad.defjvp2(P["expm1"], lambda g, ans, x: mul(g, add(ans, _one(ans))))
ad.defjvp2(P["tanh"], lambda g, ans, x: mul(add(g, mul(g, ans)), sub(_one(x), ans)))
ad.defjvp2(P["logistic"], lambda g, ans, x: mul(g, mul(ans, sub(_one(ans), ans))))
ad.defjvp(P["sin"], lambda g, x: mul(g, cos(x)))
ad.defjvp(P["cos"], lambda g, x: neg(mul(g, sin(x))))
ad.defjvp2(P["tan"], lambda g, ans, x: mul(g, add(_const(x, 1), square(ans))))
ad.defjvp(P["asin"], lambda g, x: mul(g, rsqrt(sub(_const(x, 1), square(x)))))
ad.defjvp(P["acos"], lambda g, x: mul(g, neg(rsqrt(sub(_const(x, 1), square(x))))))
ad.defjvp(P["atan"], lambda g, x: div(g, add(_const(x, 1), square(x))))
ad.defjvp(P["sinh"], lambda g, x: mul(g, cosh(x)))
ad.defjvp(P["cosh"], lambda g, x: mul(g, sinh(x)))
ad.defjvp(P["asinh"], lambda g, x: mul(g, rsqrt(add(square(x), _one(x)))))
ad.defjvp(P["acosh"], lambda g, x: mul(g, rsqrt(sub(square(x), _one(x)))))
ad.defjvp(P["atanh"], lambda g, x: mul(reciprocal(add(_one(x), x)), div(g, sub(_one(x), x))))
ad.defjvp2(P["sqrt"], lambda g, ans, x: mul(g, div(_const(x, 0.5), ans)))
ad.defjvp2(P["rsqrt"], lambda g, ans, x: mul(g, mul(_const(x, -0.5), div(ans, x))))
ad.defjvp2(P["cbrt"], lambda g, ans, x: mul(g, mul(_const(x, 1 / 3), integer_pow(ans, -2))))
ad.defjvp2(P["abs"], lambda g, ans, x: select(ge(x, _zero(x)), g, neg(g)))
ad.defjvp(P["erf"], lambda g, x: mul(_const(x, 2. / np.sqrt(np.pi)), mul(g, exp(neg(square(x))))))
ad.defjvp(P["erfc"], lambda g, x: mul(_const(x, -2. / np.sqrt(np.pi)), mul(g, exp(neg(square(x))))))
ad.defjvp2(P["erf_inv"], lambda g, ans, x: mul(_const(x, np.sqrt(np.pi) / 2.), mul(g, exp(square(ans)))))
ad.defjvp(P["lgamma"], lambda g, x: mul(g, digamma(x)))
ad.defjvp2(P["square"], lambda g, ans, x: mul(g, mul(_const(x, 2), x)))


def _digamma_jvp(g, x):
    from xjax._src.lax.special import polygamma  # the special functions build on this module

    return mul(g, polygamma(_const(x, 1), x))


ad.defjvp(P["digamma"], _digamma_jvp)


def _integer_pow_jvp(g, x, *, y):
    if y == 0:
        return _zeros(g)
    if y == 1:
        return g
    if y == 2:
        return mul(g, mul(_const(x, y), x))
    return mul(g, mul(_const(x, y), integer_pow(x, y - 1)))


ad.defjvp(P["integer_pow"], _integer_pow_jvp)


def _pow_jvp_lhs(g, ans, x, y):
    # lax.pow converts an integer exponent to x's dtype before binding, so y is floating here.
    dtype = dtypes.result_type(core.get_aval(x).dtype, core.get_aval(y).dtype)
    x, y = convert_element_type(x, dtype), convert_element_type(y, dtype)
    return mul(g, mul(y, pow(x, sub(y, _ones(y)))))


def _pow_jvp_rhs(g, ans, x, y):
    return convert_element_type(mul(g, mul(log(_replace_zero(x)), ans)), core.get_aval(y).dtype)


ad.defjvp2(P["pow"], _pow_jvp_lhs, _pow_jvp_rhs)

ad.defjvp2(P["max"], lambda g, ans, x, y: mul(g, _balanced_eq(x, ans, y)),
           lambda g, ans, x, y: mul(g, _balanced_eq(y, ans, x)))
ad.defjvp2(P["min"], lambda g, ans, x, y: mul(g, _balanced_eq(x, ans, y)),
           lambda g, ans, x, y: mul(g, _balanced_eq(y, ans, x)))
ad.defjvp(P["atan2"], lambda g, x, y: mul(g, div(y, add(square(x), square(y)))),
          lambda g, x, y: mul(g, div(neg(x), add(square(x), square(y)))))
ad.defjvp(P["rem"], lambda g, x, y: _maybe_broadcast(broadcast_shapes("rem", [core.get_aval(x).shape,
                                                                            core.get_aval(y).shape]), g),
          lambda g, x, y: mul(neg(g), mul(sign(div(x, y)), floor(abs(div(x, y))))))


def _ct_aval(x):
    return x.aval if ad.is_undefined(x) else core.get_aval(x)


def _add_jvp(primals, tangents):
    (x, y), (gx, gy) = primals, tangents
    ans = P["add"].bind(x, y)
    shape = core.get_aval(ans).shape
    if type(gx) is ad.Zero:
        return ans, _maybe_broadcast(shape, gy)
    if type(gy) is ad.Zero:
        return ans, _maybe_broadcast(shape, gx)
    return ans, add(gx, gy)


def _add_transpose(ct, x, y):
    if type(ct) is ad.Zero:
        return [None, None]
    return [ad.unbroadcast(ct, _ct_aval(x)), ad.unbroadcast(ct, _ct_aval(y))]


def _sub_jvp(primals, tangents):
    (x, y), (gx, gy) = primals, tangents
    ans = P["sub"].bind(x, y)
    shape = core.get_aval(ans).shape
    if type(gx) is ad.Zero:
        return ans, _maybe_broadcast(shape, neg(gy))
    if type(gy) is ad.Zero:
        return ans, _maybe_broadcast(shape, gx)
    return ans, sub(gx, gy)


def _sub_transpose(ct, x, y):
    if type(ct) is ad.Zero:
        return [None, None]
    return [ad.unbroadcast(ct, _ct_aval(x)), ad.unbroadcast(neg(ct), _ct_aval(y))]


def _mul_transpose(ct, x, y):
    if ad.is_undefined(x) and ad.is_undefined(y):
        raise ValueError("mul is linear in one operand only: both were linear in a transposed jaxpr")
    if type(ct) is ad.Zero:
        return [None, None]
    if ad.is_undefined(x):
        return [ad.unbroadcast(mul(ct, y), x.aval), None]
    return [None, ad.unbroadcast(mul(x, ct), y.aval)]


def _div_transpose(ct, x, y):
    if ad.is_undefined(y):
        raise ValueError("div is linear in its numerator only")
    if type(ct) is ad.Zero:
        return [None, None]
    return [ad.unbroadcast(div(ct, y), x.aval), None]


ad.deflinear(P["neg"], lambda ct, x: [neg(ct)])
ad.deflinear(P["copy"], lambda ct, x: [P["copy"].bind(ct)])
P["add"].def_rules(jvp=_add_jvp, transpose=_add_transpose)
P["sub"].def_rules(jvp=_sub_jvp, transpose=_sub_transpose)
ad.defjvp(P["mul"], lambda g, x, y: mul(g, y), lambda g, x, y: mul(x, g))
ad.defjvp(fma_p, lambda g, a, b, c: mul(g, b), lambda g, a, b, c: mul(a, g), lambda g, a, b, c: g)
ad.defjvp(P["div"], lambda g, x, y: div(g, y), lambda g, x, y: mul(mul(neg(g), x), integer_pow(y, -2)))
P["mul"].def_rules(transpose=_mul_transpose)
P["div"].def_rules(transpose=_div_transpose)


# add_any: the sum of two tangents or cotangents (what accumulation emits); prints as JAX's add_any.
add_any_p = define_primitive("add_any", _nary_eval("add_any", _ANY))
add_any_p.def_rules(lowering=broadcasting_lowering("add"))
ad.deflinear(add_any_p, _add_transpose)  # batching may leave an operand to broadcast


def _select_n_jvp(primals, tangents):
    which, *cases = primals
    ans = select_n_p.bind(which, *cases)
    case_tangents = tangents[1:]
    if all(type(t) is ad.Zero for t in case_tangents):
        return ans, ad.zero_tangent(ans)
    z = _zeros(next(t for t in case_tangents if type(t) is not ad.Zero))
    return ans, select_n(which, *[z if type(t) is ad.Zero else t for t in case_tangents])


def _select_n_transpose(ct, which, *cases):
    if ad.is_undefined(which):
        raise ValueError("select_n is not linear in its predicate")
    if type(ct) is ad.Zero:
        return [None] + [None] * len(cases)
    zeros = full_like(ct, 0)
    if core.get_aval(which).dtype == dtypes.bool_:
        ct0 = select(which, zeros, ct) if ad.is_undefined(cases[0]) else None
        ct1 = select(which, ct, zeros) if len(cases) > 1 and ad.is_undefined(cases[1]) else None
        return [None, ct0, ct1][:1 + len(cases)]
    return [None] + [select(eq(which, _const(which, i)), ct, zeros) if ad.is_undefined(c) else None
                     for i, c in enumerate(cases)]


select_n_p.def_rules(jvp=_select_n_jvp, transpose=_select_n_transpose)

def _bound_tangent(g, x):
    """A scalar bound's tangent at x's shape (JAX's select would refuse it)."""
    return _maybe_broadcast(core.get_aval(x).shape, g)


ad.defjvp(clamp_p,
          lambda g, lo, x, hi: select(bitwise_and(gt(lo, x), lt(lo, hi)), _bound_tangent(g, x), _zeros(x)),
          lambda g, lo, x, hi: select(bitwise_and(gt(x, lo), lt(x, hi)), g, _zeros(x)),
          lambda g, lo, x, hi: select(lt(hi, x), _bound_tangent(g, x), _zeros(x)))


def _convert_jvp(primals, tangents, *, new_dtype, weak_type=False, sharding=None):
    (x,), (g,) = primals, tangents
    ans = convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type, sharding=sharding)
    if not ad.is_differentiable(new_dtype) or type(g) is ad.Zero:
        return ans, ad.zero_tangent(ans)
    # _convert: a convert that changes nothing is no equation (JAX's jaxpr traces forward it).
    return ans, _convert(g, new_dtype, weak_type)


def _convert_transpose(ct, x, *, new_dtype, weak_type=False, sharding=None):
    if type(ct) is ad.Zero or not ad.is_differentiable(x.aval.dtype):
        return [None]
    return [_convert(ct, x.aval.dtype, x.aval.weak_type)]


convert_element_type_p.def_rules(jvp=_convert_jvp, transpose=_convert_transpose)


def _convert_const_fold(x, *, new_dtype, weak_type=False, sharding=None):
    """A converted scalar constant (a literal to be) is converted on the host, as JAX folds it."""
    if type(x) in (bool, int, float):  # an inline jit's Python scalar argument
        x = asarray(x)
    if type(x) is not Array or x.aval.shape or dtypes.is_float(x.aval.dtype) > dtypes.is_float(new_dtype):
        return None
    from xjax._src.backends import cpu

    return cpu.scalar(x._numpy().astype(new_dtype).item(), new_dtype, bool(weak_type))


convert_element_type_p.def_rules(const_fold=_convert_const_fold)


# ---- batching (vmap) -------------------------------------------------------------------------------

for _name in list(UNARY) + ["is_finite"]:
    batching.defvectorized(P[_name])
batching.defvectorized(convert_element_type_p)
for _name in list(BINARY) + list(COMPARE):
    batching.defbroadcasting(P[_name])
batching.defbroadcasting(add_any_p)
batching.defbroadcasting(fma_p)


def _bitcast_batch(axis, vals, dims, *, new_dtype):
    # A width change adds or drops a trailing axis: the batch axis goes in front, out of its way.
    (x,), (d,) = vals, dims
    return bitcast_convert_type_p.bind(batching.moveaxis(x, d, 0), new_dtype=new_dtype), 0


def _full_batched(v, d, size, shape):
    """v batched at axis 0 with per-example shape `shape` (rank-0 operands are broadcast to it)."""
    from xjax._src.lax import layout

    v = batching.bdim_at_front(v, d, size)
    if core.get_aval(v).ndim == 1 and shape:
        v = layout.broadcast_in_dim(v, (size,) + shape, (0,))
    return v


def _select_n_batch(axis, vals, dims):
    (which, *cases), (wd, *cds) = vals, dims
    size = batching.size_of(vals, dims)
    shape = batching.example_shape(cases[0], cds[0])
    cases = [_full_batched(c, d, size, shape) for c, d in zip(cases, cds)]
    if wd is batching.not_mapped and not core.get_aval(which).shape:
        return select_n_p.bind(which, *cases), 0
    return select_n_p.bind(_full_batched(which, wd, size, shape), *cases), 0


def _clamp_batch(axis, vals, dims):
    (lo, x, hi), (ld, xd, hd) = vals, dims
    size = batching.size_of(vals, dims)
    shape = batching.example_shape(x, xd)
    x = _full_batched(x, xd, size, shape)
    bounds = [b if d is batching.not_mapped and not core.get_aval(b).shape else _full_batched(b, d, size, shape)
              for b, d in ((lo, ld), (hi, hd))]
    return clamp_p.bind(bounds[0], x, bounds[1]), 0


bitcast_convert_type_p.def_rules(batch=_bitcast_batch)
select_n_p.def_rules(batch=_select_n_batch)
clamp_p.def_rules(batch=_clamp_batch)
