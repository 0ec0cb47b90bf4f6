"""Reductions: sum, prod, max/min, all/any, mean/var/std, arg-reductions, cumulative ops, nan-variants."""
import builtins
import math

import numpy as np

from xjax._src import dtypes, lax
from xjax._src.jit import jit
from xjax._src.numpy import util
from xjax._src.numpy.manipulation import broadcast_to
from xjax._src.numpy.ufuncs import where as _where
from xjax._src.numpy.util import dtype_arg

_FLOATING = frozenset(dtypes.FLOATING)
_INEXACT = frozenset(dtypes.FLOATING + dtypes.COMPLEX)  # the dtypes that hold NaN


def _strong(x, dtype):
    """x as `dtype`, never weakly typed (reductions return strong types, as in JAX)."""
    aval = x.aval
    if aval.dtype == dtype and not aval.weak_type:
        return x
    return lax.elementwise._convert(x, dtype, weak_type=False)


def _keepdims(out, shape, axes):
    return lax.reshape(out, tuple(1 if i in axes else d for i, d in enumerate(shape)))


def _promoted_int(dt):
    """The accumulation dtype of sum/prod: narrow ints and bools widen to the default int."""
    if dt == dtypes.bool_:
        return dtypes.default_int_dtype()
    if dt.kind == "i" and dt.itemsize < dtypes.default_int_dtype().itemsize:
        return dtypes.default_int_dtype()
    if dt.kind == "u" and dt.itemsize < dtypes.default_uint_dtype().itemsize:
        return dtypes.default_uint_dtype()
    return dt


def _identity(kind, dt):
    if kind == "sum":
        return 0
    if kind == "prod":
        return 1
    if dt == dtypes.bool_:
        return kind == "min"
    if dt in _FLOATING:
        return -math.inf if kind == "max" else math.inf
    info = np.iinfo(dt)
    return int(info.min) if kind == "max" else int(info.max)


_PRIMS = {"sum": "reduce_sum", "prod": "reduce_prod", "max": "reduce_max", "min": "reduce_min"}


def _reduce(kind, name, a, axis, dtype, keepdims, initial, where, promote_integers=True, has_identity=True):
    """JAX's jnp reduction: in the computation dtype (sum and prod of 16-bit floats in float32, when no
    dtype is asked for), masked by where, combined with initial (initial first), expanded for keepdims,
    then converted to the result dtype."""
    x = util.operand(name, a)
    shape = x.aval.shape
    axes = util.canonicalize_axes(axis, len(shape))
    dt = dtype_arg(dtype, name)
    result_dt = dt
    if dt is None:
        dt = x.aval.dtype
        if kind in ("sum", "prod") and promote_integers:
            dt = _promoted_int(dt)
        elif kind in ("sum", "prod") and dt == dtypes.bool_:
            dt = dtypes.int32  # JAX casts bools to int32 (not the default int) before summing
        result_dt = dt
        if kind in ("sum", "prod") and dt in (dtypes.float16, dtypes.bfloat16):
            dt = dtypes.float32
    x = _strong(x, dt)
    if where is not None:
        if initial is None and not has_identity:
            raise ValueError(f"reduction operation {name} does not have an identity, so to use a where mask one "
                             "has to specify 'initial'")
        x = _where(where, x, np.array(_identity(kind, dt), dt))
    if not has_identity and initial is None and builtins.any(shape[i] == 0 for i in axes):
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
    if dt == dtypes.bool_ and kind in ("max", "min"):
        out = (lax.reduce_or if kind == "max" else lax.reduce_and)(x, axes)
    elif dt == dtypes.bool_ and kind == "sum":
        out = lax.reduce_or(x, axes)
    elif dt == dtypes.bool_ and kind == "prod":
        out = lax.reduce_and(x, axes)
    else:
        out = getattr(lax, _PRIMS[kind])(x, axes)
    if initial is not None:
        init = util.convert(initial, dt)
        if init.aval.shape:
            raise ValueError(f"initial value must be a scalar. Got array of shape {init.aval.shape}")
        combine = {"sum": lax.add, "prod": lax.mul, "max": lax.max, "min": lax.min}[kind]
        out = combine(init, out)
    if keepdims:
        out = lax.expand_dims(out, axes)
    return _strong(out, result_dt)


def _bool(x):
    if x.aval.dtype == dtypes.bool_:
        return x
    return lax.ne(x, util.full(x.aval.shape, 0, x.aval.dtype))


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,  # noqa: A001
        promote_integers=True):
    """Sum over the given axes (bools and narrow ints accumulate in the default int type)."""
    _no_out(out, "sum")
    return _reduce("sum", "sum", a, axis, dtype, keepdims, initial, where, promote_integers)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None, promote_integers=True):
    """Product over the given axes."""
    _no_out(out, "prod")
    return _reduce("prod", "prod", a, axis, dtype, keepdims, initial, where, promote_integers)


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """Maximum over the given axes (NaN propagates)."""
    _no_out(out, "max")
    return _reduce("max", "max", a, axis, None, keepdims, initial, where, has_identity=False)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """Minimum over the given axes (NaN propagates)."""
    _no_out(out, "min")
    return _reduce("min", "min", a, axis, None, keepdims, initial, where, has_identity=False)


amax = max
amin = min


def _no_out(out, name):
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")


def _logical_reduce(name, a, axis, keepdims, where, prim, identity):
    x = _bool(util.operand(name, a))
    shape = x.aval.shape
    axes = util.canonicalize_axes(axis, len(shape))
    if where is not None:
        w = util.broadcast_to_shape(_bool(util.asarray(where)), shape)
        x = lax.select(w, x, util.full(shape, identity, dtypes.bool_))
    out = prim(x, axes)
    return _keepdims(out, shape, axes) if keepdims else out


def all(a, axis=None, out=None, keepdims=False, *, where=None):  # noqa: A001
    """True where every element along the axes is nonzero."""
    _no_out(out, "all")
    return _logical_reduce("all", a, axis, keepdims, where, lax.reduce_and, True)


def any(a, axis=None, out=None, keepdims=False, *, where=None):  # noqa: A001
    """True where some element along the axes is nonzero."""
    _no_out(out, "any")
    return _logical_reduce("any", a, axis, keepdims, where, lax.reduce_or, False)


def _count(shape, axes, where):
    """The number of elements reduced (an int), or an array counting `where`."""
    if where is None:
        return util.prod(shape[i] for i in axes)
    return None


def _inexact_dtype(dt, dtype, name):
    """(result dtype, computation dtype) of mean/var: floats, with 16-bit floats computed in float32."""
    out = dtype_arg(dtype, name)
    if out is None:
        out = dtypes.to_inexact_dtype(dt)
    comp = dtypes.to_inexact_dtype(out)
    if comp in (dtypes.float16, dtypes.bfloat16):
        comp = dtypes.float32
    return out, comp


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """Arithmetic mean over the given axes (floating result; the mean of nothing is NaN)."""
    _no_out(out, "mean")
    x = util.operand("mean", a)
    shape = x.aval.shape
    axes = util.canonicalize_axes(axis, len(shape))
    out_dt, comp = _inexact_dtype(x.aval.dtype, dtype, "mean")
    xc = _strong(x, comp)
    total = _reduce("sum", "mean", xc, axes, None, keepdims, None, where, promote_integers=False)
    if where is None:
        n = util.scalar(float(util.prod(shape[i] for i in axes)), comp, False)
    else:
        w = util.broadcast_to_shape(_bool(util.asarray(where)), shape)
        n = _reduce("sum", "mean", lax.convert_element_type(w, comp), axes, None, keepdims, None, None,
                    promote_integers=False)
    res = lax.div(total, n)
    return _strong(res, out_dt)


def _static_axes(axis):
    return tuple(axis) if isinstance(axis, list) else axis


def _jit_once(fun, **jit_kwargs):
    """fun jitted on first use (jit imports this module)."""
    cache = []

    def call(*args, **kwargs):
        if not cache:
            cache.append(jit(fun, **jit_kwargs))
        return cache[0](*args, **kwargs)

    return call


def _var_types(a_dtype, dtype):
    """(computation dtype, result dtype) of var: floats, 16-bit floats computed in float32 (JAX's)."""
    if dtype is not None:
        comp = dtype
    else:
        dtype = comp = a_dtype if a_dtype in _INEXACT else dtypes.to_inexact_dtype(a_dtype)
    if comp in (dtypes.float16, dtypes.bfloat16):
        comp = dtypes.float32
    if dtypes.is_complex(dtype):  # the variance of complex numbers is real (JAX's)
        dtype = dtypes.complex_part_dtype(dtype)
    return comp, dtype


def _var(a, *, axis=None, dtype=None, correction=0, keepdims=False, where=None, a_mean=None):
    comp, dtype = _var_types(a.aval.dtype, dtype)
    a = lax.convert_element_type(a, comp)
    if a_mean is None:
        a_mean = mean(a, axis, dtype=comp, keepdims=True, where=where)
    else:
        a_mean = lax.convert_element_type(util.asarray(a_mean), comp)
    centered = lax.sub(a, a_mean)
    if dtypes.is_complex(comp):  # |x - mean|^2, real
        centered = lax.add(lax.square(lax.real(centered)), lax.square(lax.imag(centered)))
        comp = dtypes.complex_part_dtype(comp)
    else:
        centered = lax.square(centered)
    axes = util.canonicalize_axes(axis, a.aval.ndim)
    if where is None:
        normalizer = lax.convert_element_type(util.prod(a.aval.shape[i] for i in axes), comp)
    else:
        normalizer = sum(broadcast_to(where, a.aval.shape), axis, dtype=comp, keepdims=keepdims)
    normalizer = lax.sub(normalizer, lax.convert_element_type(correction, comp))
    result = sum(centered, axis, dtype=comp, keepdims=keepdims, where=where)
    result = _strong(lax.div(result, normalizer), dtype)
    return _where(lax.gt(normalizer, _zero_like(normalizer)), result, math.nan)


def _zero_like(x):
    return util.scalar(0, x.aval.dtype, x.aval.weak_type)


_var_jit = _jit_once(_var, static_argnames=("axis", "dtype", "keepdims"))


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None, correction=None):
    """Variance over the given axes, dividing by n - correction (ddof); NaN where that is not positive.
    As JAX's: a jit named _var (static axis, dtype, keepdims; the correction an operand)."""
    _no_out(out, "var")
    if correction is None:
        correction = ddof
    elif not isinstance(ddof, int) or ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    x = util.operand("var", a)
    dt = dtype_arg(dtype, "var")
    return _var_jit(x, axis=_static_axes(axis), dtype=dt, correction=correction, keepdims=bool(keepdims),
                    where=where, a_mean=mean)


def _std(a, *, axis=None, dtype=None, correction=0, keepdims=False, where=None, mean=None):
    return lax.sqrt(var(a, axis=axis, dtype=dtype, correction=correction, keepdims=keepdims, where=where,
                        mean=mean))


_std_jit = _jit_once(_std, static_argnames=("axis", "dtype", "keepdims"))


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None, correction=None):
    """Standard deviation over the given axes (sqrt of var); a jit named _std, as JAX's."""
    _no_out(out, "std")
    if correction is None:
        correction = ddof
    elif not isinstance(ddof, int) or ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    x = util.operand("std", a)
    dt = dtype_arg(dtype, "std")
    if dt is not None and dt not in _FLOATING:
        raise ValueError(f"dtype argument to jnp.std must be inexact; got {dt}")
    return _std_jit(x, axis=_static_axes(axis), dtype=dt, correction=correction, keepdims=bool(keepdims),
                    where=where, mean=mean)


def _arg_reduce(name, prim, a, axis, keepdims):
    x = util.operand(name, a)
    shape = x.aval.shape
    if axis is None:
        if x.aval.size == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        flat = lax.reshape(x, (x.aval.size,))
        out = prim(flat, 0, dtypes.default_int_dtype())
        if keepdims:
            out = lax.reshape(out, (1,) * len(shape))
        return out
    ax = util.canonicalize_axis(axis, len(shape))
    if shape[ax] == 0:
        raise ValueError(f"attempt to get {name} of an empty sequence")
    out = prim(x, ax, dtypes.default_int_dtype())
    return _keepdims(out, shape, (ax,)) if keepdims else out


def argmax(a, axis=None, out=None, keepdims=None):
    """Index of the first maximum (the first NaN, if any) along axis (flattened if None)."""
    _no_out(out, "argmax")
    return _arg_reduce("argmax", lax.argmax, a, axis, bool(keepdims))


def argmin(a, axis=None, out=None, keepdims=None):
    """Index of the first minimum (the first NaN, if any) along axis (flattened if None)."""
    _no_out(out, "argmin")
    return _arg_reduce("argmin", lax.argmin, a, axis, bool(keepdims))


# ---- cumulative -----------------------------------------------------------------------------

def _cumulative(name, prim, a, axis, dtype, promote_integers=False):
    x = util.operand(name, a)
    if axis is None:
        x = lax.reshape(x, (x.aval.size,))
        axis = 0
    ax = util.canonicalize_axis(axis, x.aval.ndim)
    dt = dtype_arg(dtype, name)
    if dt is None:
        dt = x.aval.dtype
        if promote_integers:
            dt = _promoted_int(dt)
        elif dt == dtypes.bool_ and name not in ("cummax", "cummin"):
            dt = dtypes.default_int_dtype()
    x = _strong(x, dt)
    return prim(x, ax, False)


def _jitted_cumulative(name, prim):
    """jnp.<name>: as in JAX, a jit (static axis and dtype) named after the function."""
    jitted = []

    def impl(a, axis=None, dtype=None):
        return _cumulative(name, prim, a, axis, dtype)

    impl.__name__ = impl.__qualname__ = name

    def fn(a, axis=None, dtype=None, out=None):
        _no_out(out, name)
        if not jitted:
            jitted.append(jit(impl, static_argnames=("axis", "dtype")))
        util.operand(name, a)
        return jitted[0](a, axis=axis, dtype=dtype)

    fn.__name__ = fn.__qualname__ = name
    return fn


cumsum = _jitted_cumulative("cumsum", lax.cumsum)
cumsum.__doc__ = "Cumulative sum along axis (flattened if None)."
cumprod = _jitted_cumulative("cumprod", lax.cumprod)
cumprod.__doc__ = "Cumulative product along axis (flattened if None)."


def _cumulative_with_initial(name, prim, x, axis, dtype, include_initial, identity, promote_integers=False):
    x = util.operand(name, x)
    if axis is None:
        if x.aval.ndim > 1:
            raise ValueError(f"The input array has rank {x.aval.ndim}, however axis was not set to an explicit "
                             "value. The axis argument is only optional for one-dimensional arrays.")
        axis = 0
    if x.aval.ndim == 0:
        raise ValueError(f"The input must be non-scalar to take a cumulative {name.split('_')[1]}, however a "
                         "scalar value or scalar array was given.")
    out = _cumulative(name, prim, x, axis, dtype, promote_integers)
    if include_initial:
        ax = util.canonicalize_axis(axis, out.aval.ndim)
        cfg = [(0, 0, 0)] * out.aval.ndim
        cfg[ax] = (1, 0, 0)
        out = lax.pad(out, util.scalar(identity, out.aval.dtype, False), cfg)
    return out


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative sum (Array API): axis required for ndim > 1; include_initial prepends 0; narrow ints
    accumulate in the default int type, as sum does (unlike cumsum and cumulative_prod, as in JAX)."""
    return _cumulative_with_initial("cumulative_sum", lax.cumsum, x, axis, dtype, include_initial, 0,
                                    promote_integers=True)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative product (Array API): axis required for ndim > 1; include_initial prepends 1."""
    return _cumulative_with_initial("cumulative_prod", lax.cumprod, x, axis, dtype, include_initial, 1)


def _nan_replace(x, value):
    if x.aval.dtype not in _INEXACT:
        return x
    return lax.select(lax.ne(x, x), util.full(x.aval.shape, value, x.aval.dtype), x)


def nancumsum(a, axis=None, dtype=None, out=None):
    """cumsum treating NaNs as zero."""
    _no_out(out, "nancumsum")
    return cumsum(_nan_replace(util.operand("nancumsum", a), 0), axis, dtype)


def nancumprod(a, axis=None, dtype=None, out=None):
    """cumprod treating NaNs as one."""
    _no_out(out, "nancumprod")
    return cumprod(_nan_replace(util.operand("nancumprod", a), 1), axis, dtype)


# ---- nan-ignoring reductions ----------------------------------------------------------------

def _isnan(x):
    if x.aval.dtype not in _INEXACT:
        return util.full(x.aval.shape, False, dtypes.bool_)
    return lax.ne(x, x)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """sum treating NaNs as zero."""
    _no_out(out, "nansum")
    return sum(_nan_replace(util.operand("nansum", a), 0), axis, dtype, None, keepdims, initial, where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """prod treating NaNs as one."""
    _no_out(out, "nanprod")
    return prod(_nan_replace(util.operand("nanprod", a), 1), axis, dtype, None, keepdims, initial, where)


def _nan_extreme(kind, a, axis, keepdims, initial, where):
    x = util.operand("nan" + kind, a)
    if x.aval.dtype not in _FLOATING:
        return (max if kind == "max" else min)(x, axis, None, keepdims, initial, where)
    fill = -math.inf if kind == "max" else math.inf
    res = (max if kind == "max" else min)(_nan_replace(x, fill), axis, None, keepdims, initial, where)
    allnan = all(_isnan(x), axis, keepdims=keepdims)
    return lax.select(allnan, util.full(res.aval.shape, math.nan, res.aval.dtype), res)


def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """max ignoring NaNs (NaN where a slice is all NaN)."""
    _no_out(out, "nanmax")
    return _nan_extreme("max", a, axis, keepdims, initial, where)


def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """min ignoring NaNs (NaN where a slice is all NaN)."""
    _no_out(out, "nanmin")
    return _nan_extreme("min", a, axis, keepdims, initial, where)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    """mean of the non-NaN elements."""
    _no_out(out, "nanmean")
    x = util.operand("nanmean", a)
    if x.aval.dtype not in _INEXACT:
        return mean(x, axis, dtype, None, keepdims, where=where)
    valid = lax.bitwise_not(_isnan(x))
    if where is not None:
        valid = lax.bitwise_and(valid, util.broadcast_to_shape(_bool(util.asarray(where)), x.aval.shape))
    return mean(x, axis, dtype, None, keepdims, where=valid)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None):
    """var of the non-NaN elements."""
    _no_out(out, "nanvar")
    x = util.operand("nanvar", a)
    if x.aval.dtype not in _INEXACT:
        return var(x, axis, dtype, None, ddof, keepdims, where=where)
    valid = lax.bitwise_not(_isnan(x))
    if where is not None:
        valid = lax.bitwise_and(valid, util.broadcast_to_shape(_bool(util.asarray(where)), x.aval.shape))
    return var(x, axis, dtype, None, ddof, keepdims, where=valid)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None):
    """std of the non-NaN elements."""
    return lax.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where))


def nanargmax(a, axis=None, out=None, keepdims=None):
    """argmax ignoring NaNs."""
    x = util.operand("nanargmax", a)
    return argmax(_nan_replace(x, -math.inf), axis, out, keepdims)


def nanargmin(a, axis=None, out=None, keepdims=None):
    """argmin ignoring NaNs."""
    x = util.operand("nanargmin", a)
    return argmin(_nan_replace(x, math.inf), axis, out, keepdims)


# ---- counting and ranges --------------------------------------------------------------------

def count_nonzero(a, axis=None, keepdims=False):
    """The number of nonzero elements along the axes (default int dtype)."""
    x = _bool(util.operand("count_nonzero", a))
    return sum(x, axis, dtype=dtypes.default_int_dtype(), keepdims=keepdims)


def ptp(a, axis=None, out=None, keepdims=False):
    """max - min along the axes."""
    _no_out(out, "ptp")
    x = util.operand("ptp", a)
    return lax.sub(max(x, axis, keepdims=keepdims), min(x, axis, keepdims=keepdims))
