"""Array creation: array/asarray, zeros/ones/full/empty(_like), arange, linspace, eye, tri, diag, meshgrid."""
import math
import operator

import numpy as np

from xjax._src import core, dtypes, lax, placement
from xjax._src.array import Array, check_device
from xjax._src.transfer import put_on
from xjax._src.core import ShapedArray as _ShapedArray, to_concrete_value as _to_concrete_value
from xjax._src.lax.linalg import tri_mask
from xjax._src.lax.parallel import vary_over
from xjax._src.lax.sharding_ops import placed, splits_explicit, typed_sharding_of
from xjax._src.sharding import check_trivial
from xjax._src.numpy import array_from_list, manipulation as shp, util
from xjax._src.numpy.util import dtype_arg

# ---- array / asarray ------------------------------------------------------------------------

def _leaves(obj, out):
    if isinstance(obj, (list, tuple)):
        for e in obj:
            _leaves(e, out)
    else:
        out.append(obj)
    return out


def _flat_scalar_list_dtype(x):
    """The dtype of a non-empty flat list of Python floats, ints or bools of one type (None otherwise, or
    for ints the default int cannot hold, which the general path reports)."""
    kinds = set(map(type, x))
    if len(kinds) != 1:
        return None
    (kind,) = kinds
    if kind is float:
        return dtypes.default_float_dtype()
    if kind is bool:
        return dtypes.bool_
    if kind is int:
        dt = dtypes.default_int_dtype()
        info = np.iinfo(dt)
        return dt if info.min <= min(x) and max(x) <= info.max else None
    return None


def array(object, dtype=None, copy=True, order="K", ndmin=0, *, device=None):  # noqa: A002 - NumPy's name
    """An xjax Array from an array, a scalar, a NumPy array or a (nested) list of those."""
    target = check_device(device, "array")
    if order not in (None, "K", "C", "A"):
        raise NotImplementedError(f"Only implemented for order='K', got order={order!r}")
    dt = dtype_arg(dtype, "array")
    x = object
    if isinstance(x, util._ARRAY_TYPES):
        out = x if dt is None or x.aval.dtype == dt else lax.convert_element_type(x, dt)
        if copy and out is x:  # traced too, as JAX (a copy equation)
            out = lax.copy_p.bind(x)
    elif type(x) in util._PY_SCALARS:
        d, weak = dtypes.dtype_and_weak(x)
        if dt is not None:
            array_from_list.check_python_int(x, dt)
        out = util.scalar(x, d if dt is None else dt, weak and dt is None)
    elif type(x) is list and dt is None and (flat_dt := _flat_scalar_list_dtype(x)) is not None:
        out = placement.host_array(np.array(x, dtype=flat_dt), flat_dt)  # the common case, without the walk
    elif isinstance(x, (list, tuple)):
        leaves = _leaves(x, [])
        if any(leaf is None for leaf in leaves):
            raise ValueError("None is not a valid value for jnp.array")
        others = [leaf for leaf in leaves if not util.is_arraylike(leaf)]
        for leaf in others:
            if not hasattr(leaf, "__jax_array__"):
                util.asarray(leaf)  # raises the JAX error for the leaf's type
        if others:
            x = array_from_list.map_nested(x, lambda e: e if util.is_arraylike(e) else e.__jax_array__())
            leaves = _leaves(x, [])
        if dt is None:
            dt = dtypes.result_type(*leaves) if leaves else dtypes.default_float_dtype()
        if any(isinstance(leaf, util._ARRAY_TYPES) for leaf in leaves):
            out = array_from_list.stack(x, dt)  # arrays are stacked by the core, traced or not
        else:  # host data only: NumPy reads it once at the edge
            out = placement.host_array(np.array(x, dtype=dt), dt)
    elif hasattr(x, "__jax_array__"):
        return array(x.__jax_array__(), dtype, copy, order, ndmin, device=device)
    else:
        if not isinstance(x, (np.ndarray, np.generic)):
            try:
                x = np.asarray(x)
            except Exception:
                raise TypeError(f"Unexpected input type for array: {type(object)}") from None
            if x.dtype.kind == "O":
                raise TypeError(f"Unexpected input type for array: {type(object)}")
        out = util.asarray(x, dt)
    if ndmin > out.aval.ndim:
        nd = out.aval.ndim
        shape = (1,) * (ndmin - nd) + out.aval.shape
        out = lax.broadcast_in_dim(out, shape, tuple(range(ndmin - nd, ndmin)))
    return put_on(out, target)


def asarray(a, dtype=None, order=None, *, copy=None, device=None):
    """a as an xjax Array without copying when it already is one (converted to dtype if given)."""
    target = check_device(device, "asarray")
    if dtype is None and isinstance(a, util._ARRAY_TYPES):
        return put_on(a, target)
    return array(a, dtype=dtype, copy=bool(copy), order=order, device=target)


def copy(a, order=None):
    """A copy of a."""
    return array(a, copy=True)


# ---- filled arrays --------------------------------------------------------------------------

def _filled(shape, value, dtype, fun_name, device, out_sharding=None):
    typed, target = _typed_or_target(device, out_sharding, fun_name, shape)
    shape = util.canonicalize_shape(shape)
    util.check_nonnegative_shape(shape, "broadcast_in_dim")
    dt = dtype_arg(dtype, fun_name) or dtypes.default_float_dtype()
    if typed is not None:
        return placed(util.full(shape, value, dt, sharding=typed), typed, out_sharding)
    return put_on(util.full(shape, value, dt), target)


def zeros(shape, dtype=None, *, device=None, out_sharding=None):
    """An array of zeros (default dtype float32)."""
    return _filled(shape, 0, dtype, "zeros", device, out_sharding)


def ones(shape, dtype=None, *, device=None, out_sharding=None):
    """An array of ones (default dtype float32)."""
    return _filled(shape, 1, dtype, "ones", device, out_sharding)


def empty(shape, dtype=None, *, device=None, out_sharding=None):
    """Like zeros: xjax arrays are always initialised."""
    return _filled(shape, 0, dtype, "empty", device, out_sharding)


def full(shape, fill_value, dtype=None, *, device=None, out_sharding=None):
    """An array of `shape` filled with fill_value (broadcast), with fill_value's dtype by default."""
    typed, target = _typed_or_target(device, out_sharding, "full", shape)
    shape = util.canonicalize_shape(shape)
    util.check_nonnegative_shape(shape, "broadcast_in_dim")
    dt = dtype_arg(dtype, "full")
    v = util.asarray(fill_value) if dt is None else util.convert(fill_value, dt)
    if dt is not None and util.is_array(fill_value) is False and type(fill_value) in util._PY_SCALARS:
        v = util.scalar(fill_value, dt, False)
    if typed is not None:
        return placed(util.broadcast_to_shape(v, shape, typed), typed, out_sharding)
    return put_on(util.broadcast_to_shape(v, shape), target)


def _target(device, out_sharding, fun_name):
    """The placement a `device=` or `out_sharding=` argument asks for (check_device)."""
    if out_sharding is not None:
        if device is not None:
            raise ValueError(f"{fun_name}: pass device or out_sharding, not both")
        device = out_sharding
    return check_device(device, fun_name)


def _typed_or_target(device, out_sharding, fun_name, shape):
    """(the sharding of the result's type, None) for an out_sharding splitting over Explicit mesh axes
    (JAX's sharding in types), else (None, the placement _target gives)."""
    if out_sharding is None or not splits_explicit(out_sharding):
        return None, _target(device, out_sharding, fun_name)
    if device is not None:
        raise ValueError(f"{fun_name}: pass device or out_sharding, not both")
    ndim = len(shape) if isinstance(shape, (tuple, list)) else 1
    return typed_sharding_of(out_sharding, ndim, fun_name), None


def _check_like(fun_name, a):
    """The *_like functions take arrays, scalars, or anything with a shape and dtype (ShapeDtypeStruct)."""
    if not (hasattr(a, "shape") and hasattr(a, "dtype")):
        util.check_arraylike(fun_name, a)


def _aval_like(a):
    if hasattr(a, "aval") or not (hasattr(a, "shape") and hasattr(a, "dtype")):
        return util.aval_of(a)
    return _ShapedArray(a.shape, dtypes.canonicalize_dtype(a.dtype), getattr(a, "weak_type", False))


def _varying_like(out, aval):
    """out varying over the manual axes aval varies over (in a check_vma shard_map body), as JAX's
    *_like functions make it."""
    return vary_over(out, aval.vma) if aval.vma else out


def _like(a, dtype, shape, value, fun_name):
    aval = _aval_like(a)
    dt = dtype_arg(dtype, fun_name)
    weak = aval.weak_type if dt is None else False
    dt = aval.dtype if dt is None else dt
    typed = getattr(aval, "_sharding", None) if shape is None else None  # (JAX's full_like keeps x's sharding)
    shape = aval.shape if shape is None else util.canonicalize_shape(shape)
    if util.is_arraylike(value) and not isinstance(value, (bool, int, float)):
        v = util.convert(value, dt)
        return _varying_like(util.broadcast_to_shape(v, shape), aval)
    return _varying_like(util.full(shape, value, dt, weak, typed), aval)


def zeros_like(a, dtype=None, shape=None, *, device=None, out_sharding=None):
    """Zeros with a's shape and dtype (weak type kept)."""
    _check_like("zeros_like", a)
    target = _target(device, out_sharding, "zeros_like")
    return put_on(_like(a, dtype, shape, 0, "zeros_like"), target)


def ones_like(a, dtype=None, shape=None, *, device=None, out_sharding=None):
    """Ones with a's shape and dtype (weak type kept)."""
    _check_like("ones_like", a)
    target = _target(device, out_sharding, "ones_like")
    return put_on(_like(a, dtype, shape, 1, "ones_like"), target)


def empty_like(prototype, dtype=None, shape=None, *, device=None, out_sharding=None):
    """Like zeros_like."""
    _check_like("empty_like", prototype)
    target = _target(device, out_sharding, "empty_like")
    return put_on(_like(prototype, dtype, shape, 0, "empty_like"), target)


def full_like(a, fill_value, dtype=None, shape=None, *, device=None, out_sharding=None):
    """fill_value with a's shape and dtype (fill_value converted, e.g. 2.7 -> 2 for ints)."""
    _check_like("full_like", a)
    target = _target(device, out_sharding, "full_like")
    aval = _aval_like(a)
    dt = dtype_arg(dtype, "full_like")
    dt = aval.dtype if dt is None else dt
    shape = aval.shape if shape is None else util.canonicalize_shape(shape)
    if type(fill_value) in util._PY_SCALARS:
        weak = aval.weak_type if dtype is None else False
        return put_on(_varying_like(util.full(shape, fill_value, dt, weak), aval), target)
    return put_on(_varying_like(util.broadcast_to_shape(util.convert(fill_value, dt), shape), aval), target)


# ---- ranges ---------------------------------------------------------------------------------

def _concrete_scalar(x, fun_name, what):
    value = _to_concrete_value(x)
    if value is None:
        raise util.ConcretizationTypeError(
            f"Abstract tracer value encountered where concrete value is expected: {x}\n"
            f"It arose in the jnp.{fun_name} argument '{what}'.")
    x = value
    if isinstance(x, Array):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.item()
    if isinstance(x, np.generic):
        return x.item()
    return x


def arange(start, stop=None, step=None, dtype=None, *, device=None, out_sharding=None):
    """Evenly spaced values in [start, stop) (JAX's dtypes: arange(10) is int32, arange(0., 1., .1) float32);
    an out_sharding splitting over Explicit mesh axes types the iota it is made from, as JAX's."""
    if out_sharding is not None and splits_explicit(out_sharding):
        if device is not None:
            raise ValueError("arange: pass device or out_sharding, not both")
        typed = typed_sharding_of(out_sharding, 1, "arange")
        return placed(_arange(start, stop, step, dtype, out_sharding), typed, out_sharding)
    if out_sharding is not None:
        check_trivial(out_sharding, "jax.numpy.arange")
    return put_on(_arange(start, stop, step, dtype), check_device(device, "arange"))


def _arange(start, stop, step, dtype, out_sharding=None):
    dt = dtype_arg(dtype, "arange")
    args = [a for a in (start, stop, step) if a is not None]
    for a in args:
        util.check_arraylike("arange", a)
    if dt is None:
        dt = dtypes.result_type(*args)
        if dtypes.dtype_and_weak(args[0])[0] == dtypes.bool_ and dt == dtypes.bool_:
            dt = dtypes.default_int_dtype()
    s0 = _concrete_scalar(start, "arange", "start")
    if stop is None and step is None:
        lo, hi, st = 0, s0, 1
    else:
        lo = s0
        hi = _concrete_scalar(stop, "arange", "stop") if stop is not None else None
        st = 1 if step is None else _concrete_scalar(step, "arange", "step")
        if hi is None:
            lo, hi = 0, lo
    n = max(0, math.ceil((hi - lo) / st))
    if dt == dtypes.bool_:
        raise TypeError("arange does not accept dtype bool")
    if dt.kind in "iu" and not (isinstance(lo, int) and isinstance(st, int)):
        ft = dtypes.default_float_dtype()
        vals = _affine(ft, n, lo, st, step is not None, out_sharding)
        return lax.convert_element_type(lax.floor(vals), dt)
    if step is None:  # as JAX: iota, or start + iota
        it = lax.broadcasted_iota(dt, (n,), 0, out_sharding=out_sharding)
        return it if lo == 0 else lax.add(lax.convert_element_type(lo, dt), it)
    working = dtypes.float32 if dtypes.is_float(dt) and dt.itemsize < 4 else dt
    return lax.convert_element_type(_affine(working, n, lo, st, True, out_sharding), dt)


def _affine(dt, n, lo, st, with_step, out_sharding=None):
    """lo + st * iota (JAX's form: start + step * iota), in dt."""
    it = lax.broadcasted_iota(dt, (n,), 0, out_sharding=out_sharding)
    if not with_step:
        return it if lo == 0 else lax.add(lax.convert_element_type(lo, dt), it)
    return lax.add(lax.convert_element_type(lo, dt), lax.mul(lax.convert_element_type(st, dt), it))


def _space_dtypes(start, stop, dtype, fun_name):
    """(result, computation) dtypes of linspace/logspace/geomspace, as JAX picks them."""
    dt = dtype_arg(dtype, fun_name)
    if dt is None:
        dt = dtypes.to_inexact_dtype(dtypes.result_type(start, stop))
    return dt, dtypes.to_inexact_dtype(dt)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    """num evenly spaced values from start to stop (endpoint included unless endpoint=False)."""
    return put_on(_linspace(start, stop, num, endpoint, retstep, dtype, axis), check_device(device, "linspace"))


def _linspace(start, stop, num, endpoint, retstep, dtype, axis):
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    util.check_arraylike("linspace", start, stop)
    dt, cdt = _space_dtypes(start, stop, dtype, "linspace")
    lo, hi = util.convert(start, cdt), util.convert(stop, cdt)
    bshape = util.broadcast_shapes(lo.aval.shape, hi.aval.shape)
    lo, hi = util.broadcast_to_shape(lo, bshape), util.broadcast_to_shape(hi, bshape)
    nb = len(bshape)
    axis = util.canonicalize_axis(axis, nb + 1)
    out_shape = bshape[:axis] + (num,) + bshape[axis:]
    bdims = tuple(i for i in range(nb + 1) if i != axis)
    div = (num - 1) if endpoint else num
    delta = None
    if num > 1 or (num == 1 and not endpoint):
        delta = lax.div(lax.sub(hi, lo), util.full(bshape, div, cdt))
    if num == 0:
        out = util.full(out_shape, 0, cdt)
    elif num == 1:
        out = lax.broadcast_in_dim(lo, out_shape, bdims)
    else:
        rows = div
        shape_r = bshape[:axis] + (rows,) + bshape[axis:]
        steps = lax.broadcasted_iota(dtypes.complex_part_dtype(cdt) if dtypes.is_complex(cdt) else cdt, shape_r, axis)
        t = lax.div(lax.convert_element_type(steps, cdt), util.full(shape_r, div, cdt))
        lo_b = lax.broadcast_in_dim(lo, shape_r, bdims)
        hi_b = lax.broadcast_in_dim(hi, shape_r, bdims)
        one = util.full(shape_r, 1, cdt)
        out = lax.add(lax.mul(lo_b, lax.sub(one, t)), lax.mul(hi_b, t))
        if endpoint:
            out = lax.concatenate([out, lax.broadcast_in_dim(hi, bshape[:axis] + (1,) + bshape[axis:], bdims)],
                                  axis)
    if dt.kind in "iu" and cdt != dt:
        out = lax.floor(out)
    out = lax.convert_element_type(out, dt)
    if retstep:
        if delta is None:
            delta = util.full(bshape, float("nan"), cdt)
        return out, delta
    return out


# ---- matrices -------------------------------------------------------------------------------

def eye(N, M=None, k=0, dtype=None, *, device=None):  # noqa: N803 - NumPy's names
    """Ones on the k-th diagonal, zeros elsewhere."""
    target = check_device(device, "eye")
    dt = dtype_arg(dtype, "eye") or dtypes.default_float_dtype()
    n = operator.index(N)
    m = n if M is None else operator.index(M)
    k = operator.index(k)
    if n < 0 or m < 0:
        raise ValueError(f"negative dimensions are not allowed, got {n} and {m}")
    rows = lax.broadcasted_iota(dtypes.int32, (n, m), 0)
    cols = lax.broadcasted_iota(dtypes.int32, (n, m), 1)
    rows = lax.add(rows, util.scalar(k, dtypes.int32, False))  # i + k == j, as JAX's (k = 0 too)
    return put_on(lax.convert_element_type(lax.eq(rows, cols), dt), target)


def identity(n, dtype=None):
    """The n x n identity matrix."""
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=None):  # noqa: N803
    """Ones at and below the k-th diagonal."""
    dt = dtype_arg(dtype, "tri") or dtypes.default_float_dtype()
    n = operator.index(N)
    m = n if M is None else operator.index(M)
    return lax.convert_element_type(tri_mask((n, m), operator.index(k)), dt)


def _tri_select(m, k, lower, fun_name):
    util.check_arraylike(fun_name, m)
    x = util.asarray(m)
    shape = x.aval.shape
    if len(shape) < 2:
        raise ValueError(f"{fun_name} requires an array of at least two dimensions")
    mask = tri_mask(shape, k if lower else k - 1)
    if not lower:
        mask = lax.bitwise_not(mask)
    return lax.select(mask, x, util.full(shape, 0, x.aval.dtype, x.aval.weak_type))


def tril(m, k=0):
    """m with the elements above the k-th diagonal zeroed."""
    return _tri_select(m, operator.index(k), True, "tril")


def triu(m, k=0):
    """m with the elements below the k-th diagonal zeroed."""
    return _tri_select(m, operator.index(k), False, "triu")


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The offset-th diagonal of the (axis1, axis2) planes, as the last axis of the result."""
    util.check_arraylike("diagonal", a)
    x = util.asarray(a)
    nd = x.aval.ndim
    if nd < 2:
        raise ValueError("diagonal requires an array of at least two dimensions.")
    a1, a2 = util.canonicalize_axis(axis1, nd), util.canonicalize_axis(axis2, nd)
    if a1 == a2:
        raise ValueError("axis1 and axis2 must not be equal")
    x = shp.moveaxis(x, (a1, a2), (-2, -1))
    lead = x.aval.shape[:-2]
    n, m = x.aval.shape[-2:]
    offset = operator.index(offset)
    length = max(0, min(n, m - offset) if offset >= 0 else min(n + offset, m))
    if length == 0:
        return util.full(lead + (0,), 0, x.aval.dtype, x.aval.weak_type)
    flat = lax.reshape(x, lead + (n * m,))
    start = offset if offset >= 0 else -offset * m
    nl = len(lead)
    out = lax.slice(flat, (0,) * nl + (start,), lead + (start + (length - 1) * (m + 1) + 1,),
                    (1,) * nl + (m + 1,))
    return out


def diag(v, k=0):
    """The k-th diagonal of a 2-D array, or a 2-D array with 1-D v on its k-th diagonal."""
    util.check_arraylike("diag", v)
    x = util.asarray(v)
    k = operator.index(k)
    nd = x.aval.ndim
    if nd == 2:
        return diagonal(x, k)
    if nd != 1:
        raise ValueError("diag input must be 1d or 2d")
    n = x.aval.shape[0] + abs(k)
    pad_cfg = [(0, abs(k), 0)]  # v[i] sits in row i (k >= 0) or column i (k < 0)
    zero = util.scalar(0, x.aval.dtype, False)
    vp = lax.pad(x, zero, pad_cfg) if k else x
    vb = lax.broadcast_in_dim(vp, (n, n), (0,) if k >= 0 else (1,))
    rows = lax.broadcasted_iota(dtypes.int32, (n, n), 0)
    cols = lax.broadcasted_iota(dtypes.int32, (n, n), 1)
    if k:
        rows = lax.add(rows, util.full((n, n), k, dtypes.int32))
    return lax.select(lax.eq(rows, cols), vb, util.full((n, n), 0, x.aval.dtype, x.aval.weak_type))


def diagflat(v, k=0):
    """diag of the flattened input."""
    x = util.asarray(v)
    return diag(lax.reshape(x, (x.aval.size,)), k)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate matrices from coordinate vectors ('xy' or 'ij' indexing)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing}")
    args = [util.asarray(x) for x in xi]
    for a in args:
        if a.aval.ndim != 1:
            raise ValueError(f"Arguments to jax.numpy.meshgrid must be 1D, got shape {a.aval.shape}")
    sizes = [a.aval.shape[0] for a in args]
    nd = len(args)
    if indexing == "xy" and nd >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, a in enumerate(args):
        dim = i
        if indexing == "xy" and nd >= 2 and i < 2:
            dim = 1 - i
        shape = tuple(sizes) if not sparse else tuple(s if j == dim else 1 for j, s in enumerate(sizes))
        out.append(lax.broadcast_in_dim(a, shape, (dim,)))
    return out


def indices(dimensions, dtype=None, sparse=False):
    """An array (or, sparse, a tuple of arrays) of the index grids of shape `dimensions`."""
    dims = util.canonicalize_shape(dimensions)
    dt = dtype_arg(dtype, "indices") or dtypes.default_int_dtype()
    nd = len(dims)
    if sparse:
        return tuple(lax.broadcasted_iota(dt, tuple(d if j == i else 1 for j, d in enumerate(dims)), i)
                     for i in range(nd))
    grids = [lax.broadcasted_iota(dt, (1,) + dims, i + 1) for i in range(nd)]
    if not grids:
        return util.full((0,), 0, dt)
    return lax.concatenate(grids, 0)


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """function applied to the index grids of `shape`."""
    grids = indices(shape, dtype=dtype, sparse=False)
    return function(*[grids[i] for i in range(len(shape))], **kwargs)


del core
