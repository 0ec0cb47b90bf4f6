"""DLPack both ways: xjax arrays into NumPy (zero-copy, read-only) and any producer into xjax
(xjax.dlpack.from_dlpack, jnp.from_dlpack), every dtype; GPU producers (CuPy, PyTorch) where a GPU is.

What NumPy cannot take (bfloat16) was recorded from JAX 0.10.2: JAX exports bfloat16 as DLPack's
bfloat16, which np.from_dlpack refuses with RuntimeError('Unsupported dtype in DLTensor.'), and
NumPy refuses to export an ml_dtypes bfloat16 array (BufferError), so JAX cannot import one.
"""
import ml_dtypes
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src import platforms
from xjax._src.config import config
from xjax._src.dlpack import Capsule, _dtype_field

HAS_GPU = "cuda" in platforms.backends()
needs_gpu = pytest.mark.skipif(not HAS_GPU, reason="needs a GPU and CuPy")
BF16 = np.dtype(ml_dtypes.bfloat16)
NUMPY_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
                "float32", "float64"]


@pytest.fixture
def x64():
    config.update("jax_enable_x64", True)
    yield
    config.update("jax_enable_x64", False)


def sample(dtype, shape=(2, 3)):
    return (np.arange(int(np.prod(shape))).reshape(shape) % 3).astype(dtype)


class Producer:
    """A foreign DLPack producer over a capsule maker (as a library other than NumPy would be)."""

    def __init__(self, make, device=(1, 0), legacy=False):
        self.make, self.device, self.legacy, self.calls = make, device, legacy, []

    def __dlpack__(self, stream=None, **kwargs):
        self.calls.append(dict(stream=stream, **kwargs))
        if self.legacy and kwargs:
            raise TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")
        return self.make(stream=stream, **kwargs)

    def __dlpack_device__(self):
        return self.device


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_numpy_views_xjax_arrays_and_back(x64, dtype):
    host = sample(dtype)
    x = jnp.asarray(host)
    view = np.from_dlpack(x)
    assert view.dtype == dtype and not view.flags.writeable and np.shares_memory(view, x._numpy())
    np.testing.assert_array_equal(view, host)
    back = xjax.dlpack.from_dlpack(view)  # copied into the runtime (see the module docstring of _src/dlpack.py)
    assert type(back) is xjax.Array and back.dtype == dtype
    np.testing.assert_array_equal(np.asarray(back), host)
    np.testing.assert_array_equal(np.asarray(jnp.from_dlpack(host)), host)


def test_bfloat16_goes_as_dlpack_bfloat16():
    x = jnp.asarray(sample(BF16))
    capsule = x.__dlpack__(max_version=(1, 0))
    code, bits = _dtype_field(capsule)
    assert (code.value, bits.value) == (4, 16)  # kDLBfloat, 16 bits
    with pytest.raises(RuntimeError, match=r"^Unsupported dtype in DLTensor\.$"):  # NumPy, as with JAX
        np.from_dlpack(x)
    for max_version in (None, (1, 0)):  # a foreign producer handing xjax's capsule back: bfloat16 arrives
        foreign = Producer(lambda stream, **kw: x.__dlpack__(**kw), legacy=max_version is None)
        got = xjax.dlpack.from_dlpack(foreign)
        assert got.dtype == BF16 and got is not x
        np.testing.assert_array_equal(np.asarray(got), sample(BF16))
    with pytest.raises(BufferError, match="DLPack only supports signed/unsigned integers, float and complex"):
        xjax.dlpack.from_dlpack(sample(BF16))  # NumPy's own refusal to export, as with JAX


def test_xjax_arrays_import_as_themselves():
    x = jnp.arange(4.0)
    assert xjax.dlpack.from_dlpack(x) is x and jnp.from_dlpack(x) is x
    assert xjax.dlpack.from_dlpack(x, copy=False) is x
    c = xjax.dlpack.from_dlpack(x, copy=True)
    assert c is not x and c.tolist() == x.tolist()
    assert xjax.dlpack.from_dlpack(x, device=xjax.devices("cpu")[0]) is x


def test_foreign_producers():
    host = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    legacy = Producer(lambda stream, **kw: host.__dlpack__(), legacy=True)  # pre-1.0: no max_version
    np.testing.assert_array_equal(np.asarray(xjax.dlpack.from_dlpack(legacy)), host)
    assert legacy.calls == [{"stream": None, "max_version": (1, 0)}, {"stream": None}]
    strided = host[:, ::2]  # JAX refuses non-compact strides (UNIMPLEMENTED); xjax copies them
    np.testing.assert_array_equal(np.asarray(xjax.dlpack.from_dlpack(strided)), strided)
    for shape in ((), (0, 3)):
        got = xjax.dlpack.from_dlpack(np.zeros(shape, np.int16))
        assert got.shape == shape and got.dtype == np.int16
    assert xjax.dlpack.from_dlpack(np.arange(3)).dtype == np.int32  # canonicalised (x64 off), as JAX


def test_refusals():
    with pytest.raises(TypeError) as info:
        xjax.dlpack.from_dlpack(object())
    assert str(info.value) == "The array passed to from_dlpack must have __dlpack__ and __dlpack_device__ methods."
    with pytest.raises(TypeError, match=r"^Array passed to from_dlpack is on unsupported device type \(DLDeviceType: "
                                        r"7, array: "):
        xjax.dlpack.from_dlpack(Producer(None, device=(7, 0)))
    with pytest.raises(BufferError, match=r"copy=False\): xjax copies DLPack data into its own buffers"):
        xjax.dlpack.from_dlpack(np.ones(2), copy=False)
    with pytest.raises(ValueError, match=r"from_dlpack: device must be None or one of xjax.devices\(\)"):
        xjax.dlpack.from_dlpack(np.ones(2), device="cpu")
    assert xjax.dlpack.is_supported_dtype("bfloat16") and xjax.dlpack.is_supported_dtype(np.uint64)
    assert xjax.dlpack.is_supported_dtype(np.complex64) and not xjax.dlpack.is_supported_dtype(np.str_)
    z = np.array([1 + 2j, -3j], np.complex64)
    np.testing.assert_array_equal(np.asarray(xjax.dlpack.from_dlpack(z)), z)
    np.testing.assert_array_equal(np.from_dlpack(xjax.dlpack.from_dlpack(z)), z)
    with pytest.raises(TypeError, match="Expected a string or dtype-like object"):
        xjax.dlpack.is_supported_dtype(None)


@pytest.mark.skipif(HAS_GPU, reason="this machine has a GPU backend")
def test_gpu_producer_without_a_gpu_backend():
    with pytest.raises(RuntimeError) as info:  # JAX's words where there is no CUDA backend
        xjax.dlpack.from_dlpack(Producer(None, device=(2, 0)))
    assert str(info.value) == "Unknown backend cuda. Available backends are ['cpu']"
    with pytest.raises(RuntimeError) as info:  # a GPU consumer of a CPU array, as JAX
        jnp.ones(2).__dlpack__(dl_device=(2, 0))
    assert str(info.value) == "Unknown backend cuda. Available backends are ['cpu']"


# ---- a real GPU: CuPy and PyTorch ------------------------------------------------------------------

@needs_gpu
@pytest.mark.parametrize("dtype", ["float32", "int32", "uint8", "bool", "float16", BF16])
def test_cupy_both_ways(dtype):
    import cupy

    gpu = xjax.devices("gpu")[0]
    host = sample(dtype)
    x = xjax.device_put(host, gpu)
    as_bits = host.view(np.uint16) if dtype is BF16 else host
    if dtype is not BF16:  # (CuPy has no bfloat16: CAI has no type string for it)
        np.testing.assert_array_equal(cupy.asarray(x).get(), host)  # __cuda_array_interface__, zero-copy
        np.testing.assert_array_equal(cupy.from_dlpack(x).get(), host)
        back = xjax.dlpack.from_dlpack(cupy.asarray(host))
        assert back.device is gpu and back.dtype == host.dtype
        np.testing.assert_array_equal(np.asarray(back), host)
    got = xjax.dlpack.from_dlpack(x, device=xjax.devices("cpu")[0])
    np.testing.assert_array_equal(np.asarray(got).view(as_bits.dtype), as_bits)
    if dtype is not BF16:  # a CPU array asked for by a GPU consumer goes there (a copy)
        capsule = jnp.asarray(host).__dlpack__(dl_device=(2, 0), max_version=(1, 0))
        np.testing.assert_array_equal(cupy.from_dlpack(Capsule(capsule, (2, 0))).get(), host)
        with pytest.raises(ValueError, match="requires a copy"):
            jnp.asarray(host).__dlpack__(dl_device=(2, 0), copy=False)


@needs_gpu
def test_pytorch_both_ways():
    torch = pytest.importorskip("torch")
    gpu = xjax.devices("gpu")[0]
    t = torch.arange(6, dtype=torch.bfloat16, device="cuda").reshape(2, 3)
    x = xjax.dlpack.from_dlpack(t)
    assert x.device is gpu and x.dtype == BF16 and x.tolist() == [[0, 1, 2], [3, 4, 5]]
    back = torch.from_dlpack(x)
    assert back.dtype == torch.bfloat16 and back.is_cuda and back.tolist() == [[0, 1, 2], [3, 4, 5]]
    f = torch.as_tensor(xjax.device_put(np.ones(3, np.float32), gpu), device="cuda")  # __cuda_array_interface__
    assert f.tolist() == [1.0, 1.0, 1.0]
