"""The C++ runtime through its bindings: buffers, async execution, errors, threads, graphs."""
import contextlib
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from core_util import run_op, to_core, to_numpy
from xjax import _core


def test_roundtrip_all_dtypes_zero_copy_view():
    for dt in ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float16", "float32", "float64"]:
        x = (np.arange(24) % 5).astype(dt).reshape(2, 3, 4)
        a = to_core(x)
        assert a.shape == (2, 3, 4) and a.dtype == dt
        view = to_numpy(a)
        np.testing.assert_array_equal(view, x)
        assert not view.flags.writeable  # arrays are immutable
        assert to_numpy(a).__array_interface__["data"][0] == view.__array_interface__["data"][0]


def test_shapes_up_to_many_dims_and_empty():
    for shape in [(), (0,), (3, 0, 2), (1,) * 9, (2,) * 8]:
        x = np.ones(shape, np.float32)
        np.testing.assert_array_equal(to_numpy(to_core(x)), x)


def test_bad_buffers_raise():
    with pytest.raises(ValueError, match="bytes"):
        _core.Array.from_buffer(np.zeros(3, np.uint8), (2,), "float32")
    with pytest.raises(ValueError, match="unsupported dtype"):
        _core.Array.from_buffer(np.zeros(4, np.uint8), (1,), "complex32")
    with pytest.raises(ValueError, match="complex64.* needs 8"):
        _core.Array.from_buffer(np.zeros(4, np.uint8), (1,), "complex64")
    with pytest.raises(ValueError, match="C-contiguous"):
        _core.Array.from_buffer(np.zeros((4, 4), np.uint8)[:, ::2], (8,), "uint8")
    with pytest.raises(ValueError, match="unknown op"):
        _core.compile_op("no_such_op", [], {})


def queued_failing_array():
    """A 0-d float32 whose queued computation fails: it needs an intermediate of 2^62 bytes (the
    largest size allowed, which no machine can allocate), so the error comes from a real kernel path
    and the work is too large to run inline: the failure shows at wait, not at run."""
    g = _core.Graph()
    p = g.parameter((), "float32")
    (big,) = g.add("broadcast_in_dim", [p], {"shape": [1 << 60], "broadcast_dimensions": []})
    (n,) = g.add("neg", [big], {})
    (s,) = g.add("reduce_sum", [n], {"axes": [0]})
    g.set_outputs([s])
    (out,) = _core.compile(g, fuse=False).run([_core.Array.from_scalar(1.0, "float32")])
    return out


def test_failed_computation_raises_at_wait_and_propagates():
    bad = queued_failing_array()
    with pytest.raises(MemoryError, match="cannot allocate 4611686018427387904 bytes"):
        bad.wait()
    # A consumer of a failed value fails the same way (when it runs or when waited), without crashing.
    exe = _core.compile_op("neg", [((), "float32")], {})
    with pytest.raises(MemoryError, match="cannot allocate"):
        (out,) = exe.run([bad])
        out.wait()
    pending = queued_failing_array()  # maybe still queued: the consumer is queued too
    with pytest.raises(MemoryError, match="cannot allocate"):
        (out,) = exe.run([pending])
        out.wait()


def test_failing_host_callback_fails_its_computation():
    def boom(args):
        raise RuntimeError("kernel exploded")

    cid = _core.register_callback(boom)
    try:
        g = _core.Graph()
        p = g.parameter((), "float32")
        g.add("host_callback", [p], {"callback_id": cid})
        (n,) = g.add("neg", [p], {})
        g.set_outputs([n])
        with pytest.raises(RuntimeError, match="kernel exploded"):
            (out,) = _core.compile(g).run([_core.Array.from_scalar(1.0, "float32")])
            out.wait()
    finally:
        _core.unregister_callback(cid)


def test_executable_checks_arguments():
    exe = _core.compile_op("neg", [((3,), "float32")], {})
    with pytest.raises(ValueError, match=r"argument 0 should be float32\(3,\), got int32\(3,\)"):
        exe.run([to_core(np.zeros(3, np.int32))])
    with pytest.raises(ValueError, match="expected 1 arguments"):
        exe.run([])


def test_large_op_is_queued_and_waited():
    x = np.arange(1 << 22, dtype=np.float32)
    exe = _core.compile_op("neg", [(x.shape, "float32")], {})
    (out,) = exe.run([to_core(x)])
    out.wait()
    assert out.is_ready()
    np.testing.assert_array_equal(to_numpy(out), -x)
    _core.synchronize()


@contextlib.contextmanager
def _ticker(period):
    """A thread that counts ticks every `period` seconds while the block runs: yields the count's list."""
    ticks, stop = [], threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(period)

    t = threading.Thread(target=tick)
    t.start()
    try:
        yield ticks
    finally:
        stop.set()
        t.join()


def test_wait_releases_the_gil():
    x = np.ones(1 << 24, dtype=np.float32)
    exe = _core.compile_op("exp", [(x.shape, "float32")], {})
    with _ticker(0.0005) as ticks:
        for _ in range(5):
            (out,) = exe.run([to_core(x)])
            out.wait()
    assert len(ticks) > 3


def test_a_long_jitted_run_releases_the_gil():
    # A run that is not brief (here 2**21 elements, run at once on the calling thread) lets other
    # Python threads run meanwhile: a ticker advances during the one call.
    import xjax
    import xjax.numpy as jnp

    def chain(x):
        for _ in range(30):
            x = jnp.sin(x) * 1.25
        return x

    f = xjax.jit(chain)
    x = jnp.ones(1 << 21)
    f(x).block_until_ready()
    f(x).block_until_ready()  # (installed in the C++ call path)
    with _ticker(0.0002) as ticks:
        time.sleep(0.01)
        hits, before = f._fast_hits, len(ticks)
        f(x).block_until_ready()
        during = len(ticks) - before
    assert f._fast_hits == hits + 1
    assert during > 3


def test_graph_with_several_ops():
    g = _core.Graph()
    a = g.parameter((3,), "float32")
    b = g.parameter((3,), "float32")
    (c,) = g.add("mul", [a, b], {})
    (d,) = g.add("neg", [c], {})
    g.set_outputs([d, c])
    assert g.type(d) == ((3,), "float32")
    exe = _core.compile(g)
    x = np.array([1, 2, 3], np.float32)
    outs = exe.run([to_core(x), to_core(x)])
    np.testing.assert_array_equal(to_numpy(outs[0]), -x * x)
    np.testing.assert_array_equal(to_numpy(outs[1]), x * x)
    with pytest.raises(ValueError, match="does not exist"):
        g.add("neg", [(99, 0)], {})


def test_thread_count_from_environment():
    code = "from xjax import _core; print(_core.num_threads())"
    env = dict(os.environ, XJAX_NUM_THREADS="3")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "3"


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity here")
def test_default_thread_count_is_the_cpus_the_process_may_use():
    # An MPI launcher binding each process to one core (or a container's cpuset): one thread, not
    # one per CPU of the machine time-sharing that core.
    env = {k: v for k, v in os.environ.items() if k != "XJAX_NUM_THREADS"}
    mine = sorted(os.sched_getaffinity(0))
    for cpus in ({mine[0]}, set(mine)):
        code = f"import os; os.sched_setaffinity(0, {cpus!r}); from xjax import _core; print(_core.num_threads())"
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        assert out.stdout.strip() == str(len(cpus)), (cpus, out.stdout)


def test_run_op_helper_matches_numpy():
    (out,) = run_op("add", np.float32([1, 2]), np.float32([3, 4]))
    np.testing.assert_array_equal(out, [4, 6])
