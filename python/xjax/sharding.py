"""xjax.sharding (jax.sharding): how an array is laid out over devices.

xjax arrays live in host memory, so the only real layout is one device holding the whole array;
meshes and partition specs are kept as descriptions that libraries build and compare.
"""
import contextlib
import threading

import numpy as np

from xjax._src.devices import CPU_DEVICE


class PartitionSpec(tuple):
    """For each array axis, the mesh axis name(s) it is split over, or None (not split)."""

    UNCONSTRAINED = type("UnconstrainedSingleton", (), {"__repr__": lambda self: "UNCONSTRAINED"})()

    def __new__(cls, *partitions):
        return super().__new__(cls, partitions)

    def __repr__(self):
        return f"PartitionSpec{tuple.__repr__(self)}"

    def __reduce__(self):
        return (PartitionSpec, tuple(self))


class AbstractMesh:
    """A mesh's axis names and sizes, without devices."""

    def __init__(self, axis_sizes, axis_names):
        self.axis_sizes, self.axis_names = tuple(axis_sizes), tuple(axis_names)
        if len(self.axis_sizes) != len(self.axis_names):
            raise ValueError(f"AbstractMesh: {len(self.axis_sizes)} axis sizes for {len(self.axis_names)} names")

    shape = property(lambda self: dict(zip(self.axis_names, self.axis_sizes)))
    size = property(lambda self: int(np.prod(self.axis_sizes, dtype=int)))
    empty = property(lambda self: not self.axis_names)

    def __eq__(self, other):
        return (isinstance(other, AbstractMesh) and not isinstance(other, Mesh)
                and (self.axis_sizes, self.axis_names) == (other.axis_sizes, other.axis_names))

    def __hash__(self):
        return hash((self.axis_sizes, self.axis_names))

    def __repr__(self):
        return f"AbstractMesh({', '.join(f'{n!r}: {s}' for n, s in self.shape.items())})"


class _MeshState(threading.local):
    mesh = AbstractMesh((), ())


_mesh_state = _MeshState()


def get_abstract_mesh():
    """The mesh of the enclosing `with mesh:` block, abstractly; an empty one outside any."""
    return _mesh_state.mesh


class Mesh(AbstractMesh):
    """An array of devices whose axes have names; `with mesh:` makes it the current one."""

    def __init__(self, devices, axis_names):
        self.devices = np.asarray(devices, dtype=object)
        if isinstance(axis_names, str):
            axis_names = (axis_names,)
        super().__init__(self.devices.shape, axis_names)

    abstract_mesh = property(lambda self: AbstractMesh(self.axis_sizes, self.axis_names))

    def __eq__(self, other):
        return (isinstance(other, Mesh) and self.axis_names == other.axis_names
                and self.devices.shape == other.devices.shape and all(self.devices.flat == other.devices.flat))

    def __hash__(self):
        return hash((self.axis_names, tuple(self.devices.flat)))

    def __enter__(self):
        self._outer = _mesh_state.mesh
        _mesh_state.mesh = self.abstract_mesh
        return self

    def __exit__(self, *exc):
        _mesh_state.mesh = self._outer

    def __repr__(self):
        return f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names})"


@contextlib.contextmanager
def use_mesh(mesh):
    """Makes `mesh` the current mesh inside the block."""
    with mesh:
        yield mesh


class Sharding:
    """The layout of an array over devices."""

    @property
    def device_set(self):
        raise NotImplementedError(f"{type(self).__name__}.device_set")

    def is_equivalent_to(self, other, ndim):
        return self == other


class SingleDeviceSharding(Sharding):
    """The whole array on one device."""

    def __init__(self, device=CPU_DEVICE, *, memory_kind=None):
        self._device, self.memory_kind = device, memory_kind

    device_set = property(lambda self: {self._device})
    is_fully_replicated = True
    is_fully_addressable = True

    def __eq__(self, other):
        return isinstance(other, SingleDeviceSharding) and self._device == other._device

    def __hash__(self):
        return hash(self._device)

    def __repr__(self):
        return f"SingleDeviceSharding(device={self._device!r})"


class NamedSharding(Sharding):
    """An array split over a mesh's named axes as a PartitionSpec says."""

    def __init__(self, mesh, spec, *, memory_kind=None):
        if not isinstance(spec, PartitionSpec):
            raise TypeError(f"NamedSharding: spec must be a PartitionSpec, got {type(spec).__name__}")
        self.mesh, self.spec, self.memory_kind = mesh, spec, memory_kind

    device_set = property(lambda self: set(self.mesh.devices.flat))

    def __eq__(self, other):
        return isinstance(other, NamedSharding) and (self.mesh, self.spec) == (other.mesh, other.spec)

    def __hash__(self):
        return hash((self.mesh, self.spec))

    def __repr__(self):
        return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r})"
