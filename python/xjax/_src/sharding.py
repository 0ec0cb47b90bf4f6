"""Shardings as JAX names them: meshes of devices, PartitionSpecs, and which block of an array
each device holds.

An array made by xjax's computations is whole on one device (a SingleDeviceSharding); one placed
with a NamedSharding (jax.device_put) holds one block per device of the mesh (sharded_array.py).
The `sharding` of an abstract value (`jax.typeof(x).sharding`) is, as in JAX, a NamedSharding over
an AbstractMesh: the empty one for a whole array. Layouts that the APIs of one device take
(`out_sharding=`, `device=`) are still refused by `check_trivial` when they split the array.
"""
import contextlib
import enum
import functools
import math
import threading

import numpy as np

from xjax._src import platforms

_PARTITIONING = "partitioning an array over a mesh of several devices (issue 29)"


class DuplicateSpecError(Exception):
    """A PartitionSpec that names a mesh axis for more than one dimension (JAX's error)."""


class IndivisibleError(ValueError):
    """A dimension that its mesh axes do not divide evenly (JAX's error)."""


class AxisType(enum.Enum):
    """How a mesh axis is sharded: by the compiler (Auto), by the types (Explicit) or by hand (Manual)."""
    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self):
        return self.name


def _canonical_partition(p):
    if isinstance(p, (list, tuple)):
        p = tuple(p)
        if len(p) == 1:
            return p[0]
        return p if p else None
    if p is not None and not isinstance(p, str) and p is not PartitionSpec.UNCONSTRAINED:
        raise TypeError(f"PartitionSpec entries must be None, an axis name or a tuple of axis names, got {p!r}")
    return p


class _Unconstrained:
    def __repr__(self):
        return "UNCONSTRAINED"


class PartitionSpec:
    """How each dimension of an array is split over mesh axes: None, an axis name or a tuple of names.
    A leaf of pytrees (not a tuple), compared by value."""

    __slots__ = ("_partitions", "unreduced", "reduced")
    UNCONSTRAINED = _Unconstrained()

    def __init__(self, *partitions, unreduced=frozenset(), reduced=frozenset()):
        for name, s in (("unreduced", unreduced), ("reduced", reduced)):
            if not isinstance(s, (set, frozenset)):
                raise TypeError(f"{name} argument of PartitionSpec should of type `frozenset` or `set`. "
                                f"Got type {type(s)}")
        object.__setattr__(self, "_partitions", tuple(_canonical_partition(p) for p in partitions))
        object.__setattr__(self, "unreduced", frozenset(unreduced))
        object.__setattr__(self, "reduced", frozenset(reduced))

    def __setattr__(self, name, value):
        raise AttributeError("PartitionSpec is immutable")

    @property
    def partitions(self):
        return self._partitions

    def __repr__(self):
        parts = repr(self._partitions)[1:-1]
        extra = [f"{k}={{{', '.join(repr(a) for a in sorted(v))}}}" for k, v in
                 (("unreduced", self.unreduced), ("reduced", self.reduced)) if v]
        if extra:
            parts = ", ".join(([parts.rstrip(",")] if parts else []) + extra)
        return f"P({parts})"

    def __eq__(self, other):
        return (isinstance(other, PartitionSpec) and self._partitions == other._partitions
                and self.unreduced == other.unreduced and self.reduced == other.reduced)

    def __hash__(self):
        return hash((PartitionSpec, self._partitions, self.unreduced, self.reduced))

    def __getitem__(self, i):
        return self._partitions[i]

    def __iter__(self):
        return iter(self._partitions)

    def __len__(self):
        return len(self._partitions)

    def __add__(self, other):
        if isinstance(other, PartitionSpec):
            return PartitionSpec(*self._partitions, *other._partitions, unreduced=self.unreduced | other.unreduced,
                                 reduced=self.reduced | other.reduced)
        if isinstance(other, tuple):
            return PartitionSpec(*self._partitions, *other)
        return NotImplemented

    def __radd__(self, other):
        if isinstance(other, tuple):
            return PartitionSpec(*other, *self._partitions)
        return NotImplemented

    def __reduce__(self):
        return (_make_spec, (self._partitions, self.unreduced, self.reduced))

    def index(self, value):
        return self._partitions.index(_canonical_partition(value))

    def count(self, value):
        return self._partitions.count(_canonical_partition(value))

    def update(self, partitions=None, unreduced=None, reduced=None):
        return PartitionSpec(*(self._partitions if partitions is None else partitions),
                             unreduced=self.unreduced if unreduced is None else unreduced,
                             reduced=self.reduced if reduced is None else reduced)


def _make_spec(partitions, unreduced, reduced):
    return PartitionSpec(*partitions, unreduced=unreduced, reduced=reduced)


P = PartitionSpec


def _axis_types(axis_names, axis_types, api):
    if axis_types is None:
        return (AxisType.Auto,) * len(axis_names)
    axis_types = axis_types if isinstance(axis_types, tuple) else (axis_types,)
    if not all(isinstance(t, AxisType) for t in axis_types):
        raise TypeError(f"axis_types passed to {api} must be of type `jax.sharding.AxisType`. Got {axis_types}")
    if len(axis_types) != len(axis_names):
        raise ValueError(f"Number of axis names should match the number of axis_types. Got "
                         f"axis_names={axis_names} and axis_types={axis_types}")
    return axis_types


class _MeshBase:
    """What meshes share: named axes, their sizes and types."""

    @property
    def shape(self):
        return dict(zip(self.axis_names, self.axis_sizes))

    @property
    def shape_tuple(self):
        return tuple(zip(self.axis_names, self.axis_sizes))

    @property
    def size(self):
        return math.prod(self.axis_sizes)

    @property
    def empty(self):
        return not self.axis_names

    def _all(self, kind):
        return bool(self.axis_types) and all(t is kind for t in self.axis_types)

    are_all_axes_auto = property(lambda self: self._all(AxisType.Auto))
    are_all_axes_explicit = property(lambda self: self._all(AxisType.Explicit))
    are_all_axes_manual = property(lambda self: self._all(AxisType.Manual))

    def _names_of(self, kind):
        return tuple(n for n, t in zip(self.axis_names, self.axis_types) if t is kind)

    auto_axes = property(lambda self: self._names_of(AxisType.Auto))
    explicit_axes = property(lambda self: self._names_of(AxisType.Explicit))
    manual_axes = property(lambda self: self._names_of(AxisType.Manual))


class AbstractMesh(_MeshBase):
    """A mesh's axis names, sizes and types without devices: what a traced value's sharding names."""

    def __init__(self, axis_sizes, axis_names, axis_types=None, *, _platform=None):
        self._platform = _platform  # the devices' platform, for a mesh made from a concrete one
        self.axis_sizes = tuple(axis_sizes)
        self.axis_names = tuple(axis_names)
        if len(self.axis_sizes) != len(self.axis_names):
            raise ValueError(f"AbstractMesh: axis_sizes {self.axis_sizes} and axis_names {self.axis_names} "
                             f"differ in length")
        self.axis_types = _axis_types(self.axis_names, axis_types, "AbstractMesh")

    @property
    def abstract_mesh(self):
        return self

    def __eq__(self, other):
        return (isinstance(other, AbstractMesh) and self.axis_sizes == other.axis_sizes
                and self.axis_names == other.axis_names and self.axis_types == other.axis_types)

    def __hash__(self):
        return hash((AbstractMesh, self.axis_sizes, self.axis_names, self.axis_types))

    def __repr__(self):
        axes = ", ".join(f"'{n}': {s}" for n, s in self.shape_tuple) or "()"
        device = "" if self._platform is None else \
            f", device_kind={self._platform}, num_cores=None, platform={self._platform}"
        return f"AbstractMesh({axes}, axis_types={self.axis_types}{device})"


EMPTY_ABSTRACT_MESH = AbstractMesh((), ())


class Mesh(_MeshBase, contextlib.ContextDecorator):
    """An array of devices whose axes have names."""

    def __init__(self, devices, axis_names, axis_types=None):
        self.devices = np.asarray(devices, dtype=object) if not isinstance(devices, np.ndarray) else devices
        self.axis_names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        if self.devices.ndim != len(self.axis_names):
            raise ValueError(f"Mesh requires the ndim of its first argument (`devices`) to equal the length of its "
                             f"second argument (`axis_names`), but got devices.ndim == {self.devices.ndim} and "
                             f"len(axis_names) == {len(self.axis_names)}.")
        self.axis_types = _axis_types(self.axis_names, axis_types, "Mesh")
        self.axis_sizes = self.devices.shape

    @property
    def device_ids(self):
        return np.vectorize(lambda d: d.id, otypes=[int])(self.devices)

    @property
    def local_devices(self):
        """This process's devices of the mesh, in its device order."""
        return [self.devices.flat[i] for i in self.local_positions]

    @functools.cached_property
    def local_positions(self):
        """Where this process's devices sit in the mesh's device order (devices of other processes
        have no local_hardware_id)."""
        return tuple(i for i, d in enumerate(self.devices.flat) if getattr(d, "local_hardware_id", 0) is not None)

    @property
    def is_multi_process(self):
        return len(self.local_positions) != self.size

    @property
    def abstract_mesh(self):
        first = next(iter(self.devices.flat), None)
        return AbstractMesh(self.axis_sizes, self.axis_names, self.axis_types,
                            _platform=getattr(first, "platform", None))

    def __eq__(self, other):
        return (isinstance(other, Mesh) and self.axis_names == other.axis_names
                and self.axis_types == other.axis_types and self.devices.shape == other.devices.shape
                and all(a is b for a, b in zip(self.devices.flat, other.devices.flat)))

    def __hash__(self):
        return self._hash

    @functools.cached_property
    def _hash(self):  # (a mesh does not change; its hash is asked for on every call over it)
        return hash((Mesh, self.axis_names, self.axis_types, tuple(id(d) for d in self.devices.flat)))

    def __enter__(self):
        _state.meshes.append(self)
        return self

    def __exit__(self, *exc):
        _state.meshes.pop()
        return False

    def __repr__(self):
        return (f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names}, "
                f"axis_types={self.axis_types})")

    def __str__(self):
        axes = ", ".join(f"'{n}': {s}" for n, s in self.shape_tuple)
        return f"Mesh({axes}, axis_types={self.axis_types})"


class _State(threading.local):
    def __init__(self):
        self.meshes = []


_state = _State()


class Sharding:
    """How an array is laid out over devices."""

    @property
    def device_set(self):
        raise NotImplementedError

    @property
    def addressable_devices(self):
        return self.device_set

    @property
    def num_devices(self):
        return len(self.device_set)

    @property
    def is_fully_addressable(self):
        return True

    @property
    def _device_assignment(self):
        return tuple(sorted(self.device_set, key=lambda d: d.id))

    def shard_shape(self, global_shape):
        return tuple(global_shape)

    def is_equivalent_to(self, other, ndim):
        return isinstance(other, Sharding) and self.device_set == other.device_set and self.is_fully_replicated \
            and other.is_fully_replicated

    def addressable_devices_indices_map(self, global_shape):
        return {d: tuple(slice(None) for _ in global_shape) for d in self.device_set}

    def devices_indices_map(self, global_shape):
        return self.addressable_devices_indices_map(global_shape)


class SingleDeviceSharding(Sharding):
    """The whole array on one device: the sharding of every xjax array."""

    def __init__(self, device, *, memory_kind=None):
        self._device = device
        self.memory_kind = "device" if memory_kind is None else memory_kind

    @property
    def device_set(self):
        return {self._device}

    is_fully_replicated = property(lambda self: True)

    def with_memory_kind(self, kind):
        return SingleDeviceSharding(self._device, memory_kind=kind)

    def __eq__(self, other):
        return (isinstance(other, SingleDeviceSharding) and self._device is other._device
                and self.memory_kind == other.memory_kind)

    def __hash__(self):
        return hash((SingleDeviceSharding, id(self._device), self.memory_kind))

    def __repr__(self):
        return f"SingleDeviceSharding(device={self._device!r}, memory_kind={self.memory_kind})"


class NamedSharding(Sharding):
    """An array split over a mesh's named axes as a PartitionSpec says."""

    def __init__(self, mesh, spec=PartitionSpec(), *, memory_kind=None):
        if not isinstance(mesh, (Mesh, AbstractMesh)):
            raise TypeError(f"NamedSharding: mesh must be a jax.sharding.Mesh or AbstractMesh, got {type(mesh)}")
        if not isinstance(spec, PartitionSpec):
            if spec is None or isinstance(spec, tuple):
                spec = PartitionSpec(*(spec or ()))
            else:
                raise TypeError(f"NamedSharding: spec must be a PartitionSpec, got {spec!r}")
        _check_unique_axes(spec)
        for name in _axis_names(spec):
            if name not in mesh.axis_names:
                raise ValueError(f"Resource axis: {name} of {spec} is not found in mesh: {mesh.axis_names}.")
        self.mesh, self.spec = mesh, spec
        self.memory_kind = memory_kind if memory_kind is not None or isinstance(mesh, AbstractMesh) else "device"

    @property
    def device_set(self):
        if isinstance(self.mesh, AbstractMesh):
            raise ValueError("device_set is not implemented for a NamedSharding over an AbstractMesh")
        return set(self.mesh.devices.flat)

    @property
    def is_fully_replicated(self):
        return all(self.mesh.shape[n] == 1 for n in _axis_names(self.spec))

    def _tiling(self, ndim):
        """How many blocks each of ndim dimensions is split into."""
        return [math.prod(self.mesh.shape[n] for n in _names_of(p)) if i < len(self.spec) else 1
                for i, p in enumerate(list(self.spec) + [None] * (ndim - len(self.spec)))]

    def check_compatible_aval(self, shape):
        if len(shape) < len(self.spec):
            extra = " For scalars the PartitionSpec should be P()" if not shape else ""
            raise ValueError(f"Sharding {self} is only valid for values of rank at least {len(self.spec)}, but was "
                             f"applied to a value of rank {len(shape)}.{extra}")

    def shard_shape(self, global_shape):
        global_shape = tuple(global_shape)
        self.check_compatible_aval(global_shape)
        tiling = self._tiling(len(global_shape))
        for dim, (size, parts) in enumerate(zip(global_shape, tiling)):
            if size % parts:
                raise IndivisibleError(
                    f"Sharding {self} implies that array axis {dim} is partitioned {parts} times, but the dimension "
                    f"size is {size} (full shape: {global_shape}, per-dimension tiling factors: {tiling} should "
                    "evenly divide the shape)")
        return tuple(size // parts for size, parts in zip(global_shape, tiling))

    def devices_indices_map(self, global_shape):
        """{device: the tuple of slices of the block it holds}, in the mesh's device order."""
        block = self.shard_shape(global_shape)
        names = self.mesh.axis_names
        out = {}
        for pos in np.ndindex(*self.mesh.axis_sizes):
            at = dict(zip(names, pos))
            index = []
            for dim, p in enumerate(list(self.spec) + [None] * (len(block) - len(self.spec))):
                axes = _names_of(p)
                if not axes:
                    index.append(slice(None))
                    continue
                i = 0
                for n in axes:  # the block's number: the axes' positions as digits, the first the highest
                    i = i * self.mesh.shape[n] + at[n]
                index.append(slice(i * block[dim], (i + 1) * block[dim]))
            out[self.mesh.devices[pos]] = tuple(index)
        return out

    def addressable_devices_indices_map(self, global_shape):
        """devices_indices_map for this process's devices alone."""
        index = self.devices_indices_map(global_shape)
        return {d: index[d] for d in self.mesh.local_devices} if self.mesh.is_multi_process else index

    @property
    def addressable_devices(self):
        return set(self.mesh.local_devices)

    @property
    def is_fully_addressable(self):
        return not self.mesh.is_multi_process

    def replica_ids(self):
        """Each device's replica number among the devices holding the same block (mesh device order)."""
        used = set(_axis_names(self.spec))
        free = [(i, size) for i, (n, size) in enumerate(zip(self.mesh.axis_names, self.mesh.axis_sizes))
                if n not in used]
        out = []
        for pos in np.ndindex(*self.mesh.axis_sizes):
            r = 0
            for i, size in free:
                r = r * size + pos[i]
            out.append(r)
        return out

    @property
    def _device_assignment(self):
        return tuple(self.mesh.devices.flat)

    def with_memory_kind(self, kind):
        return NamedSharding(self.mesh, self.spec, memory_kind=kind)

    def update(self, mesh=None, spec=None, memory_kind=None):
        return NamedSharding(self.mesh if mesh is None else mesh, self.spec if spec is None else spec,
                             memory_kind=self.memory_kind if memory_kind is None else memory_kind)

    def __eq__(self, other):
        return (isinstance(other, NamedSharding) and self.mesh == other.mesh and self.spec == other.spec
                and self.memory_kind == other.memory_kind)

    def __hash__(self):
        return hash((NamedSharding, self.mesh, self.spec, self.memory_kind))

    def __repr__(self):
        kind = "" if self.memory_kind is None else f", memory_kind={self.memory_kind}"
        return f"NamedSharding(mesh={self.mesh}, spec={self.spec!r}{kind})"


def _names_of(p):
    """The mesh axes of one PartitionSpec entry."""
    return tuple(n for n in (p if isinstance(p, tuple) else (p,)) if isinstance(n, str))


def _axis_names(spec):
    for p in spec:
        yield from _names_of(p)


def _check_unique_axes(spec):
    names = list(_axis_names(spec))
    twice = {n for n in names if names.count(n) > 1}
    if twice:
        axes = ", ".join(sorted(f"`{n}`" for n in twice))
        raise DuplicateSpecError(f"A single NamedSharding spec specification can map every mesh axis to at most one "
                                 f"positional dimension, but {spec} has duplicate entries for {axes}")


def typed_sharding(sharding, ndim):
    """The sharding of a NamedSharding-placed array's abstract value, as JAX's types carry it: over the
    abstract mesh, with the dimensions split over Explicit axes only (Auto ones are the compiler's)."""
    mesh = sharding.mesh
    explicit = set(mesh.explicit_axes)
    entries = []
    for p in list(sharding.spec) + [None] * (ndim - len(sharding.spec)):
        entries.append(tuple(n for n in _names_of(p) if n in explicit) or None)
    return NamedSharding(mesh.abstract_mesh, PartitionSpec(*entries))


def aval_sharding(ndim):
    """The sharding of an abstract value on one device: unsplit dims over the empty mesh, as in JAX."""
    return NamedSharding(EMPTY_ABSTRACT_MESH, PartitionSpec(*([None] * ndim)))


def check_trivial(sharding, api):
    """`sharding` (an out_sharding/device_put target) if it leaves the array whole on this process's
    one device; otherwise refuses by name: splitting data over devices is issue 29's partitioning."""
    if sharding is None or isinstance(sharding, SingleDeviceSharding):
        return sharding
    if isinstance(sharding, PartitionSpec):
        names = tuple(_axis_names(sharding))
        mesh = get_abstract_mesh()
        if all(mesh.shape.get(n, 1) == 1 for n in names) and all(n in mesh.axis_names for n in names):
            return sharding
    elif isinstance(sharding, NamedSharding):
        if sharding.is_fully_replicated:  # every CPU device shares the host memory: one copy serves all
            return sharding
    else:
        raise TypeError(f"{api}: expected a jax.sharding.Sharding or PartitionSpec, got {sharding!r}")
    raise NotImplementedError(f"{api}: sharding {sharding!r} splits the array over devices: {_PARTITIONING} "
                              f"is not implemented in xjax yet")


def make_mesh(axis_shapes, axis_names, axis_types=None, *, devices=None):
    """A mesh of the given shape over `devices` (all of this process's by default)."""
    axis_shapes = tuple(axis_shapes)
    devices = list(platforms.get_backend().devices() if devices is None else devices)
    n = math.prod(axis_shapes)
    if n > len(devices):
        raise ValueError(f"make_mesh: the mesh {axis_shapes} needs {n} devices, but there are only "
                         f"{len(devices)} ({devices})")
    grid = np.empty(n, dtype=object)
    grid[:] = devices[:n]
    return Mesh(grid.reshape(axis_shapes), axis_names,
                (AxisType.Explicit,) * len(tuple(axis_names)) if axis_types is None else axis_types)


def get_mesh():
    """The concrete mesh set by `set_mesh` (or a `with mesh:` block), else an empty one."""
    return _state.meshes[-1] if _state.meshes else Mesh(np.empty((), dtype=object), ())


def get_abstract_mesh():
    return _state.meshes[-1].abstract_mesh if _state.meshes else EMPTY_ABSTRACT_MESH


@contextlib.contextmanager
def _using(mesh):
    _state.meshes.append(mesh)
    try:
        yield mesh
    finally:
        _state.meshes.pop()


def set_mesh(mesh):
    """Makes `mesh` the current mesh for a `with` block."""
    if not isinstance(mesh, Mesh):
        raise TypeError(f"set_mesh: expected a jax.sharding.Mesh, got {type(mesh)}")
    return _using(mesh)


def use_abstract_mesh(mesh):
    if not isinstance(mesh, AbstractMesh):
        raise TypeError(f"use_abstract_mesh: expected a jax.sharding.AbstractMesh, got {type(mesh)}")
    return _using(mesh)


def make_single_device_sharding(device):
    return SingleDeviceSharding(device)


class Shard:
    """One device's block of an array (jax.Shard): its device, its index (slices of the global array),
    its replica number among the devices holding the same block, and its data (an xjax Array)."""

    __slots__ = ("device", "index", "replica_id", "data")

    def __init__(self, device, index, replica_id, data):
        self.device, self.index, self.replica_id, self.data = device, index, replica_id, data

    def __repr__(self):
        return f"Shard(device={self.device!r}, index={self.index}, replica_id={self.replica_id}, data={self.data})"
