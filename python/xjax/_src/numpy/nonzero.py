"""Where an array is nonzero: nonzero, flatnonzero, argwhere (and the positions of a mask's True
entries, which boolean indexing and one-argument where use)."""
import numpy as np

from xjax._src import core, dtypes, lax
from xjax._src.numpy import util


def _index_dtype():
    """The dtype of indices and counts: the default int (int64 under x64, as in JAX)."""
    return dtypes.default_int_dtype()


def _flat(x):
    return lax.reshape(x, (x.aval.size,))


def _concrete_int(x, message):
    value = core.to_concrete_value(x)
    if value is None:
        raise util.ConcretizationTypeError(
            f"Abstract tracer value encountered where concrete value is expected: {x}\n{message}")
    return int(np.asarray(value))


def _true_positions(mask_flat, size, fill_value):
    """Flat positions of the True entries (in order), padded/truncated to `size` with fill_value."""
    n = mask_flat.aval.shape[0]
    count_arr = lax.reduce_sum(lax.convert_element_type(mask_flat, _index_dtype()), (0,))
    if size is None:
        size = _concrete_int(count_arr, "The size argument of jnp.nonzero must be statically specified to use "
                                        "jnp.nonzero within JAX transformations.")
    if n == 0:
        return util.full((size,), 0 if fill_value is None else fill_value, _index_dtype()), count_arr
    key = lax.convert_element_type(lax.bitwise_not(mask_flat), _index_dtype())
    _, pos = lax.sort((key, lax.iota(_index_dtype(), n)), dimension=0, is_stable=True, num_keys=1)
    if size <= n:
        pos = lax.slice(pos, (0,), (size,))
    else:
        pos = lax.pad(pos, util.scalar(0, _index_dtype(), False), [(0, size - n, 0)])
    return pos, count_arr


def nonzero(a, *, size=None, fill_value=None):
    """Indices of the nonzero elements, one array per dimension (size: pad/truncate to a static length)."""
    x = util.operand("nonzero", a)
    if x.aval.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use jnp.atleast_1d(scalar).nonzero() "
                         "instead.")
    mask = x if x.aval.dtype == dtypes.bool_ else lax.ne(x, util.full(x.aval.shape, 0, x.aval.dtype))
    pos, count = _true_positions(_flat(mask), size, None)
    k = pos.aval.shape[0]
    shape = x.aval.shape
    out = []
    stride = util.prod(shape)
    for d in shape:
        stride //= max(d, 1) if d else 1
        if d == 0:
            out.append(util.full((k,), 0, _index_dtype()))
            continue
        i = lax.div(pos, util.full((k,), max(stride, 1), _index_dtype())) if stride > 1 else pos
        i = lax.rem(i, util.full((k,), d, _index_dtype()))
        out.append(i)
    if size is not None and k:
        valid = lax.lt(lax.iota(_index_dtype(), k), lax.broadcast_in_dim(count, (k,), ()))
        fills = fill_value if isinstance(fill_value, (tuple, list)) else [fill_value] * len(out)
        if len(fills) != len(out):
            raise ValueError(f"fill_value must be a scalar or a tuple of length {len(out)}; got {fill_value}")
        out = [lax.select(valid, o, util.broadcast_to_shape(util.convert(0 if f is None else f, _index_dtype()), (k,)))
               for o, f in zip(out, fills)]
    return tuple(out)


def flatnonzero(a, *, size=None, fill_value=None):
    """Indices of the nonzero elements of the flattened array."""
    x = util.operand("flatnonzero", a)
    return nonzero(_flat(x), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    """(number of nonzero elements, ndim) array of their indices."""
    x = util.operand("argwhere", a)
    if x.aval.ndim == 0:
        k = nonzero(lax.reshape(x, (1,)), size=size)[0].aval.shape[0]
        return util.full((k, 0), 0, _index_dtype())
    res = nonzero(x, size=size, fill_value=fill_value)
    k = res[0].aval.shape[0]
    return lax.concatenate([lax.reshape(r, (k, 1)) for r in res], 1)
