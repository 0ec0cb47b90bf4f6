"""DLPack exchange (the Python array API's protocol): capsules of xjax arrays, and xjax arrays from
any producer (NumPy, CuPy, PyTorch...), CPU data copied into the runtime, GPU data onto the GPU.

NumPy's DLPack code has no bfloat16. xjax moves bfloat16 through it as uint16 and rewrites the
type code in the capsule's DLTensor (kDLUInt <-> kDLBfloat, both 16 bits), so bfloat16 crosses as
bfloat16, as JAX's does.
"""
import ctypes
import enum

import numpy as np

from xjax._src import dtypes


class DLDeviceType(enum.IntEnum):
    """DLPack's device types, those xjax meets."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLROCM = 10


_KDL_UINT, _KDL_BFLOAT = 1, 4
# Offset of DLTensor.dtype.code: DLTensor = {void* data; DLDevice device (2 x int32); int32 ndim;
# DLDataType dtype {uint8 code; uint8 bits; uint16 lanes}; ...}, preceded in a versioned capsule by
# DLManagedTensorVersioned's {DLPackVersion (2 x uint32); manager_ctx; deleter; uint64 flags}.
_DTYPE_OFFSET = {b"dltensor": 20, b"dltensor_versioned": 32 + 20}

_get_name = ctypes.pythonapi.PyCapsule_GetName
_get_name.restype, _get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype, _get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]


def _dtype_field(capsule):
    """(code, bits) of an unconsumed DLPack capsule's tensor, as ctypes cells that can be rewritten."""
    name = _get_name(capsule)
    if name not in _DTYPE_OFFSET:
        raise BufferError(f"not an unconsumed DLPack capsule (its name is {name!r})")
    address = _get_pointer(capsule, name) + _DTYPE_OFFSET[name]
    return ctypes.c_uint8.from_address(address), ctypes.c_uint8.from_address(address + 1)


def _retag(capsule, old, new):
    code, bits = _dtype_field(capsule)
    if code.value == old and bits.value == 16:
        code.value = new
    return capsule


def retag_bfloat16(capsule):
    """A capsule NumPy/CuPy made of bfloat16 bits viewed as uint16, relabelled as bfloat16."""
    return _retag(capsule, _KDL_UINT, _KDL_BFLOAT)


def bfloat16_as_uint16(capsule):
    """Relabels a bfloat16 capsule as uint16 (what NumPy and CuPy import); says whether it was bfloat16."""
    code, bits = _dtype_field(capsule)
    if code.value == _KDL_BFLOAT and bits.value == 16:
        code.value = _KDL_UINT
        return True
    return False


class Capsule:
    """A producer handing over a capsule already taken (so that NumPy or CuPy can import it)."""

    def __init__(self, capsule, device):
        self.capsule, self.device = capsule, device

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return self.device


def take_capsule(x, stream=None):
    """x.__dlpack__(), asking for DLPack 1.0 (read-only flags) from producers that know max_version."""
    try:
        return x.__dlpack__(stream=stream, max_version=(1, 0))
    except TypeError:  # a pre-1.0 producer
        return x.__dlpack__(stream=stream)


def host_view(x):
    """A NumPy view of a CPU producer's data (bfloat16 included)."""
    capsule = take_capsule(x)
    bf16 = bfloat16_as_uint16(capsule)
    out = np.from_dlpack(Capsule(capsule, (DLDeviceType.kDLCPU, 0)))
    return out.view(dtypes.bfloat16) if bf16 else out


SUPPORTED_DTYPES = frozenset(np.dtype(d) for d in dtypes.SUPPORTED if d not in dtypes.FLOAT8)  # (no DLPack code)


def is_supported_dtype(dtype):
    """Whether xjax exchanges `dtype` through DLPack."""
    if dtype is None:
        raise TypeError(f"Expected a string or dtype-like object; got {dtype=}")
    return np.dtype(dtype) in SUPPORTED_DTYPES
