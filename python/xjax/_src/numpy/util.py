"""Shared helpers of xjax.numpy: operand conversion, dtype promotion, broadcasting and axes."""
import operator
import warnings

import numpy as np

from xjax import _core
from xjax._src import core, dtypes, lax, placement
from xjax._src.array import Array
from xjax._src.array import scalar as new_scalar  # (uncached; `scalar` below caches)

Tracer = core.Tracer
_PY_SCALARS = (bool, int, float, complex)
_ARRAY_TYPES = (Array, Tracer)
_ARRAYLIKE = (Array, Tracer, np.ndarray, np.generic, bool, int, float, complex)


def is_array(x):
    """True for xjax Arrays and tracers (values already in the runtime)."""
    return isinstance(x, _ARRAY_TYPES)


def is_arraylike(x):
    return isinstance(x, _ARRAYLIKE)


def check_arraylike(fun_name, *args):
    """JAX's check: jnp functions take arrays, scalars and objects with __jax_array__ (Flax's
    Variables), not lists or tuples."""
    for pos, a in enumerate(args):
        if not isinstance(a, _ARRAYLIKE) and getattr(a, "__jax_array__", None) is None:
            raise TypeError(f"{fun_name} requires ndarray or scalar arguments, got {type(a)} at position {pos}.")


def aval_of(x):
    """(shape, dtype, weak_type) as an aval, for arrays, tracers, NumPy values and Python scalars."""
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval
    return core.get_aval(x)


_INT_BOUNDS = {False: (-2**31, 2**31 - 1), True: (-2**63, 2**63 - 1)}


def _check_int_range(value):
    lo, hi = _INT_BOUNDS[dtypes.x64_enabled()]
    if not lo <= value <= hi:
        raise OverflowError(f"Python int {value} too large to convert to {dtypes.default_int_dtype().name}")


def _fits(value, dtype):
    info = dtypes.iinfo(dtype)
    return info.min <= value <= info.max


_DTYPE_NAMES = {d: d.name for d in dtypes.SUPPORTED}  # np.dtype.name is slow to compute


_SCALARS = {}  # (type, value, dtype, weak) -> 0-d Array: constants are immutable, so they are shared


def scalar(value, dtype, weak_type):
    """A 0-d array holding Python scalar `value` converted to `dtype` (ints wrap like NumPy's astype)."""
    t = type(value)
    # -0.0 and NaN are not told apart (or found) by dict keys: they are not cached.
    key = (t, value, dtype, weak_type) if t is not float or (value == value and value != 0.0) else None
    if key is not None:
        out = _SCALARS.get(key)
        if out is not None:
            return out
    if t is int:
        if not (dtype.kind in "iu" and _fits(value, dtype)):  # uint32's 2**32 - 1 is no default int
            _check_int_range(value)
    elif t is float and dtype.kind in "iub":
        return lax.convert_element_type(scalar(value, dtypes.default_float_dtype(), weak_type), dtype)
    out = Array(_core.Array.from_scalar(value, _DTYPE_NAMES[dtype]), core.ShapedArray((), dtype, weak_type))
    if key is not None:
        if len(_SCALARS) >= 1024:
            _SCALARS.clear()
        _SCALARS[key] = out
    return out


def asarray(x, dtype=None):
    """An operand for a primitive: arrays and tracers pass through, scalars and NumPy data are placed.

    With `dtype`, the value is converted (keeping Python scalars weakly typed).
    """
    if isinstance(x, _ARRAY_TYPES):
        if dtype is not None and x.aval.dtype != dtype:
            return lax.convert_element_type(x, dtype)
        return x
    t = type(x)
    if t in _PY_SCALARS:
        dt, weak = dtypes.dtype_and_weak(x)
        return scalar(x, dt if dtype is None else dtype, weak)
    if isinstance(x, (np.ndarray, np.generic)):
        if x.ndim == 0 and (x.dtype.kind in "biufc" or x.dtype == dtypes.bfloat16):
            dt = dtypes.canonicalize_dtype(x.dtype if dtype is None else dtype)
            return new_scalar(x.item(), dt, False)
        if x.dtype.kind not in "biufc" and x.dtype != dtypes.bfloat16 and x.dtype.kind != "V":
            raise TypeError(f"Value {x!r} with dtype {x.dtype} is not a valid JAX array type. "
                            "Only arrays of numeric types are supported by JAX.")
        return placement.host_array(x, dtype)
    # Objects that know how to become arrays (e.g. __jax_array__ or the array protocol).
    if hasattr(x, "__jax_array__"):
        return asarray(x.__jax_array__(), dtype)
    raise TypeError(f"Value {x!r} of type {type(x)} is not a valid JAX type")


# ---- promotion and broadcasting -------------------------------------------------------------

def _pair(x):
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval.dtype, aval.weak_type
    return dtypes.dtype_and_weak(x)


_SCALAR_PROMOTION = {}


def operand(name, a):
    """a as a jnp function's array operand: arrays and tracers pass through, other array-likes are
    checked (JAX's TypeError naming the function) and placed."""
    if getattr(a, "aval", None) is not None:
        return a
    check_arraylike(name, a)
    return asarray(a)


def scalar_promotion(dtype, weak, pytype):
    """(dtype, weak) of an array of (dtype, weak) combined with a Python scalar of type pytype (cached)."""
    key = (dtype, weak, pytype, dtypes.x64_enabled())
    out = _SCALAR_PROMOTION.get(key)
    if out is None:
        out = _SCALAR_PROMOTION[key] = dtypes._promote(key[3], ((dtype, weak), dtypes.dtype_and_weak(pytype(0))))
    return out


def result_dtype(*args):
    """(dtype, weak_type) that JAX's promotion gives for the arguments."""
    return dtypes._promote(dtypes.x64_enabled(), tuple(_pair(a) for a in args))


def convert(x, dtype, weak_type=False):
    """x (any array-like) as an operand of `dtype` (weakly typed if weak_type)."""
    if isinstance(x, _ARRAY_TYPES):
        aval = x.aval
        if aval.dtype == dtype and aval.weak_type == weak_type:
            return x
        return lax.elementwise._convert(x, dtype, weak_type)
    if type(x) in _PY_SCALARS:
        return scalar(x, dtype, weak_type)
    out = asarray(x)
    if out.aval.dtype != dtype:
        out = lax.elementwise._convert(out, dtype, weak_type)
    return out


def promote_dtypes(*args):
    """Converts the arguments to their common JAX dtype (shapes untouched)."""
    dtype, weak = result_dtype(*args)
    return [convert(a, dtype, weak) for a in args]


def promote_dtypes_inexact(*args):
    """Like promote_dtypes, but integer and bool results become floats (dtypes.to_inexact_dtype)."""
    dtype, weak = result_dtype(*args)
    dtype = dtypes.to_inexact_dtype(dtype)
    return [convert(a, dtype, weak) for a in args]


def to_inexact(x):
    """x converted to a floating dtype (dtypes.to_inexact_dtype of ints and bools), keeping weak types."""
    dtype, weak = _pair(x)
    return convert(x, dtypes.to_inexact_dtype(dtype), weak)


def to_default_float(x):
    """x converted to the default float type unless already floating, keeping weak types: what a few
    JAX functions (rint, angle, unwrap, polyint, vector_norm) do instead of to_inexact."""
    dtype, weak = _pair(x)
    keep = dtype in dtypes.FLOATING or dtypes.is_complex(dtype)
    return convert(x, dtype if keep else dtypes.default_float_dtype(), weak)


def broadcast_shapes(*shapes):
    """NumPy's broadcasting of shapes; ValueError as JAX words it."""
    shapes = [tuple(s) for s in shapes]
    if not shapes:
        return ()
    first = shapes[0]
    if all(s == first for s in shapes):
        return first
    nd = max(len(s) for s in shapes)
    out = []
    for i in range(nd):
        size = 1
        for s in shapes:
            k = i - (nd - len(s))
            if k < 0:
                continue
            d = s[k]
            if d == size or d == 1:
                continue
            if size == 1:
                size = d
            else:
                raise ValueError(f"Incompatible shapes for broadcasting: shapes={[s for s in shapes]}")
        out.append(size)
    return tuple(out)


def broadcast_to_shape(x, shape, sharding=None):
    """x (an operand) broadcast to `shape` with NumPy's rules; `sharding` that of the result's type."""
    xs = x.aval.shape
    if xs == shape:
        return x
    nd = len(shape)
    lead = nd - len(xs)
    if lead < 0 or any(d != 1 and d != shape[lead + i] for i, d in enumerate(xs)):
        dt = x.aval.dtype.name
        raise ValueError(f"Incompatible types for broadcasting: input type={dt}[{','.join(map(str, xs))}] and "
                         f"requested type={dt}[{','.join(map(str, shape))}]")
    return lax.broadcast_in_dim(x, shape, tuple(range(lead, nd)), out_sharding=sharding)


def broadcast_operands(fun_name, ops, implicit=False):
    """Operands (already runtime values) broadcast to their common shape.

    With implicit=True (for lax's binary elementwise ops, which broadcast rank-0 operands and
    size-1 dimensions themselves) only missing leading dimensions are added, by a broadcast_in_dim
    (JAX's rank promotion, lax.broadcast_to_rank).
    """
    shapes = [o.aval.shape for o in ops]
    s0 = shapes[0]
    if all(s == s0 for s in shapes):
        return ops
    try:
        shape = broadcast_shapes(*shapes)
    except ValueError:
        if len({len(s) for s in shapes}) > 1:  # JAX fails in its rank promotion then, with lax's ValueError
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={[tuple(s) for s in shapes]}") from None
        raise TypeError(f"{fun_name} got incompatible shapes for broadcasting: "
                        f"{', '.join(str(s) for s in shapes)}.") from None
    if not implicit:
        return [broadcast_to_shape(o, shape) for o in ops]
    nd = len(shape)
    out = []
    for o, s in zip(ops, shapes):
        if s and len(s) < nd:
            o = lax.broadcast_in_dim(o, (1,) * (nd - len(s)) + s, tuple(range(nd - len(s), nd)))
        out.append(o)
    return out


def promote_args(fun_name, *args, implicit=False):
    """check_arraylike + promote_dtypes + broadcasting: a ufunc's operands.

    implicit=True leaves rank-0 operands and size-1 dimensions to the lax binary op that follows.
    """
    check_arraylike(fun_name, *args)
    return broadcast_operands(fun_name, promote_dtypes(*args), implicit)


def promote_args_inexact(fun_name, *args, implicit=False):
    """Like promote_args, with integer/bool results promoted to the default float type."""
    check_arraylike(fun_name, *args)
    return broadcast_operands(fun_name, promote_dtypes_inexact(*args), implicit)


# ---- axes and shapes ------------------------------------------------------------------------

def canonicalize_axis(axis, ndim):
    """axis in [0, ndim); ValueError (NumPy's AxisError wording) if out of bounds."""
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"'{type(axis).__name__}' object cannot be interpreted as an integer") from None
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis + ndim if axis < 0 else axis


def canonicalize_axes(axis, ndim):
    """A tuple of canonical axes for axis = None (all), an int, or a sequence; duplicates are an error."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        out = tuple(canonicalize_axis(a, ndim) for a in axis)
        if len(set(out)) != len(out):
            raise ValueError(f"duplicate value in 'axis': {tuple(axis)}")
        return out
    return (canonicalize_axis(axis, ndim),)


def canonicalize_shape(shape, context="shape"):
    """A shape given as an int or a sequence of ints, as a tuple of Python ints."""
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        return (int(shape),)
    if isinstance(shape, (Array,)) and shape.ndim == 0:
        return (operator.index(shape),)
    try:
        return tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, got {shape}.") from None


def check_nonnegative_shape(shape, name):
    if any(d < 0 for d in shape):
        raise TypeError(f"{name} shape must have every element be nonnegative, got {shape}.")


def prod(xs):
    n = 1
    for d in xs:
        n *= d
    return n


def is_concrete(x):
    """True when x's value is known now (arrays, and tracers of concrete values such as eager grad's)."""
    return core.is_concrete(x)


def concrete_value(x, what):
    """x as a NumPy value (reading a computed Array); a clear error for values only known abstractly."""
    value = core.to_concrete_value(x)
    if value is None:
        raise core_concretization_error(what, x)
    return np.asarray(value)


class ConcretizationTypeError(TypeError):
    """A traced value was used where a concrete one is needed (as JAX's error of the same name)."""


def core_concretization_error(what, x):
    return ConcretizationTypeError(
        f"Abstract tracer value encountered where concrete value is expected: {x}\n{what}")


def full(shape, value, dtype, weak_type=False, sharding=None):
    """An array of `shape` filled with Python scalar `value` (a 0-d scalar broadcast); `sharding` that of
    its type (as the type of the array it is like)."""
    s = scalar(value, dtype, weak_type)
    shape = tuple(shape)
    return lax.broadcast_in_dim(s, shape, (), out_sharding=sharding) if shape or sharding is not None else s


_X64_NAMES = ("int64", "uint64", "float64")


def dtype_arg(dtype, fun_name):
    """A user's dtype= argument as a canonical dtype (None stays None); warns when x64 narrows it."""
    if dtype is None:
        return None
    dt = dtypes.check_user_dtype(dtype)
    if not dtypes.x64_enabled():
        want = np.dtype(dtype) if dtype not in (int, float, bool) else dt
        if want.name in _X64_NAMES and dt != want:
            warnings.warn(
                f"Explicitly requested dtype {want.name} requested in {fun_name} is not available, and will be "
                f"truncated to dtype {dt.name}. To enable more dtypes, set the jax_enable_x64 configuration "
                "option or the JAX_ENABLE_X64 shell environment variable. See "
                "https://github.com/jax-ml/jax#current-gotchas for more.", UserWarning, stacklevel=3)
    return dt
