"""An emulated GPU runtime: the few CuPy entry points the CUDA executor (backends/cuda.py) and the GPU
arrays use, on the host, so that GPU programs run end to end where no GPU is present.

Arrays are NumPy arrays (a subclass that answers CuPy's `get`); matmul, sort and the other array
functions are NumPy's. `RawModule(code=...)` is the real thing emulated: the generated CUDA source
is compiled as host C++ under src/core/cuda/emulation.h (tests/cuda_emulation.py's machinery:
namespaced sources, a .so cached on disk by the hash of its text) and `get_function(name)(grid,
block, args, shared_mem=...)` runs the kernel over the emulated grid on the arrays' memory. The
modules made before the first launch are compiled together, as one library (what a program
creates when it is bound to a device), so a program costs one compiler run.

Fresh arrays (`empty`) hold 0xA5 garbage, so a kernel that reads what nobody wrote shows it.
"""
import ctypes
import re
import subprocess
import types

import numpy as np

import cuda_emulation
from emulated_cupy_linalg import cupyx, linalg  # noqa: F401 - cupy.linalg and cupyx.scipy.linalg

__version__ = "14.0.0+emulated"  # (the CuPy whose linalg API the emulation follows: qr and solve_triangular batched)


class CUDARuntimeError(RuntimeError):
    pass


class Device:
    def __init__(self, i=0):
        self.id = i

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass


class Stream:
    ptr = 0
    done = True

    def __init__(self, non_blocking=False):
        pass

    def synchronize(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass


class ndarray(np.ndarray):
    """A NumPy array standing for device memory."""

    def get(self, stream=None):
        return np.array(self, copy=True)

    @property
    def device(self):
        return Device(0)

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ctypes.data, False), "version": 3,
                "strides": None, "stream": 1}


def _wrap(x):
    return np.asarray(x).view(ndarray)


def empty(shape, dtype=np.float32):
    dtype = np.dtype(dtype)
    shape = (shape,) if np.ndim(shape) == 0 else tuple(shape)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    # 8 spare bytes: kernels update 1- and 2-byte elements with word-wide atomics (as CuPy's pool, which
    # rounds allocations up, allows).
    base = np.full(nbytes + 8, 0xA5, np.uint8)
    return base[:nbytes].view(dtype).reshape(shape).view(ndarray)


def asarray(x, dtype=None):
    if isinstance(x, ndarray) and (dtype is None or x.dtype == dtype):
        return x
    return _wrap(np.array(x, dtype=dtype, copy=True))  # (host to "device": a copy)


def array(x, dtype=None, order="C", copy=True):
    return _wrap(np.array(np.asarray(x), dtype=dtype, order=order, copy=True))


def ascontiguousarray(x, dtype=None):
    return _wrap(np.ascontiguousarray(x, dtype=dtype))


def _array_function(f):
    return lambda *args, **kwargs: _wrap(f(*args, **kwargs))


matmul = _array_function(np.matmul)
where = _array_function(np.where)
isnan = _array_function(np.isnan)
moveaxis = _array_function(np.moveaxis)
isfinite = _array_function(np.isfinite)
abs = _array_function(np.abs)  # noqa: A001 - (CuPy's name)
sqrt = _array_function(np.sqrt)
clip = _array_function(np.clip)
argmax = _array_function(np.argmax)
sum = _array_function(np.sum)  # noqa: A001
stack = _array_function(np.stack)
swapaxes = _array_function(np.swapaxes)
diagonal = _array_function(np.diagonal)
broadcast_to = _array_function(np.broadcast_to)
arange = _array_function(np.arange)
eye = _array_function(np.eye)
zeros = _array_function(np.zeros)
take_along_axis = _array_function(np.take_along_axis)
sort = _array_function(lambda x, axis=-1: np.sort(x, axis=axis, kind="stable"))
argsort = _array_function(lambda x, axis=-1: np.argsort(x, axis=axis, kind="stable"))  # (CuPy's is stable too)


# ---- kernels ----

_KERNEL = re.compile(r'extern\s+"C"\s+__global__\s+void\s+(\w+)\s*\(([^)]*)\)')
_pending = []  # RawModules made since the last build
sources = []  # the code of every RawModule made (tests compile them with nvcc too)
stats = {"builds": 0, "modules": 0, "launches": 0}


def _launcher(k, name, nparams):
    args = ", ".join(f"a[{i}]" for i in range(nparams))
    return (f'extern "C" void launch_{k}_{name}(void** a, unsigned gx, unsigned gy, unsigned gz, unsigned bx, '
            f"unsigned by, unsigned bz, unsigned long shared) {{\n  emulate_launch(p{k}::p{k}_{name}, dim3(gx, gy, gz), "
            f"dim3(bx, by, bz), shared{', ' if args else ''}{args});\n  (void)a;\n}}\n")


def hoist(codes):
    """(what goes first in a translation unit of these sources, at global scope; the sources), so that the
    sources can go into namespaces of one translation unit: the fused kernels' scalar definitions, the special
    functions' included (their include guards make the copies in the namespaces empty), and the sources'
    #include lines."""
    includes = {line: None for code in codes for line in code.splitlines(keepends=True) if line.startswith("#include")}
    bodies = ["".join(line for line in code.splitlines(keepends=True) if not line.startswith("#include"))
              for code in codes]
    return cuda_emulation.global_prefix() + "".join(includes), bodies


def _build_pending():
    """Compiles every module made since the last build into one host library."""
    modules, _pending[:] = list(_pending), []
    parts = ['#include "core/cuda/emulation.h"\n']
    hoisted, bodies = hoist([m.code for m in modules])
    parts.append(hoisted)
    for k, (m, body) in enumerate(zip(modules, bodies)):
        kernels = _KERNEL.findall(body)
        parts.append(cuda_emulation._namespaced(k, {"source": body, "launches": [{"name": n} for n, _ in kernels]}))
        for name, params in kernels:
            parts.append(_launcher(k, name, len([p for p in params.split(",") if p.strip()])))
    text = "".join(parts) + "// " + cuda_emulation.EMULATION_H.read_bytes().hex()[:64] + "\n"

    def compile_host(src, out):
        cmd = ["g++", "-std=c++17", "-O1", "-shared", "-fPIC", "-w", "-x", "c++", f"-I{cuda_emulation.ROOT / 'src'}",
               str(src), "-o", str(out)]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode:
            raise CUDARuntimeError(f"emulated NVRTC: host compilation failed:\n{res.stderr[-4000:]}")
        stats["builds"] += 1

    lib = ctypes.CDLL(str(cuda_emulation._cached(text, ".so", compile_host)))
    for k, m in enumerate(modules):
        m._lib, m._index = lib, k


class RawModule:
    def __init__(self, code, options=(), **kwargs):
        self.code = code
        self.options = options
        sources.append(code)
        self._lib = None
        self._index = None
        _pending.append(self)
        stats["modules"] += 1

    def get_function(self, name):
        if f"void {name}(" not in self.code:
            raise CUDARuntimeError(f"emulated RawModule: no kernel named {name!r}")
        return _Function(self, name)


class _Function:
    def __init__(self, module, name):
        self.module = module
        self.name = name
        self._fn = None

    def __call__(self, grid, block, args, shared_mem=0):
        if self._fn is None:
            if self.module._lib is None:
                _build_pending()
            self._fn = getattr(self.module._lib, f"launch_{self.module._index}_{self.name}")
        for a in args:
            if not (isinstance(a, np.ndarray) and a.flags.c_contiguous):
                raise TypeError(f"emulated kernel {self.name}: arguments must be C-contiguous device arrays")
        ptrs = (ctypes.c_void_p * max(1, len(args)))(*[a.ctypes.data for a in args])
        grid, block = tuple(grid) + (1,) * (3 - len(grid)), tuple(block) + (1,) * (3 - len(block))
        self._fn(ptrs, *[ctypes.c_uint(int(v)) for v in grid + block], ctypes.c_ulong(int(shared_mem)))
        stats["launches"] += 1


class _Pool:
    def used_bytes(self):
        return 0


def get_default_memory_pool():
    return _Pool()


def _properties(i):
    return {"name": b"Emulated GPU", "major": 9, "minor": 0, "multiProcessorCount": 1}


cuda = types.SimpleNamespace(
    Device=Device, Stream=Stream,
    runtime=types.SimpleNamespace(getDeviceCount=lambda: 1, getDeviceProperties=_properties,
                                  memGetInfo=lambda: (1 << 30, 1 << 34), CUDARuntimeError=CUDARuntimeError))
