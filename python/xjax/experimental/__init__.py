"""Experimental APIs, as jax.experimental."""
from xjax._src.callbacks import io_callback  # noqa: F401
from xjax._src.state.types import Ref as MutableArray  # noqa: F401,E402 - jax.experimental's old name of jax.Ref
