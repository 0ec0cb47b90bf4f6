"""xjax.Arrays on a GPU: the data in a CuPy buffer, moved to and from the host, exported by DLPack and
__cuda_array_interface__.

Imported only once the CUDA backend has started (a GpuDevice exists). The buffer (`_buf`) is a
C-contiguous cupy.ndarray of the array's shape in its storage dtype: the dtype itself, except
bfloat16, which CuPy lacks and is stored as uint16 (the aval says what the bits are). This is what
the CUDA executor (gpu/cuda.py) reads and writes. Every CPU compute path asks for `_value`, the
CPU runtime's buffer: a GPU array refuses (GpuComputeError), which is how jit and eager dispatch send
a computation to the CUDA executor, and how the paths without a GPU route (pmap, export, ...) refuse
rather than copy to the host behind the user's back.
"""
import numpy as np

from xjax._src import core, dtypes, transfer
from xjax._src.platforms import GpuComputeError, get_backend
from xjax._src.array import Array
from xjax._src.gpu import gpu_devices
from xjax._src.dlpack import Capsule, DLDeviceType, bfloat16_as_uint16, retag_bfloat16, take_capsule

_BF16 = dtypes.bfloat16
_U16 = np.dtype(np.uint16)


def storage_dtype(dtype):
    """The CuPy dtype holding `dtype`'s bits."""
    return _U16 if dtype == _BF16 else np.dtype(dtype)


class GpuArray(Array):
    """An xjax.Array whose data lives on a GPU (see the module docstring)."""

    __slots__ = ("_buf", "_device")

    def __init__(self, buf, aval, device):
        self._buf = buf  # cupy.ndarray, C-contiguous, aval.shape, storage_dtype(aval.dtype)
        self._device = device  # GpuDevice
        self.aval = aval
        self._npy = None  # cached read-only host copy

    @property
    def _value(self):
        # What the CPU executor (eager and jit alike) would run on: refuse rather than copy.
        raise GpuComputeError(
            f"the array is on {self._device} ({self.aval.str_short()}) and this operation runs on the CPU only "
            "(the CUDA executor runs jit-compiled functions and primitives on GPU arrays). Move the data to the "
            "CPU explicitly with xjax.device_put(x, xjax.devices('cpu')[0]).")

    device = property(lambda self: self._device)

    def devices(self):
        return {self._device}

    def _numpy(self):
        """A read-only host copy of the data (waits for the device)."""
        if self._npy is None:
            host = self._buf.get(stream=self._device.stream)  # (blocking: waits for the stream)
            if host.dtype != self.aval.dtype:
                host = host.view(self.aval.dtype)
            host.flags.writeable = False
            self._npy = host
        return self._npy

    def block_until_ready(self):
        self._device.synchronize()
        return self

    def is_ready(self):
        return self._device.stream.done

    def copy(self):
        """A copy in a new buffer on the same device."""
        with self._device.activate(), self._device.stream:
            return GpuArray(self._buf.copy(), self.aval, self._device)

    def to_device(self, device, *, stream=None):
        if stream is not None:
            raise ValueError(f"to_device: stream= is not supported yet; got stream={stream!r}")
        return transfer.device_put(self, device)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of the device buffer (zero-copy unless copy=True).

        The device's stream is synchronised first, so the consumer's `stream` sees the data whatever it is.
        """
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"this array is on {self._device} (dl_device {self.__dlpack_device__()}); cannot "
                              f"export to dl_device={tuple(dl_device)}: use xjax.device_put first")
        buf = self._buf
        if copy:  # (ndarray.copy() puts the copy on CuPy's current device and stream: make them ours)
            with self._device.activate(), self._device.stream:
                buf = self._buf.copy()
        self._device.synchronize()
        try:
            capsule = buf.__dlpack__(stream=stream, max_version=max_version)
        except TypeError:  # a CuPy before DLPack 1.0: a legacy capsule, which every consumer takes
            capsule = buf.__dlpack__(stream=stream)
        return retag_bfloat16(capsule) if self.aval.dtype == _BF16 else capsule

    def __dlpack_device__(self):
        return DLDeviceType.kDLCUDA, self._device.local_hardware_id

    @property
    def __cuda_array_interface__(self):
        """The CUDA array interface (v3) of the device buffer, synchronised (so no stream is given)."""
        if self.aval.dtype == _BF16:
            raise AttributeError("__cuda_array_interface__ has no type string for bfloat16; use DLPack "
                                 "(xjax arrays implement __dlpack__)")
        self._device.synchronize()
        cai = dict(self._buf.__cuda_array_interface__)
        cai["stream"] = None
        return cai


def from_host(x, device, dtype=None, weak_type=False):
    """A GpuArray on `device` holding a copy of NumPy-convertible `x` (dtype canonicalised)."""
    x = np.asarray(x)
    dt = dtypes.canonicalize_dtype(x.dtype if dtype is None else dtype)
    if x.dtype != dt:
        x = x.astype(dt)
    host = np.ascontiguousarray(x).view(storage_dtype(dt)).reshape(x.shape)
    cupy = gpu_devices.cupy()
    with device.activate(), device.stream:
        buf = cupy.asarray(host)  # (from pageable memory: the copy is done when this returns)
    return GpuArray(buf, core.ShapedArray(x.shape, dt, weak_type), device)


def from_device_buffer(buf, device, aval):
    """A GpuArray owning a C-contiguous copy of a cupy.ndarray `buf` (any device) on `device`.

    `buf` holds aval.dtype's storage dtype; the copy makes the array independent of whoever made `buf`.
    """
    cupy = gpu_devices.cupy()
    with device.activate(), device.stream:
        own = cupy.array(buf, dtype=storage_dtype(aval.dtype), order="C", copy=True)
    return GpuArray(own, aval, device)


def to_device(x, device):
    """xjax Array `x` moved to GpuDevice `device` (a new array; x itself if it is already there)."""
    if isinstance(x, GpuArray):
        if x.device is device:
            return x
        x.device.synchronize()
        return from_device_buffer(x._buf, device, x.aval)
    return from_host(x._numpy(), device, x.dtype, x.weak_type)


def from_cuda_object(obj, device=None):
    """A GpuArray copied from a foreign GPU array with __cuda_array_interface__ (a CuPy array, a PyTorch
    CUDA tensor, Numba...), on `device` (default: the device the data is on)."""
    cupy = gpu_devices.cupy()
    view = cupy.asarray(obj)  # zero-copy view of the foreign memory (CuPy honours the interface's stream)
    dt = dtypes.canonicalize_dtype(view.dtype)
    device = device or _device_by_id(view.device.id)
    return from_device_buffer(view, device, core.ShapedArray(view.shape, dt, False))


def from_dlpack_gpu(obj, source, device=None):
    """A GpuArray copied from a DLPack producer whose data is on GpuDevice `source` (onto `device`,
    default `source`); the producer orders its writes before our stream, as DLPack's `stream` asks."""
    cupy = gpu_devices.cupy()
    capsule = take_capsule(obj, stream=source.stream.ptr)
    bf16 = bfloat16_as_uint16(capsule)
    with source.activate(), source.stream:
        view = cupy.from_dlpack(Capsule(capsule, (DLDeviceType.kDLCUDA, source.local_hardware_id)))
    dt = _BF16 if bf16 else dtypes.canonicalize_dtype(view.dtype)
    target = device or source
    if target is not source:
        source.synchronize()
    return from_device_buffer(view, target, core.ShapedArray(view.shape, dt, False))


def _device_by_id(index):
    return get_backend("cuda").local_devices()[index]


core.ARRAY_TYPES = core.ARRAY_TYPES + (GpuArray,)  # (tests `type(x) in ARRAY_TYPES` take it as an array)
