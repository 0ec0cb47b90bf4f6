"""Where new arrays go. JAX puts new data, and computations on it, on the default device; so does
xjax: when the default device is a GPU (platforms.placement()), host data becomes GPU arrays, and
an eager primitive or jitted call whose operands are all host scalars runs there.

A CPU array of rank >= 1 in a computation keeps it on the CPU: under a GPU default such arrays
exist only where the user put them (device_put(x, cpu)), JAX's committed arrays. 0-d CPU arrays
are the Python scalars xjax places itself, which follow the computation (JAX's uncommitted ones).
"""
import numpy as np

from xjax._src import core, dtypes, platforms
from xjax._src.array import Array, device_put, scalar


def host_array(x, dtype=None, weak_type=False):
    """A new xjax.Array holding a copy of NumPy-convertible x on the default device."""
    gpu = platforms.placement()
    if gpu is None:
        return device_put(x, dtype, weak_type)
    return platforms.gpu.from_host(x, gpu, dtype, weak_type)


def asarray(x, dtype=None, weak_type=None):
    """An operand for bind: arrays and tracers pass through; scalars and NumPy data are placed."""
    if isinstance(x, core.Tracer) or type(x) in core.ARRAY_TYPES:
        return x
    if isinstance(x, (bool, int, float)) and not isinstance(x, np.generic):
        dt, weak = dtypes.dtype_and_weak(x)
        if dtype is not None:
            dt = dtypes.canonicalize_dtype(dtype)
        return scalar(x, dt, weak if weak_type is None else weak_type)
    if isinstance(x, (list, tuple)):
        raise TypeError(f"lax operations accept arrays, not {type(x).__name__}; use jnp.asarray first")
    return host_array(x, dtype)


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
        if t is not Array and t in core.ARRAY_TYPES:  # (a GpuArray, or an array split over CPU devices)
            device = next(iter(x.devices()))
            if device.platform == "gpu":
                return device
    gpu = platforms.placement()
    if gpu is None or any(isinstance(x, Array) and x.ndim for x in leaves):
        return None
    return gpu
