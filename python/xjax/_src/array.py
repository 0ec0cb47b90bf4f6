"""xjax.Array: an immutable array whose data lives in the C++ runtime.

Arithmetic operators and methods are attached by xjax._src.numpy.array_methods, so the same
definitions serve tracers inside transformations.
"""
import abc

import numpy as np

from xjax import _core
from xjax._src import core, dtypes, platforms
from xjax._src.config import config
from xjax._src.devices import CPU_DEVICE, CpuDevice
from xjax._src.sharding import PartitionSpec, Shard, Sharding, SingleDeviceSharding, check_trivial
from xjax._src.sharding import _state as _mesh_state
from xjax._src.dlpack import DLDeviceType, retag_bfloat16


def check_device(device, fun_name):
    """The device a `device=` argument names: None (the default placement), the CPU (every CPU device
    shares the host memory) or a GPU device. A sharding names its one device, or the default placement
    for a layout that leaves arrays whole; one that splits them is refused (sharding.check_trivial)."""
    if device is None or device is CPU_DEVICE:
        return device
    if isinstance(device, (Sharding, PartitionSpec)):
        sharding = check_trivial(device, fun_name)
        device = next(iter(sharding.device_set)) if isinstance(sharding, SingleDeviceSharding) else None
        return check_device(device, fun_name)
    platform = getattr(device, "platform", None)
    if isinstance(device, CpuDevice) or platform == "cpu":
        return CPU_DEVICE
    if platform == "gpu":
        return device
    raise ValueError(f"{fun_name}: device must be None or one of xjax.devices() "
                     f"({platforms.get_backend().devices()}), got {device!r}")


def to_numpy(value, aval):
    """A read-only NumPy view of a runtime buffer holding a value of type `aval`."""
    return value.bytes_view().view(aval.dtype).reshape(aval.shape)


def device_put(x, dtype=None, weak_type=False):
    """A new xjax.Array holding a copy of NumPy-convertible `x` (dtype canonicalised)."""
    x = np.asarray(x)
    dt = dtypes.canonicalize_dtype(x.dtype if dtype is None else dtype)
    if x.dtype != dt:
        x = x.astype(dt)
    shape = x.shape
    x = np.ascontiguousarray(x)  # (makes 0-d arrays 1-d: keep the shape from before)
    value = _core.Array.from_buffer(x.reshape(-1).view(np.uint8), shape, dt.name)
    return Array(value, core.ShapedArray(shape, dt, weak_type))


_DTYPE_NAMES = {d: d.name for d in dtypes.SUPPORTED}  # (np.dtype.name is slow)


def scalar(value, dtype, weak_type):
    """A 0-d array from a Python scalar, without a NumPy round trip."""
    name = _DTYPE_NAMES.get(dtype) or dtype.name
    return Array(_core.Array.from_scalar(value, name), core.ShapedArray((), dtype, weak_type))


class Array(metaclass=abc.ABCMeta):
    """An immutable, asynchronously computed n-dimensional array (tracers count as Arrays too)."""

    __slots__ = ("_value", "aval", "_npy", "__weakref__")
    __array_priority__ = 100

    def __init__(self, value, aval):
        self._value = value  # xjax._core.Array
        self.aval = aval  # core.ShapedArray
        self._npy = None  # cached read-only NumPy view

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: len(self.aval.shape))
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)
    itemsize = property(lambda self: self.aval.dtype.itemsize)
    nbytes = property(lambda self: self.aval.size * self.aval.dtype.itemsize)
    device = property(lambda self: CPU_DEVICE)
    sharding = property(lambda self: SingleDeviceSharding(self.device))  # the whole array on its device
    is_fully_addressable = True
    is_fully_replicated = True

    @property
    def addressable_shards(self):
        """One Shard: the whole array on its device (sharded_array.py splits arrays over several)."""
        return [Shard(self.device, (slice(None),) * self.ndim, 0, self)]

    def devices(self):
        return {CPU_DEVICE}

    def _numpy(self):
        """The data as a read-only NumPy array sharing the buffer (waits for the computation)."""
        if self._npy is None:
            self._npy = to_numpy(self._value, self.aval)
        return self._npy

    # Waits until computed; raises the error of a failed computation (in C++: it is in every step's loop).
    block_until_ready = _core.fast_call.block_until_ready

    def is_ready(self):
        return self._value.is_ready()

    def __array__(self, dtype=None, copy=None):
        x = self._numpy()
        if copy:
            x = x.copy()
        return x if dtype is None else x.astype(dtype, copy=False)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of the data (the DLPack protocol, as `np.from_dlpack(x)` asks for it).

        DLPack 1.0 consumers get a zero-copy, read-only view of the buffer; older ones (no
        max_version) a copy, since their capsules cannot mark data read-only. copy=True always copies,
        copy=False never does. bfloat16 goes as DLPack's bfloat16 (which NumPy cannot import, as with JAX).
        """
        if dl_device is not None and dl_device[0] == DLDeviceType.kDLCUDA:  # a GPU consumer: a copy made there
            return self._to_gpu_for_dlpack(dl_device[1], copy).__dlpack__(stream=stream, max_version=max_version)
        if stream is not None:
            raise BufferError(f"xjax arrays live on the CPU, where __dlpack__ takes stream=None; got stream={stream!r}")
        if dl_device is not None and tuple(dl_device) != (DLDeviceType.kDLCPU, 0):
            raise BufferError(f"xjax arrays live on the CPU (dl_device {(DLDeviceType.kDLCPU, 0)}); cannot export to "
                              f"dl_device={tuple(dl_device)}")
        data = self._numpy()
        if data.dtype in dtypes.FLOAT8:  # NumPy's DLPack has no float8 code to relabel from
            raise BufferError(f"__dlpack__: {data.dtype} arrays cannot be exported through DLPack (NumPy has no "
                              "DLPack code for them); use np.asarray(x), or x.view(jnp.uint8) for the bytes")
        bf16 = data.dtype == dtypes.bfloat16
        if bf16:
            data = data.view(np.uint16)  # (NumPy exports no bfloat16: relabelled below)
        if copy is None and (max_version is None or max_version[0] < 1):
            data, copy = data.copy(), False
        capsule = data.__dlpack__(max_version=max_version, copy=copy)
        return retag_bfloat16(capsule) if bf16 else capsule

    def __dlpack_device__(self):
        return DLDeviceType.kDLCPU, 0

    def _to_gpu_for_dlpack(self, index, copy):
        gpu = platforms.get_backend("cuda").local_devices()[index]
        if copy is False:
            raise ValueError(f"Specified device={gpu!r} which requires a copy since the source device is "
                             f"{self.device!r}, however copy=False. Set copy=True or copy=None to perform the "
                             "requested operation.")
        return platforms.gpu.to_device(self, gpu)

    @property
    def __cuda_array_interface__(self):
        raise AttributeError("__cuda_array_interface__ is only defined for GPU buffers.")

    def to_device(self, device, *, stream=None):
        """The array on `device` (this array itself for a CPU device: they share the host memory)."""
        if getattr(device, "platform", None) == "gpu" and stream is None:
            return platforms.gpu.to_device(self, device)
        check_device(device, "to_device")
        if stream is not None:
            raise ValueError(f"to_device: xjax arrays live on the CPU, which has no streams; got stream={stream!r}")
        return self

    def __repr__(self):
        prefix = "Array("
        dtype_str = f"dtype={self.dtype.name}" + (", weak_type=True" if self.weak_type else "")
        width = np.get_printoptions()["linewidth"]
        if self.size == 0:
            body = f"[], shape={self.shape}"
        else:
            body = np.array2string(self._numpy(), prefix=prefix, suffix=",", separator=", ", max_line_width=width)
        last_line = len(body) - body.rfind("\n") + 1
        sep = " " * len(prefix) if last_line + len(dtype_str) + 2 > width else " "
        return f"{prefix}{body},{sep}{dtype_str})"

    def __str__(self):
        return str(self._numpy())

    def __format__(self, spec):
        x = self._numpy()
        return format(x if self.ndim else x[()], spec)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        for i in range(self.shape[0]):
            yield self[i]

    def __bool__(self):
        return bool(self._numpy())

    def __int__(self):
        return int(self._numpy())

    def __float__(self):
        return float(self._numpy())

    def __complex__(self):
        return complex(self._numpy())

    def __index__(self):
        if not dtypes.is_int(self.dtype):
            raise TypeError(f"only integer scalar arrays can be converted to a scalar index, got {self.dtype}")
        return int(self._numpy())

    def item(self, *args):
        return self._numpy().item(*args)

    def tolist(self):
        return self._numpy().tolist()

    def __setitem__(self, idx, value):
        raise TypeError(
            f"'{type(self).__name__}' object does not support item assignment. JAX arrays are immutable. "
            "Instead of ``x[idx] = y``, use ``x = x.at[idx].set(y)`` or another .at[] method: "
            "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html")

    __hash__ = None

    def __reduce__(self):
        return (device_put, (np.asarray(self),))

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()


Array.register(core.Tracer)  # isinstance(tracer, jnp.ndarray) holds, as in JAX
core.ARRAY_TYPES = (Array,)
# The C++ call path (src/python/fast_call.h) reads these on every call: it builds Arrays itself
# and runs only while the trace is the EvalTrace, no named axis is bound, new data stays on the
# CPU (platforms._placement is None) and, for jit, jax_disable_jit is off and no mesh is set (a
# trace under jax.set_mesh depends on it: such calls take the Python path, which keys on the mesh).
_core.fast_call.setup(Array, core.ShapedArray, core._state, core.EvalTrace, platforms, config._values,
                      _mesh_state)
