"""The CUDA executor: runs the GPU plan of a compiled graph (_core.cuda_plan) on a GPU through CuPy.

A plan's steps run in order on the device's one stream: generated CUDA (fused groups and the ops
with kernels) compiled by NVRTC through CuPy once per source (cached here by source and device, and
on disk), loaded as a cupy.RawModule and launched with the plan's grid, block and buffers; library
steps through CuPy (cuda_library: cuBLAS matmul, CuPy's sort, cuda_linalg); cond and while with their predicate read back by one
small device-to-host copy; host callbacks with a copy of their operands each way. Every value the
plan keeps in memory is a C-contiguous CuPy array (from CuPy's memory pool) in its storage dtype
(bfloat16 as uint16 bits), dropped after its last reader so that the pool reuses it.

jit on GPU arrays (graph_lowering.GraphCall) and eager primitives on GPU arrays (backends.cpu's
apply_primitive: one-op programs) come here; results are GPU arrays on the arguments' device.
CuPy is gpu_devices.cupy(): the tests put an emulated one there and this module runs unchanged.
"""
import hashlib
import os
import re
import tempfile

import numpy as np

from xjax import _core
from xjax._src import dtypes
from xjax._src.gpu import cuda_library, gpu_devices
from xjax._src.backends.lowering import single_primitive_graph
from xjax._src.gpu.gpu_array import GpuArray, GpuComputeError, storage_dtype, to_device
from xjax._src.lru_cache import LRUCache

_NP_DTYPES = {d.name: np.dtype(d) for d in dtypes.SUPPORTED}
_NP_DTYPES["bfloat16"] = np.dtype(dtypes.bfloat16)


def _cp():
    return gpu_devices.cupy()


def _type(t):
    """(shape, numpy dtype) of a plan's (shape, dtype name)."""
    return tuple(t[0]), _NP_DTYPES[t[1]]


# Generated sources are self-contained: they start with the scalar definitions' text, whose
# #include lines are guarded away there. -fmad=false: float32 log/log1p/erf_inv give XLA's bits.
# --ftz=false: float32 subnormals are kept, as XLA (xla_gpu_ftz=false) and the CPU runtime keep them.
_NVRTC_OPTIONS = ("--std=c++17", "--fmad=false", "--ftz=false")


# ---- kernels ----

_modules = {}  # (source hash, device) -> RawModule
_PARAM = re.compile(r"(in|out|tmp)(\d+)")  # a launch parameter: which buffer list, which entry


def _cache_dir():
    """Where compiled modules are kept (beside CuPy's own kernel cache unless XJAX_CUDA_CACHE_DIR says)."""
    return os.environ.get("XJAX_CUDA_CACHE_DIR") or os.path.join(
        os.environ.get("CUPY_CACHE_DIR") or os.path.expanduser("~/.cupy/kernel_cache"), "xjax")


def _compiled(source, device):
    """The path of the binary NVRTC makes of `source` for `device` (compiled once, then kept on disk).

    Not RawModule(code=...): CuPy appends -ftz=true after the caller's options there (cupy/cuda/compiler.py,
    _compile_with_cache_cuda, CuPy 13 and 14) and NVRTC takes the last of repeated options, so every float32
    subnormal would flush to zero. CuPy's compile_using_nvrtc adds only the target (-arch for the current
    device) and --device-as-default-execution-space."""
    cp = _cp()
    key = "\0".join([source, " ".join(_NVRTC_OPTIONS), str(device.compute_capability),
                      str(cp.cuda.nvrtc.getVersion()), str(cp.__version__)])
    path = os.path.join(_cache_dir(), hashlib.sha256(key.encode()).hexdigest() + ".cubin")
    if not os.path.exists(path):
        binary, _ = cp.cuda.compiler.compile_using_nvrtc(source, _NVRTC_OPTIONS)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path))  # (written whole, then renamed: processes share it)
        with os.fdopen(fd, "wb") as f:
            f.write(binary.encode() if isinstance(binary, str) else binary)
        os.replace(tmp, path)
    return path


def _module(source, device):
    """The RawModule of a generated source on device (its kernels are loaded there by get_function)."""
    key = (hashlib.sha256(source.encode()).hexdigest(), device)
    module = _modules.get(key)
    if module is None:
        with device.activate():
            module = _modules[key] = _cp().RawModule(path=_compiled(source, device))
    return module


class _Kernel:
    """A generated kernel plan (cuda_kernel's dict) bound to a device: its launches in order."""

    __slots__ = ("launches", "scratch")

    def __init__(self, plan, device):
        module = _module(plan["source"], device) if plan["launches"] else None
        self.launches = []
        with device.activate():  # (get_function loads the module on the current device)
            for launch in plan["launches"]:
                params = [(m.group(1), int(m.group(2))) for m in (_PARAM.fullmatch(p) for p in launch["params"])]
                self.launches.append((module.get_function(launch["name"]), tuple(launch["grid"]),
                                      tuple(launch["block"]), int(launch["shared"]), params))
        self.scratch = [int(n) for n in plan["scratch"]]

    def __call__(self, ins, outs):
        cp = _cp()
        buffers = {"in": ins, "out": outs, "tmp": [cp.empty((n,), np.uint8) for n in self.scratch]}
        for fn, grid, block, shared, params in self.launches:
            fn(grid, block, tuple(buffers[name][i] for name, i in params), shared_mem=shared)


# ---- programs ----

class Program:
    """A GPU plan (_core.cuda_plan's dict) bound to one device: run(list of CuPy arrays) -> CuPy arrays."""

    def __init__(self, plan, device):
        cp = _cp()
        self.device = device
        self.types = [_type(t) for t in plan["values"]]
        self.storage = list(plan["storage"])
        self.outputs = list(plan["outputs"])
        self.num_storages = len(plan["storages"])
        self.params = [(s, index) for s, (kind, index) in enumerate(plan["storages"]) if kind == "param"]
        self.constants = []
        self.fresh = [(s, self.types[self.storage.index(s)]) for s, (kind, _) in enumerate(plan["storages"])
                      if kind == "fresh"]
        with device.activate(), device.stream:
            for s, (kind, index) in enumerate(plan["storages"]):
                if kind == "constant":
                    (shape, dtype), data = _type(plan["constants"][index][0]), plan["constants"][index][1]
                    host = np.frombuffer(data, storage_dtype(dtype)).reshape(shape)
                    self.constants.append((s, cp.asarray(host)))
        self.steps = [self._step(st) for st in plan["steps"]]
        self.release = self._releases(plan)

    def _releases(self, plan):
        """Per step, the storages read or written for the last time there (not the outputs)."""
        keep = {self.storage[v] for v in self.outputs}
        keep.update(s for s, _ in self.params)
        keep.update(s for s, _ in self.constants)
        last = {}
        for i, st in enumerate(plan["steps"]):
            for v in list(st["inputs"]) + list(st["outputs"]):
                last[self.storage[v]] = i
        release = [[] for _ in plan["steps"]]
        for s, i in last.items():
            if s not in keep and s >= 0:
                release[i].append(s)
        return release

    def _step(self, st):
        kind = st["kind"]
        ins = [self.storage[v] for v in st["inputs"]]
        outs = [self.storage[v] for v in st["outputs"]]
        out_types = [self.types[v] for v in st["outputs"]]
        in_types = [self.types[v] for v in st["inputs"]]
        if kind in ("fused", "kernel"):
            return _kernel_step(_Kernel(st["kernel"], self.device), ins, outs, out_types)
        if kind == "library":
            return _library_step(st, self, ins, outs, in_types, out_types)
        if kind == "cond":
            return _cond_step([Program(sub, self.device) for sub in st["subs"]], self.device, ins, outs)
        if kind == "while":
            cond, body = (Program(sub, self.device) for sub in st["subs"])
            return _while_step(cond, body, self.device, ins, outs)
        if kind == "callback":
            return _callback_step(int(st["attrs"]["callback_id"]), self.device, ins, in_types)
        raise NotImplementedError(f"[cuda] unknown GPU plan step kind {kind!r}")

    def run(self, args):
        """Runs the plan on CuPy arrays of its parameters (on this device); returns its outputs."""
        env = [None] * self.num_storages
        for s, index in self.params:
            env[s] = args[index]
        for s, array in self.constants:
            env[s] = array
        with self.device.activate(), self.device.stream:
            for s, (shape, dtype) in self.fresh:  # `empty` values: zeros, never a freed block's contents
                env[s] = _cp().zeros(shape, storage_dtype(dtype))
            for step, release in zip(self.steps, self.release):
                step(env)
                for s in release:
                    env[s] = None
        return [env[self.storage[v]].reshape(self.types[v][0]) for v in self.outputs]


def _empty(shape, dtype):
    return _cp().empty(shape, storage_dtype(dtype))


def _kernel_step(kernel, ins, outs, out_types):
    def run(env):
        results = [_empty(shape, dtype) for shape, dtype in out_types]
        kernel([env[s] for s in ins], results)
        for s, r in zip(outs, results):
            env[s] = r

    return run


def _library_step(st, program, ins, outs, in_types, out_types):
    op = st["op"]
    attrs = st["attrs"]
    if op == "conv_general_dilated":
        im2col = _Kernel(st["kernel"], program.device)
        (pshape, pdtype), = [_type(t) for t in st["kernel"]["outputs"]]

        def compute(arrays):
            patches = _empty(pshape, pdtype)
            im2col(arrays, [patches])
            return cuda_library.conv(arrays, attrs, out_types, in_types, patches)
    else:
        route = cuda_library.ROUTES.get(op)
        if route is None:  # (the matrix forms and Householder products of lax.linalg run on the CPU only)
            raise NotImplementedError(f"[{op}] has no GPU implementation yet; run it on the CPU")

        def compute(arrays):
            return route(arrays, attrs, out_types, in_types)

    def run(env):
        results = compute([env[s].reshape(shape) for s, (shape, _) in zip(ins, in_types)])
        for s, r in zip(outs, results):
            env[s] = r

    return run


def _read_scalar(array, device):
    """The value of a one-element device array (one small device-to-host copy; waits for the stream)."""
    return array.get(stream=device.stream).reshape(-1)[0]


def _cond_step(branches, device, ins, outs):
    def run(env):
        index = int(_read_scalar(env[ins[0]], device))
        branch = branches[min(max(index, 0), len(branches) - 1)]
        for s, r in zip(outs, branch.run([env[s] for s in ins[1:]])):
            env[s] = r

    return run


def _while_step(cond, body, device, ins, outs):
    def run(env):
        carried = [env[s] for s in ins]
        while bool(_read_scalar(cond.run(carried)[0], device)):
            carried = body.run(carried)
        for s, r in zip(outs, carried):
            env[s] = r

    return run


def _callback_step(callback_id, device, ins, in_types):
    def run(env):
        args = []
        for s, (shape, dtype) in zip(ins, in_types):
            host = np.ascontiguousarray(env[s].get(stream=device.stream)).reshape(-1).view(np.uint8)
            args.append(_core.Array.from_buffer(host, shape, dtype.name))
        _core.call_callback(callback_id, args)

    return run


# ---- dispatch from jit and eager primitives ----

def gpu_device_of(args, what):
    """The one GPU device of the GPU arrays among args, or None when there are none."""
    devices = {a.device for a in args if type(a) is GpuArray}
    if len(devices) > 1:
        names = ", ".join(sorted(str(d) for d in devices))
        raise ValueError(f"{what}: the arguments are on different GPUs ({names}); move them to one device with "
                         "xjax.device_put first")
    return next(iter(devices)) if devices else None


def _device_for(args, what, refusal):
    """The GPU to run on: the GPU arrays' device, else the default GPU that host operands go to; None when
    `refusal` is not a GPU refusal (a CPU-only value's error, re-raised by the caller)."""
    if not isinstance(refusal, GpuComputeError):
        return None
    return gpu_device_of(args, what) or refusal.device


def _buffers(args, device):
    """The arguments' CuPy buffers on device (CPU arrays are copied there, as JAX's uncommitted ones)."""
    cp = _cp()
    out = []
    for a in args:
        if type(a) is GpuArray:
            out.append(a._buf if a.device is device else to_device(a, device)._buf)
        else:
            host = a._numpy()
            with device.activate(), device.stream:
                out.append(cp.asarray(np.ascontiguousarray(host).view(storage_dtype(host.dtype)).reshape(host.shape)))
    return out


def _externals(consts, values, device):
    """A compiled jaxpr's externals on device: its consts (xjax Arrays), then _core.Arrays (nested consts)."""
    cp = _cp()
    out = _buffers(consts, device)
    with device.activate(), device.stream:
        for v in values:
            shape, dtype = _type((v.shape, v.dtype))
            host = v.bytes_view().view(storage_dtype(dtype)).reshape(shape)
            out.append(cp.asarray(host))
    return out


def compile_graph(graph, device):
    """The Program of a _core.Graph on device (NotImplementedError names an op with no GPU route)."""
    return Program(_core.cuda_plan(graph), device)


def run_graph_call(call, args, refusal):
    """A compiled jaxpr (graph_lowering.GraphCall) run on the GPU that holds its GPU arguments; re-raises
    `refusal` (a CPU-only value's error) when none is a GPU array."""
    device = _device_for(list(args) + list(call.consts), "jit", refusal)
    if device is None:
        raise refusal
    program = call.gpu_program(device, compile_graph)
    extern = call.gpu_extern(device, _externals)
    outs = program.run(_buffers(args, device) + extern) if program is not None else []
    if call.out_pos is not None:
        outs = [outs[i] for i in call.out_pos]
    return [GpuArray(b, aval, device) for b, aval in zip(outs, call.out_avals)]


def run_exported(exported, args, device):
    """An Exported's stored graph (its inputs, then its weights) run on device, on GPU arrays there."""
    entry = exported._gpu_programs.get(device)
    if entry is None:
        entry = (compile_graph(exported._graph, device), _externals([], exported._weights, device))
        exported._gpu_programs[device] = entry
    program, weights = entry
    outs = program.run([a._buf for a in args] + weights)
    return [GpuArray(b, aval, device) for b, aval in zip(outs, exported.out_avals)]


_eager = LRUCache(1024)  # (primitive, params key, avals, device) -> (Program, output avals)


def apply_primitive(prim, args, params, params_key, refusal):
    """One primitive on GPU arrays (eager dispatch): a one-op program compiled once per signature and device."""
    device = _device_for(args, prim.name, refusal)
    if device is None:
        raise type(refusal)(f"{prim.name}: {refusal}") from None
    avals = tuple(a.aval for a in args)
    key = (prim, params_key, avals, device)
    entry = _eager.get(key)
    if entry is None:
        graph, avals_out = single_primitive_graph(prim, avals, params)
        entry = (compile_graph(graph, device), avals_out)
        _eager.put(key, entry)
    program, avals_out = entry
    outs = [GpuArray(b, aval, device) for b, aval in zip(program.run(_buffers(args, device)), avals_out)]
    return outs if prim.multiple_results else outs[0]
