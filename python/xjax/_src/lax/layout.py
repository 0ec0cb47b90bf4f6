"""Data movement primitives: reshape, broadcast, transpose, slicing, concatenation, padding (their
transformation rules: layout_rules.py)."""
import builtins
import functools

import numpy as np

from xjax._src import core, dtypes
from xjax._src.backends import cpu
from xjax._src.lax import elementwise as ew
from xjax._src.lax.base import asarray, define_core_primitive, scalars_like
from xjax._src.lax.sharding_ops import bind_with_out_sharding as _bind_with_out_sharding
from xjax._src.lax.sharding_ops import out_sharding_of as _out_sharding_of, placed as _placed
from xjax._src.lax.sharding_ops import reshard_p as _reshard_p
from xjax._src.sharding import check_trivial as _check_trivial  # (underscored: lax star-exports this module)

reshape_p = define_core_primitive("reshape", attrs=lambda new_sizes, dimensions=None, sharding=None: {
    "new_sizes": new_sizes})
squeeze_p = define_core_primitive("squeeze", op="reshape", attrs=None)
broadcast_in_dim_p = define_core_primitive(
    "broadcast_in_dim", attrs=lambda shape, broadcast_dimensions, sharding=None: dict(
        shape=shape, broadcast_dimensions=broadcast_dimensions))
transpose_p = define_core_primitive("transpose")
slice_p = define_core_primitive("slice")
dynamic_slice_p = define_core_primitive("dynamic_slice")
dynamic_update_slice_p = define_core_primitive("dynamic_update_slice")
concatenate_p = define_core_primitive("concatenate", weak=lambda avals: all(a.weak_type for a in avals))
pad_p = define_core_primitive("pad", attrs=lambda padding_config: {
    "padding_config": [v for triple in padding_config for v in triple]})
rev_p = define_core_primitive("rev")


def _unstack_eval(x, *, axis):
    return [x.update(shape=x.shape[:axis] + x.shape[axis + 1:])] * x.shape[axis]


def _unstack_lower(ctx, x, *, axis):
    shape = ctx.avals_in[0].shape
    outs = []
    for i in range(shape[axis]):
        (s,) = ctx.op("slice", x, start_indices=[0] * axis + [i] + [0] * (len(shape) - axis - 1),
                      limit_indices=list(shape[:axis]) + [i + 1] + list(shape[axis + 1:]))
        outs.extend(ctx.op("reshape", s, new_sizes=list(shape[:axis] + shape[axis + 1:])))
    return outs


def _split_eval(x, *, sizes, axis):
    if not 0 <= axis < x.ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {x.ndim}")
    if any(s < 0 for s in sizes) or int(np.sum(sizes, dtype=np.int64)) != x.shape[axis]:
        raise ValueError(f"Sum of sizes {int(np.sum(sizes, dtype=np.int64))} must be equal to dimension {axis} of the operand "
                         f"shape {x.shape}")
    return [x.update(shape=x.shape[:axis] + (int(s),) + x.shape[axis + 1:]) for s in sizes]


def _split_lower(ctx, x, *, sizes, axis):
    shape = ctx.avals_in[0].shape
    outs, start = [], 0
    for size in sizes:
        lo = [0] * len(shape)
        hi = list(shape)
        lo[axis], hi[axis] = start, start + int(size)
        outs.extend(ctx.op("slice", x, start_indices=lo, limit_indices=hi))
        start += int(size)
    return outs


# split: consecutive pieces along an axis (JAX's primitive; jnp.split and Jacobians use it).
split_p = core.Primitive("split", multiple_results=True)
split_p.def_rules(abstract_eval=_split_eval, lowering=_split_lower)
split_p.def_rules(impl=functools.partial(cpu.apply_primitive, split_p))


def split(operand, sizes, axis=0):
    """The pieces of operand of the given sizes along `axis` (NumPy integer sizes print as such)."""
    x = asarray(operand)
    sizes = tuple(d if isinstance(d, np.integer) else int(d) for d in sizes)
    return split_p.bind(x, sizes=sizes, axis=_canonical_axis(axis, core.get_aval(x).ndim))


# unstack: every slice along an axis in one op (iterating an array is one eager dispatch).
unstack_p = core.Primitive("unstack", multiple_results=True)
unstack_p.def_rules(abstract_eval=_unstack_eval, lowering=_unstack_lower)
unstack_p.def_rules(impl=functools.partial(cpu.apply_primitive, unstack_p))


def _stack_eval(*xs, axis):
    if not xs:
        raise ValueError("stack expects at least one operand, got 0.")
    if len({x.shape for x in xs}) != 1:
        raise ValueError(f"All input arrays must have the same shape. Got {', '.join(str(x.shape) for x in xs)}.")
    if len({x.dtype for x in xs}) != 1:
        raise TypeError(f"lax.stack requires arguments to have the same dtypes, got {', '.join(x.dtype.name for x in xs)}.")
    shape = list(xs[0].shape)
    shape.insert(axis, len(xs))
    return xs[0].update(shape=tuple(shape), weak_type=all(x.weak_type for x in xs))


def _stack_lower(ctx, *xs, axis):
    shape = list(ctx.avals_in[0].shape)
    kept = [i for i in range(len(shape) + 1) if i != axis]
    shape.insert(axis, 1)
    parts = [ctx.op("broadcast_in_dim", x, shape=shape, broadcast_dimensions=kept)[0] for x in xs]
    return ctx.op("concatenate", *parts, dimension=axis)


# stack: operands of one shape joined along a new axis (JAX's primitive, the transpose of unstack).
stack_p = core.Primitive("stack")
stack_p.def_rules(abstract_eval=_stack_eval, lowering=_stack_lower)
stack_p.def_rules(impl=functools.partial(cpu.apply_primitive, stack_p))


def stack(operands, axis=0):
    """The operands (of one shape and dtype) joined along a new axis `axis`."""
    xs = [asarray(x) for x in operands]
    if not xs:
        raise ValueError("stack expects at least one operand, got 0.")
    return stack_p.bind(*xs, axis=_canonical_axis(axis, core.get_aval(xs[0]).ndim + 1))


def full(shape, fill_value, dtype=None, *, sharding=None):
    """An array of `shape` filled with the scalar fill_value, converted to dtype if given (a Python
    scalar without dtype stays weakly typed)."""
    if np.shape(fill_value):
        raise TypeError(f"full must be called with scalar fill_value, got fill_value.shape {np.shape(fill_value)}.")
    if sharding is not None:
        _check_trivial(sharding, "lax.full")
    shape = tuple(int(d) for d in shape)
    aval = core.get_aval(fill_value)
    weak = dtype is None and aval.weak_type
    value = ew._convert(fill_value, aval.dtype if dtype is None else dtype, weak)
    return broadcast_in_dim(value, shape, ()) if shape else value


def _squeeze_eval(x, *, dimensions):
    for d in dimensions:
        if not 0 <= d < x.ndim or x.shape[d] != 1:
            raise ValueError(f"cannot select an axis to squeeze out which has size not equal to one, got "
                             f"shape={x.shape} and dimensions={dimensions}")
    return x.update(shape=tuple(s for i, s in enumerate(x.shape) if i not in dimensions))


def _squeeze_lower(ctx, x, *, dimensions):
    return ctx.op("reshape", x, new_sizes=ctx.avals_out[0].shape)


squeeze_p.abstract_eval = _squeeze_eval
squeeze_p.lowering = _squeeze_lower


def _canonical_axis(axis, ndim, name="axis"):
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name} {axis} is out of bounds for array of dimension {ndim}")
    return int(axis) % ndim if ndim else 0


def reshape(operand, new_sizes, dimensions=None, *, out_sharding=None):
    """Row-major reshape (`dimensions`, if given, transposes first); out_sharding: the sharding of the
    result's type, as JAX's."""
    x = asarray(operand)
    new_sizes = tuple(int(d) for d in new_sizes)
    dims = None if dimensions is None else tuple(int(d) for d in dimensions)
    if dims == tuple(range(core.get_aval(x).ndim)):
        dims = None
    typed = _out_sharding_of(out_sharding, len(new_sizes), "reshape", (x,))
    same_type = typed is None or typed == getattr(core.get_aval(x), "_sharding", None)
    if dims is None and core.get_aval(x).shape == new_sizes and same_type:
        return x
    return _bind_with_out_sharding(reshape_p, (x,), out_sharding, typed, "sharding", new_sizes=new_sizes,
                                   dimensions=dims)


def _reshape_lower(ctx, x, *, new_sizes, dimensions, sharding=None):
    if dimensions is not None:  # the operand's dims in this order first, as XLA's reshape
        (x,) = ctx.op("transpose", x, permutation=list(dimensions))
    return ctx.op("reshape", x, new_sizes=list(new_sizes))


reshape_p.lowering = _reshape_lower


def broadcast_in_dim(operand, shape, broadcast_dimensions, *, out_sharding=None):
    """Broadcasts operand to `shape`, operand dim i going to output dim broadcast_dimensions[i].
    out_sharding: the sharding of the result's type (a NamedSharding over an abstract mesh), as JAX's;
    where nothing is broadcast that is a reshard of the operand."""
    x = asarray(operand)
    shape = tuple(int(d) for d in shape)
    # NumPy integers stay (JAX keeps the dims as given, and its jaxprs print them as np.int64(...)).
    bdims = tuple(d if isinstance(d, np.integer) else int(d) for d in broadcast_dimensions)
    aval = core.get_aval(x)
    if aval.shape == shape and bdims == tuple(range(len(shape))):
        if out_sharding is not None and getattr(aval, "_sharding", None) != out_sharding:
            return _reshard_p.bind(x, dst_sharding=out_sharding, concrete_mesh=None)
        return x
    out = broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=bdims, sharding=out_sharding)
    # (eagerly, over jax.set_mesh's mesh: placed as its type says, as the zeros of a transpose)
    return out if out_sharding is None else _placed(out, out_sharding, out_sharding)


def broadcast(operand, sizes):
    """Adds leading dimensions of the given sizes."""
    x = asarray(operand)
    nd = np.ndim(x)
    sizes = tuple(sizes)
    return broadcast_in_dim(x, sizes + tuple(core.get_aval(x).shape), tuple(range(len(sizes), len(sizes) + nd)))


def broadcast_to_rank(x, rank):
    x = asarray(x)
    shape = core.get_aval(x).shape
    return broadcast(x, (1,) * (rank - len(shape))) if rank > len(shape) else x


def transpose(operand, permutation):
    """Permutes the dimensions."""
    x = asarray(operand)
    perm = tuple(int(p) for p in permutation)
    if perm == tuple(range(len(perm))) and len(perm) == core.get_aval(x).ndim:
        return x
    return transpose_p.bind(x, permutation=perm)


def squeeze(array, dimensions):
    """Removes the given size-1 dimensions."""
    x = asarray(array)
    ndim = core.get_aval(x).ndim
    dims = tuple(sorted({_canonical_axis(d, ndim) for d in dimensions}))
    if not dims:
        return x
    return squeeze_p.bind(x, dimensions=dims)


def expand_dims(array, dimensions):
    """Inserts size-1 dimensions at the given positions of the result."""
    x = asarray(array)
    shape = list(core.get_aval(x).shape)
    out_ndim = len(shape) + len(dimensions)
    dims = sorted(_canonical_axis(d, out_ndim) for d in dimensions)
    if len(set(dims)) != len(dims):
        raise ValueError(f"repeated axis in expand_dims: {tuple(dimensions)}")
    for d in dims:
        shape.insert(d, 1)
    kept = [i for i in range(out_ndim) if i not in dims]
    return broadcast_in_dim(x, shape, kept)


def unstack(operand, axis=0):
    """The slices of operand along `axis`, as a list (one op)."""
    x = asarray(operand)
    return unstack_p.bind(x, axis=_canonical_axis(axis, core.get_aval(x).ndim))


def slice(operand, start_indices, limit_indices, strides=None):  # noqa: A001 - lax's name
    """operand[start:limit:stride] per dimension (static bounds)."""
    x = asarray(operand)
    start, limit = _ints(start_indices), _ints(limit_indices)
    shape = tuple(core.get_aval(x).shape)
    # JAX's shape rule's errors (the core's would be ValueErrors)
    if len(start) != len(shape):
        raise TypeError(f"slice start_indices must have length equal to the number of dimensions of the operand, got "
                        f"indices {start} for operand shape {shape}.")
    if len(start) != len(limit):
        raise TypeError(f"slice limit_indices must have the same length as start_indices, got start_indices {start} "
                        f"and limit_indices {limit}.")
    if not all(d >= lim for d, lim in zip(shape, limit)):
        raise TypeError(f"slice limit_indices must be less than or equal to operand shape, got limit_indices {limit} "
                        f"for operand shape {shape}.")
    if not all(i >= 0 for i in start):
        raise TypeError(f"slice start_indices must be greater than or equal to zero, got start_indices of {start}.")
    if not all(lim >= i for i, lim in zip(start, limit)):
        raise TypeError(f"slice limit_indices must be greater than or equal to start_indices, got start_indices "
                        f"{start} and limit_indices {limit}.")
    # As JAX: strides kept as given (None or a tuple), an identity slice still an equation.
    return slice_p.bind(x, start_indices=start, limit_indices=limit, strides=None if strides is None else _ints(strides))


def _ints(values):
    """A static index tuple; NumPy integers stay NumPy integers (JAX's jaxprs print them as such)."""
    return tuple(i if isinstance(i, np.integer) else int(i) for i in values)


def _index_scalars(indices, shape):
    """Start indices as 0-d arrays of one dtype; negative ones count from the end, as in JAX
    (the core then clamps them into range)."""
    out = []
    for i, dim in zip(indices, shape):
        if isinstance(i, (int, np.integer)) and not isinstance(i, bool):
            out.append(asarray(int(i) + dim if i < 0 else int(i), dtypes.int32, False))
            continue
        i = asarray(i)
        if not dtypes.is_int(core.get_aval(i).dtype):
            raise TypeError(f"index arguments to dynamic_slice must be integers, got {core.get_aval(i).dtype.name}")
        if not dtypes.issubdtype(core.get_aval(i).dtype, np.unsignedinteger):
            # As JAX: i + d with jnp's promotion (a weakly typed i is made strong first).
            i = ew.select(ew.lt(i, 0), i + ew.convert_element_type(dim, core.get_aval(i).dtype), i)
        out.append(i)
    if out and len({core.get_aval(i).dtype for i in out}) > 1:
        out = [convert_int32(i) for i in out]
    return out


def convert_int32(i):
    return ew.convert_element_type(i, dtypes.int32) if core.get_aval(i).dtype != dtypes.int32 else i


def _check_start_indices(start_indices, shape):
    if len(start_indices) != len(shape):
        raise ValueError(f"Length of slice indices must match number of operand dimensions ({len(start_indices)} vs "
                         f"{tuple(shape)})")


def dynamic_slice(operand, start_indices, slice_sizes):
    """A slice of static size at traced start indices (clamped into range)."""
    x = asarray(operand)
    shape = core.get_aval(x).shape
    _check_start_indices(start_indices, shape)
    sizes = tuple(int(s) for s in slice_sizes)
    # JAX's shape rule's errors (the core's would be ValueErrors)
    if len(sizes) != len(shape) or not all(d >= s for d, s in zip(shape, sizes)):
        raise TypeError(f"slice slice_sizes must be less than or equal to operand shape, got slice_sizes {sizes} for "
                        f"operand shape {tuple(shape)}.")
    if not all(s >= 0 for s in sizes):
        raise TypeError(f"slice slice_sizes must be greater than or equal to zero, got slice_sizes of {sizes}.")
    idx = _index_scalars(start_indices, shape)
    return dynamic_slice_p.bind(x, *idx, slice_sizes=sizes)


def dynamic_update_slice(operand, update, start_indices):
    """operand with `update` written at the (clamped) start indices."""
    x, u = scalars_like((operand, update))
    shape, ushape = core.get_aval(x).shape, core.get_aval(u).shape
    # JAX's shape rule's errors (the core's would be ValueErrors)
    if len(shape) != len(ushape):
        raise TypeError(f"dynamic_update_slice update must have the same rank as operand, got update shape "
                        f"{tuple(ushape)} for operand shape {tuple(shape)}.")
    if len(start_indices) != len(shape):
        raise TypeError(f"dynamic_update_slice start_indices must have length equal to the rank of operand, got "
                        f"indices {start_indices} for operand shape {tuple(shape)}.")
    if not all(d >= s for d, s in zip(shape, ushape)):
        raise TypeError(f"dynamic_update_slice update shape must be smaller than operand shape, got update shape "
                        f"{tuple(ushape)} for operand shape {tuple(shape)}.")
    return dynamic_update_slice_p.bind(x, u, *_index_scalars(start_indices, shape))


def concatenate(operands, dimension):
    """Joins arrays along an existing dimension."""
    ops = [asarray(o) for o in operands]
    if len(ops) == 1:
        return ops[0]
    return concatenate_p.bind(*ops, dimension=int(dimension))


def pad(operand, padding_value, padding_config):
    """Pads with (low, high, interior) per dimension; negative low/high crop."""
    x, v = scalars_like((operand, padding_value))
    config = tuple(tuple(d if isinstance(d, np.integer) else int(d) for d in triple) for triple in padding_config)
    return pad_p.bind(x, v, padding_config=config)


def rev(operand, dimensions):
    """Reverses the order of elements along the given dimensions."""
    dims = tuple(int(d) for d in dimensions)
    x = asarray(operand)
    return rev_p.bind(x, dimensions=dims) if dims else x


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    """lax.slice along one axis."""
    x = asarray(operand)
    shape = core.get_aval(x).shape
    axis = _canonical_axis(axis, len(shape))
    start = [0] * len(shape)
    limit = list(shape)
    strides = [1] * len(shape)
    n = shape[axis]
    start_index = 0 if start_index is None else start_index
    limit_index = n if limit_index is None else limit_index
    start[axis] = start_index + n if start_index < 0 else start_index
    limit[axis] = limit_index + n if limit_index < 0 else limit_index
    strides[axis] = stride
    return slice(x, start, limit, strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
    """operand[..., index, ...] along `axis` for a static index."""
    x = asarray(operand)
    n = core.get_aval(x).shape[axis]
    index = index + n if index < 0 else index
    out = slice_in_dim(x, index, index + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0):
    """dynamic_slice along one axis."""
    x = asarray(operand)
    nd = core.get_aval(x).ndim
    axis = _canonical_axis(axis, nd)
    starts = [0] * nd
    sizes = list(core.get_aval(x).shape)
    starts[axis] = start_index
    sizes[axis] = slice_size
    return dynamic_slice(x, starts, sizes)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True):
    """operand at a traced index along `axis`."""
    out = dynamic_slice_in_dim(operand, index, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def dynamic_update_slice_in_dim(operand, update, start_index, axis):
    """dynamic_update_slice along one axis."""
    x = asarray(operand)
    nd = core.get_aval(x).ndim
    starts = [0] * nd
    starts[_canonical_axis(axis, nd)] = start_index
    return dynamic_update_slice(x, update, starts)


def collapse(operand, start_dimension, stop_dimension=None):
    """Merges dimensions [start, stop) into one."""
    x = asarray(operand)
    shape = core.get_aval(x).shape
    stop = len(shape) if stop_dimension is None else stop_dimension
    size = 1
    for d in shape[start_dimension:stop]:
        size *= d
    return reshape(x, shape[:start_dimension] + (size,) + shape[stop:])


del builtins


# ---- jaxpr printing: the params JAX shows ---------------------------------------------------
from xjax._src.jaxpr import params_printer as _params_printer  # noqa: E402

broadcast_in_dim_p.pp_params = _params_printer(drop=("shape", "sharding"), drop_if_empty=("broadcast_dimensions",))
