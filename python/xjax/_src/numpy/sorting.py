"""Sorting and searching: sort/argsort/lexsort/partition, searchsorted/digitize, unique."""
import operator
from typing import NamedTuple

from xjax._src import dtypes, lax
from xjax._src.array import Array
from xjax._src.jit import jit
from xjax._src.numpy import manipulation, ufuncs, util
from xjax._src.numpy.nonzero import _flat, _index_dtype, _true_positions
from xjax._src.numpy.take import take

# JAX's searchsorted, digitize and argpartition give int32 indices even under x64.
_SEARCH_INDEX = dtypes.int32


def _iota_like(x, axis):
    return lax.broadcasted_iota(_index_dtype(), x.aval.shape, axis)


# ---- sorting --------------------------------------------------------------------------------

def _sort_operand(name, a, axis, order):
    """(operand, canonical axis) for sort/argsort: axis None sorts the flattened array."""
    if order is not None:
        raise ValueError(f"'order' argument to {name} is not supported.")
    x = util.operand(name, a)
    if axis is None:
        return _flat(x), 0
    return x, util.canonicalize_axis(axis, x.aval.ndim)


def _sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    """a sorted along axis (flattened if None); NaNs last; descending is the ascending order reversed
    (JAX's: equal values that differ, -0.0 and 0.0, come out in reverse)."""
    x, ax = _sort_operand("sort", a, axis, order)
    result = lax.sort(x, dimension=ax, is_stable=True)
    return lax.rev(result, (ax,)) if descending else result


_sort.__name__ = "sort"  # a jit named sort, as JAX's
sort = jit(_sort, static_argnames=("axis", "kind", "order", "stable", "descending"))


def _argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    """Indices that sort a along axis (stable; flattened if axis is None)."""
    x, ax = _sort_operand("argsort", a, axis, order)
    if x.aval.ndim == 0:
        return util.full((), 0, _index_dtype())
    if descending:
        xr = lax.rev(x, (ax,))
        _, perm = lax.sort((xr, _iota_like(xr, ax)), dimension=ax, is_stable=True, num_keys=1)
        n = x.aval.shape[ax]
        return lax.sub(util.full(perm.aval.shape, n - 1, _index_dtype()), lax.rev(perm, (ax,)))
    _, perm = lax.sort((x, _iota_like(x, ax)), dimension=ax, is_stable=True, num_keys=1)
    return perm


_argsort.__name__ = "argsort"  # a jit named argsort, as JAX's
argsort = jit(_argsort, static_argnames=("axis", "kind", "order", "stable", "descending"))


def lexsort(keys, axis=-1):
    """Indices that sort by the last key, then the one before, and so on."""
    ks = [util.operand("lexsort", k) for k in keys]
    if not ks:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    shape = ks[0].aval.shape
    if any(k.aval.shape != shape for k in ks):
        raise ValueError("all keys need to be the same shape")
    if not shape:
        return util.full((), 0, _index_dtype())
    ax = util.canonicalize_axis(axis, len(shape))
    ops = list(reversed(ks)) + [lax.broadcasted_iota(_index_dtype(), shape, ax)]
    return lax.sort(tuple(ops), dimension=ax, is_stable=True, num_keys=len(ks))[-1]


def _refuse_complex(name, x):
    if x.aval.dtype in dtypes.COMPLEX:  # JAX's refusal
        raise NotImplementedError(f"jnp.{name} for complex dtype is not implemented.")


def _partition_axis(x, kth, axis):
    """(axis, its length, kth made non-negative) of partition and argpartition, or JAX's error."""
    ax = util.canonicalize_axis(axis, x.aval.ndim)
    n = x.aval.shape[ax]
    kth = operator.index(kth)
    kth = kth + n if kth < 0 else kth
    if not 0 <= kth < n:
        raise ValueError(f"kth(={kth}) out of bounds {n}")
    return ax, n, kth


def partition(a, kth, axis=-1):
    """a with the kth smallest element at position kth, smaller ones (sorted) before, larger ones after."""
    x = util.operand("partition", a)
    _refuse_complex("partition", x)
    ax, n, kth = _partition_axis(x, kth, axis)
    s = lax.sort(x, dimension=ax, is_stable=True)
    low = lax.slice_in_dim(s, 0, kth + 1, 1, ax)
    high = lax.rev(lax.slice_in_dim(s, kth + 1, n, 1, ax), (ax,))
    return lax.concatenate([low, high], ax)


def argpartition(a, kth, axis=-1):
    """Indices that partition a (see partition)."""
    x = util.operand("argpartition", a)
    _refuse_complex("argpartition", x)
    ax, n, kth = _partition_axis(x, kth, axis)
    perm = argsort(x, ax)
    low = lax.slice_in_dim(perm, 0, kth + 1, 1, ax)
    high = lax.rev(lax.slice_in_dim(perm, kth + 1, n, 1, ax), (ax,))
    return util.convert(lax.concatenate([low, high], ax), _SEARCH_INDEX)


def sort_complex(a):
    """sort along the last axis, then as a complex array (JAX's order of the two)."""
    s = sort(util.operand("sort_complex", a))
    dt = s.aval.dtype
    return s if dt in dtypes.COMPLEX else util.convert(s, dtypes.complex_dtype_of(dtypes.to_inexact_dtype(dt)))


# ---- searching ------------------------------------------------------------------------------

def _nan_aware_less(a, v, or_equal):
    """a < v (or a <= v) in the sort order: NaN is larger than everything; complex numbers order by
    their real parts, then their imaginary parts (JAX's comparator)."""
    if a.aval.dtype in dtypes.COMPLEX:
        ar, vr = lax.real(a), lax.real(v)
        same_re = lax.bitwise_or(lax.eq(ar, vr), lax.bitwise_and(lax.ne(ar, ar), lax.ne(vr, vr)))
        return lax.bitwise_or(_nan_aware_less(ar, vr, False),
                              lax.bitwise_and(same_re, _nan_aware_less(lax.imag(a), lax.imag(v), or_equal)))
    lt = lax.le(a, v) if or_equal else lax.lt(a, v)
    if a.aval.dtype not in dtypes.FLOATING:
        return lt
    vnan = lax.ne(v, v)
    anan = lax.ne(a, a)
    if or_equal:
        return lax.bitwise_or(lt, vnan)
    return lax.bitwise_or(lt, lax.bitwise_and(vnan, lax.bitwise_not(anan)))


def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    """Indices where v would be inserted into the sorted 1-D a to keep it sorted."""
    if side not in ("left", "right"):
        raise ValueError(f"{side!r} is an invalid value for keyword 'side'. Expected one of ['left', 'right'].")
    util.check_arraylike("searchsorted", a, v)
    av, vv = util.promote_dtypes(a, v)
    if av.aval.ndim != 1:
        raise ValueError("a should be 1-dimensional")
    if sorter is not None:
        av = take(av, sorter, mode="clip")
    n = av.aval.shape[0]
    vshape = vv.aval.shape
    if n == 0:
        return util.full(vshape, 0, _SEARCH_INDEX)
    shape = vshape + (n,)
    ab = lax.broadcast_in_dim(av, shape, (len(vshape),))
    vb = lax.broadcast_in_dim(vv, shape, tuple(range(len(vshape))))
    less = _nan_aware_less(ab, vb, side == "right")
    return lax.reduce_sum(lax.convert_element_type(less, _SEARCH_INDEX), (len(vshape),))


def digitize(x, bins, right=False, *, method=None):
    """The index of the bin of each x (bins increasing or decreasing)."""
    util.check_arraylike("digitize", x, bins)
    b = util.asarray(bins)
    if b.aval.ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins}")
    n = b.aval.shape[0]
    if n == 0:
        return util.full(util.aval_of(x).shape, 0, _SEARCH_INDEX)
    side = "left" if right else "right"
    inc = searchsorted(b, x, side=side)
    dec = lax.sub(util.full(inc.aval.shape, n, _SEARCH_INDEX), searchsorted(lax.rev(b, (0,)), x,
                                                                      side="left" if right else "right"))
    increasing = ufuncs.greater_equal(lax.slice(b, (n - 1,), (n,)), lax.slice(b, (0,), (1,)))  # (complex: jnp's order)
    increasing = lax.broadcast_in_dim(lax.reshape(increasing, ()), inc.aval.shape, ())
    return lax.select(increasing, inc, dec)


# ---- nonzero --------------------------------------------------------------------------------

# ---- unique ---------------------------------------------------------------------------------

def _unique_sorted_mask(s, equal_nan):
    """True where a sorted array starts a new value."""
    n = s.aval.shape[0]
    head = util.full((1,), True, dtypes.bool_)
    if n <= 1:
        return lax.broadcast_in_dim(util.scalar(True, dtypes.bool_, False), (n,), ())
    hi, lo = lax.slice(s, (1,), (n,)), lax.slice(s, (0,), (n - 1,))
    diff = lax.ne(hi, lo)
    if equal_nan and s.aval.dtype in dtypes.FLOATING + dtypes.COMPLEX:
        both = lax.bitwise_and(lax.ne(hi, hi), lax.ne(lo, lo))
        diff = lax.bitwise_and(diff, lax.bitwise_not(both))
    return lax.concatenate([head, diff], 0)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *, equal_nan=True,
           size=None, fill_value=None, sorted=True):  # noqa: A002 - NumPy's name
    """The sorted unique values (rows, with axis), optionally with first indices, inverse and counts."""
    x = util.operand("unique", ar)
    in_shape = x.aval.shape
    if x.aval.dtype in dtypes.COMPLEX:  # JAX's: a value with a NaN part becomes nan + 0j, sorted last
        nan = util.full(x.aval.shape, complex(float('nan'), 0), x.aval.dtype)
        x = lax.select(lax.ne(x, x), nan, x)
    if axis is not None:
        return _unique_axis(x, axis, return_index, return_inverse, return_counts, size, fill_value)
    it = _index_dtype()
    x = _flat(x)
    n = x.aval.shape[0]
    s, perm = lax.sort((x, lax.iota(it, n)), dimension=0, is_stable=True, num_keys=1)
    mask = _unique_sorted_mask(s, equal_nan)
    # Where each group of equal values starts in s, and (for the counts) where the next one starts.
    starts, count = _true_positions(mask, None if size is None else size + 1, None)
    k = starts.aval.shape[0] if size is None else size
    m = starts.aval.shape[0]
    nxt = lax.concatenate([lax.slice(starts, (min(1, m),), (m,)), util.full((1,), n, it)], 0)
    nxt, starts = lax.slice(nxt, (0,), (k,)), lax.slice(starts, (0,), (k,))
    if size is not None:
        # Padding slots start at 0, as in JAX (their index is that of the smallest element); the last
        # real group ends at n even when size cuts the groups short.
        slot = lax.iota(it, k)
        valid = lax.lt(slot, lax.broadcast_in_dim(count, (k,), ()))
        starts = lax.select(valid, starts, util.full((k,), 0, it))
        has_next = lax.lt(lax.add(slot, util.full((k,), 1, it)), lax.broadcast_in_dim(count, (k,), ()))
        nxt = lax.select(has_next, nxt, util.full((k,), n, it))
    vals = take(s, starts, mode="clip") if n else util.full((k,), 0, x.aval.dtype)
    if size is not None and k:
        fv = lax.reduce_min(x, (0,)) if fill_value is None and n else util.convert(
            0 if fill_value is None else fill_value, x.aval.dtype)
        vals = lax.select(valid, vals, util.broadcast_to_shape(fv, (k,)))
    out = [vals]
    if return_index:
        out.append(take(perm, starts, mode="clip") if n else util.full((k,), 0, it))
    if return_inverse:
        group = lax.sub(lax.cumsum(lax.convert_element_type(mask, it), 0), util.full((n,), 1, it))
        _, inv = lax.sort((perm, group), dimension=0, is_stable=True, num_keys=1) if n else (None, group)
        out.append(lax.reshape(inv, in_shape) if len(in_shape) != 1 else inv)
    if return_counts:
        counts = lax.sub(nxt, starts)
        if size is not None:
            counts = lax.select(valid, counts, util.full((k,), 0, it))
        out.append(counts)
    return out[0] if len(out) == 1 else tuple(out)


def _unique_axis(x, axis, return_index, return_inverse, return_counts, size, fill_value):
    ax = util.canonicalize_axis(axis, x.aval.ndim)
    xm = manipulation.moveaxis(x, ax, 0)
    rest = xm.aval.shape[1:]
    n = xm.aval.shape[0]
    m = util.prod(rest)
    rows = lax.reshape(xm, (n, m))
    cols = [lax.reshape(lax.slice(rows, (0, j), (n, j + 1)), (n,)) for j in range(m)]
    res = lax.sort(tuple(cols) + (lax.iota(_index_dtype(), n),), dimension=0, is_stable=True, num_keys=max(m, 1)) \
        if m else (lax.iota(_index_dtype(), n),)
    perm = res[-1]
    scols = res[:-1]
    if n == 0:
        mask = util.full((0,), True, dtypes.bool_)
    else:
        diffs = [lax.ne(lax.slice(c, (1,), (n,)), lax.slice(c, (0,), (n - 1,))) for c in scols]
        any_diff = diffs[0] if diffs else util.full((n - 1,), False, dtypes.bool_)
        for d in diffs[1:]:
            any_diff = lax.bitwise_or(any_diff, d)
        mask = lax.concatenate([util.full((1,), True, dtypes.bool_), any_diff], 0)
    starts, count = _true_positions(mask, size, None)
    k = starts.aval.shape[0]
    first = take(perm, starts, mode="clip") if n else starts
    vals = take(xm, first, axis=0, mode="clip") if n else util.full((k,) + rest, 0, x.aval.dtype)
    out = [manipulation.moveaxis(vals, 0, ax)]
    if return_index:
        out.append(first)
    if return_inverse:
        it = _index_dtype()
        group = lax.sub(lax.cumsum(lax.convert_element_type(mask, it), 0), util.full((n,), 1, it))
        _, inv = lax.sort((perm, group), dimension=0, is_stable=True, num_keys=1)
        out.append(inv)
    if return_counts:
        total = util.full((1,), n, _index_dtype())
        ends = lax.concatenate([lax.slice(starts, (1,), (k,)), total], 0) if k else starts
        out.append(lax.sub(ends, starts))
    return out[0] if len(out) == 1 else tuple(out)


class _UniqueAllResult(NamedTuple):
    """unique_all's result (JAX's type and field names)."""
    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class _UniqueCountsResult(NamedTuple):
    """unique_counts's result (JAX's type and field names)."""
    values: Array
    counts: Array


class _UniqueInverseResult(NamedTuple):
    """unique_inverse's result (JAX's type and field names)."""
    values: Array
    inverse_indices: Array


# The Array API's unique_* functions treat NaNs as distinct (equal_nan=False), unlike jnp.unique.

def unique_values(x, /, *, size=None, fill_value=None):
    """The sorted unique values (each NaN counts as distinct)."""
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)


def unique_counts(x, /, *, size=None, fill_value=None):
    """(values, counts) of the unique values, as a named tuple."""
    return _UniqueCountsResult(*unique(x, return_counts=True, equal_nan=False, size=size, fill_value=fill_value))


def unique_inverse(x, /, *, size=None, fill_value=None):
    """(values, inverse_indices) of the unique values, as a named tuple; inverse_indices has x's shape."""
    return _UniqueInverseResult(*unique(x, return_inverse=True, equal_nan=False, size=size, fill_value=fill_value))


def unique_all(x, /, *, size=None, fill_value=None):
    """(values, indices, inverse_indices, counts) of the unique values, as a named tuple."""
    return _UniqueAllResult(*unique(x, return_index=True, return_inverse=True, return_counts=True, equal_nan=False,
                                    size=size, fill_value=fill_value))
