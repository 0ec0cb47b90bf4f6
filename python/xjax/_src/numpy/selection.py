"""Counting, selection and index helpers: bincount/histogram, select/choose/compress/extract,
tril_indices and friends, ix_ and (un)ravel_multi_index (set operations: setops.py)."""
import operator

import numpy as np

from xjax._src import dtypes, lax
from xjax._src.numpy import creation, reductions, util
from xjax._src.numpy.nonzero import _concrete_int, _flat, _index_dtype, _true_positions, nonzero
from xjax._src.numpy.sorting import _SEARCH_INDEX, searchsorted
from xjax._src.numpy.take import take
from xjax._src.numpy.updates import _IndexUpdateRef

# ---- counting -------------------------------------------------------------------------------

def bincount(x, weights=None, minlength=0, *, length=None):
    """Counts (or summed weights) of each nonnegative integer value; negatives go to bin 0."""
    v = util.operand("bincount", x)
    if v.aval.dtype == dtypes.bool_:
        v = lax.convert_element_type(v, _index_dtype())
    if v.aval.dtype.kind not in "iu":
        raise TypeError(f"x argument to bincount must have an integer type; got {v.aval.dtype.name}")
    if v.aval.ndim != 1:
        raise ValueError("only 1-dimensional input supported.")
    minlength = operator.index(minlength)
    if length is None:
        top = lax.reduce_max(v, (0,)) if v.aval.size else util.scalar(-1, v.aval.dtype, False)
        length = builtin_max(_concrete_int(top, "The error occurred because of argument 'x' of jnp.bincount. "
                                                "To avoid this error, pass a static `length` argument.") + 1,
                             minlength)
    length = operator.index(length)
    if weights is None:
        w = util.full(v.aval.shape, 1, _index_dtype())
    else:
        w = util.asarray(weights)
        if w.aval.shape != v.aval.shape:
            raise ValueError("weights should have the same shape as x")
    idx = util.convert(v, _index_dtype())
    idx = lax.max(idx, util.full(idx.aval.shape, 0, _index_dtype()))
    zeros = util.full((length,), 0, w.aval.dtype)
    return _IndexUpdateRef(zeros, idx).add(w, mode="drop")


builtin_max = max


def histogram(a, bins=10, range=None, weights=None, density=None):  # noqa: A002 - NumPy's names
    """(counts, bin edges) of a; bins an int or the edges."""
    x = _flat(util.to_inexact(util.operand("histogram", a)))
    if isinstance(bins, (int, np.integer)):
        if range is None:
            lo, hi = reductions.min(x), reductions.max(x)
        else:
            lo, hi = range
        lo = util.convert(lo, x.aval.dtype)
        hi = util.convert(hi, x.aval.dtype)
        same = lax.eq(lo, hi)
        half = util.scalar(0.5, x.aval.dtype, False)
        lo = lax.select(same, lax.sub(lo, half), lo)
        hi = lax.select(same, lax.add(hi, half), hi)
        edges = creation.linspace(lo, hi, int(bins) + 1, dtype=x.aval.dtype)
    else:
        edges = util.convert(bins, x.aval.dtype)
    nb = edges.aval.shape[0] - 1
    idx = lax.sub(searchsorted(edges, x, side="right"), util.full(x.aval.shape, 1, _SEARCH_INDEX))
    last = lax.eq(x, lax.broadcast_in_dim(lax.reshape(lax.slice(edges, (nb,), (nb + 1,)), ()), x.aval.shape, ()))
    idx = lax.select(last, util.full(x.aval.shape, nb - 1, _SEARCH_INDEX), idx)
    inside = lax.bitwise_and(lax.ge(idx, util.full(idx.aval.shape, 0, _SEARCH_INDEX)),
                             lax.lt(idx, util.full(idx.aval.shape, nb, _SEARCH_INDEX)))
    idx = lax.select(inside, idx, util.full(idx.aval.shape, nb, _SEARCH_INDEX))
    if weights is None:  # JAX counts in the input's float type
        w = util.full(x.aval.shape, 1.0, x.aval.dtype)
    else:
        w = _flat(util.convert(weights, x.aval.dtype))
    counts = _IndexUpdateRef(util.full((nb,), 0, w.aval.dtype), idx).add(w, mode="drop")
    if density:
        widths = lax.sub(lax.slice(edges, (1,), (nb + 1,)), lax.slice(edges, (0,), (nb,)))
        total = lax.reduce_sum(counts, (0,))
        counts = lax.div(counts, lax.mul(widths, lax.broadcast_in_dim(total, (nb,), ())))
    return counts, edges


# ---- selection ------------------------------------------------------------------------------

def select(condlist, choicelist, default=0):
    """choicelist[i] where condlist[i] is the first true condition, else default."""
    if len(condlist) != len(choicelist):
        raise ValueError(f"condlist must have length equal to choicelist ({len(condlist)} vs {len(choicelist)})")
    if not condlist:
        raise ValueError("condlist must be non-empty")
    util.check_arraylike("select", *condlist, *choicelist, default)
    conds = []
    for c in condlist:
        c = util.asarray(c)
        if c.aval.dtype != dtypes.bool_:
            raise ValueError(f"condlist entries should be boolean ndarray, got {c.aval.dtype}")
        conds.append(c)
    vals = util.promote_dtypes(default, *choicelist)
    ops = util.broadcast_operands("select", conds + vals)
    conds, vals = ops[:len(conds)], ops[len(conds):]
    out = vals[0]
    for c, v in zip(reversed(conds), reversed(vals[1:])):
        out = lax.select(c, v, out)
    return out


def choose(a, choices, out=None, mode="raise"):
    """choices[a] elementwise (mode 'raise' checks bounds when a is concrete, 'wrap', 'clip')."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    idx = util.convert(util.operand("choose", a), _index_dtype())
    k = len(choices)
    vals = util.promote_dtypes(*choices)
    ops = util.broadcast_operands("choose", [idx] + vals)
    idx, vals = ops[0], ops[1:]
    shp = idx.aval.shape
    if mode == "wrap":
        kk = util.full(shp, k, _index_dtype())
        r = lax.rem(idx, kk)
        idx = lax.select(lax.lt(r, util.full(shp, 0, _index_dtype())), lax.add(r, kk), r)
    elif mode == "clip":
        idx = lax.clamp(util.scalar(0, _index_dtype(), False), idx, util.scalar(k - 1, _index_dtype(), False))
    elif mode == "raise":
        if util.is_concrete(idx):
            lo = lax.reduce_min(idx, tuple(range(len(shp)))) if idx.aval.size else None
            hi = lax.reduce_max(idx, tuple(range(len(shp)))) if idx.aval.size else None
            if lo is not None and (int(lo) < 0 or int(hi) >= k):
                raise ValueError("invalid entry in choice array")
    else:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    out = vals[0]
    for i in range(1, k):
        out = lax.select(lax.eq(idx, util.full(shp, i, _index_dtype())), vals[i], out)
    return out


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """The slices of a along axis where condition (1-D) is true; with `size`, the first `size` of them
    and fill_value after the last."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    c = util.operand("compress", condition)
    x = util.operand("compress", a)
    if c.aval.ndim != 1:
        raise ValueError("condition must be a 1D array")
    c = c if c.aval.dtype == dtypes.bool_ else lax.ne(c, util.full(c.aval.shape, 0, c.aval.dtype))
    if axis is None:
        x, axis = _flat(x), 0
    ax = util.canonicalize_axis(axis, x.aval.ndim)
    n = min(x.aval.shape[ax], c.aval.shape[0])
    if size is None and c.aval.shape[0] > n and _concrete_int(
            lax.reduce_or(lax.slice(c, (n,), c.aval.shape), (0,)), "jnp.compress needs a concrete condition"):
        raise ValueError("condition contains entries that are out of bounds")
    if size is not None and not 0 <= size <= x.aval.shape[ax]:
        raise ValueError("size must be positive and not greater than the size of the array axis;"
                         f" got {size=} for a.shape[axis]={x.aval.shape[ax]}")
    return kept(lax.slice_in_dim(x, 0, n, 1, ax), lax.slice(c, (0,), (n,)), size, fill_value, ax)


def kept(x, keep, size, fill_value, axis=0):
    """The slices of x along axis where keep (1-D) is true, in order; with `size` the first `size` of
    them and fill_value after the last (size=None: all of them, which needs a concrete `keep`)."""
    if not x.aval.shape[axis]:  # nothing to take: only fill
        shape = list(x.aval.shape)
        shape[axis] = size or 0
        return util.broadcast_to_shape(util.convert(0 if size is None else fill_value, x.aval.dtype), tuple(shape))
    pos, count = _true_positions(keep, size, None)
    out = take(x, pos, axis=axis, mode="clip")
    if size is None or not out.aval.size:
        return out
    valid = lax.lt(lax.iota(_index_dtype(), pos.aval.shape[0]), lax.broadcast_in_dim(count, pos.aval.shape, ()))
    valid = lax.broadcast_in_dim(valid, out.aval.shape, (axis,))
    return lax.select(valid, out, util.broadcast_to_shape(util.convert(fill_value, out.aval.dtype), out.aval.shape))


def extract(condition, arr, *, size=None, fill_value=0):
    """The elements of arr where condition is true (both flattened)."""
    return compress(_flat(util.operand("extract", condition)), _flat(util.operand("extract", arr)), size=size,
                    fill_value=fill_value)


# ---- index helpers --------------------------------------------------------------------------
# These depend only on static sizes, so the indices are metadata built with NumPy (as JAX does).

def _static_pair(arrs):
    return tuple(util.asarray(np.asarray(r, dtype=_index_dtype())) for r in arrs)


def tril_indices(n, k=0, m=None):
    """Row and column indices of the lower triangle of an (n, m) array."""
    return _static_pair(np.tril_indices(operator.index(n), operator.index(k), None if m is None else operator.index(m)))


def triu_indices(n, k=0, m=None):
    """Row and column indices of the upper triangle of an (n, m) array."""
    return _static_pair(np.triu_indices(operator.index(n), operator.index(k), None if m is None else operator.index(m)))


def mask_indices(n, mask_func, k=0, *, size=None):
    """The indices of the nonzero entries of mask_func(ones((n, n)), k), such as jnp.triu."""
    i, j = nonzero(mask_func(creation.ones((operator.index(n), operator.index(n))), k), size=size)
    return i, j


def tril_indices_from(arr, k=0):
    """tril_indices for the shape of the 2-D arr."""
    s = util.aval_of(arr).shape
    if len(s) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return tril_indices(s[0], k, s[1])


def triu_indices_from(arr, k=0):
    """triu_indices for the shape of the 2-D arr."""
    s = util.aval_of(arr).shape
    if len(s) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return triu_indices(s[0], k, s[1])


def diag_indices(n, ndim=2):
    """Indices of the main diagonal of an n x ... x n array."""
    n, ndim = operator.index(n), operator.index(ndim)
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
    return (lax.iota(_index_dtype(), n),) * ndim


def diag_indices_from(arr):
    """diag_indices for the (square) shape of arr."""
    s = util.aval_of(arr).shape
    if len(s) < 2 or len(set(s)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(s[0], len(s))


def ix_(*args):
    """Open-mesh index arrays: the i-th argument shaped to vary along axis i."""
    n = len(args)
    out = []
    for i, a in enumerate(args):
        x = util.operand("ix_", a)
        if x.aval.ndim != 1:
            raise ValueError(f"Cross index must be 1 dimensional, got {x.aval.ndim}")
        if x.aval.dtype == dtypes.bool_:
            (x,) = nonzero(x)
        shape = [1] * n
        shape[i] = x.aval.shape[0]
        out.append(lax.reshape(x, tuple(shape)))
    return tuple(out)


def unravel_index(indices, shape):
    """Flat indices to a tuple of coordinate arrays for `shape` (out-of-range indices clamp)."""
    it = _index_dtype()
    idx = util.convert(util.operand("unravel_index", indices), it)
    shape = util.canonicalize_shape(shape)
    total = util.prod(shape)
    s = idx.aval.shape
    idx = lax.select(lax.lt(idx, util.full(s, 0, it)), lax.add(idx, util.full(s, total, it)), idx)
    idx = lax.clamp(util.scalar(0, it, False), idx, util.scalar(builtin_max(total - 1, 0), it, False))
    out = []
    stride = total
    for d in shape:
        stride //= d if d else 1
        q = lax.div(idx, util.full(s, builtin_max(stride, 1), it))
        out.append(lax.rem(q, util.full(s, builtin_max(d, 1), it)))
    return tuple(out)


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """Coordinate arrays to flat indices (mode 'clip' or 'wrap'; 'raise' checks concrete inputs)."""
    dims = util.canonicalize_shape(dims)
    coords = [util.convert(util.operand("ravel_multi_index", c), _index_dtype()) for c in multi_index]
    if len(coords) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
    coords = util.broadcast_operands("ravel_multi_index", coords)
    out = None
    stride = 1
    order_dims = list(range(len(dims)))[::-1] if order == "C" else list(range(len(dims)))
    for i in order_dims:
        c, d = coords[i], dims[i]
        s = c.aval.shape
        if mode == "clip":
            c = lax.clamp(util.scalar(0, _index_dtype(), False), c, util.scalar(d - 1, _index_dtype(), False))
        elif mode == "wrap":
            r = lax.rem(c, util.full(s, d, _index_dtype()))
            c = lax.select(lax.lt(r, util.full(s, 0, r.aval.dtype)), lax.add(r, util.full(s, d, r.aval.dtype)), r)
        elif util.is_concrete(c) and c.aval.size:
            if int(lax.reduce_min(c, tuple(range(len(s))))) < 0 or int(lax.reduce_max(c, tuple(range(len(s))))) >= d:
                raise ValueError("invalid entry in coordinates array")
        term = lax.mul(c, util.full(s, stride, _index_dtype())) if stride != 1 else c
        out = term if out is None else lax.add(out, term)
        stride *= d
    return out
