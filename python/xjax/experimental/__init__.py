"""Experimental APIs, as jax.experimental."""
from xjax._src.callbacks import io_callback  # noqa: F401
