"""Runs generated CUDA plans (_core.cuda_kernel) without a GPU: their sources compiled as host C++
under src/core/cuda/emulation.h and called through ctypes on NumPy buffers; and compiles them with
nvcc. Many plans go into one translation unit (each source in its own namespace, its kernel names
prefixed so that they stay unique), cached in a temporary directory by the hash of its text."""
import ctypes
import fcntl
import hashlib
import os
import pathlib
import re
import shutil
import subprocess
import tempfile

import numpy as np

from core_util import _NP_DTYPES
from xjax import _core

ROOT = pathlib.Path(__file__).resolve().parent.parent
EMULATION_H = ROOT / "src" / "core" / "cuda" / "emulation.h"
CACHE = pathlib.Path(tempfile.gettempdir()) / "xjax_cuda_emulation"
ORDER_ENV = "XJAX_EMULATION_ORDER"
ORDERS = ("forward", "reverse")
GUARD, GARBAGE = 64, 0xA5  # bytes either side of a plan's buffers, and what fills them


def plan(op, input_types, attrs):
    """The generated plan of op for [(shape, dtype name), ...]."""
    return _core.cuda_kernel(op, [(tuple(s), d) for s, d in input_types], dict(attrs))


def global_prefix():
    """What sources start with: the scalar definitions (cuda_fused_source_prefix), then, in those
    computing a special function, scalar_special_source(). Put once at global scope ahead of
    namespaced sources, their include guards make the copies in the namespaces empty."""
    return _core.cuda_fused_source_prefix() + _core.scalar_special_source()


def _namespaced(k, p):
    """Plan k's source in namespace pk, its kernels renamed pk_<name> (still extern "C"). Sources
    start with the scalar definitions: callers put global_prefix() once at global scope first."""
    src = p["source"]
    for name in {launch["name"] for launch in p["launches"]}:
        src = src.replace(f"void {name}(", f"void p{k}_{name}(")
    return f"namespace p{k} {{\n{src}\n}}  // namespace p{k}\n"


def _cached(text, suffix, build):
    """The path of build(source path, output path)'s output for text, built once per text."""
    CACHE.mkdir(parents=True, exist_ok=True)
    key = hashlib.sha256(text.encode()).hexdigest()[:24]
    out = CACHE / f"{key}{suffix}"
    with open(CACHE / f"{key}{suffix}.lock", "w") as lock:  # parallel test workers build it once
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not out.exists():
            src = CACHE / f"{key}.{os.getpid()}.src"
            src.write_text(text)
            tmp = CACHE / f"{key}.{os.getpid()}{suffix}"
            build(src, tmp)
            os.replace(tmp, out)
            src.unlink()
    return out


class Batch:
    """Plans compiled together: add() them all, then build() once and run() each."""

    def __init__(self):
        self.plans = []
        self.lib = None

    def add(self, p):
        self.plans.append(p)
        return len(self.plans) - 1

    def host_source(self):
        parts = ['#include "core/cuda/emulation.h"\n', global_prefix()]
        for k, p in enumerate(self.plans):
            parts.append(_namespaced(k, p))
            body = []
            for launch in p["launches"]:
                args = ", ".join(re.sub(r"^(in|out|tmp)(\d+)$", r"\1[\2]", prm) for prm in launch["params"])
                g, b = launch["grid"], launch["block"]
                body.append(f"  emulate_launch(p{k}::p{k}_{launch['name']}, dim3({g[0]}, {g[1]}, {g[2]}), "
                            f"dim3({b[0]}, {b[1]}, {b[2]}), {launch['shared']}, {args});")
            parts.append(f'extern "C" void run_{k}(void** in, void** out, void** tmp) {{\n'
                         + "\n".join(body) + "\n  (void)in; (void)out; (void)tmp;\n}\n")
        return "".join(parts)

    def build(self):
        text = self.host_source() + "// " + hashlib.sha256(EMULATION_H.read_bytes()).hexdigest() + "\n"

        def compile_host(src, out):
            cmd = ["g++", "-std=c++17", "-O1", "-shared", "-fPIC", "-w", "-x", "c++", f"-I{ROOT / 'src'}",
                   str(src), "-o", str(out)]
            subprocess.run(cmd, check=True, capture_output=True, text=True)

        self.lib = ctypes.CDLL(str(_cached(text, ".so", compile_host)))
        return self

    def run(self, k, inputs, order="forward"):
        """Runs plan k on NumPy inputs; returns its outputs as NumPy arrays. order "reverse" runs
        blocks and threads in the opposite order (emulation.h's XJAX_EMULATION_ORDER), so that a
        kernel whose result depends on their order differs one way or the other."""
        p = self.plans[k]
        outs = [(tuple(s), _NP_DTYPES.get(d) or np.dtype(d)) for s, d in p["outputs"]]  # (complex: NumPy names it)
        # Every buffer lies between guard bands of garbage that must come back untouched (the
        # word-wide atomics on 1- and 2-byte elements read into the band after a buffer and write
        # back what they read); a read past an input gets garbage. Outputs and scratch start as
        # garbage, as the executor's cupy.empty leaves them: a plan must write every output element,
        # and scratch before reading it. Inputs must come back unchanged.
        def guarded(nbytes, data=None):
            buf = np.full(GUARD + int(nbytes) + GUARD, GARBAGE, np.uint8)
            if data is not None:
                buf[GUARD:GUARD + int(nbytes)] = np.frombuffer(data, np.uint8)
            return buf

        in_bytes = [np.ascontiguousarray(x).tobytes() for x in inputs]
        in_bufs = [guarded(len(b), b) for b in in_bytes]
        out_bufs = [guarded(np.prod(s, dtype=np.int64) * dt.itemsize) for s, dt in outs]
        tmp_bufs = [guarded(n) for n in p["scratch"]]

        def ptrs(arrays, offset=0):
            return (ctypes.c_void_p * max(1, len(arrays)))(*[a.ctypes.data + offset for a in arrays])

        saved = os.environ.get(ORDER_ENV)
        os.environ[ORDER_ENV] = order
        try:
            getattr(self.lib, f"run_{k}")(ptrs(in_bufs, GUARD), ptrs(out_bufs, GUARD), ptrs(tmp_bufs, GUARD))
        finally:
            if saved is None:
                del os.environ[ORDER_ENV]
            else:
                os.environ[ORDER_ENV] = saved
        for what, bufs in (("input", in_bufs), ("output", out_bufs), ("scratch", tmp_bufs)):
            for i, buf in enumerate(bufs):
                if (buf[:GUARD] != GARBAGE).any() or (buf[-GUARD:] != GARBAGE).any():
                    raise AssertionError(f"plan {k} wrote outside its {what} buffer {i}")
        for i, (buf, b) in enumerate(zip(in_bufs, in_bytes)):
            if buf[GUARD:GUARD + len(b)].tobytes() != b:
                raise AssertionError(f"plan {k} wrote to its input {i}")
        return [buf[GUARD:GUARD + np.prod(s, dtype=np.int64) * dt.itemsize].view(dt).reshape(s)
                for buf, (s, dt) in zip(out_bufs, outs)]


def nvcc_path():
    return shutil.which("nvcc") or (shutil.which("/usr/local/cuda/bin/nvcc"))


def nvcc_compile(plans, arch):
    """Compiles the plans' sources as one .cu to a cubin for arch (e.g. "sm_80"); returns its path."""
    text = global_prefix() + "".join(_namespaced(k, p) for k, p in enumerate(plans))

    def compile_cu(src, out):
        cu = src.with_suffix(".cu")
        src.rename(cu)
        try:
            cmd = [nvcc_path(), "--cubin", f"-arch={arch}", "-w", "-o", str(out), str(cu)]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode:
                raise AssertionError(f"nvcc -arch={arch} failed:\n{r.stderr[-4000:]}")
        finally:
            cu.rename(src)

    return _cached(text + f"// {arch}\n", ".cubin", compile_cu)
