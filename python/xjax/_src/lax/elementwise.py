"""Elementwise primitives: unary, binary, select_n, clamp, convert_element_type, bitcast_convert_type,
iota, add_any; their lax functions and constants (their transformation rules: elementwise_rules.py)."""
import warnings

import numpy as np

from xjax._src import core, dtypes
from xjax._src.array import Array
from xjax._src.backends import cpu
from xjax._src.lax.base import asarray, define_primitive, scalars_like
# (underscored: lax star-exports this module)
from xjax._src.lax.sharding_ops import bind_with_out_sharding as _bind_with_out_sharding
from xjax._src.lax.sharding_ops import out_sharding_of as _out_sharding_of

# Which dtypes each op accepts (JAX's error says "Accepted dtypes are subtypes of ...").
_FLOAT, _INEXACT, _INT, _NUM, _INT_BOOL, _ANY = ("floating", "inexact", "integer", "number", "integer or bool",
                                                  "any")


def _accepts(kind, dtype):
    if kind == _ANY:
        return True
    if kind == _FLOAT:
        return dtypes.is_float(dtype)
    if kind == _INEXACT:
        return dtypes.is_float(dtype) or dtypes.is_complex(dtype)
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
        if name == "abs" and dtypes.is_complex(x.dtype):  # |z| is real
            return core.ShapedArray(x.shape, dtypes.complex_part_dtype(x.dtype), x.weak_type)
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
    "neg": _NUM, "sign": _NUM, "floor": _FLOAT, "ceil": _FLOAT, "round": _FLOAT, "exp": _INEXACT,
    "exp2": _INEXACT, "log": _INEXACT, "log1p": _INEXACT, "expm1": _INEXACT, "tanh": _INEXACT, "logistic": _INEXACT,
    "sin": _INEXACT, "cos": _INEXACT, "tan": _INEXACT, "asin": _INEXACT, "acos": _INEXACT, "atan": _INEXACT,
    "sinh": _INEXACT, "cosh": _INEXACT, "asinh": _INEXACT, "acosh": _INEXACT, "atanh": _INEXACT, "sqrt": _INEXACT,
    "rsqrt": _INEXACT, "cbrt": _FLOAT, "abs": _NUM, "not": _INT_BOOL, "erf": _FLOAT, "erfc": _FLOAT,
    "erf_inv": _FLOAT, "lgamma": _FLOAT, "digamma": _FLOAT, "integer_pow": _NUM, "square": _NUM,
    "population_count": _INT, "clz": _INT, "copy": _ANY,
}
BINARY = {
    "add": _ANY, "sub": _NUM, "mul": _ANY, "div": _NUM, "rem": _NUM, "pow": _NUM, "max": _ANY, "min": _ANY,
    "atan2": _INEXACT, "nextafter": _FLOAT, "and": _INT_BOOL, "or": _INT_BOOL, "xor": _INT_BOOL,
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
iota_p.def_rules(sharding=lambda *, sharding=None, **_: sharding)




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
    if dtypes.is_complex(aval.dtype) and not dtypes.is_complex(new_dtype):
        warnings.warn("Casting complex values to real discards the imaginary part", np.exceptions.ComplexWarning,
                      stacklevel=2)
    weak_type = bool(weak_type)
    if aval.dtype == new_dtype and aval.weak_type == weak_type:
        return x
    if type(x) is Array:
        if aval.dtype == new_dtype:
            return Array(x._value, aval.update(weak_type=weak_type))
        if aval.weak_type and not aval.shape and not weak_type:
            v = x._numpy()
            if dtypes.is_float(new_dtype) or not dtypes.is_float(aval.dtype) or np.isfinite(v):
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


def broadcasted_iota(dtype, shape, dimension, *, out_sharding=None):
    """An array of `shape` whose value is the index along `dimension`; out_sharding: the sharding of its
    type, as JAX's."""
    shape = tuple(int(d) for d in shape)
    typed = _out_sharding_of(out_sharding, len(shape), "broadcasted_iota", ())
    return _bind_with_out_sharding(iota_p, (), out_sharding, typed, "sharding", dtype=dtypes.canonicalize_dtype(dtype),
                                   shape=shape, dimension=int(dimension))


# ---- jaxpr printing: the params JAX shows ---------------------------------------------------
from xjax._src.jaxpr import params_printer as _params_printer  # noqa: E402

convert_element_type_p.pp_params = _params_printer(drop=("sharding",))


# ---- constants and fills --------------------------------------------------------------------
# Constants made as JAX makes them (`_const`, and elementwise_rules' `_one`, `_zeros`, ...: weakly
# typed exactly when their example is), which decides the weak types of derivatives.
from xjax._src.interpreters import ad  # noqa: E402


def _py_scalar_of(dtype, val):
    if dtype == dtypes.bool_:
        return bool(val)
    if dtypes.is_int(dtype):
        return int(val)
    if dtypes.is_complex(dtype):
        return complex(val)
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
    typed = sharding if sharding is not None else getattr(aval, "_sharding", None) if shape is None else None
    if dtype is not None:
        aval = aval.update(dtype=dtypes.canonicalize_dtype(dtype), weak_type=False)
    aval = aval if shape is None else aval.update(shape=tuple(shape))
    return ad.full_like_aval(aval if typed is None else aval.with_sharding(typed), fill_value)


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


# add_any: the sum of two tangents or cotangents (what accumulation emits); prints as JAX's add_any.
add_any_p = define_primitive("add_any", _nary_eval("add_any", _ANY))
add_any_p.def_rules(lowering=broadcasting_lowering("add"))


def _convert_const_fold(x, *, new_dtype, weak_type=False, sharding=None):
    """A converted scalar constant (a literal to be) is converted on the host, as JAX folds it."""
    if type(x) in (bool, int, float):  # an inline jit's Python scalar argument
        x = asarray(x)
    if type(x) is not Array or x.aval.shape or dtypes.is_float(x.aval.dtype) > dtypes.is_float(new_dtype):
        return None
    return cpu.scalar(x._numpy().astype(new_dtype).item(), new_dtype, bool(weak_type))


convert_element_type_p.def_rules(const_fold=_convert_const_fold)
