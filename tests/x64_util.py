"""`in_x64`: x64 on for a hypothesis test (which cannot take the function-scoped `x64` fixture of
conftest.py)."""
import functools

import xjax


def in_x64(fn):
    """fn run with x64 on."""
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        with xjax.enable_x64(True):
            return fn(*args, **kwargs)
    return wrapped
