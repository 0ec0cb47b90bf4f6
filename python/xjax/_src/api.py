"""Top-level API functions: devices, device_put, block_until_ready (transformations join later)."""
import numpy as np

from xjax._src import core, dtypes, tree_util
from xjax._src.array import Array
from xjax._src import distributed
from xjax._src import placement, platforms
from xjax._src.sharding import PartitionSpec, Sharding, SingleDeviceSharding, check_trivial
from xjax._src.backends import cpu


def devices(backend=None):
    """Every device of a backend ("cpu", "gpu"/"cuda"; default: the default backend's). The CPU is
    jax_num_cpu_devices (or XJAX_NUM_CPU_DEVICES) devices in each process of a multi-process run
    (xjax.distributed.initialize), ordered by process."""
    return platforms.get_backend(backend).devices()


def local_devices(process_index=None, backend=None):
    """The devices of this process (or of process `process_index`)."""
    b = platforms.get_backend(backend)
    if process_index is None:
        return b.local_devices()
    return [d for d in b.devices() if d.process_index == process_index]


def device_count(backend=None):
    """The number of devices over all processes."""
    return len(devices(backend))


def local_device_count(backend=None):
    """The number of this process's devices."""
    return len(local_devices(backend=backend))


def process_index(backend=None):
    """This process's index in a multi-process run (0 in a single process)."""
    platforms.get_backend(backend)
    return distributed.process_index()


def process_count(backend=None):
    """The number of processes in the run (1 without xjax.distributed.initialize)."""
    platforms.get_backend(backend)
    return distributed.process_count()


def default_backend():
    """The default backend's platform: "gpu" where JAX_PLATFORMS puts CUDA first, else "cpu"."""
    return platforms.get_backend().platform


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
            from xjax._src import gpu_array

            platforms.get_backend("cuda")  # (JAX's error where there is no CUDA backend)
            return gpu_array.from_cuda_object(leaf, target if getattr(target, "platform", None) == "gpu" else None)
        dtype, weak = _scalar_dtype(leaf)
        if target is None:
            return placement.host_array(leaf, dtype, weak)
        if target.platform == "gpu":
            from xjax._src import gpu_array

            return gpu_array.from_host(leaf, target, dtype, weak)
        return cpu.device_put(leaf, dtype, weak)

    return tree_util.tree_map(put, x)


def _move(x, device):
    """xjax Array x on `device`: CPU devices share the host memory, so only the GPU moves data."""
    on_gpu = x.device.platform == "gpu"
    if device.platform == "gpu":
        from xjax._src import gpu_array

        return gpu_array.to_device(x, device)
    if on_gpu:
        return cpu.device_put(x._numpy(), x.dtype, x.weak_type)
    return x


def _scalar_dtype(x):
    if isinstance(x, (bool, int, float)) and not isinstance(x, np.generic):
            return dtypes.dtype_and_weak(x)
    return None, False


def block_until_ready(x):
    """Waits for every array in the pytree x; returns x."""
    for leaf in tree_util.tree_leaves(x):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
    return x


def typeof(x):
    """The abstract value of x (jax.typeof): its shape, dtype and weak type."""
    typeof_rule = getattr(type(x), "_typeof", None)  # a value whose type is not its data's (typed PRNG keys)
    if typeof_rule is not None:
        return typeof_rule(x)
    return core.get_aval(x)
