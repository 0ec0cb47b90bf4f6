"""Pallas kernels: not implemented in xjax (see jax.experimental.pallas)."""
