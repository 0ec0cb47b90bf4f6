"""An emulated GPU runtime: the few CuPy entry points the CUDA executor (gpu/cuda.py) and the GPU
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


_current = {"device": 0, "streams": []}  # CuPy's current device and the stack of `with stream:` blocks


class Device:
    def __init__(self, i=None):
        self.id = _current["device"] if i is None else i

    def __enter__(self):
        self._prev, _current["device"] = _current["device"], self.id
        return self

    def __exit__(self, *exc):
        _current["device"] = self._prev


class Stream:
    """A stream made on the current device; `with stream:` makes it CuPy's current one, and refuses (as
    CuPy's does) where the current device is not the stream's."""

    done = True

    def __init__(self, null=False, non_blocking=False, ptds=False):
        self.device_id = _current["device"]
        self.ptr = 0 if null else 1000 + len(_current["streams"])

    def synchronize(self):
        pass

    def __enter__(self):
        if self.device_id != _current["device"]:
            raise RuntimeError(f"The device that the stream is created on ({self.device_id}) does not match with "
                               f"the current device ({_current['device']})")
        _current["streams"].append(self)
        return self

    def __exit__(self, *exc):
        _current["streams"].pop()


def _on_a_stream(what):
    """The executor orders all its device work on its device's non-blocking stream, which does not wait for
    the legacy default stream: work queued there (no `with stream:`, no stream=) would race with it."""
    if not _current["streams"]:
        raise RuntimeError(f"emulated CuPy: {what} outside `with stream:` runs on the legacy default stream")


class ndarray(np.ndarray):
    """A NumPy array standing for device memory."""

    def get(self, stream=None, order="C", out=None, blocking=True):
        if stream is None:
            _on_a_stream("ndarray.get()")
        return np.array(self, copy=True)

    def copy(self, order="C"):
        _on_a_stream("ndarray.copy()")  # (CuPy copies on the current device and stream)
        return np.ndarray.copy(self, order=order)

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


def asarray(x, dtype=None, order=None, *, blocking=False):
    if isinstance(x, ndarray) and (dtype is None or x.dtype == dtype):
        return x
    if not isinstance(x, ndarray):
        _on_a_stream("cupy.asarray of host data")  # (CuPy copies it on the current stream)
    return _wrap(np.array(x, dtype=dtype, copy=True))  # (host to "device": a copy)


def array(x, dtype=None, copy=True, order="K", subok=False, ndmin=0, *, blocking=False):
    _on_a_stream("cupy.array")  # (a copy on the current stream, onto the current device)
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


def _fft_function(f, real_result=False):
    """cupy.fft's f on NumPy's: NumPy computes in double, CuPy keeps single precision (complex64 from float32
    and complex64 operands), so the result is rounded to CuPy's dtype."""
    def call(a, s=None, axes=None, norm=None):
        single = a.dtype in (np.float32, np.complex64)
        out = (np.float32 if single else np.float64) if real_result else (np.complex64 if single else np.complex128)
        return _wrap(f(np.asarray(a), s=s, axes=axes, norm=norm).astype(out))
    return call


fft = types.SimpleNamespace(fftn=_fft_function(np.fft.fftn), ifftn=_fft_function(np.fft.ifftn),
                            rfftn=_fft_function(np.fft.rfftn), irfftn=_fft_function(np.fft.irfftn, real_result=True))


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


_BINARY = b"emulated cubin\n"  # what compile_using_nvrtc's "binary" starts with (the source follows)
nvrtc_options = []  # the options NVRTC was given for each module compiled (with what CuPy adds)


def compile_using_nvrtc(source, options=(), arch=None, filename="kern.cu", name_expressions=None, log_stream=None,
                        cache_in_memory=False, jitify=None, method=None):
    """cupy.cuda.compiler.compile_using_nvrtc: what it adds to the options is the target and (CUDA 12 on)
    --device-as-default-execution-space; returns (binary, name mapping)."""
    if not isinstance(options, tuple) or not all(isinstance(o, str) for o in options):
        raise TypeError(f"options must be a tuple of str, got {options!r}")
    nvrtc_options.append(options + (f"-arch=sm_{arch or '90'}", "--device-as-default-execution-space"))
    return _BINARY + source.encode(), None


class RawModule:
    """cupy.RawModule: keyword-only code= (compiled by CuPy, which appends -ftz=true after the caller's
    options: cupy/cuda/compiler.py) or path= (a cubin or PTX file, loaded as it is)."""

    def __init__(self, *, code=None, path=None, options=(), backend="nvrtc", translate_cucomplex=False,
                 enable_cooperative_groups=False, name_expressions=None, jitify=None):
        if (code is None) == (path is None):
            raise TypeError("Exactly one of `code` and `path` keyword arguments must be given.")
        if not isinstance(options, tuple):
            raise TypeError(f"Argument 'options' has incorrect type (expected tuple, got {type(options).__name__})")
        if code is not None:
            if not isinstance(code, str):
                raise TypeError(f"Argument 'code' has incorrect type (expected str, got {type(code).__name__})")
            compile_using_nvrtc(code, options + ("--std=c++14",) * _default_std(options) + ("-ftz=true",))
        else:
            with open(path, "rb") as f:
                binary = f.read()
            if not binary.startswith(_BINARY):
                raise CUDARuntimeError(f"emulated cuModuleLoad: {path} is not a module")
            code = binary[len(_BINARY):].decode()
        self.code = code
        self.options = options
        sources.append(code)
        self._lib = None
        self._index = None
        _pending.append(self)
        stats["modules"] += 1

    def get_function(self, name):
        if not isinstance(name, str):
            raise TypeError(f"Argument 'name' has incorrect type (expected str, got {type(name).__name__})")
        if f"void {name}(" not in self.code:
            raise CUDARuntimeError(f"emulated RawModule: no kernel named {name!r}")
        return _Function(self, name)


def _default_std(options):
    """Whether CuPy adds its --std=c++14 (only when no -std=/--std= option is given)."""
    return not any("-std=" in o for o in options)


class _Function:
    def __init__(self, module, name):
        self.module = module
        self.name = name
        self._fn = None

    def __call__(self, grid, block, args, **kwargs):
        shared_mem = kwargs.pop("shared_mem", 0)
        if kwargs:
            raise TypeError(f"unexpected keyword arguments {sorted(kwargs)}")
        if type(grid) is not tuple or type(block) is not tuple:  # (CuPy's Function.__call__(tuple grid, tuple block, ...))
            raise TypeError(f"grid and block must be tuples, got {type(grid).__name__} and {type(block).__name__}")
        _on_a_stream(f"kernel {self.name}")
        if self._fn is None:
            if self.module._lib is None:
                _build_pending()
            self._fn = getattr(self.module._lib, f"launch_{self.module._index}_{self.name}")
        for a in args:
            if not (isinstance(a, np.ndarray) and a.flags.c_contiguous):
                raise TypeError(f"emulated kernel {self.name}: arguments must be C-contiguous device arrays")
        ptrs = (ctypes.c_void_p * max(1, len(args)))(*[a.ctypes.data for a in args])
        # (CuPy pads to three dimensions with 1 and launches at least one block and thread in each)
        grid, block = [tuple(max(1, int(v)) for v in (t + (1, 1))[:3]) for t in (grid, block)]
        self._fn(ptrs, *[ctypes.c_uint(v) for v in grid + block], ctypes.c_ulong(int(shared_mem)))
        stats["launches"] += 1


class _Pool:
    def used_bytes(self):
        return 0


def get_default_memory_pool():
    return _Pool()


def _properties(i):
    return {"name": b"Emulated GPU", "major": 9, "minor": 0, "multiProcessorCount": 1}


cuda = types.SimpleNamespace(
    Device=Device, Stream=Stream, compiler=types.SimpleNamespace(compile_using_nvrtc=compile_using_nvrtc),
    nvrtc=types.SimpleNamespace(getVersion=lambda: (13, 0)),
    runtime=types.SimpleNamespace(getDeviceCount=lambda: 1, getDeviceProperties=_properties,
                                  memGetInfo=lambda: (1 << 30, 1 << 34), CUDARuntimeError=CUDARuntimeError))
