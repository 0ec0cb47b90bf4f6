"""Top-level API functions: devices, device_put, block_until_ready (transformations join later)."""
from xjax._src import core, distributed, platforms, tree_util
from xjax._src.sharded_array import ShardedArray, device_put  # noqa: F401 - jax.device_put
from xjax._src.transfer import device_get  # noqa: F401 - jax.device_get


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


def block_until_ready(x):
    """Waits for every array in the pytree x; returns x."""
    for leaf in tree_util.tree_leaves(x):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
    return x


def typeof(x):
    """The abstract value of x (jax.typeof): its shape, dtype and weak type, and the sharding of an
    array placed over a mesh."""
    if type(x) is ShardedArray:
        return x.typed_aval
    return core.get_aval(x)  # (a typed key's is a key type, not its data's)
