"""Test-wide settings: hypothesis without per-example deadlines (the machines are small and shared),
the CPU as the default device, and the `x64` fixture."""
import pytest
from hypothesis import settings

import xjax

settings.register_profile("xjax", deadline=None)
settings.load_profile("xjax")

# The suite's own arrays live on the CPU, whose results its references were taken from; on a machine
# with a GPU (JAX's default device there) the GPU cases choose it explicitly (tests/gpu_runtime.py).
xjax.config.update("jax_default_device", "cpu")


@pytest.fixture
def x64():
    """x64 on for one test (a module may define its own)."""
    with xjax.enable_x64(True):
        yield
