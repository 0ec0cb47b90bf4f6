"""Runs a Python program (a seed program) with its jitted computations on the emulated GPU:
`python run_on_emulated_gpu.py PROGRAM.py`.

Array creation stays on the CPU (xjax creates arrays there), so every jitted call first moves its
array arguments to the GPU; from then on the state it returns lives there, and eager operations on
it run on the GPU too. Prints what the program prints; the counters of the emulated runtime go to
stderr.
"""
import os
import runpy
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import emulated_cupy  # noqa: E402

import xjax  # noqa: E402
from xjax._src import gpu_array, jit  # noqa: E402
from xjax._src.array import Array  # noqa: E402
from xjax._src.backends import gpu_devices  # noqa: E402

gpu_devices._cupy = emulated_cupy
DEVICE = gpu_devices.GpuDevice(0, emulated_cupy._properties(0))


def _to_gpu(x):
    if isinstance(x, np.ndarray) or type(x) is Array:
        return gpu_array.to_device(x if type(x) is Array else xjax.numpy.asarray(x), DEVICE)
    return x


_call = jit.JitWrapped.__call__


def _call_on_gpu(self, *args, **kwargs):
    args, kwargs = xjax.tree_util.tree_map(_to_gpu, (args, kwargs))
    return _call(self, *args, **kwargs)


jit.JitWrapped.__call__ = _call_on_gpu

if __name__ == "__main__":
    program = os.path.abspath(sys.argv[1])
    sys.path.insert(0, os.path.dirname(program))
    sys.argv = sys.argv[1:]
    runpy.run_path(program, run_name="__main__")
    print(f"emulated GPU: {emulated_cupy.stats}", file=sys.stderr)
