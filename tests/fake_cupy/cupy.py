"""A stand-in for CuPy on machines without a GPU: "device" memory is host memory, so the platform
layer's plumbing (device lists, transfers, printing, refusals) runs here. Only what xjax calls.

FAKE_CUPY_DEVICES sets the device count ("error" makes getDeviceCount fail like a missing driver);
FAKE_CUPY_NVRTC=missing makes NVRTC fail to load, as where CuPy is installed without CUDA's libraries.
"""
import os
import types

import numpy as np

__version__ = "0.0-fake"


class CUDARuntimeError(RuntimeError):
    pass


def _count():
    text = os.environ.get("FAKE_CUPY_DEVICES", "2")
    if text == "error":
        raise CUDARuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected")
    return int(text)


def _properties(i):
    return {"name": b"Fake GPU %d" % i, "major": 9, "minor": 0, "multiProcessorCount": 132}


_current = [0]  # the current device id


class Device:
    def __init__(self, i=None):
        self.id = _current[0] if i is None else i

    def __enter__(self):
        self._prev, _current[0] = _current[0], self.id
        return self

    def __exit__(self, *exc):
        _current[0] = self._prev


class Stream:
    ptr = 1234
    done = True

    def __init__(self, non_blocking=False):
        self.synchronized = 0

    def synchronize(self):
        self.synchronized += 1

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass


class ndarray:
    """A host array that says it lives on a device."""

    def __init__(self, data):
        self._data = np.ascontiguousarray(data).reshape(np.shape(data))  # (keeps 0-d arrays 0-d)
        self.device = Device(_current[0])

    shape = property(lambda self: self._data.shape)
    dtype = property(lambda self: self._data.dtype)

    def get(self, stream=None):
        return self._data.copy()

    def copy(self):
        return ndarray(self._data.copy())

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self._data.ctypes.data, False),
                "version": 3, "strides": None, "stream": 1}


def asarray(x):
    if isinstance(x, ndarray):
        return x
    if isinstance(x, np.ndarray):
        return ndarray(x.copy())
    raise TypeError(f"fake cupy.asarray takes NumPy arrays, got {type(x)}")


def array(x, dtype=None, order="C", copy=True):
    data = x._data if isinstance(x, ndarray) else np.asarray(x)
    return ndarray(data.astype(dtype or data.dtype, copy=True))


class _Pool:
    def used_bytes(self):
        return 0


def get_default_memory_pool():
    return _Pool()


def _nvrtc_version():
    if os.environ.get("FAKE_CUPY_NVRTC") == "missing":
        raise RuntimeError("Failure finding libnvrtc.so")
    return (13, 0)


cuda = types.SimpleNamespace(
    Device=Device, Stream=Stream, nvrtc=types.SimpleNamespace(getVersion=_nvrtc_version),
    runtime=types.SimpleNamespace(getDeviceCount=_count, getDeviceProperties=_properties,
                                  memGetInfo=lambda: (1 << 30, 1 << 34), CUDARuntimeError=CUDARuntimeError))
