"""Experimental APIs, as jax.experimental."""
from xjax._src.state.types import Ref as MutableArray  # noqa: F401 - jax.experimental's old name of jax.Ref


def io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False, **kwargs):
    """JAX's host callback with side effects: not implemented (xjax's compiled programs cannot call
    back into Python yet)."""
    raise NotImplementedError("jax.experimental.io_callback: xjax cannot call Python from a computation yet")
