"""Arrays placed over a mesh of CPU devices: one block (shard) per device.

A ShardedArray holds, in the mesh's device order, one xjax Array per device of this process: the
block of the global array that its NamedSharding gives the device (devices holding the same block
share one immutable buffer: every CPU device reads the host memory). A mesh over the devices of
several processes (after xjax.distributed.initialize) gives each process its own devices' blocks
(`addressable_shards`); the others' are theirs. Whatever needs the whole array (printing,
np.asarray, any path that reads `_value`) gets the blocks gathered by the core, once; as in JAX,
that needs a process to hold every block (else multihost_utils.process_allgather does it). jit
partitions its program over the mesh of its sharded arguments instead (partition.py).

Eager primitives on sharded operands (the hook `backends.cpu.sharded_apply`, set when the first
sharded array is made) run per device where JAX's result keeps the layout: an elementwise op over
operands of one global shape runs on every device at once, on its blocks. Reductions, transposes
and dot_general run on the gathered operands and their result is placed with the sharding JAX's
types give it; other primitives do so when every mesh axis in play is Auto (the result replicated,
one of the layouts JAX's compiler picks), and refuse operands split over Explicit axes, whose result
type JAX defines per primitive.
"""
import numpy as np

from xjax import _core
from xjax._src import core, data_leaves, transfer
from xjax._src.array import Array
from xjax._src.backends import cpu
from xjax._src.backends.lowering import lower_single_primitive
from xjax._src.lax import elementwise as ew
from xjax._src.lax.layout import concatenate, slice as lax_slice
from xjax._src.lru_cache import LRUCache
from xjax._src.sharding import (AbstractMesh, Mesh, NamedSharding, PartitionSpec, Shard, get_mesh,
                                typed_sharding)


class ShardedArray(Array):
    """An xjax.Array split over the devices of a mesh (see the module docstring)."""

    __slots__ = ("_shards", "_sharding", "_whole", "_typed")

    def __init__(self, shards, sharding, aval):
        self._shards = tuple(shards)  # xjax Arrays, one per device of this process in sharding.mesh, in its order
        self._sharding = sharding
        self.aval = aval  # the global type (its sharding is shown by jax.typeof: typed_aval)
        self._npy = None
        self._whole = None  # the gathered buffer, once asked for
        self._typed = None  # typed_aval, once asked for (every jit call of the array asks)

    @property
    def _value(self):
        """The whole array's runtime buffer: the blocks gathered (what every whole-array path reads)."""
        if self._whole is None:
            if not self.holds_every_block:
                raise RuntimeError(_NOT_ADDRESSABLE)
            self._whole = _gather(self)._value
        return self._whole

    @property
    def holds_every_block(self):
        """Whether this process's devices hold every block of the array (all do in one process)."""
        return self._sharding.is_fully_addressable or len(_block_starts(self)) == len(
            {_starts(i) for i in self._sharding.devices_indices_map(self.shape).values()})

    sharding = property(lambda self: self._sharding)
    is_fully_replicated = property(lambda self: self._sharding.is_fully_replicated)
    is_fully_addressable = property(lambda self: self._sharding.is_fully_addressable)

    @property
    def device(self):
        raise ValueError(f"device is defined for arrays on one device; this one is split over {self._sharding.num_devices} "
                         "devices: use .devices() or .sharding")

    def devices(self):
        return set(self._sharding.mesh.devices.flat)

    @property
    def typed_aval(self):
        """The type jax.typeof gives: the global type with the sharding JAX's types carry."""
        if self._typed is None:
            self._typed = self.aval.with_sharding(typed_sharding(self._sharding, self.ndim))
        return self._typed

    @property
    def traced_aval(self):
        """The type a trace gives this array: with its sharding over a mesh with Explicit axes (JAX's
        sharding in types), the plain global type over Auto axes (the compiler's to choose)."""
        return self.typed_aval if self._sharding.mesh.explicit_axes else self.aval

    @property
    def addressable_shards(self):
        index = self._sharding.devices_indices_map(self.shape)
        ids, devices = self._sharding.replica_ids(), self._sharding.mesh.devices.flat
        return [Shard(devices[i], index[devices[i]], ids[i], x)
                for i, x in zip(self._sharding.mesh.local_positions, self._shards)]

    @property
    def global_shards(self):
        """Every device's Shard; those of other processes' devices hold no data (None), as in JAX."""
        index = self._sharding.devices_indices_map(self.shape)
        data = dict(zip(self._sharding.mesh.local_positions, self._shards))
        return [Shard(d, index[d], r, data.get(i)) for i, (d, r) in
                enumerate(zip(self._sharding.mesh.devices.flat, self._sharding.replica_ids()))]

    def __repr__(self):
        if self.is_fully_addressable or self.is_fully_replicated:
            return super().__repr__()
        weak = ", weak_type=True" if self.weak_type else ""  # (JAX's form: the values are not all here)
        return f"Array(shape={self.shape}, dtype={self.dtype.name}{weak})"

    def addressable_data(self, index):
        return self._shards[index]

    block_until_ready = _core.fast_call.block_until_ready  # (waits for every block)

    def is_ready(self):
        return all(x._value.is_ready() for x in self._shards)

    def to_device(self, device, *, stream=None):
        return device_put(self, device)


core.ARRAY_TYPES = core.ARRAY_TYPES + (ShardedArray,)
_core.fast_call.setup_sharded(ShardedArray)


# ---- placing and gathering ------------------------------------------------------------------------

_NOT_ADDRESSABLE = ("Fetching value for `jax.Array` that spans non-addressable (non process local) devices is not "
                    "possible. You can use `jax.experimental.multihost_utils.process_allgather` to print the global "
                    "array or use `.addressable_shards` method of jax.Array to inspect the addressable (process local) "
                    "shards.")


def _starts(index):
    return tuple(0 if s.start is None else s.start for s in index)


def _block_starts(x):
    """{a block's starts: its first local shard} over this process's shards."""
    index = x._sharding.addressable_devices_indices_map(x.shape)
    blocks = {}
    for shard, idx in zip(x._shards, index.values()):
        blocks.setdefault(_starts(idx), shard)
    return blocks


def _gather(x):
    """The whole array from its distinct blocks, concatenated dimension by dimension in the core."""
    return assemble(_block_starts(x), x.ndim)


def assemble(blocks, ndim):
    """The whole array from {a block's starts: the block} covering it."""
    if len(blocks) == 1:
        return next(iter(blocks.values()))
    starts = [sorted({s[d] for s in blocks}) for d in range(ndim)]

    def along(dim, prefix):
        if dim == ndim:
            return blocks[prefix]
        parts = [along(dim + 1, prefix + (s,)) for s in starts[dim]]
        return parts[0] if len(parts) == 1 else concatenate(parts, dim)

    return along(0, ())


def _check_mesh(mesh):
    for d in mesh.devices.flat:
        if getattr(d, "platform", None) != "cpu":
            raise NotImplementedError(f"placing arrays over a mesh of {d!r}: xjax splits arrays over CPU devices "
                                      "only (GPU meshes: issue 29)")
    if not mesh.local_positions:
        raise NotImplementedError(f"placing arrays over a mesh of other processes' devices alone "
                                  f"({list(mesh.devices.flat)}): xjax's meshes across processes hold devices of "
                                  "this process too")
    if len({id(d) for d in mesh.devices.flat}) != mesh.size:
        raise ValueError(f"a mesh that places arrays must name each device once, got {list(mesh.devices.flat)}")


resharded_across = None  # partition.py's: x's blocks moved to another layout over its mesh by collectives
partitioned_across = None  # partition.py's: an eager primitive run partitioned over its operands' mesh


def place(x, sharding):
    """xjax Array (or host data) x split over `sharding`'s mesh as it says: a ShardedArray."""
    if type(x) is ShardedArray:
        if x._sharding == sharding:
            return x
        if _same_blocks(x, sharding):  # (P('x') and P('x', None): the blocks as they are)
            return ShardedArray(x._shards, sharding, x.aval)
        if not x.holds_every_block:
            if resharded_across is not None and sharding.mesh == x._sharding.mesh:
                sharding.check_compatible_aval(x.shape)
                return resharded_across(x, sharding)
            raise NotImplementedError(f"resharding an array that spans processes, from {x._sharding} to {sharding}: "
                                      "not implemented in xjax yet (issue 29); reshard inside shard_map "
                                      "(all_gather, psum_scatter, all_to_all)")
        x = Array(x._value, x.aval)
    elif not isinstance(x, Array):
        x = transfer.device_put(x)
    _check_mesh(sharding.mesh)
    try:
        sharding.check_compatible_aval(x.shape)
    except ValueError as err:
        raise ValueError(f"One of device_put args is incompatible with its sharding annotation {sharding}: "
                         f"{err}") from None
    index = sharding.addressable_devices_indices_map(x.shape)  # (JAX's errors for indivisible dimensions)
    blocks = {}
    shards = []
    for idx in index.values():
        key = _starts(idx)
        if key not in blocks:
            whole = all(s == slice(None) for s in idx)
            blocks[key] = x if whole else lax_slice(x, key, [s.stop if s.stop is not None else n
                                                             for s, n in zip(idx, x.shape)])
        shards.append(blocks[key])
    _install_dispatch()
    return ShardedArray(shards, sharding, x.aval)


def _same_blocks(x, sharding):
    """Whether `sharding` gives every device of x's mesh the block it holds."""
    if not isinstance(sharding, NamedSharding) or sharding.mesh != x._sharding.mesh:
        return False
    try:
        return sharding.devices_indices_map(x.shape) == x._sharding.devices_indices_map(x.shape)
    except ValueError:  # a sharding that does not fit x: place() reports it
        return False


def _mesh_sharding(device):
    """The NamedSharding over several devices that `device` (a device_put target) names, else None."""
    if isinstance(device, PartitionSpec):
        mesh = get_mesh()
        if mesh.empty:
            raise ValueError(f"device_put: a PartitionSpec ({device}) places arrays over the mesh set by "
                             "jax.set_mesh; none is set. Pass a NamedSharding(mesh, spec)")
        device = NamedSharding(mesh, device)
    if isinstance(device, NamedSharding) and isinstance(device.mesh, AbstractMesh):
        mesh = get_mesh()  # (a sharding over the abstract form of the mesh set: Flax's with_partitioning)
        if not mesh.empty and mesh.abstract_mesh == device.mesh:
            device = NamedSharding(mesh, device.spec)
    if isinstance(device, NamedSharding) and isinstance(device.mesh, Mesh) and device.mesh.size > 1:
        return device
    return None


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """jax.device_put: with a NamedSharding over several devices (or a PartitionSpec under jax.set_mesh)
    each array leaf is split over the mesh; other targets as transfer.device_put (a sharded leaf put on
    one device is gathered there)."""
    sharding = _mesh_sharding(device)
    if sharding is not None:
        return data_leaves.tree_map(lambda leaf: leaf if isinstance(leaf, core.Tracer) else place(leaf, sharding), x)
    if device is not None:
        x = data_leaves.tree_map(lambda leaf: Array(leaf._value, leaf.aval) if type(leaf) is ShardedArray else leaf, x)
    return transfer.device_put(x, device, src=src, donate=donate, may_alias=may_alias)


# ---- making arrays from blocks --------------------------------------------------------------------

def _check_sharding(sharding, api):
    if not isinstance(sharding, NamedSharding) or not isinstance(sharding.mesh, Mesh):
        raise TypeError(f"{api}: sharding must be a jax.sharding.NamedSharding over a Mesh, got {sharding!r}")


def _aval_of(shape, dtype):
    return core.ShapedArray(tuple(shape), dtype)


def make_array_from_single_device_arrays(shape, sharding, arrays, *, dtype=None):
    """The array of global `shape` whose blocks are `arrays`, one per device of this process in the
    sharding's mesh (in its device order, each of the block shape)."""
    _check_sharding(sharding, "make_array_from_single_device_arrays")
    arrays = [transfer.device_put(a) if not isinstance(a, Array) else a for a in arrays]
    _check_mesh(sharding.mesh)
    count = len(sharding.mesh.local_positions)
    if len(arrays) != count:
        raise ValueError(f"Expected {count} per-device arrays (this is how many devices are addressable "
                         f"by the sharding), but got {len(arrays)}")
    block = sharding.shard_shape(tuple(shape))
    dtypes_seen = {a.dtype for a in arrays}
    if len(dtypes_seen) > 1 or (dtype is not None and dtypes_seen != {np.dtype(dtype)}):
        raise ValueError(f"make_array_from_single_device_arrays: the arrays' dtypes {sorted(map(str, dtypes_seen))} "
                         f"differ{'' if dtype is None else f' from dtype {np.dtype(dtype)}'}")
    aval = _aval_of(shape, arrays[0].dtype)
    for a in arrays:
        if a.shape != block:
            raise ValueError(f"Expected shard shape {block} doesn't match the single device array shape {a.shape}. "
                             f"Shape of Array is {aval.with_sharding(typed_sharding(sharding, len(block)))} "
                             f"with sharding {sharding}")
    _install_dispatch()
    return ShardedArray([Array(a._value, a.aval) if type(a) is ShardedArray else a for a in arrays], sharding, aval)


def make_array_from_callback(shape, sharding, data_callback, dtype=None):
    """The array whose block on each device is data_callback(index), index being the block's slices;
    devices holding the same block share the first call's result."""
    _check_sharding(sharding, "make_array_from_callback")
    index = sharding.addressable_devices_indices_map(tuple(shape))
    made = {}
    arrays = []
    for idx in index.values():
        key = _starts(idx)
        if key not in made:
            made[key] = transfer.device_put(data_callback(idx))
        arrays.append(made[key])
    if dtype is not None:
        arrays = [a.astype(dtype) for a in arrays]
    return make_array_from_single_device_arrays(shape, sharding, arrays)


def make_array_from_process_local_data(sharding, local_data, global_shape=None):
    """The array whose blocks on this process's devices come from `local_data`: along each dimension
    either the whole global extent or this process's blocks of it, in order (JAX's semantics; in one
    process the data is the whole array)."""
    _check_sharding(sharding, "make_array_from_process_local_data")
    local_data = transfer.device_put(local_data)
    if not sharding.is_fully_addressable:
        return _from_process_data(sharding, local_data, global_shape)
    if global_shape is not None and tuple(global_shape) != local_data.shape:
        raise ValueError(f"When calling `make_array_from_process_local_data` on a single process, global_shape "
                         f"should be None or equal to local_data.shape.Got global_shape={tuple(global_shape)} and "
                         f"local_data.shape={local_data.shape}.")
    return place(local_data, sharding)


def _from_process_data(sharding, data, global_shape):
    """make_array_from_process_local_data over a mesh across processes."""
    mesh = sharding.mesh
    if len(sharding.spec) > data.ndim:
        sharding.check_compatible_aval(data.shape)
    tiling = sharding._tiling(data.ndim)
    mine = [sharding.devices_indices_map(tuple(n * t for n, t in zip(data.shape, tiling)))[mesh.devices.flat[i]]
            for i in mesh.local_positions]
    if global_shape is None:  # each dimension holds this process's share of the blocks along it
        global_shape = tuple(n * t // len({_starts(m)[d] for m in mine}) for d, (n, t) in
                             enumerate(zip(data.shape, tiling)))
    global_shape = tuple(global_shape)
    if len(global_shape) != data.ndim:
        raise ValueError(f"make_array_from_process_local_data: global_shape {global_shape} has rank "
                         f"{len(global_shape)}, the local data {data.shape} rank {data.ndim}")
    block = sharding.shard_shape(global_shape)
    index = sharding.addressable_devices_indices_map(global_shape)
    starts = [sorted({_starts(i)[d] for i in index.values()}) for d in range(data.ndim)]
    for d, (have, want) in enumerate(zip(data.shape, global_shape)):
        if have != want and have != block[d] * len(starts[d]):
            raise ValueError(f"Invalid host data, each dimension should match either global or process shape. In "
                             f"dimension {d}, the process data has {have} elements. Process addresses "
                             f"{block[d] * len(starts[d])} elements and global_shape={global_shape}.")

    def local_block(idx):
        lo = [s if have == want else starts[d].index(s) * block[d]
              for d, (s, have, want) in enumerate(zip(_starts(idx), data.shape, global_shape))]
        return lax_slice(data, lo, [a + b for a, b in zip(lo, block)])

    return make_array_from_callback(global_shape, sharding, local_block)


# ---- eager primitives on sharded operands ---------------------------------------------------------

_ELEMENTWISE = frozenset(ew.PRIMITIVES.values()) | {ew.fma_p, ew.select_n_p, ew.clamp_p, ew.convert_element_type_p,
                                                    ew.add_any_p}


def _spec_of(sharding, ndim):
    return list(sharding.spec) + [None] * (ndim - len(sharding.spec))


def _result_sharding(mesh, entries):
    """A result's NamedSharding as JAX gives it: the spec over every dimension when the mesh has
    Explicit axes (the type's), else without trailing unsplit dimensions."""
    entries = list(entries)
    if not mesh.explicit_axes:
        while entries and entries[-1] is None:
            entries.pop()
    return NamedSharding(mesh, PartitionSpec(*entries))


def _merged_spec(sharded, ndim):
    """The spec an elementwise result takes from its sharded operands (each dimension split as the
    operand that splits it), or None when they conflict or differ in mesh."""
    mesh = sharded[0]._sharding.mesh
    out = [None] * ndim
    for x in sharded:
        if x._sharding.mesh != mesh:
            return None
        for d, p in enumerate(_spec_of(x._sharding, ndim)):
            if p is not None:
                if out[d] not in (None, p):
                    return None
                out[d] = p
    if len(list(a for p in out if p is not None for a in (p if isinstance(p, tuple) else (p,)))) != \
            len({a for p in out if p is not None for a in (p if isinstance(p, tuple) else (p,))}):
        return None
    return out


_executables = LRUCache(1024)  # (primitive, params, block avals) -> (Executable, block result avals)


def _per_device(prim, args, params, sharding):
    """An elementwise primitive run on every device at once over its blocks of the operands."""
    count = len(sharding.mesh.local_positions)
    per_arg = [[a] * count if not a.shape else place(a, _broadcast_sharding(sharding, a.shape))._shards
               for a in args]
    avals = tuple(blocks[0].aval for blocks in per_arg)
    key = (prim, cpu._params_key(params) if params else (), avals)
    entry = _executables.get(key)
    if entry is None:
        entry = lower_single_primitive(prim, avals, params)
        _executables.put(key, entry)
    exe, (out_aval,) = entry
    devices = [d.local_hardware_id for d in sharding.mesh.local_devices]
    outs = exe.run_on_devices([[blocks[i]._value for blocks in per_arg] for i in range(len(devices))], devices)
    global_aval = out_aval.update(shape=max((a.shape for a in args), key=len))
    return ShardedArray([Array(o[0], out_aval) for o in outs], sharding, global_aval)


def _broadcast_sharding(sharding, shape):
    """The sharding of an operand that lax broadcasts along its size-1 dimensions: those whole."""
    spec = [None if n == 1 else p for n, p in zip(shape, _spec_of(sharding, len(shape)))]
    return NamedSharding(sharding.mesh, PartitionSpec(*spec))


def _reduced_spec(spec, params):
    axes = set(params["axes"])
    return [p for d, p in enumerate(spec) if d not in axes]


def _transposed_spec(spec, params):
    return [spec[d] for d in params["permutation"]]


_SPEC_RULES = {name: _reduced_spec for name in ("reduce_sum", "reduce_prod", "reduce_max", "reduce_min",
                                                  "reduce_and", "reduce_or", "reduce_xor", "argmax", "argmin")}
_SPEC_RULES["transpose"] = _transposed_spec


def _dot_spec(prim, args, params):
    """dot_general's result spec: batch dims, then lhs and rhs free dims, each split as its operand
    splits it; None when a contracting dimension is split or one axis would split two dimensions."""
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    lhs, rhs = [_spec_of(a._sharding, a.ndim) if type(a) is ShardedArray else [None] * a.ndim for a in args]
    if any(lhs[d] is not None for d in lc) or any(rhs[d] is not None for d in rc):
        return None
    out = []
    for dl, dr in zip(lb, rb):
        if None not in (lhs[dl], rhs[dr]) and lhs[dl] != rhs[dr]:
            return None
        out.append(lhs[dl] if lhs[dl] is not None else rhs[dr])
    out += [p for d, p in enumerate(lhs) if d not in lc and d not in lb]
    out += [p for d, p in enumerate(rhs) if d not in rc and d not in rb]
    names = [a for p in out if p is not None for a in (p if isinstance(p, tuple) else (p,))]
    return out if len(names) == len(set(names)) else None


def _gathered(prim, args, params, sharded):
    """The primitive on the whole operands, its result placed as JAX's sharding rules place it."""
    mesh = sharded[0]._sharding.mesh
    partial = [x for x in sharded if not x.holds_every_block]
    if partial and partitioned_across is not None:
        out = partitioned_across(prim, args, params)
        if out is not None:
            return out
    if partial:
        raise NotImplementedError(
            f"'{prim.name}' on an array split over the devices of several processes ({partial[0]._sharding}): eagerly, "
            "xjax runs elementwise ops alone on such arrays, block by block (issue 29); compute in a shard_map")
    if prim.name == "dot_general" and all(type(a) is not ShardedArray or a._sharding.mesh == mesh for a in args):
        spec = _dot_spec(prim, args, params)
    elif prim.name in _SPEC_RULES and len(sharded) == 1 and type(args[0]) is ShardedArray:
        spec = _SPEC_RULES[prim.name](_spec_of(sharded[0]._sharding, sharded[0].ndim), params)
    else:
        spec = None
    specs = None if spec is None else [spec]
    if spec is None:
        explicit = {n for x in sharded for n in x._sharding.mesh.explicit_axes}
        used = {n for x in sharded for n in x._sharding.spec if n is not None
                for n in (n if isinstance(n, tuple) else (n,))}
        if explicit & used:
            specs = _typed_specs(prim, args, params, mesh, sorted(explicit & used))
    whole = [Array(a._value, a.aval) if type(a) is ShardedArray else a for a in args]
    out = cpu.apply_primitive(prim, *whole, **params)
    outs = out if prim.multiple_results else [out]
    placed = [place(o, _result_sharding(mesh, s)) for o, s in zip(outs, specs or [[]] * len(outs))]
    return placed if prim.multiple_results else placed[0]


def _typed_specs(prim, args, params, mesh, axes):
    """Over Explicit axes, each result's spec as the primitive's sharding rule types it (JAX's eager ops
    are typed as traced ones: its ShardingTypeError where the rule refuses)."""
    if prim.sharding is None or any(type(a) is ShardedArray and a._sharding.mesh != mesh for a in args):
        raise NotImplementedError(
            f"'{prim.name}' on arrays split over the Explicit mesh axes {axes}: the sharding "
            "of its result is not implemented in xjax yet (issue 29); reshard the operands first "
            "(jax.reshard(x, P())) or use a mesh of Auto axes")
    got = prim.sharding(*[a.traced_aval if type(a) is ShardedArray else core.get_aval(a) for a in args], **params)
    return [list(s.spec) for s in (got if prim.multiple_results else [got])]


def _fits(operand, shape):
    """Whether an elementwise operand splits as a result of `shape` does: a sharded one of that shape, a
    whole one of that shape or broadcast to it along size-1 dimensions, a scalar."""
    if type(operand) is ShardedArray:
        return operand.shape == shape
    return isinstance(operand, Array) and (not operand.shape or (
        len(operand.shape) == len(shape) and all(n in (1, m) for n, m in zip(operand.shape, shape))))


def _apply(prim, args, params):
    """The eager hook: None unless an operand is sharded (see the module docstring)."""
    sharded = [a for a in args if type(a) is ShardedArray]
    if not sharded:
        return None
    shape = sharded[0].shape
    if prim in _ELEMENTWISE and all(_fits(a, shape) for a in args):
        spec = _merged_spec(sharded, len(shape))
        if spec is not None:
            mesh = sharded[0]._sharding.mesh
            same = all(x._sharding == sharded[0]._sharding for x in sharded)
            target = sharded[0]._sharding if same and not mesh.explicit_axes else _result_sharding(mesh, spec)
            return _per_device(prim, args, params, target)
    return _gathered(prim, args, params, sharded)


def _install_dispatch():
    """Eager primitives look for sharded operands from the first sharded array on (none pay before)."""
    cpu.sharded_apply = _apply


install_dispatch = _install_dispatch  # for the makers of sharded arrays elsewhere (pmap)
