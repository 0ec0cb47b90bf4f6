"""Shape manipulation: reshape, transpose, squeeze/expand, broadcasting, joining and splitting."""
import numpy as np

from xjax._src import lax
from xjax._src.array import check_device
from xjax._src.transfer import put_on
from xjax._src.numpy import util
from xjax._src.numpy.util import dtype_arg
from xjax._src.sharding import NamedSharding, PartitionSpec


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
    target = check_device(device, "astype")
    if getattr(type(x), "is_typed_key_array", False):  # (random.keys.PRNGKeyArray: only to its own dtype)
        if dtype != x.dtype:
            raise ValueError(f"Cannot convert_element_type from {x.dtype.name} to {_dtype_name(dtype)}")
        return x
    x = util.operand("astype", x)
    dt = dtype_arg(dtype, "astype")
    return put_on(lax.elementwise._convert(x, dt, weak_type=False), target)


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


def reshape(a, shape=None, order="C", *, newshape=None, copy=None, out_sharding=None):
    """a with a new shape of the same size (one dimension may be -1); order 'C' or 'F'. out_sharding: the
    sharding of the result's type, as JAX's."""
    if shape is None:
        shape = newshape
    x = util.operand("reshape", a)
    old = x.aval.shape
    new = _compute_newshape(old, shape)
    if order == "C":
        return x if new == old and out_sharding is None else lax.reshape(x, new, out_sharding=out_sharding)
    if order == "F":
        xt = lax.transpose(x, tuple(reversed(range(len(old)))))
        out = lax.reshape(xt, tuple(reversed(new)), out_sharding=_reversed_sharding(out_sharding, len(new)))
        return lax.transpose(out, tuple(reversed(range(len(new)))))
    if order == "A":
        raise NotImplementedError("np.reshape order=A is not implemented.")
    raise ValueError(f"Unexpected value for 'order' argument: {order}.")


def _reversed_sharding(sharding, ndim):
    """An out_sharding (P or NamedSharding) with its dimensions reversed, as an order='F' reshape needs."""
    if sharding is None:
        return None
    spec = sharding if isinstance(sharding, PartitionSpec) else getattr(sharding, "spec", None)
    if spec is None:
        raise TypeError(f"reshape: out_sharding must be a jax.sharding.NamedSharding or PartitionSpec, got {sharding!r}")
    rev = PartitionSpec(*reversed(tuple(spec) + (None,) * (ndim - len(spec))))
    return rev if isinstance(sharding, PartitionSpec) else NamedSharding(sharding.mesh, rev)


def ravel(a, order="C", *, out_sharding=None):
    """a flattened to one dimension."""
    x = util.operand("ravel", a)
    return reshape(x, (x.aval.size,), order=order, out_sharding=out_sharding)


def transpose(a, axes=None):
    """a with its axes permuted (reversed by default)."""
    x = util.operand("transpose", a)
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
    x = util.operand("matrix_transpose", x)
    nd = x.aval.ndim
    if nd < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got ndim={nd}")
    return lax.transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def swapaxes(a, axis1, axis2):
    """a with axis1 and axis2 interchanged."""
    x = util.operand("swapaxes", a)
    nd = x.aval.ndim
    a1, a2 = util.canonicalize_axis(axis1, nd), util.canonicalize_axis(axis2, nd)
    perm = list(range(nd))
    perm[a1], perm[a2] = perm[a2], perm[a1]
    return lax.transpose(x, perm)


def moveaxis(a, source, destination):
    """a with the `source` axes moved to the `destination` positions."""
    x = util.operand("moveaxis", a)
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
    x = util.operand("rollaxis", a)
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
    x = util.operand("expand_dims", a)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out_nd = x.aval.ndim + len(axes)
    canon = sorted(util.canonicalize_axis(ax, out_nd) for ax in axes)
    if len(set(canon)) != len(canon):
        raise ValueError(f"repeated axis in expand_dims: {axes}")
    return lax.expand_dims(x, canon)


def squeeze(a, axis=None):
    """a without its size-1 dimensions (all of them, or those in `axis`)."""
    x = util.operand("squeeze", a)
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
    x = util.operand("broadcast_to", array)
    return util.broadcast_to_shape(x, util.canonicalize_shape(shape))


def broadcast_arrays(*args):
    """The arguments broadcast against each other."""
    ops = [util.operand("broadcast_arrays", a) for a in args]
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
    x = util.operand("atleast_nd", a)
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

def _dtype_name(dtype):
    return getattr(dtype, "name", None) or str(dtype_arg(dtype, "astype"))


def _typed_keys(name, arrays):
    """The arrays if they are all typed PRNG key arrays of one implementation; None if none is."""
    is_key = [getattr(type(a), "is_typed_key_array", False) for a in arrays]  # (random.keys.PRNGKeyArray)
    if not any(is_key):
        return None
    if not all(is_key) or len({a._impl for a in arrays}) != 1:
        key = arrays[is_key.index(True)]
        raise ValueError(f"dtype={key.dtype.name} is not a valid dtype for JAX type promotion.")  # JAX's words
    return arrays


def concatenate(arrays, axis=0, dtype=None):
    """The arrays joined along an existing axis (axis=None flattens them first)."""
    keys = None if hasattr(arrays, "aval") else _typed_keys("concatenate", list(arrays))
    if keys is not None:  # joined over their key data, whose trailing dims are the key's own
        if axis is None:
            keys = [k.ravel() for k in keys]
            axis = 0
        ax = util.canonicalize_axis(axis, keys[0].ndim)
        return keys[0]._wrap(concatenate([k._base_array for k in keys], ax))
    if hasattr(arrays, "aval") or isinstance(arrays, np.ndarray):
        x = util.operand("concatenate", arrays)
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
        x = util.operand("stack", arrays)
        arrays = [lax.index_in_dim(x, i, 0, keepdims=False) for i in range(x.aval.shape[0])]
    arrays = list(arrays)
    if not arrays:
        raise ValueError("Need at least one array to stack.")
    if _typed_keys("stack", arrays) is not None:
        ax = util.canonicalize_axis(axis, arrays[0].ndim + 1)
        return arrays[0]._wrap(stack([k._base_array for k in arrays], ax))
    util.check_arraylike("stack", *arrays)
    shapes = [util.aval_of(a).shape for a in arrays]
    if any(s != shapes[0] for s in shapes):
        raise ValueError(f"All input arrays must have the same shape. Got {', '.join(str(s) for s in shapes)}.")
    nd = len(shapes[0]) + 1
    ax = util.canonicalize_axis(axis, nd)
    dt = dtype_arg(dtype, "stack")
    ops = util.promote_dtypes(*arrays) if dt is None else [util.convert(a, dt) for a in arrays]
    return lax.stack(ops, ax)


def unstack(x, /, *, axis=0):
    """The slices of x along axis, as a tuple."""
    x = util.operand("unstack", x)
    ax = util.canonicalize_axis(axis, x.aval.ndim)
    return tuple(lax.index_in_dim(x, i, ax, keepdims=False) for i in range(x.aval.shape[ax]))


def _seq(tup, name):
    if hasattr(tup, "aval") or isinstance(tup, np.ndarray):
        x = util.operand(name, tup)
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
        x = util.operand("column_stack", a)
        if x.aval.ndim < 2:
            x = lax.reshape(x, (x.aval.size, 1))
        arrs.append(x)
    return concatenate(arrs, 1)


# ---- splitting ------------------------------------------------------------------------------

def _split(name, ary, indices_or_sections, axis, exact):
    x = util.operand(name, ary)
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
    if all(lo <= hi for lo, hi in zip(bounds[:-1], bounds[1:])):  # consecutive pieces: JAX's split primitive
        return list(lax.split(x, [np.int64(hi - lo) for lo, hi in zip(bounds[:-1], bounds[1:])], ax))
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
    x = util.operand("hsplit", ary)
    return _split("hsplit", x, indices_or_sections, 1 if x.aval.ndim > 1 else 0, True)


def vsplit(ary, indices_or_sections):
    """split along axis 0."""
    return _split("vsplit", ary, indices_or_sections, 0, True)


def dsplit(ary, indices_or_sections):
    """split along axis 2."""
    return _split("dsplit", ary, indices_or_sections, 2, True)
