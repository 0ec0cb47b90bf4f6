"""Test-wide settings: hypothesis without per-example deadlines (the machines are small and shared),
and the CPU as the default device."""
from hypothesis import settings

import xjax

settings.register_profile("xjax", deadline=None)
settings.load_profile("xjax")

# The suite's own arrays live on the CPU, whose results its references were taken from; on a machine
# with a GPU (JAX's default device there) the GPU cases choose it explicitly (tests/gpu_runtime.py).
xjax.config.update("jax_default_device", "cpu")
