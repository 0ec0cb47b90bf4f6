"""Shape manipulation: reshape, transpose, squeeze/expand, broadcasting, joining and splitting, tile,
repeat, flip, roll, rot90, pad, append/insert/delete, diff."""
import math
import operator

import numpy as np

from xjax._src import dtypes, lax
from xjax._src.numpy import util
from xjax._src.numpy.creation import dtype_arg


def _operand(name, a):
    if getattr(a, "aval", None) is not None:
        return a
    util.check_arraylike(name, a)
    return util.asarray(a)


def shape(a):
    """The shape of a as a tuple."""
    return tuple(util.aval_of(a).shape)


def ndim(a):
    """The number of dimensions of a."""
    return len(util.aval_of(a).shape)


def size(a, axis=None):
    """The number of elements of a (along `axis` if given)."""
    s = util.aval_of(a).shape
    if axis is None:
        return util.prod(s)
    return s[util.canonicalize_axis(axis, len(s))]


def astype(x, dtype, /, *, copy=False, device=None):
    """x converted to dtype (never weakly typed)."""
    x = _operand("astype", x)
    dt = dtype_arg(dtype, "astype")
    return lax.elementwise._convert(x, dt, weak_type=False)


# ---- reshape / transpose --------------------------------------------------------------------

def _compute_newshape(old_shape, newshape):
    size_ = util.prod(old_shape)
    newshape = util.canonicalize_shape(newshape)
    neg = [i for i, d in enumerate(newshape) if d == -1]
    if len(neg) > 1:
        raise TypeError(f"can only specify one unknown axis size with a `-1` value, got {newshape}")
    if any(d < -1 for d in newshape):
        raise TypeError(f"cannot reshape array of shape {tuple(old_shape)} (size {size_}) into shape {newshape}")
    if neg:
        known = util.prod(d for d in newshape if d != -1)
        if known == 0 or size_ % known:
            raise TypeError(f"cannot reshape array of shape {tuple(old_shape)} (size {size_}) into shape {newshape} "
                            f"because the product of specified axis sizes ({known}) does not evenly divide {size_}")
        newshape = tuple(size_ // known if d == -1 else d for d in newshape)
    if util.prod(newshape) != size_:
        raise TypeError(f"cannot reshape array of shape {tuple(old_shape)} (size {size_}) into shape {newshape} "
                        f"(size {util.prod(newshape)})")
    return newshape


def reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    """a with a new shape of the same size (one dimension may be -1); order 'C' or 'F'."""
    if shape is None:
        shape = newshape
    x = _operand("reshape", a)
    old = x.aval.shape
    new = _compute_newshape(old, shape)
    if order == "C":
        return x if new == old else lax.reshape(x, new)
    if order == "F":
        xt = lax.transpose(x, tuple(reversed(range(len(old)))))
        out = lax.reshape(xt, tuple(reversed(new)))
        return lax.transpose(out, tuple(reversed(range(len(new)))))
    if order == "A":
        raise NotImplementedError("np.reshape order=A is not implemented.")
    raise ValueError(f"Unexpected value for 'order' argument: {order}.")


def ravel(a, order="C"):
    """a flattened to one dimension."""
    x = _operand("ravel", a)
    return reshape(x, (x.aval.size,), order=order)


def transpose(a, axes=None):
    """a with its axes permuted (reversed by default)."""
    x = _operand("transpose", a)
    nd = x.aval.ndim
    if axes is None:
        perm = tuple(range(nd - 1, -1, -1))
    else:
        perm = tuple(util.canonicalize_axis(i, nd) for i in axes)
        if len(perm) != nd or len(set(perm)) != nd:
            raise TypeError("transpose permutation isn't a permutation of operand dimensions, got permutation "
                            f"{tuple(axes)} for operand shape {x.aval.shape}.")
    return lax.transpose(x, perm)


def permute_dims(a, /, axes):
    """transpose with the Array API's name."""
    return transpose(a, axes)


def matrix_transpose(x, /):
    """x with its last two axes swapped."""
    x = _operand("matrix_transpose", x)
    nd = x.aval.ndim
    if nd < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got ndim={nd}")
    return lax.transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def swapaxes(a, axis1, axis2):
    """a with axis1 and axis2 interchanged."""
    x = _operand("swapaxes", a)
    nd = x.aval.ndim
    a1, a2 = util.canonicalize_axis(axis1, nd), util.canonicalize_axis(axis2, nd)
    perm = list(range(nd))
    perm[a1], perm[a2] = perm[a2], perm[a1]
    return lax.transpose(x, perm)


def moveaxis(a, source, destination):
    """a with the `source` axes moved to the `destination` positions."""
    x = _operand("moveaxis", a)
    nd = x.aval.ndim
    src = (source,) if isinstance(source, (int, np.integer)) else tuple(source)
    dst = (destination,) if isinstance(destination, (int, np.integer)) else tuple(destination)
    if len(src) != len(dst):
        raise ValueError("Inconsistent number of elements: {} vs {}".format(len(src), len(dst)))
    src = tuple(util.canonicalize_axis(s, nd) for s in src)
    dst = tuple(util.canonicalize_axis(d, nd) for d in dst)
    perm = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        perm.insert(d, s)
    return lax.transpose(x, perm)


def rollaxis(a, axis, start=0):
    """Moves `axis` to before position `start` (NumPy's older moveaxis)."""
    x = _operand("rollaxis", a)
    nd = x.aval.ndim
    axis = util.canonicalize_axis(axis, nd)
    if not -nd <= start <= nd:
        raise ValueError(f"start={start} must satisfy {-nd}<=start<={nd}")
    if start < 0:
        start += nd
    if axis < start:
        start -= 1
    return moveaxis(x, axis, start)


def expand_dims(a, axis):
    """a with size-1 dimensions inserted at the `axis` positions of the result."""
    x = _operand("expand_dims", a)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out_nd = x.aval.ndim + len(axes)
    canon = sorted(util.canonicalize_axis(ax, out_nd) for ax in axes)
    if len(set(canon)) != len(canon):
        raise ValueError(f"repeated axis in expand_dims: {axes}")
    return lax.expand_dims(x, canon)


def squeeze(a, axis=None):
    """a without its size-1 dimensions (all of them, or those in `axis`)."""
    x = _operand("squeeze", a)
    shp = x.aval.shape
    if axis is None:
        dims = tuple(i for i, d in enumerate(shp) if d == 1)
    else:
        dims = util.canonicalize_axes(axis, len(shp))
    return lax.squeeze(x, dims)


# ---- broadcasting ---------------------------------------------------------------------------

def broadcast_shapes(*shapes):
    """The shape that the given shapes broadcast to."""
    return util.broadcast_shapes(*(util.canonicalize_shape(s) for s in shapes))


def broadcast_to(array, shape):
    """array broadcast to `shape`."""
    x = _operand("broadcast_to", array)
    return util.broadcast_to_shape(x, util.canonicalize_shape(shape))


def broadcast_arrays(*args):
    """The arguments broadcast against each other."""
    ops = [_operand("broadcast_arrays", a) for a in args]
    if not ops:
        return []
    shp = util.broadcast_shapes(*(o.aval.shape for o in ops))
    return [util.broadcast_to_shape(o, shp) for o in ops]


def atleast_1d(*arys):
    """Each input with at least one dimension."""
    out = [_atleast(a, 1) for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys):
    """Each input with at least two dimensions (1-D inputs become rows)."""
    out = [_atleast(a, 2) for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_3d(*arys):
    """Each input with at least three dimensions ((n,) -> (1, n, 1), (m, n) -> (m, n, 1))."""
    out = [_atleast(a, 3) for a in arys]
    return out[0] if len(out) == 1 else out


def _atleast(a, n):
    x = _operand("atleast_nd", a)
    nd = x.aval.ndim
    if nd >= n:
        return x
    s = x.aval.shape
    if n == 3:
        new = {0: (1, 1, 1), 1: (1,) + s + (1,), 2: s + (1,)}[nd]
    else:
        new = (1,) * (n - nd) + s
    return lax.reshape(x, new)


# ---- joining --------------------------------------------------------------------------------

def concatenate(arrays, axis=0, dtype=None):
    """The arrays joined along an existing axis (axis=None flattens them first)."""
    if hasattr(arrays, "aval") or isinstance(arrays, np.ndarray):
        x = _operand("concatenate", arrays)
        if x.aval.ndim == 0:
            raise ValueError("Zero-dimensional arrays cannot be concatenated.")
        parts = [lax.index_in_dim(x, i, 0, keepdims=False) for i in range(x.aval.shape[0])]
    else:
        parts = list(arrays)
    if not parts:
        raise ValueError("Need at least one array to concatenate.")
    util.check_arraylike("concatenate", *parts)
    dt = dtype_arg(dtype, "concatenate")
    if dt is None:
        ops = util.promote_dtypes(*parts)
    else:
        ops = [util.convert(p, dt) for p in parts]
    if axis is None:
        ops = [lax.reshape(o, (o.aval.size,)) for o in ops]
        axis = 0
    nd = ops[0].aval.ndim
    if nd == 0:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    if any(o.aval.ndim != nd for o in ops):
        raise TypeError("Cannot concatenate arrays with different numbers of dimensions: got "
                        f"{', '.join(str(o.aval.shape) for o in ops)}.")
    ax = util.canonicalize_axis(axis, nd)
    s0 = ops[0].aval.shape
    for o in ops[1:]:
        s = o.aval.shape
        if any(s[i] != s0[i] for i in range(nd) if i != ax):
            raise TypeError("Cannot concatenate arrays with shapes that differ in dimensions other than the one "
                            f"being concatenated: concatenating along dimension {ax} for shapes "
                            f"{', '.join(str(o.aval.shape) for o in ops)}.")
    if len(ops) == 1:
        return ops[0]
    return lax.concatenate(ops, ax)


concat = concatenate


def stack(arrays, axis=0, out=None, dtype=None):
    """The arrays (of one shape) joined along a new axis."""
    if hasattr(arrays, "aval") or isinstance(arrays, np.ndarray):
        x = _operand("stack", arrays)
        arrays = [lax.index_in_dim(x, i, 0, keepdims=False) for i in range(x.aval.shape[0])]
    arrays = list(arrays)
    if not arrays:
        raise ValueError("Need at least one array to stack.")
    util.check_arraylike("stack", *arrays)
    shapes = [util.aval_of(a).shape for a in arrays]
    if any(s != shapes[0] for s in shapes):
        raise ValueError(f"All input arrays must have the same shape. Got {', '.join(str(s) for s in shapes)}.")
    nd = len(shapes[0]) + 1
    ax = util.canonicalize_axis(axis, nd)
    dt = dtype_arg(dtype, "stack")
    ops = util.promote_dtypes(*arrays) if dt is None else [util.convert(a, dt) for a in arrays]
    ops = [lax.expand_dims(o, (ax,)) for o in ops]
    return ops[0] if len(ops) == 1 else lax.concatenate(ops, ax)


def unstack(x, /, *, axis=0):
    """The slices of x along axis, as a tuple."""
    x = _operand("unstack", x)
    ax = util.canonicalize_axis(axis, x.aval.ndim)
    return tuple(lax.index_in_dim(x, i, ax, keepdims=False) for i in range(x.aval.shape[ax]))


def _seq(tup, name):
    if hasattr(tup, "aval") or isinstance(tup, np.ndarray):
        x = _operand(name, tup)
        return [lax.index_in_dim(x, i, 0, keepdims=False) for i in range(x.aval.shape[0])]
    return list(tup)


def hstack(tup, dtype=None):
    """Arrays joined along axis 1 (axis 0 for 1-D inputs)."""
    arrs = [_atleast(a, 1) for a in _seq(tup, "hstack")]
    return concatenate(arrs, 0 if arrs and arrs[0].aval.ndim == 1 else 1, dtype=dtype)


def vstack(tup, dtype=None):
    """Arrays joined along axis 0 (1-D inputs become rows)."""
    return concatenate([_atleast(a, 2) for a in _seq(tup, "vstack")], 0, dtype=dtype)


row_stack = vstack


def dstack(tup, dtype=None):
    """Arrays joined along axis 2."""
    return concatenate([_atleast(a, 3) for a in _seq(tup, "dstack")], 2, dtype=dtype)


def column_stack(tup):
    """1-D arrays as columns (and 2-D arrays as they are) joined along axis 1."""
    arrs = []
    for a in _seq(tup, "column_stack"):
        x = _operand("column_stack", a)
        if x.aval.ndim < 2:
            x = lax.reshape(x, (x.aval.size, 1))
        arrs.append(x)
    return concatenate(arrs, 1)


# ---- splitting ------------------------------------------------------------------------------

def _split(name, ary, indices_or_sections, axis, exact):
    x = _operand(name, ary)
    ax = util.canonicalize_axis(axis, x.aval.ndim)
    n = x.aval.shape[ax]
    if isinstance(indices_or_sections, (int, np.integer)) and not isinstance(indices_or_sections, bool):
        k = int(indices_or_sections)
        if k <= 0:
            raise ValueError("number sections must be larger than 0.")
        if exact and n % k:
            raise ValueError(f"array split does not result in an equal division: rest is {n % k}")
        q, r = divmod(n, k)
        sizes = [q + 1] * r + [q] * (k - r)
        bounds = np.cumsum([0] + sizes).tolist()
    else:
        idx = indices_or_sections
        if hasattr(idx, "aval"):
            idx = np.asarray(util.concrete_value(idx, f"jnp.{name} indices must be static"))
        idx = [int(i) for i in idx]
        bounds = [0] + [min(max(i + n if i < 0 else i, 0), n) for i in idx] + [n]
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        hi = max(lo, hi)
        out.append(lax.slice_in_dim(x, lo, hi, 1, ax))
    return out


def split(ary, indices_or_sections, axis=0):
    """Splits into equal sections (an int) or at the given indices."""
    return _split("split", ary, indices_or_sections, axis, True)


def array_split(ary, indices_or_sections, axis=0):
    """Like split, allowing sections of unequal size."""
    return _split("array_split", ary, indices_or_sections, axis, False)


def hsplit(ary, indices_or_sections):
    """split along axis 1 (axis 0 for 1-D arrays)."""
    x = _operand("hsplit", ary)
    return _split("hsplit", x, indices_or_sections, 1 if x.aval.ndim > 1 else 0, True)


def vsplit(ary, indices_or_sections):
    """split along axis 0."""
    return _split("vsplit", ary, indices_or_sections, 0, True)


def dsplit(ary, indices_or_sections):
    """split along axis 2."""
    return _split("dsplit", ary, indices_or_sections, 2, True)


# ---- repetition -----------------------------------------------------------------------------

def tile(A, reps):  # noqa: N803 - NumPy's name
    """A repeated reps times along each axis."""
    x = _operand("tile", A)
    reps = (operator.index(reps),) if isinstance(reps, (int, np.integer)) else tuple(operator.index(r) for r in reps)
    nd = max(len(reps), x.aval.ndim)
    reps = (1,) * (nd - len(reps)) + reps
    s = (1,) * (nd - x.aval.ndim) + x.aval.shape
    x = lax.reshape(x, s)
    inter = tuple(v for r, d in zip(reps, s) for v in (r, d))
    b = lax.broadcast_in_dim(x, inter, tuple(range(1, 2 * nd, 2)))
    return lax.reshape(b, tuple(r * d for r, d in zip(reps, s)))


def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    """Each element repeated `repeats` times (an int, or one count per element along axis)."""
    x = _operand("repeat", a)
    if axis is None:
        x = lax.reshape(x, (x.aval.size,))
        axis = 0
    ax = util.canonicalize_axis(axis, x.aval.ndim)
    n = x.aval.shape[ax]
    if isinstance(repeats, (int, np.integer)) and not isinstance(repeats, bool):
        r = int(repeats)
        if r < 0:
            raise ValueError(f"repeats must be non-negative, got {r}")
        s = x.aval.shape
        b = lax.broadcast_in_dim(x, s[:ax + 1] + (r,) + s[ax + 1:],
                                 tuple(range(ax + 1)) + tuple(range(ax + 2, len(s) + 1)))
        out = lax.reshape(b, s[:ax] + (n * r,) + s[ax + 1:])
        if total_repeat_length is not None:
            out = _fit_length(out, ax, total_repeat_length)
        return out
    reps = _operand("repeat", repeats)
    if reps.aval.ndim == 0 or reps.aval.shape == (1,):
        if not util.is_concrete(reps):
            raise ValueError("jnp.repeat with a traced scalar `repeats` requires total_repeat_length")
        return repeat(x, int(np.asarray(reps).reshape(())), ax, total_repeat_length=total_repeat_length)
    if reps.aval.shape != (n,):
        raise ValueError(f"repeats shape {reps.aval.shape} does not match the axis length {n}")
    reps = util.convert(reps, dtypes.int32)
    if total_repeat_length is None:
        from xjax._src.numpy.reductions import sum as _sum

        total = int(util.concrete_value(_sum(reps),
                                        "jnp.repeat needs concrete repeats or total_repeat_length"))
    else:
        total = operator.index(total_repeat_length)
    from xjax._src.numpy import indexing

    ends = lax.cumsum(reps, 0)
    starts = lax.sub(ends, reps)
    # out position p takes the element j with starts[j] <= p < ends[j]; count ends <= p.
    pos = lax.broadcasted_iota(dtypes.int32, (total, n), 0)
    idx = lax.reduce_sum(lax.convert_element_type(lax.le(lax.broadcast_in_dim(ends, (total, n), (1,)), pos),
                                                  dtypes.int32), (1,))
    del starts
    return indexing.take(x, idx, axis=ax, mode="clip")


def _fit_length(x, ax, length):
    n = x.aval.shape[ax]
    if length <= n:
        return lax.slice_in_dim(x, 0, length, 1, ax)
    last = lax.slice_in_dim(x, n - 1, n, 1, ax) if n else None
    if last is None:
        return x
    s = list(x.aval.shape)
    s[ax] = length - n
    return lax.concatenate([x, util.broadcast_to_shape(last, tuple(s))], ax)


# ---- reordering -----------------------------------------------------------------------------

def flip(m, axis=None):
    """m with the order of elements reversed along the axes (all by default)."""
    x = _operand("flip", m)
    return lax.rev(x, util.canonicalize_axes(axis, x.aval.ndim))


def fliplr(m):
    """flip along axis 1."""
    x = _operand("fliplr", m)
    if x.aval.ndim < 2:
        raise ValueError("fliplr requires an array of at least two dimensions")
    return lax.rev(x, (1,))


def flipud(m):
    """flip along axis 0."""
    x = _operand("flipud", m)
    if x.aval.ndim < 1:
        raise ValueError("flipud requires an array of at least one dimension")
    return lax.rev(x, (0,))


def _roll_static(x, shift, ax):
    n = x.aval.shape[ax]
    if n == 0:
        return x
    s = shift % n
    if s == 0:
        return x
    return lax.concatenate([lax.slice_in_dim(x, n - s, n, 1, ax), lax.slice_in_dim(x, 0, n - s, 1, ax)], ax)


def _roll_dynamic(x, shift, ax):
    n = x.aval.shape[ax]
    if n == 0:
        return x
    sh = util.convert(shift, dtypes.int32)
    nn = util.full((), n, dtypes.int32)
    s = lax.rem(sh, nn)
    s = lax.select(lax.lt(s, util.full((), 0, dtypes.int32)), lax.add(s, nn), s)
    doubled = lax.concatenate([x, x], ax)
    start = lax.sub(nn, s)
    return lax.dynamic_slice_in_dim(doubled, start, n, ax)


def roll(a, shift, axis=None):
    """Elements shifted cyclically by `shift` along the axes (flattened if axis is None)."""
    x = _operand("roll", a)
    if axis is None:
        return reshape(roll(ravel(x), shift, 0), x.aval.shape)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    shifts = shift if isinstance(shift, (tuple, list)) else None
    if shifts is None:
        sv = shift
        if hasattr(sv, "aval") and sv.aval.ndim == 1:
            shifts = [lax.index_in_dim(sv, i, 0, keepdims=False) for i in range(sv.aval.shape[0])]
        else:
            shifts = [sv] * len(axes)
    if len(shifts) == 1 and len(axes) > 1:
        shifts = list(shifts) * len(axes)
    if len(axes) == 1 and len(shifts) > 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError("shift and axis must have the same length")
    for s, ax in zip(shifts, axes):
        ax = util.canonicalize_axis(ax, x.aval.ndim)
        if isinstance(s, (int, np.integer)):
            x = _roll_static(x, int(s), ax)
        else:
            x = _roll_dynamic(x, s, ax)
    return x


def rot90(m, k=1, axes=(0, 1)):
    """m rotated by 90 degrees k times in the plane of `axes`."""
    x = _operand("rot90", m)
    nd = x.aval.ndim
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    a0, a1 = util.canonicalize_axis(axes[0], nd), util.canonicalize_axis(axes[1], nd)
    if a0 == a1:
        raise ValueError("Axes must be different.")
    k = operator.index(k) % 4
    if k == 0:
        return x
    if k == 2:
        return lax.rev(x, (a0, a1))
    perm = list(range(nd))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return lax.transpose(lax.rev(x, (a1,)), perm)
    return lax.rev(lax.transpose(x, perm), (a1,))


# ---- padding --------------------------------------------------------------------------------

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


def _pad_axis_edge(x, ax, lo, hi):
    n = x.aval.shape[ax]
    if n == 0 and (lo or hi):
        raise ValueError("can't extend empty axis 0 using modes other than 'constant' or 'empty'")
    parts = []
    s = list(x.aval.shape)
    if lo:
        s[ax] = lo
        parts.append(util.broadcast_to_shape(lax.slice_in_dim(x, 0, 1, 1, ax), tuple(s)))
    parts.append(x)
    if hi:
        s[ax] = hi
        parts.append(util.broadcast_to_shape(lax.slice_in_dim(x, n - 1, n, 1, ax), tuple(s)))
    return lax.concatenate(parts, ax) if len(parts) > 1 else x


def _pad_axis_wrap(x, ax, lo, hi):
    n = x.aval.shape[ax]
    if n == 0 and (lo or hi):
        raise ValueError("can't extend empty axis 0 using modes other than 'constant' or 'empty'")
    if not lo and not hi:
        return x
    reps_lo = -(-lo // n)
    reps_hi = -(-hi // n)
    reps = [1] * x.aval.ndim
    reps[ax] = reps_lo + 1 + reps_hi
    t = tile(x, reps)
    start = reps_lo * n - lo
    return lax.slice_in_dim(t, start, start + lo + n + hi, 1, ax)


def _pad_axis_reflect(x, ax, lo, hi, symmetric):
    n = x.aval.shape[ax]
    if n == 0 and (lo or hi):
        raise ValueError("can't extend empty axis 0 using modes other than 'constant' or 'empty'")
    if n == 1 and not symmetric:
        return _pad_axis_edge(x, ax, lo, hi)
    period = n if symmetric else n - 1
    off = 0 if symmetric else 1
    while lo or hi:
        cur = x.aval.shape[ax]
        parts = []
        take_lo = min(lo, period)
        take_hi = min(hi, period)
        if take_lo:
            parts.append(lax.rev(lax.slice_in_dim(x, off, off + take_lo, 1, ax), (ax,)))
        parts.append(x)
        if take_hi:
            parts.append(lax.rev(lax.slice_in_dim(x, cur - off - take_hi, cur - off, 1, ax), (ax,)))
        x = lax.concatenate(parts, ax)
        lo -= take_lo
        hi -= take_hi
    return x


def _pad_axis_stat(x, ax, lo, hi, stat):
    from xjax._src.numpy import reductions

    if not lo and not hi:
        return x
    fn = {"maximum": reductions.max, "minimum": reductions.min, "mean": reductions.mean}[stat]
    v = fn(x, ax, keepdims=True)
    if stat == "mean" and v.aval.dtype != x.aval.dtype:
        from xjax._src.numpy.ufuncs import round as _round

        v = lax.convert_element_type(_round(v), x.aval.dtype)
    s = list(x.aval.shape)
    parts = []
    if lo:
        s[ax] = lo
        parts.append(util.broadcast_to_shape(v, tuple(s)))
    parts.append(x)
    if hi:
        s[ax] = hi
        parts.append(util.broadcast_to_shape(v, tuple(s)))
    return lax.concatenate(parts, ax)


def pad(array, pad_width, mode="constant", **kwargs):
    """array padded by pad_width ((before, after) per axis) with the given mode.

    Modes: 'constant' (constant_values), 'edge', 'reflect', 'symmetric', 'wrap', 'maximum',
    'minimum', 'mean', 'empty'.
    """
    x = _operand("pad", array)
    nd = x.aval.ndim
    pairs = _pad_pairs(pad_width, nd)
    if callable(mode):
        raise NotImplementedError("jnp.pad with a callable mode is not supported")
    if mode in ("constant", "empty"):
        values = kwargs.get("constant_values", 0) if mode == "constant" else 0
        dt = x.aval.dtype
        if isinstance(values, (int, float, bool)) or (hasattr(values, "aval") and values.aval.ndim == 0) or \
                np.ndim(values) == 0:
            v = util.convert(values, dt)
            return lax.pad(x, v, [(lo, hi, 0) for lo, hi in pairs])
        for ax, ((lo, hi), (vlo, vhi)) in enumerate(zip(pairs, _value_pairs(values, nd))):
            cfg = [(0, 0, 0)] * nd
            cfg[ax] = (lo, 0, 0)
            x = lax.pad(x, util.convert(vlo, dt), cfg)
            cfg[ax] = (0, hi, 0)
            x = lax.pad(x, util.convert(vhi, dt), cfg)
        return x
    for ax, (lo, hi) in enumerate(pairs):
        if mode == "edge":
            x = _pad_axis_edge(x, ax, lo, hi)
        elif mode == "wrap":
            x = _pad_axis_wrap(x, ax, lo, hi)
        elif mode in ("reflect", "symmetric"):
            if kwargs.get("reflect_type", "even") != "even":
                raise NotImplementedError("jnp.pad reflect_type='odd' is not supported")
            x = _pad_axis_reflect(x, ax, lo, hi, mode == "symmetric")
        elif mode in ("maximum", "minimum", "mean"):
            x = _pad_axis_stat(x, ax, lo, hi, mode)
        else:
            raise ValueError(f"Unimplemented padding mode '{mode}' for np.pad.")
    return x


# ---- append / insert / delete / diff / resize ------------------------------------------------

def append(arr, values, axis=None):
    """values appended to arr (both flattened if axis is None)."""
    if axis is None:
        return concatenate([ravel(_operand("append", arr)), ravel(_operand("append", values))], 0)
    return concatenate([arr, values], axis)


def _static_indices(obj, n, name):
    if isinstance(obj, slice):
        return np.arange(n)[obj], True
    if hasattr(obj, "aval"):
        obj = util.concrete_value(obj, f"jnp.{name} requires static indices")
    arr = np.asarray(obj)
    if arr.dtype == bool:
        return np.nonzero(arr)[0], False
    if arr.dtype.kind not in "iu" and arr.size:
        raise ValueError(f"{name}: index array argument obj must be integer typed")
    return arr.astype(np.int64), arr.ndim == 0


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """arr without the entries at the (static) indices obj along axis."""
    x = _operand("delete", arr)
    if axis is None:
        x = ravel(x)
        axis = 0
    ax = util.canonicalize_axis(axis, x.aval.ndim)
    n = x.aval.shape[ax]
    idx, _ = _static_indices(obj, n, "delete")
    idx = np.atleast_1d(idx)
    if ((idx < -n) | (idx >= n)).any():
        raise IndexError(f"index out of bounds for axis {ax} with size {n}")
    keep = np.ones(n, bool)
    keep[idx % n if n else idx] = False
    kept = np.nonzero(keep)[0].astype(np.int32)
    from xjax._src.numpy import indexing

    return indexing.take(x, util.asarray(kept), axis=ax, mode="clip") if kept.size else \
        lax.slice_in_dim(x, 0, 0, 1, ax)


def insert(arr, obj, values, axis=None):
    """arr with values inserted before the (static) indices obj along axis."""
    x = _operand("insert", arr)
    if axis is None:
        x = ravel(x)
        axis = 0
    ax = util.canonicalize_axis(axis, x.aval.ndim)
    n = x.aval.shape[ax]
    idx, scalar_idx = _static_indices(obj, n + 1, "insert")
    if isinstance(values, (list, tuple)):
        values = np.asarray(values)
    vals = util.convert(values, x.aval.dtype)
    s = list(x.aval.shape)
    if scalar_idx:
        i = int(idx)
        if not -n <= i <= n:
            raise IndexError(f"index {i} is out of bounds for axis {ax} with size {n}")
        i = i + n if i < 0 else i
        # NumPy's rule: values get ndmin=arr.ndim, their first axis moves to `axis`.
        vnd = vals.aval.ndim
        if vnd < x.aval.ndim:
            vals = lax.reshape(vals, (1,) * (x.aval.ndim - vnd) + vals.aval.shape)
        vals = moveaxis(vals, 0, ax)
        v_shape = list(s)
        v_shape[ax] = vals.aval.shape[ax]
        vals = util.broadcast_to_shape(vals, tuple(v_shape))
        parts = [lax.slice_in_dim(x, 0, i, 1, ax), vals, lax.slice_in_dim(x, i, n, 1, ax)]
        return lax.concatenate(parts, ax)
    idx = np.where(idx < 0, idx + n, idx)
    if ((idx < 0) | (idx > n)).any():
        raise IndexError(f"index out of bounds for axis {ax} with size {n}")
    k = idx.size
    v_shape = list(s)
    v_shape[ax] = k
    if vals.aval.ndim == 1 and x.aval.ndim > 1 and vals.aval.shape[0] == k:
        vals = lax.broadcast_in_dim(vals, tuple(v_shape), (ax,))
    else:
        vals = util.broadcast_to_shape(vals, tuple(v_shape))
    order = np.argsort(idx, kind="stable")
    new_pos = idx[order] + np.arange(k)
    total = n + k
    is_new = np.zeros(total, bool)
    is_new[new_pos] = True
    src = np.empty(total, np.int64)
    src[~is_new] = np.arange(n)
    src[new_pos] = n + order
    from xjax._src.numpy import indexing

    both = lax.concatenate([x, vals], ax)
    return indexing.take(both, util.asarray(src.astype(np.int32)), axis=ax, mode="clip")


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The n-th discrete difference along axis (not_equal for bools)."""
    x = _operand("diff", a)
    ax = util.canonicalize_axis(axis, x.aval.ndim)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    parts = []
    for extra in (prepend, x, append):
        if extra is None:
            continue
        e = util.asarray(extra) if extra is not x else x
        if e.aval.ndim == 0:
            s = list(x.aval.shape)
            s[ax] = 1
            e = util.broadcast_to_shape(e, tuple(s))
        parts.append(e)
    if len(parts) > 1:
        x = concatenate(parts, ax)
    for _ in range(n):
        m = x.aval.shape[ax]
        if m == 0:
            break
        hi = lax.slice_in_dim(x, 1, m, 1, ax)
        lo = lax.slice_in_dim(x, 0, m - 1, 1, ax)
        x = lax.ne(hi, lo) if x.aval.dtype == dtypes.bool_ else lax.sub(hi, lo)
    return x


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of consecutive elements of the flattened array, with optional ends."""
    x = ravel(_operand("ediff1d", ary))
    out = diff(x)
    parts = []
    if to_begin is not None:
        parts.append(ravel(util.convert(to_begin, out.aval.dtype)))
    parts.append(out)
    if to_end is not None:
        parts.append(ravel(util.convert(to_end, out.aval.dtype)))
    return concatenate(parts) if len(parts) > 1 else out


def resize(a, new_shape):
    """a repeated cyclically to fill new_shape."""
    x = ravel(_operand("resize", a))
    new_shape = util.canonicalize_shape(new_shape)
    total = util.prod(new_shape)
    n = x.aval.size
    if total == 0 or n == 0:
        return util.full(new_shape, 0, x.aval.dtype)
    reps = -(-total // n)
    return lax.reshape(lax.slice(tile(x, reps), (0,), (total,)), new_shape)


del math
