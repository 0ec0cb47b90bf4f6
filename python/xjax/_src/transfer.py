"""Moving arrays between the host and devices: jax.device_put and device_get, `device=` arguments,
and jax.dlpack.from_dlpack. GPU moves go through platforms.gpu (the GPU runtime's entry points)."""
import numpy as np

from xjax._src import array, core, data_leaves, dtypes, placement, platforms, tree_util
from xjax._src.array import CPU_DEVICE, Array, check_device
from xjax._src.dlpack import DLDeviceType, host_view
from xjax._src.sharding import PartitionSpec, Sharding, SingleDeviceSharding, check_trivial


def put_on(x, device):
    """x (an array or a tuple of them) on `device`, a check_device result: None leaves x where it was made."""
    if device is None or (device is CPU_DEVICE and type(x) is Array):
        return x
    return device_put(x, device)


def _check_target(device):
    if device is None or getattr(device, "platform", None) in ("cpu", "gpu"):
        return device
    if isinstance(device, (Sharding, PartitionSpec)):  # a layout leaving the array whole: its one device
        sharding = check_trivial(device, "device_put")
        return next(iter(sharding.device_set)) if isinstance(sharding, SingleDeviceSharding) else None
    raise ValueError("`jax.device_put` only accepts `None`, `jax.sharding.Sharding`, `jax.Device`, `Format`, "
                     f"`jax.memory.Space` or a pytree of these values. Received invalid value: {device}")


def device_get(x):
    """x (a pytree) with each array leaf copied to the host as a NumPy array; other leaves as they are
    (a traced leaf raises JAX's TracerArrayConversionError)."""
    return tree_util.tree_map(lambda leaf: np.asarray(leaf) if hasattr(leaf, "aval") else leaf, x)


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """Places x (a pytree of arrays or array-likes) on `device` as xjax.Arrays.

    Host data goes to the default device when `device` is None; an xjax Array stays where it is
    unless `device` names another place (CPU -> GPU, GPU -> CPU, GPU -> GPU are copies). A foreign
    GPU array (CuPy, PyTorch: __cuda_array_interface__) is copied onto its GPU.
    """
    target = _check_target(device)

    def put(leaf):
        if isinstance(leaf, core.Tracer):
            return leaf
        if isinstance(leaf, Array):
            return leaf if target is None else _move(leaf, target)
        if hasattr(leaf, "__cuda_array_interface__") and not isinstance(leaf, np.ndarray):
            platforms.get_backend("cuda")  # (JAX's error where there is no CUDA backend)
            return platforms.gpu.from_cuda_object(leaf, target if getattr(target, "platform", None) == "gpu" else None)
        dtype, weak = _scalar_dtype(leaf)
        if target is None:
            return placement.host_array(leaf, dtype, weak)
        if target.platform == "gpu":
            return platforms.gpu.from_host(leaf, target, dtype, weak)
        return array.device_put(leaf, dtype, weak)

    return data_leaves.tree_map(put, x)  # (a key: its data placed)


def _move(x, device):
    """xjax Array x on `device`: CPU devices share the host memory, so only the GPU moves data."""
    on_gpu = next(iter(x.devices())).platform == "gpu"
    if device.platform == "gpu":
        return platforms.gpu.to_device(x, device)
    if on_gpu:
        return array.device_put(x._numpy(), x.dtype, x.weak_type)
    return x if type(x) is Array else Array(x._value, x.aval)  # (an array split over devices: gathered)


def _scalar_dtype(x):
    if isinstance(x, (bool, int, float)) and not isinstance(x, np.generic):
        return dtypes.dtype_and_weak(x)
    return None, False


def from_dlpack(external_array, device=None, copy=None):
    """An xjax Array from an object with __dlpack__ and __dlpack_device__ (jax.dlpack.from_dlpack).

    An xjax array comes back as itself (copy=None/False; arrays are immutable). Other CPU data is
    copied into the runtime, so copy=False refuses it; GPU data (a CuPy array, a PyTorch CUDA
    tensor) is copied onto the xjax GPU device it is on. `device` places the result there.
    """
    device = check_device(device, "from_dlpack")
    if not hasattr(external_array, "__dlpack__") or not hasattr(external_array, "__dlpack_device__"):
        raise TypeError("The array passed to from_dlpack must have __dlpack__ and __dlpack_device__ methods.")
    if isinstance(external_array, Array):
        out = external_array.copy() if copy else external_array
        return out if device is None else device_put(out, device)
    kind, index = external_array.__dlpack_device__()
    if kind in (DLDeviceType.kDLCPU, DLDeviceType.kDLCUDAHost):
        source = "cpu"
    elif kind == DLDeviceType.kDLCUDA:
        source = "cuda"
    else:
        raise TypeError(f"Array passed to from_dlpack is on unsupported device type (DLDeviceType: {kind}, "
                        f"array: {external_array}")
    if copy is False:
        raise BufferError("from_dlpack(copy=False): xjax copies DLPack data into its own buffers")
    if source == "cpu":
        out = placement.host_array(host_view(external_array))
        return out if device is None else device_put(out, device)
    gpu = platforms.get_backend("cuda").local_devices()[index]  # (JAX's error where there is no CUDA backend)
    return platforms.gpu.from_dlpack(external_array, gpu, device)
