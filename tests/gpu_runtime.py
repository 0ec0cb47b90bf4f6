"""The `gpu` fixture of the CUDA executor's tests: a GPU device to run on, twice over -- the emulated
runtime (tests/emulated_cupy.py put where the executor finds CuPy, so gpu/cuda.py runs
unmodified), and the real GPU, which skips where there is none.

Import it into a test module: `from gpu_runtime import gpu, to_gpu  # noqa: F401`.
"""
import numpy as np
import pytest

from xjax._src import platforms


def _real_gpu():
    if "cuda" not in platforms.backends():
        pytest.skip("needs a GPU and CuPy")
    return platforms.get_backend("cuda").local_devices()[0]


@pytest.fixture(scope="module", params=["emulated", "cuda"])
def gpu(request):
    if request.param == "cuda":
        yield _real_gpu()
        return
    import emulated_cupy
    from xjax._src.gpu import gpu_devices
    from xjax._src.gpu import gpu_array  # noqa: F401 - makes GpuArray an xjax array type

    saved = gpu_devices._cupy
    gpu_devices._cupy = emulated_cupy
    try:
        yield gpu_devices.GpuDevice(0, emulated_cupy._properties(0))
    finally:
        gpu_devices._cupy = saved


def to_gpu(x, device):
    """A GPU array on `device` holding NumPy-convertible x (its dtype canonicalised)."""
    from xjax._src.gpu import gpu_array

    return gpu_array.from_host(np.asarray(x), device, weak_type=type(x) in (bool, int, float))
