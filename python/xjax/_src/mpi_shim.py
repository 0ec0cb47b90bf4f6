"""xjax's MPI shim: compiled at run time against the mpi.h of the MPI library that mpi4py loaded.

The core calls MPI only through the shim (src/core/distributed/mpi_shim.h and mpi_shim.c, whose
text the core carries: _core.mpi_shim_source()): C functions with xjax's own fixed prototypes,
which call MPI through pointers of exactly the types mpi.h declares, on handles copied from
mpi4py's objects as the MPI_Comm, MPI_Datatype and MPI_Op values they are. Nothing crosses as a
guessed type, and it works alike for Open MPI (handles are pointers), MPICH and its derivatives
(ints) and the MPI-ABI builds of mpi4py 4 (which load either at run time).

Building it: the compiler is the MPI's own wrapper, which knows where its mpi.h is -- the first
of XJAX_MPICC (a command), the mpicc mpi4py was built with (mpi4py.get_config()), the mpicc next
to the MPI library mpi4py loaded (<prefix>/bin; mpicc_abi first for a standard-ABI libmpi_abi),
mpicc on the PATH, and the C compiler (CC, cc) with <prefix>/include where that holds an mpi.h --
that compiles the shim and whose mpi.h matches that library (the implementation mpi.h names, and
the sizes of the handles, which mpi4py reports with MPI._sizeof). It is built into a temporary
directory once per process (a C file of 200 lines: about 0.1 s) and loaded from there. Binding: the shim looks each MPI function up as the dynamic
linker bound mpi4py's calls -- the global scope, then mpi4py's extension module's own libraries,
through that module's handle -- and checks that the library it found is the initialized one.

Where none of this works (no C compiler on the machine, an MPI without its headers), pmap's
compiled programs run their collectives from Python instead (mpi4py's calls, slower for small
arrays): xjax warns once, saying why.
"""
import ctypes
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import warnings

import numpy as np

from xjax import _core

# The shim's codes (mpi_shim.h): datatypes, then ops.
TYPE_CODES = ("byte", "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32",
              "float64")
OPS = ("SUM", "MAX", "MIN", "LOR", "LAND")
FUNCTIONS = ("xjax_mpi_iallreduce", "xjax_mpi_iallgather", "xjax_mpi_isend", "xjax_mpi_iprobe", "xjax_mpi_recv",
             "xjax_mpi_test")


class ShimError(RuntimeError):
    """The shim could not be built, loaded or bound (the message says why)."""


_shim = None  # the loaded shim (ctypes.CDLL), once built in this process
_describe = ""  # what it was built with: compiler and header


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p), ("dli_sname", ctypes.c_char_p),
                ("dli_saddr", ctypes.c_void_p)]


def _dladdr():
    for lib in (None, "libdl.so.2"):  # glibc >= 2.34 has it in libc, older ones in libdl
        try:
            fn = ctypes.CDLL(lib).dladdr
        except (OSError, AttributeError):
            continue
        fn.argtypes, fn.restype = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)], ctypes.c_int
        return fn
    raise ShimError("dladdr is not available")


def _module(MPI):
    """mpi4py's extension module as a dlopen handle (already loaded: RTLD_NOLOAD)."""
    try:
        return ctypes.CDLL(MPI.__file__, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
    except OSError as e:
        raise ShimError(f"mpi4py's extension module {MPI.__file__} is not loaded as a shared library ({e})") from None


def library_path(MPI):
    """The file of the MPI library whose MPI_Init mpi4py calls: where the dynamic linker binds
    mpi4py's calls (the global scope, then the module's own libraries)."""
    address = None
    for lib in (ctypes.CDLL(None), _module(MPI)):
        try:
            address = ctypes.cast(lib.MPI_Init, ctypes.c_void_p).value
            break
        except AttributeError:
            continue
    if not address:
        raise ShimError("MPI_Init is found neither in the process's global scope nor in mpi4py's module")
    info = _DlInfo()
    if not _dladdr()(address, ctypes.byref(info)) or not info.dli_fname:
        raise ShimError("dladdr does not know the MPI library's file")
    return os.path.realpath(os.fsdecode(info.dli_fname))


def _compilers(MPI, libpath):
    """Candidate compile commands (argument lists), best first, without duplicates."""
    explicit = os.environ.get("XJAX_MPICC")
    if explicit:
        yield shlex.split(explicit)
        return
    seen = set()

    def fresh(cmd):
        key = tuple(cmd)
        if key in seen:
            return False
        seen.add(key)
        return True

    import mpi4py  # lazy: mpi4py is optional (xjax[distributed])

    configured = (mpi4py.get_config() or {}).get("mpicc")
    if configured and fresh(shlex.split(configured)):
        yield shlex.split(configured)
    prefix = os.path.dirname(os.path.dirname(libpath))
    # A standard-ABI library (libmpi_abi: mpi4py's MPI-ABI build over an MPI 5 ABI library) needs
    # the ABI's mpi.h: Open MPI's wrapper for it is mpicc_abi.
    names = ("mpicc_abi", "mpicc") if os.path.basename(libpath).startswith("libmpi_abi") else ("mpicc",)
    candidates = [os.path.join(prefix, "bin", name) for name in names] + [shutil.which(name) for name in names]
    for path in candidates:
        if path and os.path.isfile(path) and os.access(path, os.X_OK) and fresh([os.path.realpath(path)]):
            yield [path]
    include = os.path.join(prefix, "include")
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc and os.path.isfile(os.path.join(include, "mpi.h")):
        cmd = [*shlex.split(cc), "-I" + include]
        if fresh(cmd):
            yield cmd


def _header_matches(shim, MPI):
    """None when the shim's mpi.h is that of mpi4py's MPI library; else why not."""
    text = ctypes.create_string_buffer(256)
    sizes = (ctypes.c_int64 * 5)()
    shim.xjax_mpi_header(text, len(text), sizes)
    header = text.value.decode(errors="replace")
    want = [MPI._sizeof(t) for t in (MPI.Comm, MPI.Datatype, MPI.Op, MPI.Request, MPI.Status)]
    if list(sizes) != want:
        return (f"its mpi.h ({header}) has handles of {list(sizes)} bytes (MPI_Comm, MPI_Datatype, MPI_Op, "
                f"MPI_Request, MPI_Status), mpi4py's MPI {want}")
    library = MPI.Get_library_version()
    if header.startswith("MPI ABI"):  # the standard ABI: any implementation's library (the sizes differ from others')
        return None
    if header.startswith("Open MPI") != library.startswith("Open MPI"):
        return f"its mpi.h is {header}, the library mpi4py loaded {library.splitlines()[0][:60]}"
    if header.startswith("Open MPI"):
        ours, theirs = re.match(r"Open MPI (\d+)", header), re.match(r"Open MPI v?(\d+)", library)
        if ours and theirs and ours.group(1) != theirs.group(1):
            return f"its mpi.h is {header}, the library mpi4py loaded {library.splitlines()[0][:60]}"
    return None


def _build(MPI):
    """Compiles and loads the shim; returns (CDLL, description)."""
    libpath = library_path(MPI)
    source = _core.mpi_shim_source()
    tried = []
    for cc in _compilers(MPI, libpath):
        workdir = tempfile.mkdtemp(prefix="xjax-mpi-shim-")
        try:
            src, out = os.path.join(workdir, "xjax_mpi_shim.c"), os.path.join(workdir, "xjax_mpi_shim.so")
            with open(src, "w") as f:
                f.write(source)
            # --as-needed: an MPI wrapper's -lmpi is dropped (the shim references no MPI symbol).
            cmd = [*cc, "-shared", "-fPIC", "-O2", "-Wl,--as-needed", "-o", out, src, "-ldl"]
            try:
                res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            except (OSError, subprocess.TimeoutExpired) as e:
                tried.append(f"{shlex.join(cc)}: {e}")
                continue
            if res.returncode != 0:
                tried.append(f"{shlex.join(cc)}: {(res.stderr or res.stdout).strip().splitlines()[-1:]}")
                continue
            shim = ctypes.CDLL(out)  # (the file can go once mapped)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        shim.xjax_mpi_header.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int64)]
        if shim.xjax_mpi_version() != _core.mpi_shim_version():
            tried.append(f"{shlex.join(cc)}: the shim's version {shim.xjax_mpi_version()} is not the core's")
            continue
        mismatch = _header_matches(shim, MPI)
        if mismatch:
            tried.append(f"{shlex.join(cc)}: {mismatch}")
            continue
        text = ctypes.create_string_buffer(256)
        shim.xjax_mpi_header(text, len(text), (ctypes.c_int64 * 5)())
        return shim, f"compiled by {shlex.join(cc)} against {text.value.decode()}, for {libpath}"
    if not tried:
        raise ShimError(f"no MPI compiler wrapper (mpicc) or mpi.h found for {libpath} (XJAX_MPICC names one)")
    raise ShimError("the MPI shim could not be built: " + "; ".join(tried))


def load(MPI):
    """The shim, built and loaded once per process (raises ShimError)."""
    global _shim, _describe
    if _shim is None:
        _shim, _describe = _build(MPI)
    return _shim


def describe():
    """How the loaded shim was built ("" before it is)."""
    return _describe


def bind(MPI, data, control):
    """Binds the shim to mpi4py's MPI library and the communicators `data` and `control`; returns
    the addresses of the functions the core calls ({name: address}). Raises ShimError."""
    shim = load(MPI)
    A = MPI._addressof
    typedict = MPI._typedict
    types = [MPI.BYTE] + [typedict.get(np.dtype(name).char) for name in TYPE_CODES[1:]]
    comms = (ctypes.c_void_p * 2)(A(data), A(control))
    type_addrs = (ctypes.c_void_p * len(types))(*[A(t) if t is not None else None for t in types])
    op_addrs = (ctypes.c_void_p * len(OPS))(*[A(getattr(MPI, name)) for name in OPS])
    ranks, sizes = (ctypes.c_int * 2)(), (ctypes.c_int * 2)()
    error = ctypes.create_string_buffer(512)
    module = _module(MPI)
    fn = shim.xjax_mpi_bind
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                   ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    fn.restype = ctypes.c_int
    if fn(module._handle, comms, type_addrs, op_addrs, ranks, sizes, error, len(error)) != 0:
        raise ShimError(f"binding the MPI shim failed: {error.value.decode(errors='replace')}")
    want = ([data.Get_rank(), control.Get_rank()], [data.Get_size(), control.Get_size()])
    if (list(ranks), list(sizes)) != want:
        raise ShimError(f"the MPI shim sees ranks {list(ranks)} of sizes {list(sizes)}, mpi4py {want[0]} of {want[1]}")
    return {name: ctypes.cast(getattr(shim, name), ctypes.c_void_p).value for name in FUNCTIONS}


_warned = False


def warn_once(error):
    global _warned
    if not _warned:
        _warned = True
        warnings.warn(f"xjax.distributed: the core cannot call MPI ({error}); pmap's compiled programs run their "
                      f"collectives from Python instead", RuntimeWarning, stacklevel=3)
