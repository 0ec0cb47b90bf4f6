"""jnp.pad: every mode NumPy and JAX define, each axis padded in turn on the array padded so far."""
import numpy as np

from xjax._src import lax
from xjax._src.numpy import reductions, statistics, util
from xjax._src.numpy.creation import linspace
from xjax._src.numpy.rearrange import flip, tile
from xjax._src.numpy.ufuncs import round as _round
from xjax._src.numpy.vectorize import apply_along_axis

# The keyword arguments each mode reads (JAX refuses the others).
_MODE_KWARGS = {
    "constant": ("constant_values",), "empty": (), "edge": (), "wrap": (), "linear_ramp": ("end_values",),
    "maximum": ("stat_length",), "minimum": ("stat_length",), "mean": ("stat_length",),
    "median": ("stat_length",), "reflect": ("reflect_type",), "symmetric": ("reflect_type",),
}
_STATISTICS = {"maximum": reductions.max, "minimum": reductions.min, "mean": reductions.mean,
               "median": statistics.median}


def pad(array, pad_width, mode="constant", **kwargs):
    """array padded by pad_width ((before, after) per axis) with the given mode: one of _MODE_KWARGS or
    a callable f(row, (before, after), axis, kwargs) -> row, applied to the rows of the zero-padded
    array along each axis in turn (JAX's form of NumPy's in-place convention)."""
    x = util.operand("pad", array)
    nd = x.aval.ndim
    pairs = _pad_pairs(pad_width, nd)
    if callable(mode):
        x = lax.pad(x, util.convert(0, x.aval.dtype), [(lo, hi, 0) for lo, hi in pairs])
        for ax in range(nd):
            x = apply_along_axis(mode, ax, x, pairs[ax], ax, kwargs)
        return x
    if mode not in _MODE_KWARGS:
        raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad.")
    unsupported = set(kwargs) - set(_MODE_KWARGS[mode])
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    if nd == 0:
        return x
    if mode in ("constant", "empty"):
        return _pad_constant(x, pairs, kwargs.get("constant_values", 0) if mode == "constant" else 0)
    if mode in ("reflect", "symmetric"):
        reflect_type = kwargs.get("reflect_type", "even")
        if reflect_type not in ("even", "odd"):
            raise ValueError(f"reflect_type must be 'even' or 'odd', got {reflect_type!r}")
    if mode in _STATISTICS:
        stat_length = kwargs.get("stat_length")
        lengths = None if stat_length is None else _pad_pairs(stat_length, nd, "stat_length")
        if lengths is not None and any(0 in pair for pair in lengths):
            raise ValueError("stat_length of 0 yields no value for padding")
    if mode == "linear_ramp":
        ends = _value_pairs(kwargs.get("end_values", 0), nd)
    for ax, (lo, hi) in enumerate(pairs):
        if x.aval.shape[ax] == 0 and (lo or hi):
            raise ValueError(f"can't extend empty axis {ax} using modes other than 'constant' or 'empty'")
        if not lo and not hi:
            continue
        if mode == "edge":
            x = _pad_axis_edge(x, ax, lo, hi)
        elif mode == "wrap":
            x = _pad_axis_wrap(x, ax, lo, hi)
        elif mode in ("reflect", "symmetric"):
            x = _pad_axis_reflect(x, ax, lo, hi, mode == "symmetric", reflect_type == "odd")
        elif mode == "linear_ramp":
            x = _pad_axis_ramp(x, ax, lo, hi, ends[ax])
        else:
            x = _pad_axis_stat(x, ax, lo, hi, _STATISTICS[mode], None if lengths is None else lengths[ax])
    return x


def _pad_pairs(pad_width, nd, what="pad_width"):
    if hasattr(pad_width, "aval"):
        pad_width = np.asarray(util.concrete_value(pad_width, f"jnp.pad {what} must be static"))
    arr = np.asarray(pad_width)
    if arr.dtype.kind not in "iu" and arr.size:
        if arr.dtype.kind == "f" and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        else:
            raise TypeError(f"`{what}` must be of integral type.")
    arr = np.broadcast_to(arr.astype(np.int64) if arr.size else np.zeros((nd, 2), np.int64), (nd, 2))
    if (arr < 0).any():
        raise ValueError(f"index can't contain negative values, got {pad_width}")
    return [(int(lo), int(hi)) for lo, hi in arr]


def _value_pairs(values, nd):
    if hasattr(values, "aval") and values.aval.ndim == 0:
        return [(values, values)] * nd
    arr = np.asarray(values, dtype=object) if not hasattr(values, "aval") else np.asarray(values)
    arr = np.broadcast_to(arr, (nd, 2))
    return [(arr[i, 0], arr[i, 1]) for i in range(nd)]


def _pad_constant(x, pairs, values):
    dt = x.aval.dtype
    if (hasattr(values, "aval") and values.aval.ndim == 0) or np.ndim(values) == 0:
        return lax.pad(x, util.convert(values, dt), [(lo, hi, 0) for lo, hi in pairs])
    for ax, ((lo, hi), (vlo, vhi)) in enumerate(zip(pairs, _value_pairs(values, x.aval.ndim))):
        cfg = [(0, 0, 0)] * x.aval.ndim
        cfg[ax] = (lo, 0, 0)
        x = lax.pad(x, util.convert(vlo, dt), cfg)
        cfg[ax] = (0, hi, 0)
        x = lax.pad(x, util.convert(vhi, dt), cfg)
    return x


def _beside(x, ax, before, after):
    """before ++ x ++ after along ax (None: nothing on that side)."""
    parts = [p for p in (before, x, after) if p is not None]
    return lax.concatenate(parts, ax) if len(parts) > 1 else x


def _repeated(row, ax, shape, count):
    """The one-wide `row` repeated count times along ax (None for none)."""
    if not count:
        return None
    s = list(shape)
    s[ax] = count
    return util.broadcast_to_shape(row, tuple(s))


def _pad_axis_edge(x, ax, lo, hi):
    n = x.aval.shape[ax]
    return _beside(x, ax, _repeated(lax.slice_in_dim(x, 0, 1, 1, ax), ax, x.aval.shape, lo),
                   _repeated(lax.slice_in_dim(x, n - 1, n, 1, ax), ax, x.aval.shape, hi))


def _pad_axis_wrap(x, ax, lo, hi):
    n = x.aval.shape[ax]
    reps_lo = -(-lo // n)
    reps_hi = -(-hi // n)
    reps = [1] * x.aval.ndim
    reps[ax] = reps_lo + 1 + reps_hi
    start = reps_lo * n - lo
    return lax.slice_in_dim(tile(x, reps), start, start + lo + n + hi, 1, ax)


def _pad_axis_reflect(x, ax, lo, hi, symmetric, odd):
    """Mirror images of x about its edges, a period at a time; an odd reflection also turns each image
    upside down about the edge value (2 * edge - image)."""
    n = x.aval.shape[ax]
    if n == 1 and not symmetric:
        return _pad_axis_edge(x, ax, lo, hi)
    period = n if symmetric else n - 1
    off = 0 if symmetric else 1
    while lo or hi:
        cur = x.aval.shape[ax]
        take_lo, take_hi = min(lo, period), min(hi, period)
        before = after = None
        if take_lo:
            before = lax.rev(lax.slice_in_dim(x, off, off + take_lo, 1, ax), (ax,))
            if odd:
                before = _upside_down(before, lax.slice_in_dim(x, 0, 1, 1, ax))
        if take_hi:
            after = lax.rev(lax.slice_in_dim(x, cur - off - take_hi, cur - off, 1, ax), (ax,))
            if odd:
                after = _upside_down(after, lax.slice_in_dim(x, cur - 1, cur, 1, ax))
        x = _beside(x, ax, before, after)
        lo -= take_lo
        hi -= take_hi
    return x


def _upside_down(image, edge):
    edge = util.broadcast_to_shape(edge, image.aval.shape)
    return lax.sub(lax.add(edge, edge), image)


def _pad_axis_ramp(x, ax, lo, hi, ends):
    """Linear ramps from the end values up to (not including) the edge values."""
    n, dt = x.aval.shape[ax], x.aval.dtype

    def ramp(end, edge, count):
        if not count:
            return None
        r = linspace(end, lax.squeeze(edge, (ax,)), count, endpoint=False, dtype=dt, axis=ax)
        return lax.elementwise._convert(r, dt, weak_type=x.aval.weak_type)

    before = ramp(ends[0], lax.slice_in_dim(x, 0, 1, 1, ax), lo)
    after = ramp(ends[1], lax.slice_in_dim(x, n - 1, n, 1, ax), hi)
    return _beside(x, ax, before, None if after is None else flip(after, ax))


def _pad_axis_stat(x, ax, lo, hi, stat, lengths):
    """A statistic of the whole axis, or of its first/last `lengths` values, repeated on each side."""
    n, dt = x.aval.shape[ax], x.aval.dtype

    def value(part):
        v = stat(part, ax, keepdims=True)
        if v.aval.dtype != dt:  # an integer array's mean or median, rounded to its type
            v = lax.convert_element_type(_round(v), dt)
        return v

    if lengths is None:
        v_lo = v_hi = value(x)
    else:
        v_lo = value(lax.slice_in_dim(x, 0, min(lengths[0], n), 1, ax))
        v_hi = value(lax.slice_in_dim(x, n - min(lengths[1], n), n, 1, ax))
    return _beside(x, ax, _repeated(v_lo, ax, x.aval.shape, lo), _repeated(v_hi, ax, x.aval.shape, hi))
