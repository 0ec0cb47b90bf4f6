"""The CUDA devices, as CuPy sees them: finding them, and what the executor needs of each (a stream).

Imported only when the CUDA backend starts (xjax._src.platforms), so a machine without a GPU never
imports CuPy.
"""
import importlib.util
import warnings

from xjax._src.devices import Device

_cupy = None  # the module, once probe() has imported it


def cupy():
    """The CuPy module (the CUDA backend has started, so it is imported)."""
    return _cupy


def probe():
    """This machine's GPUs as GpuDevices; raises RuntimeError saying why there are none."""
    global _cupy
    if importlib.util.find_spec("cupy") is None:
        raise RuntimeError("CuPy is not installed; install it with `pip install 'xjax[cuda]'` (cupy-cuda13x[ctk], "
                           "or cupy-cuda12x[ctk] for CUDA 12 drivers)")
    try:
        with warnings.catch_warnings():  # (a CuPy without its CUDA libraries may warn: not our noise to add)
            warnings.simplefilter("ignore")
            import cupy as module  # lazy: CuPy is optional (xjax[cuda]) and slow to import
    except Exception as err:
        raise RuntimeError(f"CuPy could not be imported: {type(err).__name__}: {err}") from err
    try:
        count = module.cuda.runtime.getDeviceCount()
    except Exception as err:  # CUDARuntimeError where there is no driver or no device
        raise RuntimeError(f"CuPy found no usable GPU: {err}") from err
    if count < 1:
        raise RuntimeError("Backend 'cuda' provides no devices.")
    try:
        module.cuda.nvrtc.getVersion()  # (loads NVRTC, which every program needs to compile its kernels)
    except Exception as err:
        raise RuntimeError(f"CuPy cannot load NVRTC, which compiles xjax's kernels ({type(err).__name__}: {err}); "
                           f"`pip install 'xjax[cuda]'` installs it with CuPy's [ctk] extra") from err
    _cupy = module
    return [GpuDevice(i, module.cuda.runtime.getDeviceProperties(i)) for i in range(count)]


class GpuDevice(Device):
    """A CUDA GPU, as JAX's CudaDevice: platform "gpu", device_kind the CUDA device name.

    Each device has one CuPy stream (`stream`), created on first use, on which transfers, and the
    CUDA executor's kernels, are ordered; `activate()` makes the device CuPy's current one.
    """

    platform = "gpu"
    client = None
    process_index = 0

    def __init__(self, index, properties):
        self.id = index
        self.local_hardware_id = index
        name = properties["name"]
        self.device_kind = name.decode() if isinstance(name, bytes) else str(name)
        self.compute_capability = f"{properties['major']}.{properties['minor']}"
        self.core_count = properties.get("multiProcessorCount")
        self._stream = None

    def activate(self):
        """A context manager making this device CuPy's current device."""
        return _cupy.cuda.Device(self.id)

    @property
    def stream(self):
        if self._stream is None:
            with self.activate():
                self._stream = _cupy.cuda.Stream(non_blocking=True)
        return self._stream

    def synchronize(self):
        """Waits for everything queued on this device's stream."""
        if self._stream is not None:
            self._stream.synchronize()

    def memory_stats(self):
        """{bytes_in_use, bytes_limit} of this device, in the keys JAX uses (CuPy's pool and cudaMemGetInfo)."""
        with self.activate():
            free, total = _cupy.cuda.runtime.memGetInfo()
            return {"bytes_in_use": _cupy.get_default_memory_pool().used_bytes(), "bytes_limit": total,
                    "bytes_free": free}

    def __repr__(self):
        return f"CudaDevice(id={self.id})"

    def __str__(self):
        return f"cuda:{self.id}"
