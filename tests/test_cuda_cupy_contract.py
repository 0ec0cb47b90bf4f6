"""What the CUDA executor relies on of CuPy, as real CuPy (13 and 14) does it (see tests/emulated_cupy.py,
whose checks follow CuPy's source): kernels compiled without CuPy's -ftz=true, so float32 subnormals survive
as they do under XLA and on the CPU; every device operation ordered on the device's stream; DLPack copies made
on the array's device.
"""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src.dlpack import Capsule, DLDeviceType
from gpu_runtime import gpu, to_gpu  # noqa: F401 - the fixture


@pytest.fixture
def fresh_modules(monkeypatch, tmp_path):
    """No module compiled before (in memory or on disk), so that this test's are compiled and recorded."""
    from xjax._src.gpu import cuda

    monkeypatch.setattr(cuda, "_modules", {})
    monkeypatch.setenv("XJAX_CUDA_CACHE_DIR", str(tmp_path))


def _emulated(gpu):
    import emulated_cupy
    from xjax._src.gpu import gpu_devices

    if gpu_devices.cupy() is not emulated_cupy:
        pytest.skip("the emulated runtime records what NVRTC is given")
    return emulated_cupy


def _last_ftz(options):
    return [o for o in options if o.lstrip("-").startswith("ftz=")][-1]


def test_float32_subnormals_survive_a_kernel(gpu):
    tiny = np.array([1e-40, -3e-39, 1.5e-45, 2.0], np.float32)  # (subnormal but the last)
    got = np.asarray(xjax.jit(lambda x: x * 1.0 + 0.0)(to_gpu(tiny, gpu)))
    np.testing.assert_array_equal(got, tiny)


def test_nvrtc_gets_ftz_false_last(gpu, fresh_modules):
    """NVRTC takes the last of repeated options; CuPy's RawModule(code=) appends -ftz=true after ours."""
    cupy = _emulated(gpu)
    cupy.nvrtc_options.clear()
    xjax.jit(lambda x: jnp.sin(x) * 3.0)(to_gpu(np.arange(5, dtype=np.float32), gpu)).block_until_ready()
    assert cupy.nvrtc_options
    assert all(_last_ftz(opts) == "--ftz=false" for opts in cupy.nvrtc_options), cupy.nvrtc_options
    cupy.RawModule(code='extern "C" __global__ void k(float* x) {}', options=("--ftz=false",))
    assert _last_ftz(cupy.nvrtc_options[-1]) == "-ftz=true"  # (why the executor does not compile that way)


def test_nvrtc_ptx_of_a_generated_kernel_has_no_flush_to_zero(gpu, fresh_modules):
    import nvrtc

    cupy = _emulated(gpu)
    if not nvrtc.available():
        pytest.skip("NVRTC is not installed")
    cupy.sources.clear()
    cupy.nvrtc_options.clear()
    xjax.jit(lambda x, y: x * y + jnp.sqrt(y))(to_gpu(np.ones(7, np.float32), gpu),
                                               to_gpu(np.ones(7, np.float32), gpu)).block_until_ready()
    options = tuple(o for o in cupy.nvrtc_options[-1] if not o.startswith("-arch=")) + ("-arch=compute_90",)
    text = nvrtc.ptx(cupy.sources[-1], list(options))
    assert ".f32" in text and ".ftz" not in text
    assert ".ftz" in nvrtc.ptx(cupy.sources[-1], list(options) + ["-ftz=true"])  # (the check can fail)


def test_dlpack_copy_is_made_on_the_arrays_stream(gpu):
    _emulated(gpu)
    x = to_gpu(np.arange(6, dtype=np.float32), gpu)
    capsule = x.__dlpack__(copy=True)  # (the emulated copy() refuses the legacy default stream)
    np.testing.assert_array_equal(np.from_dlpack(Capsule(capsule, (DLDeviceType.kDLCPU, 0))), np.arange(6))


def test_kernel_launches_off_the_stream_are_refused_by_the_emulation(gpu):
    """The emulated CuPy refuses what would race on a real GPU, so the tests above can fail."""
    cupy = _emulated(gpu)
    module = cupy.RawModule(code='extern "C" __global__ void k(float* x) { x[0] = 1.0f; }', options=())
    fn = module.get_function("k")
    buf = cupy.empty((1,), np.float32)
    with pytest.raises(RuntimeError, match="legacy default stream"):
        fn((1,), (1,), (buf,))
    with pytest.raises(TypeError, match="tuples"):
        with gpu.activate(), gpu.stream:
            fn([1], [1], (buf,))
    with pytest.raises(TypeError, match="options"):
        cupy.RawModule(code="", options=["--std=c++17"])
