"""Which source files are a library's machinery rather than user code (JAX's traceback_util, which
libraries such as Equinox and Flax register their own files with).

xjax shows full tracebacks (it does not rewrite them at API boundaries, whatever
jax_traceback_filtering says), so `api_boundary` leaves a function as it is; `include_frame` tells
a caller that walks the stack itself whether a frame is user code.
"""
import os

_exclude_paths = [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]  # xjax itself


def register_exclusion(path):
    """Frames from files under `path` (a file or a directory) are not user code."""
    _exclude_paths.append(os.path.abspath(path))


def include_filename(filename):
    filename = os.path.abspath(filename)
    return not any(filename == p or filename.startswith(p.rstrip(os.sep) + os.sep) for p in _exclude_paths)


def include_frame(frame):
    return include_filename(frame.f_code.co_filename)


def api_boundary(fun=None, **kwargs):
    """Marks a public API function (usable as @api_boundary or @api_boundary(...)): xjax keeps
    tracebacks whole, so the function is returned unchanged."""
    if fun is None:
        return lambda f: f
    return fun
