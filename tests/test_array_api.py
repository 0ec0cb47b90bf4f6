"""xjax.numpy as a Python array API 2024.12 namespace: version and inspection info, the Array's
__array_namespace__/to_device/DLPack methods and device= arguments (values recorded from JAX 0.10.2)."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src.config import config

CPU = xjax.devices()[0]


def test_version_and_namespace():
    assert jnp.__array_api_version__ == "2024.12"
    x = jnp.arange(3.0)
    assert x.__array_namespace__() is jnp
    assert x.__array_namespace__(api_version="2024.12") is jnp
    with pytest.raises(ValueError, match=r"api_version='2023.12' is not available; available versions are: "
                                         r"\['2024.12'\]"):
        x.__array_namespace__(api_version="2023.12")
    out = xjax.jit(lambda t: t.__array_namespace__().sin(t))(x)  # tracers too
    np.testing.assert_allclose(np.asarray(out), np.sin(np.arange(3.0)), rtol=1e-6)


def test_namespace_info():
    info = jnp.__array_namespace_info__()
    assert info.capabilities() == {"boolean indexing": False, "data-dependent shapes": False, "max dimensions": 64}
    assert info.default_device() is None
    assert info.devices() == [None, CPU]
    want = {"real floating": np.dtype("float32"), "complex floating": np.dtype("complex64"),
            "integral": np.dtype("int32"), "indexing": np.dtype("int32")}
    assert info.default_dtypes() == want and info.default_dtypes(device=CPU) == want
    assert set(info.dtypes()) == {"bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float32",
                                  "complex64"}  # (as JAX 0.10.2)
    assert set(info.dtypes(kind="integral")) == {"int8", "int16", "int32", "uint8", "uint16", "uint32"}
    assert info.dtypes(kind=("bool", "real floating")) == {"bool": np.dtype(bool), "float32": np.dtype("float32")}
    assert set(info.dtypes(kind="signed integer")) == {"int8", "int16", "int32"}
    assert info.dtypes(kind="complex floating") == {"complex64": np.dtype("complex64")}
    with pytest.raises(ValueError, match="Unrecognized kind: 'bogus'"):
        info.dtypes(kind="bogus")
    config.update("jax_enable_x64", True)
    try:
        assert info.default_dtypes()["integral"] == np.int64 and info.default_dtypes()["real floating"] == np.float64
        assert {"int64", "uint64", "float64", "complex128"} <= set(info.dtypes())
    finally:
        config.update("jax_enable_x64", False)


def test_to_device_and_device_property():
    x = jnp.ones(3)
    assert str(x.device) == "cpu:0" and repr(x.device) == "CpuDevice(id=0)"
    assert x.to_device(CPU) is x and x.to_device(x.device) is x
    with pytest.raises(ValueError, match=r"to_device: device must be None or one of xjax.devices\(\)"):
        x.to_device("cpu")
    with pytest.raises(ValueError, match="no streams"):
        x.to_device(CPU, stream=1)


@pytest.mark.parametrize("name, call", [
    ("zeros", lambda d: jnp.zeros(2, device=d)),
    ("ones", lambda d: jnp.ones(2, device=d)),
    ("empty", lambda d: jnp.empty(2, device=d)),
    ("full", lambda d: jnp.full(2, 3.0, device=d)),
    ("zeros_like", lambda d: jnp.zeros_like(jnp.ones(2), device=d)),
    ("ones_like", lambda d: jnp.ones_like(jnp.ones(2), device=d)),
    ("empty_like", lambda d: jnp.empty_like(jnp.ones(2), device=d)),
    ("full_like", lambda d: jnp.full_like(jnp.ones(2), 3.0, device=d)),
    ("arange", lambda d: jnp.arange(2, device=d)),
    ("linspace", lambda d: jnp.linspace(0, 1, 2, device=d)),
    ("eye", lambda d: jnp.eye(2, device=d)),
    ("astype", lambda d: jnp.astype(jnp.ones(2), jnp.int32, device=d)),
    ("astype", lambda d: jnp.ones(2).astype(jnp.int32, device=d)),
    ("from_dlpack", lambda d: jnp.from_dlpack(np.ones(2), device=d)),
    ("array", lambda d: jnp.array([1.0, 2.0], device=d)),
    ("asarray", lambda d: jnp.asarray([1.0, 2.0], device=d)),
])
def test_device_arguments(name, call):
    for device in (None, CPU, jnp.ones(1).device):
        assert call(device).device == CPU
    with pytest.raises(ValueError, match=rf"{name}: device must be None or one of xjax.devices\(\) "
                                         r"\(\[CpuDevice\(id=0\)\]\), got 'cpu'"):
        call("cpu")


def _consumer(capsule):
    """An object handing out a ready-made capsule, to import what __dlpack__ returned."""
    class Holder:
        def __dlpack__(self, **kwargs):
            return capsule

        def __dlpack_device__(self):
            return (1, 0)

    return Holder()


@pytest.mark.parametrize("dtype", ["float32", "int8", "uint16", "bool", "float16", "int16"])
def test_numpy_imports_through_dlpack(dtype):
    x = jnp.asarray(np.arange(6).reshape(2, 3) % 3, dtype=dtype)
    got = np.from_dlpack(x)
    np.testing.assert_array_equal(got, np.asarray(x))
    assert got.dtype == x.dtype


def test_dlpack_versions_and_copies():
    x = jnp.arange(6.0).reshape(2, 3)[:, 1:]
    assert x.__dlpack_device__() == (1, 0)
    view = np.from_dlpack(x)  # NumPy asks for DLPack 1.0: a read-only view of the buffer
    assert not view.flags.writeable and np.shares_memory(view, x._numpy())
    copied = np.from_dlpack(x, copy=True)
    assert copied.flags.writeable and not np.shares_memory(copied, x._numpy())
    legacy = np.from_dlpack(_consumer(x.__dlpack__()))  # a pre-1.0 consumer: a copy
    np.testing.assert_array_equal(legacy, np.asarray(x))
    assert not np.shares_memory(legacy, x._numpy())
    cap = x.__dlpack__(stream=None, max_version=(1, 0), dl_device=(1, 0), copy=False)
    np.testing.assert_array_equal(np.from_dlpack(_consumer(cap)), np.asarray(x))


@pytest.mark.parametrize("kwargs, match", [
    ({"stream": 1}, "takes stream=None"),
    ({"dl_device": (7, 0)}, r"cannot export to dl_device=\(7, 0\)"),  # (a CUDA one: test_dlpack.py)
    ({"copy": False}, "readonly"),  # a pre-1.0 capsule cannot mark the shared buffer read-only
])
def test_dlpack_refusals(kwargs, match):
    with pytest.raises(BufferError, match=match):
        jnp.ones(3).__dlpack__(**kwargs)


def test_from_dlpack():
    out = jnp.from_dlpack(np.arange(4, dtype=np.int16))
    assert repr(out) == "Array([0, 1, 2, 3], dtype=int16)"
    assert repr(jnp.from_dlpack(jnp.arange(3))) == "Array([0, 1, 2], dtype=int32)"
    with pytest.raises(BufferError, match="copy=False"):
        jnp.from_dlpack(np.arange(3), copy=False)
