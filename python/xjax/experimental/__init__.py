"""Experimental APIs, as jax.experimental."""


def io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False, **kwargs):
    """JAX's host callback with side effects: not implemented (xjax's compiled programs cannot call
    back into Python yet)."""
    raise NotImplementedError("jax.experimental.io_callback: xjax cannot call Python from a computation yet")
