"""xjax.debug: printing and callbacks from inside jitted and transformed functions."""
from xjax._src.debugging import breakpoint, debug_callback as callback, debug_print as print  # noqa: F401,A004

__all__ = ["breakpoint", "callback", "print"]
