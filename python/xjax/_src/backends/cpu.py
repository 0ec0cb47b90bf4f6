"""The CPU backend: moving data in and out of the C++ runtime, and eager primitive dispatch.

Eager dispatch compiles each (primitive, params, input types) once into a one-op Executable
through the same lowering that jit uses, and caches it; later calls go straight to run().
"""
import ml_dtypes
import numpy as np

from xjax import _core
from xjax._src import core, dtypes
from xjax._src.backends.lowering import lower_single_primitive

_NP_DTYPE = {d.name: d for d in dtypes.SUPPORTED}
_NP_DTYPE["bfloat16"] = np.dtype(ml_dtypes.bfloat16)


def to_numpy(value, aval):
    return value.bytes_view().view(aval.dtype).reshape(aval.shape)


def _wrap(value, aval):
    return _array_type(value, aval)


def _array_type(value, aval):
    """Replaced by xjax.Array once xjax._src.array is imported (it imports this module)."""
    from xjax._src.array import Array

    return Array(value, aval)


def device_put(x, dtype=None, weak_type=False):
    """A new xjax.Array holding a copy of NumPy-convertible `x` (dtype canonicalised)."""
    x = np.asarray(x)
    dt = dtypes.canonicalize_dtype(x.dtype if dtype is None else dtype)
    if x.dtype != dt:
        x = x.astype(dt)
    shape = x.shape
    x = np.ascontiguousarray(x)  # (makes 0-d arrays 1-d: keep the shape from before)
    value = _core.Array.from_buffer(x.reshape(-1).view(np.uint8), shape, dt.name)
    return _wrap(value, core.ShapedArray(shape, dt, weak_type))


def scalar(value, dtype, weak_type):
    """A 0-d array from a Python scalar, without a NumPy round trip."""
    return _wrap(_core.Array.from_scalar(value, dtype.name), core.ShapedArray((), dtype, weak_type))


_executables = {}


def apply_primitive(prim, *args, **params):
    """Runs one primitive eagerly on xjax.Arrays."""
    avals = tuple([a.aval for a in args])
    key = (prim, _params_key(params) if params else (), avals)
    entry = _executables.get(key)
    if entry is None:
        entry = _executables[key] = lower_single_primitive(prim, avals, params)
    exe, avals_out = entry
    outs = exe.run([a._value for a in args])
    if prim.multiple_results:
        return [_array_type(v, aval) for v, aval in zip(outs, avals_out)]
    return _array_type(outs[0], avals_out[0])


def _params_key(params):
    items = tuple(params.items())
    # NaN != NaN would make a key that never hits: spell NaN floats out.
    if any(isinstance(v, float) and v != v for _, v in items):
        items = tuple((k, "nan" if isinstance(v, float) and v != v else v) for k, v in items)
    return items


def cache_size():
    return len(_executables)
