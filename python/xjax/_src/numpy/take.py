"""take and take_along_axis: gathers along one axis, with JAX's modes (fill by default, clip, wrap)."""
import functools

from xjax._src import lax
from xjax._src.jit import jit
from xjax._src.lax.indexing import GatherDimensionNumbers
from xjax._src.numpy import util
from xjax._src.numpy.indexing import _INDEX_DTYPE, _wrap_negative
from xjax._src.numpy.ufuncs import remainder, where


def _take_mode(mode):
    if mode is None or mode == "fill":
        return "fill"
    if mode in ("clip", "wrap"):
        return mode
    if mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.take is not supported.")
    if mode == "promise_in_bounds":
        return "clip"
    raise ValueError(f"Invalid mode '{mode}' for jnp.take")


def _prep_indices(idx, n, mode):
    """Indices as int32 with the mode's treatment of negative and out-of-range values."""
    i = util.asarray(idx)
    if i.aval.dtype.kind not in "iu":
        raise ValueError("indices must have an integer type")
    i = util.convert(i, _INDEX_DTYPE)
    if mode == "wrap":
        nn = util.full(i.aval.shape, max(n, 1), _INDEX_DTYPE)
        r = lax.rem(i, nn)
        return lax.select(lax.lt(r, util.full(i.aval.shape, 0, _INDEX_DTYPE)), lax.add(r, nn), r)
    if mode == "fill":
        return _wrap_negative(i, n)
    return i


def take(a, indices, axis=None, out=None, mode=None, unique_indices=False, indices_are_sorted=False,
         fill_value=None):
    """Elements of a at `indices` along axis (flattened if None); out-of-bounds entries are filled by default."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    util.check_arraylike("take", a, indices)
    return _take(a, indices, axis=axis, mode=_take_mode(mode), unique_indices=bool(unique_indices),
                 indices_are_sorted=bool(indices_are_sorted), fill_value=fill_value)


@functools.partial(jit, static_argnames=("axis", "mode", "unique_indices", "indices_are_sorted", "fill_value"))
def _take(a, indices, axis, mode, unique_indices, indices_are_sorted, fill_value):
    """JAX's _take: the indices prepared for the mode, then one gather along the axis."""
    x, i = util.asarray(a), util.asarray(indices)
    if i.aval.dtype.kind not in "iu":
        raise ValueError("indices must have an integer type")
    if axis is None:
        x = lax.reshape(x, (x.aval.size,))
        axis = 0
    ax = util.canonicalize_axis(axis, x.aval.ndim)
    n = x.aval.shape[ax]
    if mode == "fill":
        i = where(i < 0, i + n, i)
    elif mode == "wrap":
        i = remainder(i, lax.elementwise._const(i, max(n, 1)))
    ishape, shape = i.aval.shape, x.aval.shape
    out_shape = shape[:ax] + ishape + shape[ax + 1:]
    if n == 0 and util.prod(ishape):  # JAX's error, whatever the mode
        raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
    if util.prod(out_shape) == 0:
        return util.full(out_shape, 0, x.aval.dtype, x.aval.weak_type)
    ni = len(ishape)
    offset = tuple(range(ax)) + tuple(range(ax + ni, len(out_shape)))
    dn = GatherDimensionNumbers(offset_dims=offset, collapsed_slice_dims=(ax,), start_index_map=(ax,))
    sizes = shape[:ax] + (1,) + shape[ax + 1:]
    gather_mode = {"fill": "fill", "wrap": "promise_in_bounds"}.get(mode, "clip")
    return lax.gather(x, lax.expand_dims(i, (ni,)), dn, sizes, mode=gather_mode,
                      fill_value=fill_value, unique_indices=unique_indices, indices_are_sorted=indices_are_sorted)


def take_along_axis(arr, indices, axis, mode=None, fill_value=None):
    """arr[..., indices, ...] matched elementwise along axis (out-of-bounds filled by default)."""
    util.check_arraylike("take_along_axis", arr, indices)
    x = util.asarray(arr)
    idx = util.asarray(indices)
    if axis is None:
        x = lax.reshape(x, (x.aval.size,))
        idx = lax.reshape(idx, (idx.aval.size,))
        axis = 0
    nd = x.aval.ndim
    if idx.aval.ndim != nd:
        raise ValueError(f"indices and arr must have the same number of dimensions; {idx.aval.ndim} vs. {nd}")
    ax = util.canonicalize_axis(axis, nd)
    m = _take_mode(mode)
    n = x.aval.shape[ax]
    idx = _prep_indices(idx, n, m)
    xs, ishp = x.aval.shape, idx.aval.shape
    out_shape = []
    for d in range(nd):
        if d == ax:
            out_shape.append(ishp[d])
        else:
            try:
                out_shape.append(util.broadcast_shapes((xs[d],), (ishp[d],))[0])
            except ValueError:
                raise ValueError(f"Incompatible shapes for broadcasting: {xs} and {ishp}") from None
    out_shape = tuple(out_shape)
    if util.prod(out_shape) == 0 or n == 0:  # JAX: zeros from an empty axis, whatever the indices
        return util.full(out_shape, 0, x.aval.dtype, x.aval.weak_type)
    idx = util.broadcast_to_shape(idx, out_shape)
    cols = []
    for d in range(nd):
        if d == ax:
            cols.append(lax.reshape(idx, out_shape + (1,)))
        elif xs[d] == 1:
            cols.append(util.full(out_shape + (1,), 0, _INDEX_DTYPE))
        else:
            cols.append(lax.broadcasted_iota(_INDEX_DTYPE, out_shape + (1,), d))
    ind = cols[0] if nd == 1 else lax.concatenate(cols, nd)
    dn = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=tuple(range(nd)),
                                start_index_map=tuple(range(nd)))
    gmode = "fill" if m == "fill" else "clip"
    fv = fill_value if gmode == "fill" else None  # None: the core's default, JAX's fill values
    return lax.gather(x, ind, dn, (1,) * nd, mode=gmode, fill_value=fv)
