"""Order statistics and weighted means: quantile/percentile/median (and their nan-variants), average."""
import math

from xjax._src import dtypes, lax
from xjax._src.numpy import util
from xjax._src.numpy.reductions import _FLOATING, _isnan, _no_out, _strong, any, mean, sum
from xjax._src.numpy.take import take_along_axis

_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def _quantile(name, a, q, axis, method, keepdims, ignore_nan=False):
    if method not in _METHODS:
        raise ValueError(f"method can only be {', '.join(repr(m) for m in _METHODS)}, got {method!r}")
    x = util.operand(name, a)
    if dtypes.is_complex(x.aval.dtype):  # JAX's refusal
        raise ValueError("quantile does not support complex input, as the operation is poorly defined.")
    qv = util.operand(name, q)
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
    comp = dtypes.to_inexact_dtype(x.aval.dtype)
    xr = _strong(xr, comp)
    qv = _strong(qv, comp)
    srt = lax.sort(xr, dimension=len(kept_shape))
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
    qv = util.to_inexact(util.operand("percentile", q))
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
    x = util.operand("average", a)
    if weights is None:
        avg = mean(x, axis, keepdims=keepdims)
        shape = x.aval.shape
        axes = util.canonicalize_axes(axis, len(shape))
        cnt = util.full(avg.aval.shape, float(util.prod(shape[i] for i in axes)), avg.aval.dtype)
        return (avg, cnt) if returned else avg
    w = util.operand("average", weights)
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
