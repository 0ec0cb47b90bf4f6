"""NVRTC, the compiler CuPy's RawModule runs on the GPU machine, loaded here through ctypes from the
nvidia-cuda-nvrtc wheel (a test dependency) or the system: it compiles to PTX without a GPU, so the
tests can give it the generated sources exactly as the executor does (self-contained text, the
executor's options) and catch what nvcc with its host headers would let through.
"""
import ctypes
import ctypes.util
import glob
import os

_lib = None


def _find():
    try:
        import nvidia

        for root in nvidia.__path__:
            found = sorted(glob.glob(os.path.join(root, "cu*", "lib", "libnvrtc.so.*")))
            found = [f for f in found if "builtins" not in f]
            if found:
                return found[-1]
    except ImportError:
        pass
    return ctypes.util.find_library("nvrtc")


def available():
    global _lib
    if _lib is None:
        path = _find()
        _lib = ctypes.CDLL(path) if path else False
    return bool(_lib)


def ptx(source, options):
    """The PTX text NVRTC makes of one CUDA source (options name a compute_XX target); raises AssertionError
    with the compiler's log on failure."""
    assert available(), "NVRTC is not installed"
    prog = ctypes.c_void_p()
    assert _lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), b"xjax_kernel.cu", 0, None, None) == 0
    try:
        opts = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
        status = _lib.nvrtcCompileProgram(prog, len(options), opts)
        size = ctypes.c_size_t()
        _lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        _lib.nvrtcGetProgramLog(prog, log)
        if status != 0:
            raise AssertionError(f"NVRTC {' '.join(options)} failed:\n{log.value.decode()[-4000:]}\n--- source head:\n"
                                 + source[:300])
        _lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
        text = ctypes.create_string_buffer(size.value)
        _lib.nvrtcGetPTX(prog, text)
        return text.value.decode()
    finally:
        _lib.nvrtcDestroyProgram(ctypes.byref(prog))


def compile_all(sources, options, threads=2):
    """The PTX of each distinct source (in threads: NVRTC programs are independent)."""
    import concurrent.futures

    unique = list(dict.fromkeys(sources))
    with concurrent.futures.ThreadPoolExecutor(threads) as ex:
        return list(ex.map(lambda s: ptx(s, options), unique))

