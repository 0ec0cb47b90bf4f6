"""Runs single C++ core ops on NumPy arrays: the harness of the tests/test_core_*.py suites."""
import ml_dtypes
import numpy as np

from xjax import _core

_NP_DTYPES = {
    "bool": np.dtype(bool), "int8": np.dtype(np.int8), "int16": np.dtype(np.int16),
    "int32": np.dtype(np.int32), "int64": np.dtype(np.int64), "uint8": np.dtype(np.uint8),
    "uint16": np.dtype(np.uint16), "uint32": np.dtype(np.uint32), "uint64": np.dtype(np.uint64),
    "float16": np.dtype(np.float16), "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "float32": np.dtype(np.float32), "float64": np.dtype(np.float64),
}
ALL_DTYPES = list(_NP_DTYPES)
FLOAT_DTYPES = ["float16", "bfloat16", "float32", "float64"]
INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def to_core(x):
    shape = np.shape(x)  # before ascontiguousarray, which makes 0-d arrays 1-d
    x = np.ascontiguousarray(x)
    return _core.Array.from_buffer(x.reshape(-1).view(np.uint8), shape, x.dtype.name)


def to_numpy(a):
    return a.bytes_view().view(_NP_DTYPES.get(a.dtype) or np.dtype(a.dtype)).reshape(a.shape)  # (complex: NumPy names it)


def run_op(op, *inputs, **attrs):
    """Compiles and runs one op; returns a list of NumPy results."""
    arrays = [to_core(np.asarray(x)) for x in inputs]
    exe = _core.compile_op(op, [(a.shape, a.dtype) for a in arrays], attrs)
    return [to_numpy(r) for r in exe.run(arrays)]
