"""The GPU runtime, a leaf of the layers: GPU arrays in CuPy buffers (gpu_array), the CUDA executor
(cuda, cuda_library, cuda_linalg) and the devices (gpu_devices).

Nothing below imports this package. The CPU paths reach it through `platforms.gpu`, the entry
points below, which xjax installs when it is imported. Importing the package loads no CuPy: each
entry imports the GPU modules, which import CuPy, when it is first called, and it is called only
with a GPU array or device in hand (a started CUDA backend).
"""
import sys

from xjax._src import platforms


def _start_backend():
    platforms.check_gpu_visible()
    from xjax._src.gpu import gpu_devices  # lazy: imports CuPy

    found = gpu_devices.probe()
    return platforms.Backend("cuda", "gpu", lambda: found)


def apply_primitive(prim, args, params, params_key, refusal):
    """One primitive eagerly on GPU arrays (backends.cpu's refusal route)."""
    from xjax._src.gpu import cuda  # lazy: imports CuPy

    return cuda.apply_primitive(prim, args, params, params_key, refusal)


def run_graph_call(call, args, refusal):
    """A compiled jit graph on GPU arrays (graph_lowering.GraphCall's refusal route)."""
    from xjax._src.gpu import cuda  # lazy: imports CuPy

    return cuda.run_graph_call(call, args, refusal)


def run_exported(exported, args, device):
    """An Exported's graph on `device` (Exported.call with GPU arguments)."""
    from xjax._src.gpu import cuda  # lazy: imports CuPy

    return cuda.run_exported(exported, args, device)


def is_gpu_array(x):
    from xjax._src.gpu import gpu_array  # lazy: imports CuPy

    return type(x) is gpu_array.GpuArray


def to_device(x, device):
    """xjax Array x (CPU or GPU) copied onto GPU `device`."""
    from xjax._src.gpu import gpu_array  # lazy: imports CuPy

    return gpu_array.to_device(x, device)


def from_host(x, device, dtype=None, weak_type=False):
    """NumPy-convertible x as a GPU array on `device`."""
    from xjax._src.gpu import gpu_array  # lazy: imports CuPy

    return gpu_array.from_host(x, device, dtype, weak_type)


def from_cuda_object(obj, device=None):
    """A foreign GPU array (__cuda_array_interface__) copied into a GPU array."""
    from xjax._src.gpu import gpu_array  # lazy: imports CuPy

    return gpu_array.from_cuda_object(obj, device)


def from_dlpack(obj, source, device=None):
    """A DLPack producer on GPU `source` copied into a GPU array (on `device` if given)."""
    from xjax._src.gpu import gpu_array  # lazy: imports CuPy

    return gpu_array.from_dlpack_gpu(obj, source, device)


def device_count():
    """How many GPUs the CUDA runtime sees."""
    from xjax._src.gpu import gpu_devices  # lazy: imports CuPy

    return gpu_devices.cupy().cuda.runtime.getDeviceCount()


platforms.plug_in_gpu(sys.modules[__name__], _start_backend)
