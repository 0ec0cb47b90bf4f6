"""Traceback filtering: an error raised inside xjax's API is shown without the frames of excluded
files (xjax's own, and those libraries register), as JAX's `api_boundary` does."""
import functools
import os

from xjax._src.config import config

_exclude_paths = [os.path.dirname(os.path.dirname(__file__))]  # xjax's package directory


def register_exclusion(path):
    """Leaves the frames of files under `path` out of filtered tracebacks."""
    _exclude_paths.append(path)


def _excluded(frame):
    return any(frame.f_code.co_filename.startswith(p) for p in _exclude_paths)


def _filtered(tb):
    """The traceback without excluded frames (the last frame, where the error was raised, stays)."""
    frames = []
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    kept = [t for t in frames[:-1] if not _excluded(t.tb_frame)] + frames[-1:]
    out = None
    for t in reversed(kept):
        out = type(t)(out, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return out


def api_boundary(fun):
    """Wraps an API function so that errors escaping it carry filtered tracebacks."""

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        try:
            return fun(*args, **kwargs)
        except Exception as e:
            if config.read("jax_traceback_filtering") == "off":
                raise
            raise e.with_traceback(_filtered(e.__traceback__))

    return wrapped
