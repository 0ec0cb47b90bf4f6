"""dtype canonicalisation and JAX's promotion lattice with weak types (values recorded from JAX 0.10)."""
import numpy as np
import pytest

from xjax._src import dtypes
from xjax._src.config import config

# (dtype a, a weak?, dtype b, b weak?, result dtype, result weak?) as jax.dtypes.result_type gives them
# (x64 off). A weak int32 stands for a Python int, a weak float32 for a Python float.
JAX_PROMOTION = [
    ('bool', False, 'bool', False, 'bool', False),
    ('bool', False, 'int8', False, 'int8', False),
    ('bool', False, 'int16', False, 'int16', False),
    ('bool', False, 'int32', False, 'int32', False),
    ('bool', False, 'uint8', False, 'uint8', False),
    ('bool', False, 'uint16', False, 'uint16', False),
    ('bool', False, 'uint32', False, 'uint32', False),
    ('bool', False, 'float16', False, 'float16', False),
    ('bool', False, 'bfloat16', False, 'bfloat16', False),
    ('bool', False, 'float32', False, 'float32', False),
    ('bool', False, 'int32', True, 'int32', True),
    ('bool', False, 'float32', True, 'float32', True),
    ('int8', False, 'bool', False, 'int8', False),
    ('int8', False, 'int8', False, 'int8', False),
    ('int8', False, 'int16', False, 'int16', False),
    ('int8', False, 'int32', False, 'int32', False),
    ('int8', False, 'uint8', False, 'int16', False),
    ('int8', False, 'uint16', False, 'int32', False),
    ('int8', False, 'uint32', False, 'int32', False),
    ('int8', False, 'float16', False, 'float16', False),
    ('int8', False, 'bfloat16', False, 'bfloat16', False),
    ('int8', False, 'float32', False, 'float32', False),
    ('int8', False, 'int32', True, 'int8', False),
    ('int8', False, 'float32', True, 'float32', True),
    ('int16', False, 'bool', False, 'int16', False),
    ('int16', False, 'int8', False, 'int16', False),
    ('int16', False, 'int16', False, 'int16', False),
    ('int16', False, 'int32', False, 'int32', False),
    ('int16', False, 'uint8', False, 'int16', False),
    ('int16', False, 'uint16', False, 'int32', False),
    ('int16', False, 'uint32', False, 'int32', False),
    ('int16', False, 'float16', False, 'float16', False),
    ('int16', False, 'bfloat16', False, 'bfloat16', False),
    ('int16', False, 'float32', False, 'float32', False),
    ('int16', False, 'int32', True, 'int16', False),
    ('int16', False, 'float32', True, 'float32', True),
    ('int32', False, 'bool', False, 'int32', False),
    ('int32', False, 'int8', False, 'int32', False),
    ('int32', False, 'int16', False, 'int32', False),
    ('int32', False, 'int32', False, 'int32', False),
    ('int32', False, 'uint8', False, 'int32', False),
    ('int32', False, 'uint16', False, 'int32', False),
    ('int32', False, 'uint32', False, 'int32', False),
    ('int32', False, 'float16', False, 'float16', False),
    ('int32', False, 'bfloat16', False, 'bfloat16', False),
    ('int32', False, 'float32', False, 'float32', False),
    ('int32', False, 'int32', True, 'int32', False),
    ('int32', False, 'float32', True, 'float32', True),
    ('uint8', False, 'bool', False, 'uint8', False),
    ('uint8', False, 'int8', False, 'int16', False),
    ('uint8', False, 'int16', False, 'int16', False),
    ('uint8', False, 'int32', False, 'int32', False),
    ('uint8', False, 'uint8', False, 'uint8', False),
    ('uint8', False, 'uint16', False, 'uint16', False),
    ('uint8', False, 'uint32', False, 'uint32', False),
    ('uint8', False, 'float16', False, 'float16', False),
    ('uint8', False, 'bfloat16', False, 'bfloat16', False),
    ('uint8', False, 'float32', False, 'float32', False),
    ('uint8', False, 'int32', True, 'uint8', False),
    ('uint8', False, 'float32', True, 'float32', True),
    ('uint16', False, 'bool', False, 'uint16', False),
    ('uint16', False, 'int8', False, 'int32', False),
    ('uint16', False, 'int16', False, 'int32', False),
    ('uint16', False, 'int32', False, 'int32', False),
    ('uint16', False, 'uint8', False, 'uint16', False),
    ('uint16', False, 'uint16', False, 'uint16', False),
    ('uint16', False, 'uint32', False, 'uint32', False),
    ('uint16', False, 'float16', False, 'float16', False),
    ('uint16', False, 'bfloat16', False, 'bfloat16', False),
    ('uint16', False, 'float32', False, 'float32', False),
    ('uint16', False, 'int32', True, 'uint16', False),
    ('uint16', False, 'float32', True, 'float32', True),
    ('uint32', False, 'bool', False, 'uint32', False),
    ('uint32', False, 'int8', False, 'int32', False),
    ('uint32', False, 'int16', False, 'int32', False),
    ('uint32', False, 'int32', False, 'int32', False),
    ('uint32', False, 'uint8', False, 'uint32', False),
    ('uint32', False, 'uint16', False, 'uint32', False),
    ('uint32', False, 'uint32', False, 'uint32', False),
    ('uint32', False, 'float16', False, 'float16', False),
    ('uint32', False, 'bfloat16', False, 'bfloat16', False),
    ('uint32', False, 'float32', False, 'float32', False),
    ('uint32', False, 'int32', True, 'uint32', False),
    ('uint32', False, 'float32', True, 'float32', True),
    ('float16', False, 'bool', False, 'float16', False),
    ('float16', False, 'int8', False, 'float16', False),
    ('float16', False, 'int16', False, 'float16', False),
    ('float16', False, 'int32', False, 'float16', False),
    ('float16', False, 'uint8', False, 'float16', False),
    ('float16', False, 'uint16', False, 'float16', False),
    ('float16', False, 'uint32', False, 'float16', False),
    ('float16', False, 'float16', False, 'float16', False),
    ('float16', False, 'bfloat16', False, 'float32', False),
    ('float16', False, 'float32', False, 'float32', False),
    ('float16', False, 'int32', True, 'float16', False),
    ('float16', False, 'float32', True, 'float16', False),
    ('bfloat16', False, 'bool', False, 'bfloat16', False),
    ('bfloat16', False, 'int8', False, 'bfloat16', False),
    ('bfloat16', False, 'int16', False, 'bfloat16', False),
    ('bfloat16', False, 'int32', False, 'bfloat16', False),
    ('bfloat16', False, 'uint8', False, 'bfloat16', False),
    ('bfloat16', False, 'uint16', False, 'bfloat16', False),
    ('bfloat16', False, 'uint32', False, 'bfloat16', False),
    ('bfloat16', False, 'float16', False, 'float32', False),
    ('bfloat16', False, 'bfloat16', False, 'bfloat16', False),
    ('bfloat16', False, 'float32', False, 'float32', False),
    ('bfloat16', False, 'int32', True, 'bfloat16', False),
    ('bfloat16', False, 'float32', True, 'bfloat16', False),
    ('float32', False, 'bool', False, 'float32', False),
    ('float32', False, 'int8', False, 'float32', False),
    ('float32', False, 'int16', False, 'float32', False),
    ('float32', False, 'int32', False, 'float32', False),
    ('float32', False, 'uint8', False, 'float32', False),
    ('float32', False, 'uint16', False, 'float32', False),
    ('float32', False, 'uint32', False, 'float32', False),
    ('float32', False, 'float16', False, 'float32', False),
    ('float32', False, 'bfloat16', False, 'float32', False),
    ('float32', False, 'float32', False, 'float32', False),
    ('float32', False, 'int32', True, 'float32', False),
    ('float32', False, 'float32', True, 'float32', False),
    ('int32', True, 'bool', False, 'int32', True),
    ('int32', True, 'int8', False, 'int8', False),
    ('int32', True, 'int16', False, 'int16', False),
    ('int32', True, 'int32', False, 'int32', False),
    ('int32', True, 'uint8', False, 'uint8', False),
    ('int32', True, 'uint16', False, 'uint16', False),
    ('int32', True, 'uint32', False, 'uint32', False),
    ('int32', True, 'float16', False, 'float16', False),
    ('int32', True, 'bfloat16', False, 'bfloat16', False),
    ('int32', True, 'float32', False, 'float32', False),
    ('int32', True, 'int32', True, 'int32', True),
    ('int32', True, 'float32', True, 'float32', True),
    ('float32', True, 'bool', False, 'float32', True),
    ('float32', True, 'int8', False, 'float32', True),
    ('float32', True, 'int16', False, 'float32', True),
    ('float32', True, 'int32', False, 'float32', True),
    ('float32', True, 'uint8', False, 'float32', True),
    ('float32', True, 'uint16', False, 'float32', True),
    ('float32', True, 'uint32', False, 'float32', True),
    ('float32', True, 'float16', False, 'float16', False),
    ('float32', True, 'bfloat16', False, 'bfloat16', False),
    ('float32', True, 'float32', False, 'float32', False),
    ('float32', True, 'int32', True, 'float32', True),
    ('float32', True, 'float32', True, 'float32', True),
]


class _Val:
    def __init__(self, dtype, weak):
        self.dtype = np.dtype(dtypes.bfloat16 if dtype == "bfloat16" else dtype)
        self.weak_type = weak


@pytest.mark.parametrize("a,wa,b,wb,want,want_weak", JAX_PROMOTION)
def test_promotion_matches_jax(a, wa, b, wb, want, want_weak):
    d, w = dtypes.result_type(_Val(a, wa), _Val(b, wb), return_weak_type_flag=True)
    assert (d.name, w) == (want, want_weak)


def test_python_scalars_are_weak():
    assert dtypes.result_type(1, return_weak_type_flag=True) == (np.dtype("int32"), True)
    assert dtypes.result_type(1.0, return_weak_type_flag=True) == (np.dtype("float32"), True)
    assert dtypes.result_type(True, return_weak_type_flag=True) == (np.dtype("bool"), False)
    assert dtypes.result_type(_Val("int8", False), 1) == np.dtype("int8")
    assert dtypes.result_type(_Val("int8", False), 1.0) == np.dtype("float32")
    assert dtypes.result_type(_Val("float16", False), 1.0) == np.dtype("float16")


def test_x64_flag_canonicalises():
    assert dtypes.canonicalize_dtype(np.int64) == np.dtype("int32")
    assert dtypes.canonicalize_dtype(np.float64) == np.dtype("float32")
    assert dtypes.canonicalize_dtype(np.uint64) == np.dtype("uint32")
    config.update("jax_enable_x64", True)
    try:
        assert dtypes.canonicalize_dtype(np.int64) == np.dtype("int64")
        assert dtypes.result_type(1.0) == np.dtype("float64")
        assert dtypes.result_type(_Val("uint32", False), _Val("int32", False)) == np.dtype("int64")
        assert dtypes.result_type(np.dtype("float64"), np.dtype("int64")) == np.dtype("float64")  # not float(0)
    finally:
        config.update("jax_enable_x64", False)


def test_bad_dtypes():
    with pytest.raises(TypeError):
        dtypes.canonicalize_dtype(np.dtype("U3"))
    assert dtypes.canonicalize_dtype(np.complex128) == np.complex64  # (x64 off)
    with pytest.raises(AttributeError, match="Unrecognized config option"):
        config.update("jax_enable_x46", True)
