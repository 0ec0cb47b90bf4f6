"""Top-level API functions: devices, device_put, block_until_ready (transformations join later)."""
import numpy as np

from xjax._src import core
from xjax._src.array import Array
from xjax._src import distributed
from xjax._src.devices import cpu_devices, global_devices
from xjax._src.backends import cpu


def _check_backend(backend):
    if backend not in (None, "cpu"):
        raise RuntimeError(f"Unknown backend {backend}; xjax has 'cpu'")


def devices(backend=None):
    """Every device: the host CPU as jax_num_cpu_devices (or XJAX_NUM_CPU_DEVICES) CPU devices, in
    each process of a multi-process run (xjax.distributed.initialize), ordered by process."""
    _check_backend(backend)
    return list(global_devices())


def local_devices(process_index=None, backend=None):
    """The devices of this process (or of process `process_index`)."""
    _check_backend(backend)
    if process_index is None:
        return list(cpu_devices())
    return [d for d in global_devices() if d.process_index == process_index]


def device_count(backend=None):
    """The number of devices over all processes."""
    return len(devices(backend))


def local_device_count(backend=None):
    """The number of this process's devices."""
    return len(local_devices(backend=backend))


def process_index(backend=None):
    """This process's index in a multi-process run (0 in a single process)."""
    _check_backend(backend)
    return distributed.process_index()


def process_count(backend=None):
    """The number of processes in the run (1 without xjax.distributed.initialize)."""
    _check_backend(backend)
    return distributed.process_count()


def default_backend():
    return "cpu"


def device_put(x, device=None):
    """Places x (a pytree of arrays or array-likes) on the device as xjax.Arrays."""
    from xjax._src import tree_util

    def put(leaf):
        if isinstance(leaf, Array):
            return leaf
        if isinstance(leaf, core.Tracer):
            return leaf
        dtype, weak = _scalar_dtype(leaf)
        return cpu.device_put(leaf, dtype, weak)

    return tree_util.tree_map(put, x)


def _scalar_dtype(x):
    if isinstance(x, (bool, int, float)) and not isinstance(x, np.generic):
        from xjax._src import dtypes

        return dtypes.dtype_and_weak(x)
    return None, False


def block_until_ready(x):
    """Waits for every array in the pytree x; returns x."""
    from xjax._src import tree_util

    for leaf in tree_util.tree_leaves(x):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
    return x
