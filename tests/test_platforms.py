"""Platforms and devices as JAX has them: xjax.devices(backend), default_backend(), JAX_PLATFORMS /
jax_platforms, and GPU arrays (device_put, printing, conversions).

Messages were recorded from JAX 0.10.2. Platform choice is fixed at the first device query, so
each choice runs in a subprocess. Without a GPU, the GPU plumbing runs against tests/fake_cupy (a
CuPy whose device memory is host memory); tests marked `gpu` need a real one and skip elsewhere.
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src import platforms

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(xjax.__file__)))
FAKE_CUPY_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_cupy")
HAS_GPU = "cuda" in platforms.backends()
needs_no_gpu = pytest.mark.skipif(HAS_GPU, reason="this machine has a GPU backend")
needs_gpu = pytest.mark.skipif(not HAS_GPU, reason="needs a GPU and CuPy")
# Makes the fake CuPy's GPUs count as visible (platforms asks for NVIDIA device files first, as JAX does).
FAKE_VISIBLE = "from xjax._src import platforms; platforms._nvidia_gpu_visible = lambda: True\n"
HINT = " (set JAX_PLATFORMS='' to automatically choose an available backend)"


def run(code, env=None, fake_cupy=False, ok=True, prelude=""):
    """Runs prelude + code in a fresh interpreter (warnings are errors); returns (stdout, stderr)."""
    full_env = {k: v for k, v in os.environ.items() if k not in ("JAX_PLATFORMS", "XJAX_PLATFORMS")}
    full_env.update(env or {})
    path = [PYTHON_DIR] + ([FAKE_CUPY_DIR] if fake_cupy else [])
    full_env["PYTHONPATH"] = os.pathsep.join(path + [full_env.get("PYTHONPATH", "")])
    res = subprocess.run([sys.executable, "-W", "error", "-c", prelude + textwrap.dedent(code)], capture_output=True,
                         text=True, env=full_env, timeout=300)
    if ok:
        assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout, res.stderr


def error_of(code, **kwargs):
    """The last line of the traceback of code that must fail."""
    out, err = run(code, ok=False, **kwargs)
    assert "Traceback" in err, out + err
    return err.strip().splitlines()[-1]


# ---- the CPU-only process this suite runs in -----------------------------------------------------

@needs_no_gpu
def test_cpu_backend_and_jax_messages():
    cpu = xjax.devices()[0]
    assert xjax.devices() == xjax.devices("cpu") == xjax.local_devices(backend="cpu")
    assert xjax.default_backend() == "cpu" and cpu.platform == "cpu" and cpu.device_kind == "cpu"
    assert xjax.device_count("cpu") == xjax.local_device_count("cpu") == len(xjax.devices())
    gpu_msg = ("Unknown backend: 'gpu' requested, but no platforms that are instances of gpu are present. "
               "Platforms present are: cpu")
    for call in (lambda: xjax.devices("gpu"), lambda: xjax.device_count("gpu"),
                 lambda: xjax.local_devices(backend="gpu"), lambda: xjax.local_device_count("gpu")):
        with pytest.raises(RuntimeError) as info:
            call()
        assert str(info.value) == gpu_msg
    for name in ("cuda", "rocm", "tpu", "CPU", "foo"):
        with pytest.raises(RuntimeError) as info:
            xjax.devices(name)
        assert str(info.value) == f"Unknown backend {name}. Available backends are ['cpu']"
    with pytest.raises(RuntimeError, match=r"^Unknown backend foo\. Available"):
        xjax.process_index(backend="foo")


def test_device_put_targets():
    cpu = xjax.devices("cpu")[0]
    x = xjax.device_put(np.arange(3), cpu)
    assert x.device == cpu and xjax.device_put(x) is x and xjax.device_put(x, cpu) is x
    assert repr(xjax.device_put(1.5)) == "Array(1.5, dtype=float32, weak_type=True)"
    for bad in ("cpu", 3):
        with pytest.raises(ValueError) as info:
            xjax.device_put(np.ones(2), bad)
        assert str(info.value) == ("`jax.device_put` only accepts `None`, `jax.sharding.Sharding`, `jax.Device`, "
                                   "`Format`, `jax.memory.Space` or a pytree of these values. Received invalid value: "
                                   f"{bad}")
    with pytest.raises(AttributeError, match="only defined for GPU buffers"):
        jnp.ones(2).__cuda_array_interface__
    assert not hasattr(jnp.ones(2), "__cuda_array_interface__")  # (consumers probe with hasattr)


# ---- platform choice, each in its own process -----------------------------------------------------

SHOW = """
import sys, xjax
print(xjax.default_backend(), xjax.devices(), "cupy" in sys.modules)
"""


@needs_no_gpu
@pytest.mark.parametrize("env", [{}, {"JAX_PLATFORMS": "cpu"}, {"JAX_PLATFORMS": ""}, {"XJAX_PLATFORMS": "cpu"},
                                 {"JAX_PLATFORMS": "cuda,cpu"}, {"JAX_PLATFORMS": "cpu,cuda"}])
def test_cpu_is_chosen_without_a_gpu_and_quietly(env):
    # "cuda,cpu" on a machine with no NVIDIA device gives the CPU, as in JAX (it skips CUDA untried).
    out, err = run(SHOW, env)
    assert out == "cpu [CpuDevice(id=0)] False\n" and err == ""
    out, err = run(SHOW, env, fake_cupy=True)  # a CuPy is installed, but no GPU is visible: not imported
    assert out == "cpu [CpuDevice(id=0)] False\n" and err == ""


@needs_no_gpu
@pytest.mark.parametrize("env", [{"JAX_PLATFORMS": "cuda"}, {"JAX_PLATFORMS": "gpu"}, {"XJAX_PLATFORMS": "cuda"}])
def test_cuda_asked_for_without_a_gpu(env):
    # JAX 0.10.2 fails an assertion here; xjax says why, in the words JAX uses for other platforms.
    assert error_of(SHOW, env=env) == (
        "RuntimeError: Unable to initialize backend 'cuda': no NVIDIA GPU is visible (none of /dev/nvidia0, "
        "/dev/nvidiactl, /dev/dxg exists)" + HINT)


@pytest.mark.parametrize("env, name", [({"JAX_PLATFORMS": "foo"}, "foo"), ({"JAX_PLATFORMS": "cpu,tpu"}, "tpu"),
                                       ({"JAX_PLATFORMS": "CPU"}, "CPU"), ({"XJAX_PLATFORMS": "foo"}, "foo")])
def test_unknown_platform(env, name):
    assert error_of(SHOW, env=env) == (f"RuntimeError: Unable to initialize backend '{name}': Backend '{name}' is "
                                       "not in the list of known backends: ['cpu', 'cuda']." + HINT)


def test_jax_platforms_wins_over_xjax_platforms_and_config_over_both():
    out, _ = run(SHOW, {"JAX_PLATFORMS": "cpu", "XJAX_PLATFORMS": "foo"})
    assert out.startswith("cpu [CpuDevice(id=0)]")
    assert error_of("import xjax; xjax.config.update('jax_platforms', 'foo'); xjax.devices()",
                    env={"JAX_PLATFORMS": "cpu"}).startswith("RuntimeError: Unable to initialize backend 'foo'")


def test_jax_platforms_is_fixed_once_the_backends_started():
    out, _ = run("""
        import xjax
        xjax.devices()
        xjax.config.update("jax_platforms", "foo")  # too late, as in JAX: no effect
        print(xjax.default_backend(), xjax.config.jax_platforms)
    """, env={"JAX_PLATFORMS": "cpu"})
    assert out == "cpu foo\n"


def test_jax_default_device_and_platform_name():
    out, _ = run("""
        import numpy as np, xjax
        xjax.config.update("jax_default_device", "cpu")
        xjax.config.update("jax_platform_name", "cpu")
        print(xjax.device_put(np.ones(2)).device, xjax.default_backend())
    """)
    assert out == "cpu:0 cpu\n"


# ---- GPUs through the fake CuPy -----------------------------------------------------------------

def test_gpu_devices_with_cupy():
    out, err = run("""
        import xjax
        gpus = xjax.devices("gpu")
        assert gpus == xjax.devices("cuda") == xjax.local_devices(backend="gpu")
        print(gpus, [str(d) for d in gpus], gpus[1].device_kind, gpus[0].platform, gpus[0].compute_capability)
        print(xjax.device_count("gpu"), xjax.default_backend(), xjax.devices())
    """, fake_cupy=True, prelude=FAKE_VISIBLE)
    # Unasked for, the GPU is the default backend, as in JAX.
    assert out == ("[CudaDevice(id=0), CudaDevice(id=1)] ['cuda:0', 'cuda:1'] Fake GPU 1 gpu 9.0\n"
                   "2 gpu [CudaDevice(id=0), CudaDevice(id=1)]\n") and err == ""


def test_gpu_is_the_default_device_unless_jax_platforms_lists_cpu_first():
    code = """
        import numpy as np, xjax
        print(xjax.default_backend(), xjax.devices(), xjax.device_put(np.ones(2)).device)
    """
    out, _ = run(code, fake_cupy=True, prelude=FAKE_VISIBLE)
    assert out == "gpu [CudaDevice(id=0), CudaDevice(id=1)] cuda:0\n"
    out, _ = run(code, env={"JAX_PLATFORMS": "cpu,cuda"}, fake_cupy=True, prelude=FAKE_VISIBLE)
    assert out == "cpu [CpuDevice(id=0)] cpu:0\n"


def test_jax_platforms_cuda_makes_the_gpu_the_default():
    out, _ = run("""
        import numpy as np, xjax
        print(xjax.default_backend(), xjax.devices(), xjax.device_put(np.ones(2)).device)
        try:
            xjax.devices("cpu")
        except RuntimeError as e:
            print(e)
    """, env={"JAX_PLATFORMS": "cuda"}, fake_cupy=True, prelude=FAKE_VISIBLE)
    assert out == ("gpu [CudaDevice(id=0), CudaDevice(id=1)] cuda:0\n"
                   "Unknown backend cpu. Available backends are ['cuda']\n")


def test_cuda_failures_with_a_visible_gpu():
    no_driver = "CuPy found no usable GPU: cudaErrorNoDevice: no CUDA-capable device is detected"
    code = "import xjax; xjax.devices()"
    env = {"JAX_PLATFORMS": "cuda,cpu", "FAKE_CUPY_DEVICES": "error"}
    assert error_of(code, env=env, fake_cupy=True, prelude=FAKE_VISIBLE) == (
        f"RuntimeError: Unable to initialize backend 'cuda': {no_driver}" + HINT)
    env = {"JAX_PLATFORMS": "cuda", "FAKE_CUPY_DEVICES": "0"}
    assert error_of(code, env=env, fake_cupy=True, prelude=FAKE_VISIBLE) == (
        "RuntimeError: Unable to initialize backend 'cuda': Backend 'cuda' provides no devices." + HINT)
    env = {"JAX_PLATFORMS": "cuda", "FAKE_CUPY_NVRTC": "missing"}
    assert error_of(code, env=env, fake_cupy=True, prelude=FAKE_VISIBLE) == (
        "RuntimeError: Unable to initialize backend 'cuda': CuPy cannot load NVRTC, which compiles xjax's kernels "
        "(RuntimeError: Failure finding libnvrtc.so); `pip install 'xjax[cuda]'` installs it with CuPy's [ctk] extra"
        + HINT)
    out, err = run("import xjax; print(xjax.default_backend())", env={"FAKE_CUPY_NVRTC": "missing"}, fake_cupy=True,
                   prelude=FAKE_VISIBLE)
    assert out == "cpu\n" and err == ""  # unasked: the CPU, quietly
    # Unasked, a failing CUDA is quiet, and named when asked for by name.
    out, err = run("""
        import xjax
        print(xjax.devices())
        try:
            xjax.devices("gpu")
        except RuntimeError as e:
            print(e)
        try:
            xjax.devices("cuda")
        except RuntimeError as e:
            print(e)
    """, env={"FAKE_CUPY_DEVICES": "error"}, fake_cupy=True, prelude=FAKE_VISIBLE)
    assert out == ("[CpuDevice(id=0)]\n"
                   "Unknown backend: 'gpu' requested, but no platforms that are instances of gpu are present. "
                   "Platforms present are: cpu\n"
                   f"Backend 'cuda' failed to initialize: {no_driver}. Available backends are ['cpu']\n")
    assert err == ""


@pytest.mark.skipif(__import__("importlib").util.find_spec("cupy") is not None, reason="CuPy is installed")
def test_visible_gpu_without_cupy():
    assert error_of("import xjax; xjax.devices()", env={"JAX_PLATFORMS": "cuda"}, prelude=FAKE_VISIBLE) == (
        "RuntimeError: Unable to initialize backend 'cuda': CuPy is not installed; install it with "
        "`pip install 'xjax[cuda]'` (cupy-cuda13x[ctk], or cupy-cuda12x[ctk] for CUDA 12 drivers)" + HINT)


GPU_ARRAYS = FAKE_VISIBLE + """
import numpy as np, pytest, xjax, xjax.numpy as jnp
xjax.config.update("jax_platforms", "cpu,cuda")  # the CPU stays the default: the fake CuPy runs no kernels
gpu0, gpu1 = xjax.devices("gpu")
cpu = xjax.devices("cpu")[0]
"""


def test_gpu_arrays_move_print_and_convert():
    run("""
        import ml_dtypes
        for dt in ["float32", "int8", "uint16", "bool", "float16", ml_dtypes.bfloat16]:
            host = (np.arange(6).reshape(2, 3) % 3).astype(dt)
            x = xjax.device_put(host, gpu0)
            assert type(x).__name__ == "GpuArray" and isinstance(x, jnp.ndarray) and isinstance(x, xjax.Array)
            assert x.device is gpu0 and x.devices() == {gpu0} and x.dtype == host.dtype and x.shape == (2, 3)
            assert repr(x) == repr(jnp.asarray(host)) and str(x) == str(host)
            np.testing.assert_array_equal(np.asarray(x), host)
            back = xjax.device_put(x, cpu)
            assert back.device == cpu and type(back) is xjax.Array
            np.testing.assert_array_equal(np.asarray(back), host)
            other = xjax.device_put(x, gpu1)
            assert other.device is gpu1 and other._buf.device.id == 1
            np.testing.assert_array_equal(np.asarray(other), host)
            assert x.__dlpack_device__() == (2, 0) and other.__dlpack_device__() == (2, 1)
        s = xjax.device_put(2.5, gpu0)
        assert repr(s) == "Array(2.5, dtype=float32, weak_type=True)" and float(s) == 2.5 and f"{s:.1f}" == "2.5"
        assert xjax.device_put(np.float64(1.0), gpu0).dtype == np.float32  # canonicalised, as on the CPU
        x = xjax.device_put(jnp.arange(4), gpu0)
        assert x.to_device(gpu0) is x and xjax.device_put(x, gpu0) is x and jnp.arange(4).to_device(gpu0).device is gpu0
        assert x.block_until_ready() is x and x.is_ready()
        c = x.copy()
        assert c is not x and c.device is gpu0 and c._buf is not x._buf and c.tolist() == [0, 1, 2, 3]
        cai = x.__cuda_array_interface__
        assert cai["shape"] == (4,) and cai["typestr"] == "<i4" and cai["stream"] is None
        with pytest.raises(AttributeError, match="bfloat16"):
            xjax.device_put(np.ones(2, ml_dtypes.bfloat16), gpu0).__cuda_array_interface__
        tree = xjax.device_put({"a": np.ones(2), "b": [1, np.int8(2)]}, gpu0)
        assert {v.device for v in [tree["a"]] + tree["b"]} == {gpu0}
        import cupy
        foreign = xjax.device_put(cupy.asarray(np.arange(3.0)))  # __cuda_array_interface__, kept on its GPU
        assert foreign.device is gpu0 and foreign.dtype == np.float32 and foreign.tolist() == [0.0, 1.0, 2.0]
    """, fake_cupy=True, prelude=GPU_ARRAYS)


def test_creation_functions_place_their_result_on_the_device_asked_for():
    # (Computing on GPU arrays: tests/test_cuda_executor.py, on the emulated runtime.)
    run("""
        made = {"zeros": jnp.zeros(3, device=gpu1), "full": jnp.full((2,), 7, device=gpu1),
                "arange": jnp.arange(4, device=gpu1), "eye": jnp.eye(2, device=gpu1),
                "asarray": jnp.asarray(np.ones(2), device=gpu1), "array": jnp.array([1, 2], device=gpu1),
                "linspace": jnp.linspace(0, 1, 3, device=gpu1), "astype": jnp.ones(2).astype("int8", device=gpu1)}
        for name, x in made.items():
            assert x.device is gpu1, name
        np.testing.assert_array_equal(np.asarray(made["arange"]), [0, 1, 2, 3])
        np.testing.assert_array_equal(np.asarray(made["eye"]), np.eye(2))
        x = jnp.asarray(made["zeros"], device=cpu)
        assert x.device == cpu and np.asarray(x).tolist() == [0, 0, 0]
        with pytest.raises(ValueError, match=r"zeros: device must be None or one of xjax.devices\\(\\) "):
            jnp.zeros(3, device="cuda:0")
    """, fake_cupy=True, prelude=GPU_ARRAYS)


# ---- a real GPU ------------------------------------------------------------------------------------

@needs_gpu
def test_real_gpu_devices_and_round_trip():
    import ml_dtypes

    gpu = xjax.devices("gpu")[0]
    assert gpu.platform == "gpu" and repr(gpu) == "CudaDevice(id=0)" and gpu.device_kind.startswith("NVIDIA")
    for dt in ["float32", "int32", "uint8", "bool", "float16", ml_dtypes.bfloat16]:
        host = (np.arange(12).reshape(3, 4) % 5).astype(dt)
        x = xjax.device_put(host, gpu)
        assert x.device is gpu
        np.testing.assert_array_equal(np.asarray(x), host)
        np.testing.assert_array_equal(np.asarray(xjax.device_put(x, xjax.devices("cpu")[0])), host)
    np.testing.assert_array_equal(np.asarray(xjax.device_put(np.ones(3), gpu) + 1), [2.0, 2.0, 2.0])
