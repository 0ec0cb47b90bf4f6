"""Rearranging elements: tile, repeat, flip, roll, rot90, pad, append/insert/delete, diff, resize."""
import functools
import operator

import numpy as np

from xjax._src import dtypes, lax
from xjax._src.jit import jit
from xjax._src.numpy import take as take_mod, util
from xjax._src.numpy.manipulation import concatenate, moveaxis, ravel, reshape
from xjax._src.numpy.reductions import sum as _sum

# ---- repetition -----------------------------------------------------------------------------

def tile(A, reps):  # noqa: N803 - NumPy's name
    """A repeated reps times along each axis: lax.tile, after leading unit axes where reps is longer."""
    x = util.operand("tile", A)
    reps = (operator.index(reps),) if isinstance(reps, (int, np.integer)) else tuple(operator.index(r) for r in reps)
    reps = (1,) * (x.aval.ndim - len(reps)) + reps
    if len(reps) > x.aval.ndim:
        x = lax.expand_dims(x, tuple(range(len(reps) - x.aval.ndim)))
    return lax.tile(x, reps)


def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    """Each element repeated `repeats` times (an int, or one count per element along axis)."""
    x = util.operand("repeat", a)
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
    reps = util.operand("repeat", repeats)
    if reps.aval.ndim == 0 or reps.aval.shape == (1,):
        if not util.is_concrete(reps):
            raise ValueError("jnp.repeat with a traced scalar `repeats` requires total_repeat_length")
        return repeat(x, int(np.asarray(reps).reshape(())), ax, total_repeat_length=total_repeat_length)
    if reps.aval.shape != (n,):
        raise ValueError(f"repeats shape {reps.aval.shape} does not match the axis length {n}")
    reps = util.convert(reps, dtypes.int32)
    if total_repeat_length is None:
        total = int(util.concrete_value(_sum(reps),
                                        "jnp.repeat needs concrete repeats or total_repeat_length"))
    else:
        total = operator.index(total_repeat_length)
    ends = lax.cumsum(reps, 0)
    starts = lax.sub(ends, reps)
    # out position p takes the element j with starts[j] <= p < ends[j]; count ends <= p.
    pos = lax.broadcasted_iota(dtypes.int32, (total, n), 0)
    idx = lax.reduce_sum(lax.convert_element_type(lax.le(lax.broadcast_in_dim(ends, (total, n), (1,)), pos),
                                                  dtypes.int32), (1,))
    del starts
    return take_mod.take(x, idx, axis=ax, mode="clip")


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
    x = util.operand("flip", m)
    return _flip(x, tuple(axis) if isinstance(axis, list) else axis)


@functools.partial(jit, static_argnames=("axis",))
def _flip(m, axis=None):
    """JAX's jit of flip (one equation in a trace)."""
    return lax.rev(m, util.canonicalize_axes(axis, m.aval.ndim))


def fliplr(m):
    """flip along axis 1."""
    x = util.operand("fliplr", m)
    if x.aval.ndim < 2:
        raise ValueError("fliplr requires an array of at least two dimensions")
    return _flip(x, 1)


def flipud(m):
    """flip along axis 0."""
    x = util.operand("flipud", m)
    if x.aval.ndim < 1:
        raise ValueError("flipud requires an array of at least one dimension")
    return _flip(x, 0)


@functools.partial(jit, static_argnums=(1, 2))
def _roll_static(a, shift, axis):
    """JAX's jit of static rolls: per axis, the last `shift` elements joined in front of the rest."""
    for ax, s in zip(axis, shift):
        n = a.aval.shape[ax]
        if n == 0:
            continue
        i = (-s) % n
        a = lax.concatenate([lax.slice_in_dim(a, i, n, 1, ax), lax.slice_in_dim(a, 0, i, 1, ax)], ax)
    return a


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
    x = util.operand("roll", a)
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
    axes = tuple(util.canonicalize_axis(ax, x.aval.ndim) for ax in axes)
    if all(isinstance(s, (int, np.integer)) for s in shifts):
        return _roll_static(x, tuple(int(s) for s in shifts), axes)
    for s, ax in zip(shifts, axes):
        x = _roll_static(x, (int(s),), (ax,)) if isinstance(s, (int, np.integer)) else _roll_dynamic(x, s, ax)
    return x


def rot90(m, k=1, axes=(0, 1)):
    """m rotated by 90 degrees k times in the plane of `axes`."""
    x = util.operand("rot90", m)
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


# ---- append / insert / delete / diff / resize ------------------------------------------------

def append(arr, values, axis=None):
    """values appended to arr (both flattened if axis is None)."""
    if axis is None:
        return concatenate([ravel(util.operand("append", arr)), ravel(util.operand("append", values))], 0)
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
    x = util.operand("delete", arr)
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
    return take_mod.take(x, util.asarray(kept), axis=ax, mode="clip") if kept.size else \
        lax.slice_in_dim(x, 0, 0, 1, ax)


def insert(arr, obj, values, axis=None):
    """arr with values inserted before the (static) indices obj along axis."""
    x = util.operand("insert", arr)
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
    both = lax.concatenate([x, vals], ax)
    return take_mod.take(both, util.asarray(src.astype(np.int32)), axis=ax, mode="clip")


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The n-th discrete difference along axis (not_equal for bools)."""
    x = util.operand("diff", a)
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
    x = ravel(util.operand("ediff1d", ary))
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
    x = ravel(util.operand("resize", a))
    new_shape = util.canonicalize_shape(new_shape)
    total = util.prod(new_shape)
    n = x.aval.size
    if total == 0 or n == 0:
        return util.full(new_shape, 0, x.aval.dtype)
    reps = -(-total // n)
    return lax.reshape(lax.slice(tile(x, reps), (0,), (total,)), new_shape)
