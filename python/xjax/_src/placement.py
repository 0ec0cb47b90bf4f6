"""Where new arrays go. JAX puts new data, and computations on it, on the default device; so does
xjax: when the default device is a GPU (platforms.placement()), host data becomes GPU arrays, and
an eager primitive or jitted call whose operands are all host scalars runs there.

A CPU array of rank >= 1 in a computation keeps it on the CPU: under a GPU default such arrays
exist only where the user put them (device_put(x, cpu)), JAX's committed arrays. 0-d CPU arrays
are the Python scalars xjax places itself, which follow the computation (JAX's uncommitted ones).
"""
from xjax._src import core, platforms
from xjax._src.array import Array
from xjax._src.backends import cpu


def host_array(x, dtype=None, weak_type=False):
    """A new xjax.Array holding a copy of NumPy-convertible x on the default device."""
    gpu = platforms.placement()
    if gpu is None:
        return cpu.device_put(x, dtype, weak_type)
    from xjax._src import gpu_array

    return gpu_array.from_host(x, gpu, dtype, weak_type)


def gpu_for(operands):
    """The GPU a computation on these xjax Arrays goes to although none is a GPU array: the default
    device's GPU when every operand is a 0-d CPU array (a placed Python scalar), else None."""
    gpu = platforms.placement()
    if gpu is None:
        return None
    for a in operands:
        if type(a) is not Array or a.aval.shape:
            return None
    return gpu


def gpu_for_call(leaves):
    """The GPU a call on these arguments (xjax arrays, NumPy data, Python scalars) runs on, for the
    paths that place a whole call (pmap, Exported.call): a GPU array's device, else the default GPU
    when no argument is a CPU array of rank >= 1; None for the CPU."""
    for x in leaves:
        t = type(x)
        if t is not Array and t in core.ARRAY_TYPES:  # (a GpuArray)
            return x.device
    gpu = platforms.placement()
    if gpu is None or any(type(x) is Array and x.ndim for x in leaves):
        return None
    return gpu
