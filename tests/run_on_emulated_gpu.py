"""Runs a Python program (a seed program) with the emulated GPU as its default device:
`python run_on_emulated_gpu.py PROGRAM.py`; or test files, their arrays on it instead of the CPU that
conftest.py pins: `python run_on_emulated_gpu.py -m pytest tests/test_nn.py` (exploratory: the few
tests that check an array's exact type fail there).

The CUDA backend starts on the emulated CuPy (tests/emulated_cupy.py) and JAX_PLATFORMS lists it
first, so the program runs as on a machine with a GPU: its arrays are made there and its jitted and
eager computations run there. Prints what the program prints; the counters of the emulated runtime
go to stderr.
"""
import os
import runpy
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import emulated_cupy  # noqa: E402

from xjax._src import platforms  # noqa: E402
from xjax._src.gpu import gpu_devices  # noqa: E402


def _probe():
    gpu_devices._cupy = emulated_cupy
    return [gpu_devices.GpuDevice(0, emulated_cupy._properties(0))]


platforms._nvidia_gpu_visible = lambda: True
gpu_devices.probe = _probe
platforms.config.update("jax_platforms", "cuda,cpu")

class _UnpinTheCpu:
    """A pytest plugin undoing conftest.py's jax_default_device="cpu" (its hooks run after conftest's)."""

    @staticmethod
    def pytest_configure(config):
        platforms.config.update("jax_default_device", None)


if __name__ == "__main__" and sys.argv[1:3] == ["-m", "pytest"]:
    import pytest

    sys.exit(pytest.main(sys.argv[3:], plugins=[_UnpinTheCpu()]))
elif __name__ == "__main__":
    program = os.path.abspath(sys.argv[1])
    sys.path.insert(0, os.path.dirname(program))
    sys.argv = sys.argv[1:]
    runpy.run_path(program, run_name="__main__")
    print(f"emulated GPU: {emulated_cupy.stats}", file=sys.stderr)
