"""pmap over CPU devices (XJAX_NUM_CPU_DEVICES / jax_num_cpu_devices), against NumPy and vmap.

The number of devices is fixed at their first use, so tests with several devices run in a
subprocess with XJAX_NUM_CPU_DEVICES set; it imports the xjax under test.
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(xjax.__file__)))
TESTS_DIR = os.path.dirname(os.path.abspath(__file__))


def run_script(code, **env):
    """Runs code in a fresh interpreter with the given environment; returns its stdout."""
    full_env = dict(os.environ, PYTHONPATH=os.pathsep.join([PYTHON_DIR, TESTS_DIR]), **env)
    full_env.pop("JAX_NUM_CPU_DEVICES", None)
    res = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=full_env,
                         timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


def test_every_collective_over_three_devices():
    out = run_script("""
        import numpy as np, xjax
        from test_collectives import CASES, X, N
        assert len(xjax.devices()) == N
        for name, (fun, ref) in sorted(CASES.items()):
            got = xjax.pmap(fun, axis_name="i")(X)
            want = ref(X)
            assert got.shape == want.shape, (name, got.shape, want.shape)
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6, err_msg=name)
            again = xjax.pmap(fun, axis_name="i", in_axes=2)(np.moveaxis(X, 0, 2))
            np.testing.assert_allclose(np.asarray(again), want, rtol=1e-5, atol=1e-6, err_msg=name)
        print("ok", len(CASES))
        """, XJAX_NUM_CPU_DEVICES="3")
    assert out.split() == ["ok", "16"]


def test_pmap_over_two_devices():
    out = run_script("""
        import numpy as np, xjax, xjax.numpy as jnp
        from xjax import lax
        devs = xjax.devices()
        print(devs, [d.num_threads for d in devs], xjax.device_count(), xjax.local_device_count())
        x = np.arange(12, dtype=np.float32).reshape(2, 6)

        # a chain of stages: compiled runs with collectives between them
        def f(v):
            s = lax.psum(v * 2.0, "i")
            m = lax.pmax(jnp.sin(v) + s, "i")
            return jnp.tanh(m) * lax.axis_index("i") + lax.ppermute(v, "i", [(0, 1), (1, 0)])
        np.testing.assert_allclose(np.asarray(xjax.pmap(f, axis_name="i")(x)),
                                   np.asarray(xjax.vmap(f, axis_name="i")(x)), rtol=1e-6)
        s = 2 * x.sum(0)
        m = np.max(np.sin(x) + s, 0)
        np.testing.assert_allclose(np.asarray(xjax.pmap(f, axis_name="i")(x)),
                                   np.tanh(m) * np.arange(2)[:, None] + x[::-1], rtol=1e-5)

        # static_broadcasted_argnums: hashable Python values given to every shard; a new value retraces
        g = xjax.pmap(lambda v, k, w: v * k + w, static_broadcasted_argnums=(1,))
        np.testing.assert_allclose(np.asarray(g(x, 3.0, x)), x * 3 + x)
        np.testing.assert_allclose(np.asarray(g(x, 2.0, x)), x * 2 + x)

        # in_axes / out_axes, pytrees, kwargs (mapped along 0), unmapped arguments
        h = xjax.pmap(lambda d, c: {"s": d["a"] + c, "t": d["b"].sum()}, in_axes=({"a": 1, "b": 0}, None),
                      out_axes={"s": 1, "t": None})
        out = h({"a": x.T, "b": x}, np.float32(10))
        np.testing.assert_allclose(np.asarray(out["s"]), x.T + 10)
        assert float(out["t"]) == x[0].sum()
        k = xjax.pmap(lambda v, *, w: v - w)
        np.testing.assert_allclose(np.asarray(k(x, w=x[::-1])), x - x[::-1])
        r = xjax.pmap(lambda v: (v, 3.0), out_axes=(-1, 0))(x)
        assert r[0].shape == (6, 2) and np.asarray(r[1]).tolist() == [3.0, 3.0]

        # a collective inside a nested jit, and inside an inner (anonymous) vmap
        inner = xjax.jit(lambda v: lax.psum(v, "i") / 2)
        np.testing.assert_allclose(np.asarray(xjax.pmap(lambda v: inner(v) + 1, axis_name="i")(x)),
                                   np.broadcast_to(x.mean(0) + 1, x.shape))
        vm = xjax.pmap(lambda v: xjax.vmap(lambda e: lax.psum(e, "i"))(v), axis_name="i")
        np.testing.assert_allclose(np.asarray(vm(x)), np.broadcast_to(x.sum(0), x.shape))

        # grad inside pmap; pmap under jit and grad (a jit of a shard_map, as in JAX)
        gp = xjax.pmap(xjax.grad(lambda v: lax.psum((v * v).sum(), "i")), axis_name="i")
        np.testing.assert_allclose(np.asarray(gp(x)), 2 * x * 2)
        jp = xjax.jit(xjax.pmap(lambda v: lax.psum(v, "i"), axis_name="i"))
        np.testing.assert_allclose(np.asarray(jp(x)), np.broadcast_to(x.sum(0), x.shape))

        # collectives over the pmap axis and an inner vmap's axis at once
        y = x.reshape(2, 3, 2)
        both = xjax.pmap(xjax.vmap(lambda v: (lax.psum(v, ("i", "j")), lax.axis_index(("i", "j")),
                                              lax.all_gather(v, ("i", "j"))), axis_name="j"), axis_name="i")
        s, ai, ag = both(y)
        np.testing.assert_allclose(np.asarray(s), np.broadcast_to(y.sum((0, 1)), y.shape))
        np.testing.assert_array_equal(np.asarray(ai), np.arange(6).reshape(2, 3))
        np.testing.assert_allclose(np.asarray(ag), np.broadcast_to(y.reshape(6, 2), (2, 3, 6, 2)))
        print("ok")
        """, XJAX_NUM_CPU_DEVICES="2", XJAX_NUM_THREADS="2")
    assert out.splitlines() == ["[CpuDevice(id=0), CpuDevice(id=1)] [1, 1] 2 2", "ok"]


def test_pmap_errors_over_two_devices():
    out = run_script("""
        import numpy as np, xjax
        def err(f, *args, **kw):
            try:
                f(*args, **kw)
            except Exception as e:
                print(type(e).__name__ + ": " + str(e).splitlines()[0])
        x = np.ones((2, 3), np.float32)
        err(xjax.pmap(lambda v: v), np.ones((3, 2), np.float32))
        err(xjax.pmap(lambda v, w: v + w), x, np.ones((1, 3), np.float32))
        err(xjax.pmap(lambda v: v, in_axes=(0, 0)), x)
        err(xjax.pmap(lambda v: v, in_axes=[[0, 0]]), x)
        err(xjax.pmap(lambda v: v, in_axes=2), x)
        err(xjax.pmap(lambda v: v, in_axes=None), x)
        err(xjax.pmap(lambda v: v, out_axes=2), x)
        err(xjax.pmap(lambda v: v, devices=xjax.devices()[:1]), x)
        err(xjax.pmap(lambda v, s: v, static_broadcasted_argnums=1), x, [1])
        err(xjax.pmap(lambda v: xjax.lax.psum(v, "j"), axis_name="i"), x)
        """, XJAX_NUM_CPU_DEVICES="2")
    assert out.splitlines() == [
        "ValueError: compiling computation that requires 3 logical devices, but only 2 XLA devices are available "
        "(num_replicas=3)",
        "ValueError: pmap got inconsistent sizes for array axes to be mapped:",
        "ValueError: pmap in_axes must be an int, None, or a tuple of entries corresponding to the positional "
        "arguments passed to the function, but got len(in_axes)=2, len(args)=1",
        "ValueError: pmap in_axes specification must be a tree prefix of the corresponding value; ",
        "ValueError: pmap was requested to map its argument along axis 2, which implies that its rank should be at "
        "least 3, but is only 2 (its shape is (2, 3))",
        "ValueError: pmap requires at least one argument with a mapped axis.",
        "ValueError: axis 2 is out of bounds for array of dimension 2",
        "ValueError: Leading axis size of input to pmapped function must equal the number of local devices passed to "
        "pmap. Got axis_size=2, num_local_devices=1.",
        "ValueError: Non-hashable static arguments are not supported. An error occurred while trying to hash an "
        "object of type <class 'list'>, [1].",
        "NameError: unbound axis name: j. The following axis names (e.g. defined by pmap or vmap) are available to "
        "collective operations: ['i']",
    ]


def test_number_of_devices_from_config_fixed_at_first_use():
    out = run_script("""
        import xjax
        xjax.config.update("jax_num_cpu_devices", 3)
        print(xjax.devices())
        xjax.config.update("jax_num_cpu_devices", 3)  # unchanged: fine
        try:
            xjax.config.update("jax_num_cpu_devices", 2)
        except RuntimeError as e:
            print(str(e).split(" i.e.")[0])
        print(xjax.config.jax_num_cpu_devices, len(xjax.devices()))
        """)
    assert out.splitlines() == [
        "[CpuDevice(id=0), CpuDevice(id=1), CpuDevice(id=2)]",
        "jax_num_cpu_devices config should be updated before backends are initialized",
        "3 3"]


@pytest.mark.parametrize("text", ["0", "two"])
def test_bad_device_count_in_environment(text):
    out = run_script("""
        import xjax
        try:
            xjax.devices()
        except ValueError as e:
            print(e)
        """, XJAX_NUM_CPU_DEVICES=text)
    assert out.strip() == f"XJAX_NUM_CPU_DEVICES must be a positive integer, got '{text}'"


# ---- one device (this process: the default) --------------------------------------------------------

def test_one_device_gives_vmaps_result():
    from test_collectives import CASES, X

    if len(xjax.devices()) != 1:
        pytest.skip("this process was given several CPU devices")
    for name, (fun, _) in sorted(CASES.items()):
        x = X[:1]
        try:
            want = xjax.vmap(fun, axis_name="i")(x)
        except ValueError:  # shapes made for 3 shards
            continue
        got = xjax.pmap(fun, axis_name="i")(x)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), err_msg=name)


def test_one_device_pmap_of_a_compiled_chain():
    x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(1, 4, 6)
    w = np.linspace(0, 1, 36, dtype=np.float32).reshape(6, 6)
    f = lambda v: jnp.tanh(jnp.tanh(v @ w) @ w) + lax.psum(v, "i")  # noqa: E731
    got = xjax.pmap(f, axis_name="i")(x)
    assert isinstance(got, xjax.Array) and got.shape == (1, 4, 6)
    assert got.sharding.spec == xjax.P("i") and list(got.sharding.mesh.devices.flat) == xjax.devices()[:1]
    want = np.tanh(np.tanh(x[0] @ w) @ w) + x[0]
    np.testing.assert_allclose(np.asarray(got)[0], want, rtol=1e-5, atol=1e-6)
    assert repr(xjax.devices()[0]) == "CpuDevice(id=0)" and str(xjax.devices()[0]) == "cpu:0"


def test_pmapped_function_wraps_fun_and_keeps_its_own_path():
    # The pmapped function is pmap's C++ table (a PmapCalls subclass) given fun's name, docs and
    # __wrapped__; its Python path is its own even when fun is itself a pmapped function (whose
    # __dict__ update_wrapper copies).
    def add_one(v):
        """Adds one."""
        return v + 1

    inner = xjax.pmap(add_one)
    outer = xjax.pmap(inner)
    assert (inner.__name__, inner.__doc__, inner.__wrapped__) == ("add_one", "Adds one.", add_one)
    assert outer.__wrapped__ is inner and outer._call_slow is not inner._call_slow
    x = np.arange(3, dtype=np.float32).reshape(1, 1, 3)
    np.testing.assert_array_equal(np.asarray(outer(x)), x + 1)
    assert outer._fast_calls.hits == 0  # (one process: pmap's C++ table holds nothing)


def test_collective_inside_control_flow_of_one_device():
    x = np.arange(4, dtype=np.float32).reshape(1, 4) - 1
    f = lambda v: lax.cond(v.sum() > 0, lambda u: lax.psum(u, "i") * 2, lambda u: u, v)  # noqa: E731
    np.testing.assert_allclose(np.asarray(xjax.pmap(f, axis_name="i")(x)), x * 2)
