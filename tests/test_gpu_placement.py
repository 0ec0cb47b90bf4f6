"""Placement with a GPU as the default device (xjax._src.placement): new arrays are made on it, and
computations on host data alone (Python scalars, NumPy arrays, nothing) run there, as in JAX;
arrays the user put on the CPU keep their computations there.

Runs on the emulated GPU (tests/emulated_cupy.py) everywhere and on a real one where there is one
(the `gpu` fixture), with the default placement set to that GPU for each test.
"""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax._src import platforms
from xjax._src.gpu.gpu_array import GpuArray
from gpu_runtime import gpu  # noqa: F401 - the fixture

CPU = xjax.devices("cpu")[0]


@pytest.fixture
def default_gpu(gpu, monkeypatch):  # noqa: F811 - the fixture
    platforms.placement()  # (settles the CPU's placement first, so that monkeypatch restores it)
    monkeypatch.setattr(platforms, "_placement", gpu)
    return gpu


def on(x, device):
    return type(x) is GpuArray and x.device is device


def test_new_arrays_are_made_on_the_default_gpu(default_gpu):
    made = {"asarray": jnp.asarray(np.arange(6.0).reshape(2, 3)), "array": jnp.array([[1, 2], [3, 4]]),
            "zeros": jnp.zeros((2, 3)), "ones_like": jnp.ones_like(np.ones(3)), "arange": jnp.arange(5),
            "eye": jnp.eye(3), "linspace": jnp.linspace(0.0, 1.0, 5), "full": jnp.full((2,), 7),
            "device_put": xjax.device_put(np.ones(4, np.float32))}
    for name, x in made.items():
        assert on(x, default_gpu), name
    np.testing.assert_array_equal(np.asarray(made["arange"]), np.arange(5))
    np.testing.assert_array_equal(np.asarray(made["eye"]), np.eye(3))
    np.testing.assert_allclose(np.asarray(made["linspace"]), np.linspace(0, 1, 5), rtol=1e-6)
    assert made["arange"].dtype == np.int32 and made["zeros"].dtype == np.float32


def test_computations_on_host_data_run_on_the_default_gpu(default_gpu):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    f = xjax.jit(lambda a, s: jnp.sin(a) * s + a.sum(axis=0))
    got = f(x, 2.0)  # NumPy and a Python scalar: uncommitted, to the default device
    assert on(got, default_gpu)
    np.testing.assert_allclose(np.asarray(got), np.sin(x) * 2 + x.sum(axis=0), rtol=1e-6)
    assert on(xjax.jit(lambda: jnp.ones(3) * 4)(), default_gpu)  # no arguments at all
    assert on(lax.add(1.0, 2.0), default_gpu)  # an eager primitive on scalars
    y = jnp.asarray(x) + 1  # eager on a GPU array and a scalar
    assert on(y, default_gpu) and np.asarray(y).tolist() == (x + 1).tolist()


def test_arrays_put_on_the_cpu_keep_their_computations_there(default_gpu):
    c = xjax.device_put(np.arange(4.0, dtype=np.float32), CPU)
    assert type(c) is not GpuArray and c.device == CPU
    for out in (c * 2, xjax.jit(lambda a: a + 1)(c), jnp.zeros(4, device=CPU), jnp.asarray(np.ones(2), device=CPU)):
        assert type(out) is not GpuArray and out.device == CPU
    mixed = c + jnp.ones(4)  # a GPU operand takes the computation to the GPU (CPU data is copied)
    assert on(mixed, default_gpu) and np.asarray(mixed).tolist() == [1.0, 2.0, 3.0, 4.0]


def test_random_keys_and_samples_live_on_the_default_gpu(default_gpu):
    key = xjax.random.PRNGKey(0)
    sample = xjax.random.normal(key, (1000,))
    assert on(key, default_gpu) and on(sample, default_gpu)
    platforms_cpu = np.asarray(sample)
    assert abs(platforms_cpu.mean()) < 0.15 and 0.85 < platforms_cpu.std() < 1.15


def test_pmap_over_the_default_gpu_runs_as_one_vmapped_program(default_gpu):
    xs = np.arange(10, dtype=np.float32).reshape(1, 10)
    out = xjax.pmap(lambda v: v / lax.psum(v.sum(), "i"), axis_name="i")(xs)
    assert on(out, default_gpu) and out.shape == (1, 10)
    np.testing.assert_allclose(np.asarray(out), xs / xs.sum(), rtol=1e-6)
    with pytest.raises(ValueError, match=r"requires 2 logical devices, but only 1 XLA devices are available"):
        xjax.pmap(lambda v: v)(np.ones((2, 3)))


def test_setting_the_default_device_to_the_cpu_brings_new_arrays_back(default_gpu):
    with xjax.default_device(CPU):
        x = jnp.zeros(3)
    assert type(x) is not GpuArray and x.device == CPU


def test_an_exported_function_runs_on_the_gpu_of_its_arguments(default_gpu):
    from xjax import export

    w = np.arange(4.0, dtype=np.float32)
    f = xjax.jit(lambda a: jnp.tanh(a @ w) + a.sum())
    exp = export.export(f)(xjax.ShapeDtypeStruct((3, 4), jnp.float32))
    back = export.deserialize(exp.serialize())
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    want = np.tanh(x @ w) + x.sum()
    for fn in (exp, back):
        for arg in (x, jnp.asarray(x)):  # NumPy data goes to the default GPU as well
            out = fn.call(arg)
            assert on(out, default_gpu)
            np.testing.assert_allclose(np.asarray(out), want, rtol=1e-5)
    with pytest.raises(ValueError, match=r"argument 0 is f32\[4,3\], the exported function takes f32\[3,4\]"):
        exp.call(jnp.asarray(x.T))


def test_pmap_over_gpu_devices_named_explicitly(gpu):  # noqa: F811 - the fixture
    xs = np.arange(6, dtype=np.float32).reshape(1, 6)  # host data, the default device being the CPU
    out = xjax.pmap(lambda v: v * 2, devices=[gpu])(xs)
    assert on(out, gpu)
    np.testing.assert_array_equal(np.asarray(out), xs * 2)
    with pytest.raises(ValueError, match=r"Got axis_size=2, num_local_devices=1"):
        xjax.pmap(lambda v: v, devices=[gpu])(np.ones((2, 3)))
