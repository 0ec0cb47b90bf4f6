"""NumPy indexing on lax: __getitem__, and the gather/scatter plan that .at[] (updates.py) shares.

Basic indexing (static ints and slices, None, Ellipsis) lowers to slice/rev/reshape, traced scalar
indices to dynamic_slice. Advanced indexing (integer arrays, boolean masks made concrete) lowers
to gather, and every .at[] update to scatter, through one plan (`_plan`) that maps a NumPy index
onto gather/scatter dimension numbers. JAX's out-of-bounds rules: retrieval clamps (fills with
mode='fill'); updates out of bounds are dropped; negative indices wrap once.
"""
import numpy as np

from xjax._src import core, dtypes, lax
from xjax._src.lax.indexing import GatherDimensionNumbers, GatherScatterMode, ScatterDimensionNumbers
from xjax._src.numpy import util
from xjax._src.numpy.nonzero import nonzero

_INDEX_DTYPE = dtypes.int32


# ---- the index, normalised ------------------------------------------------------------------
# Entries after normalisation: None, slice, ("int", k), ("dyn", 0-d operand), ("arr", array),
# where "arr" is a NumPy int array (static) or an int operand of rank >= 1.

def _type_error(dtype):
    return TypeError(f"Indexer must have integer or boolean type, got indexer with type {dtype}")


def _bool_mask_to_ints(mask, pos, shape, dim):
    """A concrete boolean mask -> one integer index array per dimension it covers."""
    mshape = tuple(np.shape(mask)) if not hasattr(mask, "aval") else mask.aval.shape
    want = list(shape[dim:dim + len(mshape)])
    if list(mshape) != want:
        raise IndexError(f"boolean index did not match shape of indexed array in index {pos}: got {mshape}, "
                         f"expected {want}")
    if isinstance(mask, np.ndarray):
        return [("arr", i.astype(np.int32)) for i in np.nonzero(mask)]
    if not core.is_concrete(mask):
        raise IndexError(f"Array boolean indices must be concrete; got {mask.aval.str_short()}\n"
                         "See https://docs.jax.dev/en/latest/errors.html#jax.errors.NonConcreteBooleanIndexError")
    return [("arr", i) for i in nonzero(mask)]


def _normalize(idx, shape):
    """The index as a list of entries covering every dimension (Ellipsis and boolean masks expanded)."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    tokens = []  # entries, with ("mask", mask, position) standing for boolean masks until dims are known
    dim = 0  # the number of operand dimensions indexed
    has_ellipsis = False
    for pos, e in enumerate(idx):
        if e is None:
            tokens.append(None)
        elif e is Ellipsis:
            if has_ellipsis:
                raise IndexError("an index can only have a single ellipsis ('...')")
            has_ellipsis = True
            tokens.append(Ellipsis)
        elif isinstance(e, slice):
            tokens.append(_static_slice(e))
            dim += 1
        elif isinstance(e, (bool, np.bool_)):
            # NumPy: a scalar True adds an axis; False adds an empty one.
            tokens.append(None if e else ("false",))
        elif isinstance(e, (int, np.integer)):
            tokens.append(("int", int(e)))
            dim += 1
        elif isinstance(e, (float, np.floating)):
            raise _type_error(np.dtype(type(e)) if isinstance(e, np.floating) else "float64")
        elif isinstance(e, (list, tuple, np.ndarray)):
            arr = np.asarray(e)
            if arr.dtype == object:
                raise TypeError(f"Indexer must have integer or boolean type, got indexer with type {arr.dtype}")
            if arr.size == 0 and arr.dtype.kind == "f":
                arr = arr.astype(np.int32)
            if arr.dtype == bool:
                if arr.ndim == 0:
                    tokens.append(None if arr else ("false",))
                else:
                    tokens.append(("mask", arr, pos))
                    dim += arr.ndim
            elif arr.dtype.kind in "iu":
                tokens.append(("arr", arr) if arr.ndim else ("int", int(arr)))
                dim += 1
            else:
                raise _type_error(arr.dtype)
        elif hasattr(e, "aval"):
            aval = e.aval
            if aval.dtype == dtypes.bool_:
                if aval.ndim == 0:
                    if not core.is_concrete(e):
                        raise IndexError("Array boolean indices must be concrete; got bool[]")
                    tokens.append(None if bool(e) else ("false",))
                else:
                    tokens.append(("mask", e, pos))
                    dim += aval.ndim
            elif aval.dtype.kind in "iu":
                tokens.append(("dyn", e) if aval.ndim == 0 else ("arr", e))
                dim += 1
            else:
                raise _type_error(aval.dtype.name)
        else:
            raise TypeError(f"Indexer must have integer or boolean type, got indexer with type {type(e).__name__}")
    nd = len(shape)
    if dim > nd:
        raise IndexError(f"Too many indices: array is {nd}-dimensional, but {dim} were indexed")
    fill = [slice(None)] * (nd - dim)
    entries = []
    d = 0
    for t in tokens:
        if t is Ellipsis:
            entries.extend(fill)
            d += len(fill)
        elif type(t) is tuple and t[0] == "mask":
            ints = _bool_mask_to_ints(t[1], t[2], shape, d)
            entries.extend(ints)
            d += len(ints)
        else:
            entries.append(t)
            if t is not None and not _is_false(t):
                d += 1
    return entries if has_ellipsis else entries + fill


def _static_slice(s):
    vals = []
    for v in (s.start, s.stop, s.step):
        if v is None or isinstance(v, (int, np.integer)):
            vals.append(None if v is None else int(v))
        elif not core.is_concrete(v):
            raise IndexError("Array slice indices must have static start/stop/step to be used with NumPy indexing "
                             "syntax. Found slice({}, {}, {}). To index a statically sized array at a dynamic "
                             "position, try lax.dynamic_slice/dynamic_update_slice (JAX does not support dynamically "
                             "sized arrays within JIT compiled functions).".format(s.start, s.stop, s.step))
        elif hasattr(v, "__index__"):
            vals.append(v.__index__())
        else:
            raise TypeError("slice indices must be integers or None or have an __index__ method")
    if vals[2] == 0:
        raise ValueError("slice step cannot be zero")
    return slice(*vals)


def _slice_bounds(s, n):
    """(low, length, step magnitude, reversed) of slice s over a dimension of size n."""
    start, stop, step = s.indices(n)
    length = len(range(start, stop, step))
    if step > 0:
        return start, length, step, False
    low = start + (length - 1) * step if length else 0
    return low, length, -step, length > 1


# ---- basic indexing -------------------------------------------------------------------------

def _is_basic(entries):
    for e in entries:
        if type(e) is tuple and e[0] == "arr":
            return False
    return True


def _basic(x, entries):
    """Static ints/slices and None via slice/rev/reshape; traced scalars via dynamic_slice."""
    shape = x.aval.shape
    operand_entries = [e for e in entries if e is not None and not _is_false(e)]
    dyn = [(d, e[1]) for d, e in enumerate(operand_entries) if type(e) is tuple and e[0] == "dyn"]
    if dyn and not any(_is_false(e) for e in entries if e is not None) and all(
            e.step in (None, 1, -1) for e in entries if isinstance(e, slice)):
        return _dynamic_basic(x, entries)
    if dyn:
        starts = [util.full((), 0, _INDEX_DTYPE)] * len(shape)
        sizes = list(shape)
        for d, v in dyn:
            if shape[d] == 0:
                raise IndexError(f"index is out of bounds for axis {d} with size 0")
            starts[d] = _wrap_negative(v, shape[d])
            sizes[d] = 1
        x = lax.dynamic_slice(x, starts, sizes)
    start, limit, strides, rev_dims, out_shape, empty_dims = [], [], [], [], [], []
    squeeze_dims, new_dims = [], []
    d = 0
    for e in entries:
        if e is None or _is_false(e):
            if e is not None:  # a scalar False: a new axis of length 0
                empty_dims.append(len(out_shape))
            new_dims.append(len(out_shape))
            out_shape.append(1)
            continue
        n = x.aval.shape[d]
        if isinstance(e, slice):  # JAX's bounds: a negative step slices forward, then reverses
            first, stop, step = e.indices(n)
            if step < 0:
                low = min(n, stop + 1 + abs(first - stop - 1) % -step)
                start.append(low)
                limit.append(max(low, first + 1))
                strides.append(-step)
                rev_dims.append(d)
            else:
                start.append(first)
                limit.append(max(first, stop))
                strides.append(step)
            out_shape.append(len(range(first, stop, step)))
        elif type(e[1]) is int:
            i = e[1]
            if n == 0:
                raise IndexError(f"index {i} is out of bounds for axis {d} with size 0")
            i = i + n if i < 0 else i
            i = min(max(i, 0), n - 1)  # JAX clamps out-of-bounds retrieval
            start.append(i)
            limit.append(i + 1)
            strides.append(1)
            squeeze_dims.append(d)
        else:  # a traced scalar, already applied by dynamic_slice
            start.append(0)
            limit.append(1)
            strides.append(1)
            squeeze_dims.append(d)
        d += 1
    # As JAX: a trivial slice is no equation; unit strides are None.
    trivial = all(a == 0 for a in start) and tuple(limit) == tuple(x.aval.shape) and all(s == 1 for s in strides)
    y = x if trivial else lax.slice(x, start, limit, None if all(s == 1 for s in strides) else strides)
    if rev_dims:
        y = lax.rev(y, rev_dims)
    out_shape = tuple(out_shape)
    # As JAX: the integer-indexed axes squeezed, then the new axes inserted.
    if squeeze_dims:
        y = lax.squeeze(y, squeeze_dims)
    if new_dims:
        y = lax.expand_dims(y, new_dims)
    if empty_dims:
        y = lax.slice(y, (0,) * len(out_shape), tuple(0 if i in empty_dims else n for i, n in enumerate(out_shape)))
    return y


def _is_false(e):
    return type(e) is tuple and e[0] == "false"


def _dynamic_basic(x, entries):
    """JAX's dynamic-slice indexing (traced scalars with static ints, unit-step slices and None): one
    dynamic_slice, whose start indices lax normalises, then rev, squeeze and expand_dims."""
    starts, sizes, rev_dims, squeeze_dims, new_dims = [], [], [], [], []
    d = 0
    for e in entries:
        if e is None:
            new_dims.append(len(starts) - len(squeeze_dims) + len(new_dims))
            continue
        n = x.aval.shape[d]
        if isinstance(e, slice):
            first, stop, step = e.indices(n)
            if step < 0:
                low = stop + 1 + abs(first - stop - 1) % 1
                starts.append(low)
                sizes.append(max(0, first + 1 - low))
                rev_dims.append(d)
            else:
                starts.append(first)
                sizes.append(max(0, stop - first))
        else:
            if n == 0:
                raise IndexError(f"index is out of bounds for axis {d} with size 0")
            starts.append(e[1])
            sizes.append(1)
            squeeze_dims.append(d)
        d += 1
    if len(starts) > 1:  # one index dtype for all (JAX's int_dtype_for_shape)
        starts = [lax.convert_element_type(util.asarray(i), _INDEX_DTYPE) for i in starts]
    y = lax.dynamic_slice(x, starts, sizes)
    if rev_dims:
        y = lax.rev(y, rev_dims)
    if squeeze_dims:
        y = lax.squeeze(y, squeeze_dims)
    if new_dims:
        y = lax.expand_dims(y, new_dims)
    return y


def _wrap_negative(i, n):
    """i + n where i < 0 (once), for a signed integer operand; int32."""
    i = util.asarray(i)
    if i.aval.dtype != _INDEX_DTYPE:
        i = lax.convert_element_type(i, _INDEX_DTYPE)
    if i.aval.dtype.kind == "u":
        return i
    # JAX's _normalize_index: 0-d constants, which lax broadcasts
    def const(v):
        return util.scalar(v, i.aval.dtype, i.aval.weak_type)

    return lax.select(lax.lt(i, const(0)), lax.add(i, const(n)), i)


# ---- the gather/scatter plan ----------------------------------------------------------------

class _Plan:
    """How a NumPy index maps onto gather/scatter: dimension numbers, the index array and fix-ups."""

    __slots__ = ("indices", "dnums", "slice_sizes", "gather_shape", "rev_dims", "final_shape", "empty", "unique",
                 "zero_axis")


def _plan(x, entries, wrap_negative=True):
    shape = x.aval.shape
    members = [k for k, e in enumerate(entries) if type(e) is tuple and e[0] in ("arr", "int", "dyn")]
    has_arrays = any(entries[k][0] == "arr" for k in members)
    contiguous = not members or members == list(range(members[0], members[-1] + 1))
    adv_shapes = [np.shape(entries[k][1]) if entries[k][0] == "arr" and isinstance(entries[k][1], np.ndarray)
                  else (entries[k][1].aval.shape if entries[k][0] != "int" else ()) for k in members]
    try:
        bshape = util.broadcast_shapes(*adv_shapes) if adv_shapes else ()
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together with shapes "
                         f"{' '.join(str(s) for s in adv_shapes)}") from None
    nb = len(bshape)
    offset_dims, collapsed, start_map, slice_sizes = [], [], [], []
    pieces = []  # (static NumPy array or operand, output positions of its dims)
    batch_pos = []  # gather output positions that are batch dims, with their sizes
    rev_dims, final_shape = [], []
    out_pos = 0
    adv_at = None
    if members and has_arrays and not contiguous:
        adv_at = 0
        batch_pos.extend((i, bshape[i]) for i in range(nb))
        final_shape.extend(bshape)
        out_pos = nb
    empty = False
    zero_axis = None  # the first empty axis an index array indexes
    y = 0
    for k, e in enumerate(entries):
        if e is None:
            final_shape.append(1)
            continue
        if type(e) is tuple and e[0] == "false":
            raise NotImplementedError("indexing with a scalar False is not supported")
        n = shape[y]
        if type(e) is tuple:
            if adv_at is None and has_arrays:
                adv_at = out_pos
                batch_pos.extend((adv_at + i, bshape[i]) for i in range(nb))
                final_shape.extend(bshape)
                out_pos += nb
            kind, v = e
            if kind == "int":
                v = np.asarray(v, dtype=np.int64)  # negative values wrap in _index_array
            rank = v.ndim if isinstance(v, np.ndarray) else v.aval.ndim
            dims = tuple(range(adv_at + nb - rank, adv_at + nb)) if rank else ()
            if n == 0:
                if not rank:  # JAX's error for a scalar index into an empty axis (get and update alike)
                    raise IndexError(f"index is out of bounds for axis {y} with size 0")
                empty = True
                if zero_axis is None:
                    zero_axis = y
            pieces.append((v, dims, n))
            collapsed.append(y)
            start_map.append(y)
            slice_sizes.append(1)
        else:
            low, length, step, rev = _slice_bounds(e, n)
            if step == 1 or length <= 1:
                if not (low == 0 and length == n):
                    pieces.append((np.asarray(low, dtype=np.int64), (), n))
                    start_map.append(y)
                slice_sizes.append(length)
                offset_dims.append(out_pos)
            else:
                pieces.append((np.arange(low, low + length * step, step, dtype=np.int64), (out_pos,), n))
                batch_pos.append((out_pos, length))
                collapsed.append(y)
                start_map.append(y)
                slice_sizes.append(1)
            if rev:
                rev_dims.append(out_pos)
            final_shape.append(length)
            out_pos += 1
        y += 1
    batch_pos.sort()
    batch_shape = tuple(s for _, s in batch_pos)
    where = {p: i for i, (p, _) in enumerate(batch_pos)}
    plan = _Plan()
    plan.dnums = (tuple(offset_dims), tuple(collapsed), tuple(start_map))
    plan.slice_sizes = tuple(slice_sizes)
    plan.rev_dims = tuple(rev_dims)
    plan.final_shape = tuple(final_shape)
    gshape = [0] * out_pos
    for p, s in batch_pos:
        gshape[p] = s
    it = iter(d for d, sz in zip(range(len(shape)), slice_sizes) if d not in collapsed)
    for p in offset_dims:
        gshape[p] = slice_sizes[next(it)]
    plan.gather_shape = tuple(gshape)
    plan.empty = empty or util.prod(plan.final_shape) == 0
    plan.unique = not has_arrays  # scalars and slices name each element once, in order (as JAX marks them)
    plan.zero_axis = zero_axis
    plan.indices = _index_array(pieces, batch_shape, where, wrap_negative) if pieces else None
    return plan


def _index_array(pieces, batch_shape, where, wrap_negative):
    """The gather index array: batch_shape + (number of indexed dims,), int32.

    Each piece is (index values, the gather output positions of its dimensions, the size of the
    dimension it indexes). Static pieces are assembled with NumPy (index metadata), traced ones
    with lax.
    """
    nbatch = len(batch_shape)
    info = np.iinfo(np.int32)

    def static(p, n):
        if wrap_negative and p.dtype.kind == "i":
            p = np.where(p < 0, p + n, p)
        return np.clip(p, info.min, info.max).astype(np.int32)

    if all(isinstance(p, np.ndarray) and p.ndim for p, _, _ in pieces):
        cols = []
        for p, dims, n in pieces:
            shp = [1] * nbatch
            for i, d in enumerate(dims):
                shp[where[d]] = p.shape[i]
            cols.append(np.broadcast_to(static(p, n).reshape(shp), batch_shape))
        return util.asarray(np.stack(cols, axis=-1))
    cols = []
    for p, dims, n in pieces:
        if isinstance(p, np.ndarray) and not p.ndim:  # a static int: a literal, as in JAX
            op = util.scalar(int(static(p, n)), _INDEX_DTYPE, False)
        elif isinstance(p, np.ndarray):
            op = util.asarray(static(p, n))
        else:
            op = _wrap_negative(p, n) if wrap_negative else util.convert(p, _INDEX_DTYPE)
        cols.append((op, tuple(where[d] for d in dims)))
    # As JAX: one index array covering the batch in order gains a trailing axis (expand_dims); others
    # are broadcast into the batch shape and concatenated along that axis.
    if len(cols) == 1 and cols[0][0].aval.shape == tuple(batch_shape) and cols[0][1] == tuple(range(nbatch)):
        return lax.expand_dims(cols[0][0], (nbatch,))
    parts = [lax.broadcast_in_dim(op, tuple(batch_shape) + (1,), dims) for op, dims in cols]
    return parts[0] if len(parts) == 1 else lax.concatenate(parts, nbatch)


def _gather_dnums(plan):
    offset, collapsed, start_map = plan.dnums
    return GatherDimensionNumbers(offset_dims=offset, collapsed_slice_dims=collapsed, start_index_map=start_map)


def _scatter_dnums(plan):
    offset, collapsed, start_map = plan.dnums
    return ScatterDimensionNumbers(update_window_dims=offset, inserted_window_dims=collapsed,
                                   scatter_dims_to_operand_dims=start_map)




def _gather(x, entries, mode, fill_value, indices_are_sorted=False, unique_indices=False):
    plan = _plan(x, entries)
    if plan.empty:
        if plan.zero_axis is not None and util.prod(plan.final_shape):
            # JAX gathers a non-empty result from an empty axis, which its gather refuses
            raise TypeError(f"Slice size at index {plan.zero_axis} in gather op is out of range, must be within "
                            "[0, 0 + 1), got 1.")
        return util.full(plan.final_shape, 0, x.aval.dtype, x.aval.weak_type)
    if plan.indices is None:
        y = x
    else:
        # JAX's default: indices promised in bounds (an out-of-bounds one is clamped; in the transposed
        # scatter-add of a gradient, dropped)
        m = GatherScatterMode.from_any(mode) if mode is not None else GatherScatterMode.PROMISE_IN_BOUNDS
        # Without a fill_value the core fills with JAX's default (NaN, the most negative int, ...).
        fv = fill_value if m == GatherScatterMode.FILL_OR_DROP else None
        y = lax.gather(x, plan.indices, _gather_dnums(plan), plan.slice_sizes, mode=m, fill_value=fv,
                       indices_are_sorted=indices_are_sorted or plan.unique,
                       unique_indices=unique_indices or plan.unique)
    if plan.rev_dims:
        y = lax.rev(y, plan.rev_dims)
    if y.aval.shape != plan.final_shape:
        y = lax.reshape(y, plan.final_shape)
    return y


def getitem(x, idx):
    """x[idx] with NumPy's indexing rules and JAX's out-of-bounds behaviour (clamping)."""
    t = type(idx)
    if t is int or t is slice:
        entries = [idx if t is slice else ("int", idx)] + [slice(None)] * (x.aval.ndim - 1)
        if x.aval.ndim == 0:
            raise IndexError("Too many indices: array is 0-dimensional, but 1 were indexed")
        if t is slice:
            entries[0] = _static_slice(idx)
        return _basic(x, entries)
    entries = _normalize(idx, x.aval.shape)
    if _is_basic(entries):
        return _basic(x, entries)
    return _gather(x, entries, None, None)
