"""Reductions: sum, prod, max/min, all/any, mean/var/std, arg-reductions, cumulative ops, nan-variants,
median/quantile/percentile and average."""
import builtins
import math

import numpy as np

from xjax._src import dtypes, lax
from xjax._src.numpy import util
from xjax._src.numpy.creation import dtype_arg

_FLOATING = frozenset(dtypes.FLOATING)


def _operand(name, a):
    if getattr(a, "aval", None) is not None:
        return a
    util.check_arraylike(name, a)
    return util.asarray(a)


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
    x = _operand(name, a)
    shape = x.aval.shape
    axes = util.canonicalize_axes(axis, len(shape))
    dt = dtype_arg(dtype, name)
    if dt is None:
        dt = x.aval.dtype
        if kind in ("sum", "prod") and promote_integers:
            dt = _promoted_int(dt)
    x = _strong(x, dt)
    if where is not None:
        if initial is None and not has_identity:
            raise ValueError(f"reduction operation {name} does not have an identity, so to use a where mask one "
                             "has to specify 'initial'")
        w = util.broadcast_to_shape(_bool(util.asarray(where)), shape)
        x = lax.select(w, x, util.full(shape, _identity(kind, dt), dt))
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
        init = util.broadcast_to_shape(init, out.aval.shape) if init.aval.shape != out.aval.shape else init
        combine = {"sum": lax.add, "prod": lax.mul, "max": lax.max, "min": lax.min}[kind]
        out = combine(out, init)
    if keepdims:
        out = _keepdims(out, shape, axes)
    return out


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
    x = _bool(_operand(name, a))
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
        out = dt if dt in _FLOATING else dtypes.default_float_dtype()
    comp = out if out in _FLOATING else dtypes.default_float_dtype()
    if comp in (dtypes.float16, dtypes.bfloat16):
        comp = dtypes.float32
    return out, comp


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """Arithmetic mean over the given axes (floating result; the mean of nothing is NaN)."""
    _no_out(out, "mean")
    x = _operand("mean", a)
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


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    """Variance over the given axes, dividing by n - ddof."""
    _no_out(out, "var")
    if correction is not None:
        ddof = correction
    x = _operand("var", a)
    shape = x.aval.shape
    axes = util.canonicalize_axes(axis, len(shape))
    out_dt, comp = _inexact_dtype(x.aval.dtype, dtype, "var")
    xc = _strong(x, comp)
    mu = mean(xc, axes, keepdims=True, where=where)
    centered = lax.sub(xc, util.broadcast_to_shape(mu, shape))
    sq = lax.mul(centered, centered)
    total = _reduce("sum", "var", sq, axes, None, keepdims, None, where, promote_integers=False)
    if where is None:
        n = float(util.prod(shape[i] for i in axes))
        denom = util.full(total.aval.shape, n - ddof, comp)
    else:
        w = util.broadcast_to_shape(_bool(util.asarray(where)), shape)
        cnt = _reduce("sum", "var", lax.convert_element_type(w, comp), axes, None, keepdims, None, None,
                      promote_integers=False)
        denom = lax.sub(cnt, util.full(cnt.aval.shape, float(ddof), comp))
    # NumPy and JAX give NaN (or inf) where n - ddof <= 0: dividing by a non-positive count does so.
    zero = util.full(denom.aval.shape, 0.0, comp)
    denom = lax.select(lax.le(denom, zero), util.full(denom.aval.shape, math.nan, comp), denom)
    return _strong(lax.div(total, denom), out_dt)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    """Standard deviation over the given axes (sqrt of var)."""
    v = var(a, axis, dtype, out, ddof, keepdims, where=where, correction=correction)
    return lax.sqrt(v)


def _arg_reduce(name, prim, a, axis, keepdims):
    x = _operand(name, a)
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

def _cumulative(name, prim, a, axis, dtype, reverse=False):
    x = _operand(name, a)
    if axis is None:
        x = lax.reshape(x, (x.aval.size,))
        axis = 0
    ax = util.canonicalize_axis(axis, x.aval.ndim)
    dt = dtype_arg(dtype, name)
    if dt is None:
        dt = x.aval.dtype
        if dt == dtypes.bool_ and name not in ("cummax", "cummin"):
            dt = dtypes.default_int_dtype()
    x = _strong(x, dt)
    return prim(x, ax, reverse)


def cumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum along axis (flattened if None)."""
    _no_out(out, "cumsum")
    return _cumulative("cumsum", lax.cumsum, a, axis, dtype)


def cumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product along axis (flattened if None)."""
    _no_out(out, "cumprod")
    return _cumulative("cumprod", lax.cumprod, a, axis, dtype)


def _cumulative_with_initial(name, prim, x, axis, dtype, include_initial, identity):
    x = _operand(name, x)
    if axis is None:
        if x.aval.ndim > 1:
            raise ValueError(f"The input array has rank {x.aval.ndim}, however axis was not set to an explicit "
                             "value. The axis argument is only optional for one-dimensional arrays.")
        axis = 0
    if x.aval.ndim == 0:
        raise ValueError(f"The input must be non-scalar to take a cumulative {name.split('_')[1]}, however a "
                         "scalar value or scalar array was given.")
    out = _cumulative(name, prim, x, axis, dtype)
    if include_initial:
        ax = util.canonicalize_axis(axis, out.aval.ndim)
        cfg = [(0, 0, 0)] * out.aval.ndim
        cfg[ax] = (1, 0, 0)
        out = lax.pad(out, util.scalar(identity, out.aval.dtype, False), cfg)
    return out


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative sum (Array API): axis required for ndim > 1; include_initial prepends 0."""
    return _cumulative_with_initial("cumulative_sum", lax.cumsum, x, axis, dtype, include_initial, 0)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative product (Array API): axis required for ndim > 1; include_initial prepends 1."""
    return _cumulative_with_initial("cumulative_prod", lax.cumprod, x, axis, dtype, include_initial, 1)


def _nan_replace(x, value):
    if x.aval.dtype not in _FLOATING:
        return x
    return lax.select(lax.ne(x, x), util.full(x.aval.shape, value, x.aval.dtype), x)


def nancumsum(a, axis=None, dtype=None, out=None):
    """cumsum treating NaNs as zero."""
    _no_out(out, "nancumsum")
    return cumsum(_nan_replace(_operand("nancumsum", a), 0), axis, dtype)


def nancumprod(a, axis=None, dtype=None, out=None):
    """cumprod treating NaNs as one."""
    _no_out(out, "nancumprod")
    return cumprod(_nan_replace(_operand("nancumprod", a), 1), axis, dtype)


# ---- nan-ignoring reductions ----------------------------------------------------------------

def _isnan(x):
    if x.aval.dtype not in _FLOATING:
        return util.full(x.aval.shape, False, dtypes.bool_)
    return lax.ne(x, x)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """sum treating NaNs as zero."""
    _no_out(out, "nansum")
    return sum(_nan_replace(_operand("nansum", a), 0), axis, dtype, None, keepdims, initial, where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """prod treating NaNs as one."""
    _no_out(out, "nanprod")
    return prod(_nan_replace(_operand("nanprod", a), 1), axis, dtype, None, keepdims, initial, where)


def _nan_extreme(kind, a, axis, keepdims, initial, where):
    x = _operand("nan" + kind, a)
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
    x = _operand("nanmean", a)
    if x.aval.dtype not in _FLOATING:
        return mean(x, axis, dtype, None, keepdims, where=where)
    valid = lax.bitwise_not(_isnan(x))
    if where is not None:
        valid = lax.bitwise_and(valid, util.broadcast_to_shape(_bool(util.asarray(where)), x.aval.shape))
    return mean(x, axis, dtype, None, keepdims, where=valid)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None):
    """var of the non-NaN elements."""
    _no_out(out, "nanvar")
    x = _operand("nanvar", a)
    if x.aval.dtype not in _FLOATING:
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
    x = _operand("nanargmax", a)
    return argmax(_nan_replace(x, -math.inf), axis, out, keepdims)


def nanargmin(a, axis=None, out=None, keepdims=None):
    """argmin ignoring NaNs."""
    x = _operand("nanargmin", a)
    return argmin(_nan_replace(x, math.inf), axis, out, keepdims)


# ---- counting and ranges --------------------------------------------------------------------

def count_nonzero(a, axis=None, keepdims=False):
    """The number of nonzero elements along the axes (default int dtype)."""
    x = _bool(_operand("count_nonzero", a))
    return sum(x, axis, dtype=dtypes.default_int_dtype(), keepdims=keepdims)


def ptp(a, axis=None, out=None, keepdims=False):
    """max - min along the axes."""
    _no_out(out, "ptp")
    x = _operand("ptp", a)
    return lax.sub(max(x, axis, keepdims=keepdims), min(x, axis, keepdims=keepdims))


# ---- order statistics -----------------------------------------------------------------------

_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def _quantile(name, a, q, axis, method, keepdims, ignore_nan=False):
    if method not in _METHODS:
        raise ValueError(f"method can only be {', '.join(repr(m) for m in _METHODS)}, got {method!r}")
    x = _operand(name, a)
    qv = _operand(name, q)
    if qv.aval.ndim > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {qv.aval.shape}")
    shape = x.aval.shape
    nd = len(shape)
    if axis is None:
        axes = tuple(range(nd))
    else:
        axes = util.canonicalize_axes(axis, nd)
    kept = tuple(i for i in range(nd) if i not in axes)
    # Move the reduced axes last and merge them into one.
    xt = lax.transpose(x, kept + axes)
    kept_shape = tuple(shape[i] for i in kept)
    n = util.prod(shape[i] for i in axes)
    xr = lax.reshape(xt, kept_shape + (n,))
    comp = x.aval.dtype if x.aval.dtype in _FLOATING else dtypes.default_float_dtype()
    xr = _strong(xr, comp)
    qv = _strong(qv, comp)
    srt = lax.sort(xr, dimension=len(kept_shape))
    from xjax._src.numpy.indexing import take_along_axis

    if ignore_nan:
        counts = sum(lax.bitwise_not(_isnan(xr)), -1, dtype=comp)
        last = lax.sub(counts, util.full(counts.aval.shape, 1.0, comp))
    else:
        last = util.full(kept_shape, float(n - 1), comp)
    qshape = qv.aval.shape
    # positions: qshape + kept_shape
    out_shape = qshape + kept_shape
    qb = lax.broadcast_in_dim(qv, out_shape, tuple(range(len(qshape))))
    lastb = lax.broadcast_in_dim(last, out_shape, tuple(range(len(qshape), len(out_shape))))
    pos = lax.mul(qb, lastb)
    zero = util.full(out_shape, 0.0, comp)
    pos = lax.max(pos, zero)
    lo = lax.floor(pos)
    hi = lax.ceil(pos)
    if method == "lower":
        idx_lo = idx_hi = lo
    elif method == "higher":
        idx_lo = idx_hi = hi
    elif method == "nearest":
        idx_lo = idx_hi = lax.round(pos, lax.RoundingMethod.TO_NEAREST_EVEN)
    else:
        idx_lo, idx_hi = lo, hi
    it = dtypes.int32

    def gather_at(idx):
        # srt: kept_shape + (n,); idx: qshape + kept_shape -> values of idx's shape.
        ii = lax.convert_element_type(idx, it)
        nk = len(kept_shape)
        if qshape:
            ii = lax.transpose(ii, tuple(range(1, nk + 1)) + (0,))
        else:
            ii = lax.reshape(ii, kept_shape + (1,))
        vals = take_along_axis(srt, ii, -1, mode="clip")
        if qshape:
            return lax.transpose(vals, (nk,) + tuple(range(nk)))
        return lax.reshape(vals, kept_shape)

    v_lo = gather_at(idx_lo)
    if method in ("lower", "higher", "nearest"):
        res = v_lo
    else:
        v_hi = gather_at(idx_hi)
        if method == "midpoint":
            res = lax.mul(lax.add(v_lo, v_hi), util.full(out_shape, 0.5, comp))
        else:
            w = lax.sub(pos, lo)
            res = lax.add(v_lo, lax.mul(lax.sub(v_hi, v_lo), w))
    if not ignore_nan and comp in _FLOATING:
        anynan = any(_isnan(xr), -1)
        anynan = lax.broadcast_in_dim(anynan, out_shape, tuple(range(len(qshape), len(out_shape))))
        res = lax.select(anynan, util.full(out_shape, math.nan, comp), res)
    if keepdims:
        kshape = qshape + tuple(1 if i in axes else shape[i] for i in range(nd))
        res = lax.reshape(res, kshape)
    return res


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
             interpolation=None):
    """The q-th quantiles (q in [0, 1]) along the axes, by sorting."""
    _no_out(out, "quantile")
    return _quantile("quantile", a, q, axis, interpolation or method, keepdims)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                interpolation=None):
    """quantile ignoring NaNs."""
    _no_out(out, "nanquantile")
    return _quantile("nanquantile", a, q, axis, interpolation or method, keepdims, ignore_nan=True)


def _q100(q):
    qv = util.to_inexact(_operand("percentile", q))
    return lax.div(qv, util.full(qv.aval.shape, 100.0, qv.aval.dtype))


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
               interpolation=None):
    """The q-th percentiles (q in [0, 100]) along the axes."""
    _no_out(out, "percentile")
    return _quantile("percentile", a, _q100(q), axis, interpolation or method, keepdims)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                  interpolation=None):
    """percentile ignoring NaNs."""
    _no_out(out, "nanpercentile")
    return _quantile("nanpercentile", a, _q100(q), axis, interpolation or method, keepdims, ignore_nan=True)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median along the axes (the midpoint of the two middle values for even counts)."""
    _no_out(out, "median")
    return _quantile("median", a, 0.5, axis, "midpoint", keepdims)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """median ignoring NaNs."""
    _no_out(out, "nanmedian")
    return _quantile("nanmedian", a, 0.5, axis, "midpoint", keepdims, ignore_nan=True)


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """The weighted mean along the axes (weights 1-D along a single axis, or a's shape)."""
    x = _operand("average", a)
    if weights is None:
        avg = mean(x, axis, keepdims=keepdims)
        shape = x.aval.shape
        axes = util.canonicalize_axes(axis, len(shape))
        cnt = util.full(avg.aval.shape, float(util.prod(shape[i] for i in axes)), avg.aval.dtype)
        return (avg, cnt) if returned else avg
    w = _operand("average", weights)
    x, w = util.promote_dtypes_inexact(x, w)
    shape = x.aval.shape
    if w.aval.shape != shape:
        if axis is None:
            raise ValueError("Axis must be specified when shapes of a and weights differ.")
        if isinstance(axis, (tuple, list)):
            raise ValueError("Single axis expected when shapes of a and weights differ")
        ax = util.canonicalize_axis(axis, len(shape))
        if w.aval.ndim != 1:
            raise ValueError("1D weights expected when shapes of a and weights differ.")
        if w.aval.shape[0] != shape[ax]:
            raise ValueError("Length of weights not compatible with specified axis.")
        w = lax.broadcast_in_dim(w, shape, (ax,))
    x = _strong(x, x.aval.dtype)
    w = _strong(w, w.aval.dtype)
    wsum = sum(w, axis, keepdims=keepdims)
    avg = lax.div(sum(lax.mul(x, w), axis, keepdims=keepdims), wsum)
    return (avg, wsum) if returned else avg

