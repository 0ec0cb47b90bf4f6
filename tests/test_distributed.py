"""Multi-process runs: mpirun starts 2 or 3 xjax processes on this machine (over loopback).

The scripts under tests/mpi/ run in every process; each prints "ok ..." when its checks pass.
Skipped where mpi4py or mpirun is missing (pip install ".[distributed]" brings both).
"""
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import _core
from xjax._src.core import ShapedArray

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(xjax.__file__)))
TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
MPIRUN = shutil.which("mpirun", path=os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")]))
HAS_MPI4PY = importlib.util.find_spec("mpi4py") is not None
needs_mpi4py = pytest.mark.skipif(not HAS_MPI4PY, reason="no mpi4py")
needs_mpirun = pytest.mark.skipif(MPIRUN is None or not HAS_MPI4PY, reason="no mpirun or no mpi4py")


def test_one_process_without_initialize():
    assert xjax.process_index() == 0 and xjax.process_count() == 1
    assert xjax.local_devices() == xjax.devices()
    assert [d.process_index for d in xjax.devices()] == [0] * xjax.device_count()
    assert [d.local_hardware_id for d in xjax.devices()] == [d.id for d in xjax.devices()]
    assert xjax.local_devices(process_index=1) == []
    assert not xjax.distributed.is_initialized()


@needs_mpi4py
def test_initialize_in_one_process():
    # MPI's singleton mode: one process is the whole run; initialize's checks and the APIs work.
    code = """
        import numpy as np, pytest, xjax
        from xjax import lax
        from xjax.experimental import multihost_utils as mh
        assert mh.process_allgather(np.arange(3)).shape == (1, 3)  # no launcher: one process, no initialize needed
        with pytest.raises(ValueError, match="collective_timeout must be a positive"):
            xjax.distributed.initialize(collective_timeout=-1)
        with pytest.raises(ValueError, match="num_processes=2, but MPI started 1"):
            xjax.distributed.initialize(num_processes=2)
        with pytest.raises(ValueError, match="process_id=3, but MPI gave this process rank 0"):
            xjax.distributed.initialize(process_id=3)
        with pytest.raises(NotImplementedError, match="XJAX_NUM_CPU_DEVICES"):
            xjax.distributed.initialize(local_device_ids=[0])
        xjax.distributed.initialize(num_processes=1, process_id=0, collective_timeout=5)
        with pytest.raises(RuntimeError, match="should only be called once"):
            xjax.distributed.initialize()
        assert xjax.process_count() == 1 and xjax.distributed.is_initialized()
        out = xjax.pmap(lambda v: lax.psum(v, "i") + lax.axis_index("i"), axis_name="i")(np.ones((2, 3)))
        np.testing.assert_array_equal(out, [[2, 2, 2], [3, 3, 3]])
        np.testing.assert_array_equal(mh.process_allgather(np.arange(3), tiled=True), np.arange(3))
        np.testing.assert_array_equal(mh.broadcast_one_to_all({"a": np.arange(2)})["a"], [0, 1])
        with pytest.raises(ValueError, match="exactly one process must be the source"):
            mh.broadcast_one_to_all(np.arange(2), is_source=False)
        mh.sync_global_devices("x")
        xjax.distributed.shutdown()
        assert not xjax.distributed.is_initialized()
        print("ok")
    """
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR, XJAX_NUM_CPU_DEVICES="2")
    for name in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"):
        env.pop(name, None)
    res = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                         timeout=120)
    assert res.returncode == 0 and res.stdout.split() == ["ok"], res.stdout + res.stderr


def _run_alone(code, **env):
    """Runs `code` in one process without a launcher (MPI's singleton mode); returns its result."""
    full_env = dict(os.environ, PYTHONPATH=PYTHON_DIR, **env)
    for name in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"):
        full_env.pop(name, None)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=full_env, timeout=120)


@needs_mpi4py
def test_mpi_thread_level_below_serialized_is_refused():
    # The core calls MPI from the thread that runs a program: FUNNELED (main thread only) is not enough.
    code = """
        import mpi4py
        mpi4py.rc.thread_level = "funneled"
        import pytest, xjax
        with pytest.raises(RuntimeError, match=r"MPI_THREAD_FUNNELED, but xjax needs MPI_THREAD_SERIALIZED or "
                                               r"MPI_THREAD_MULTIPLE.*mpi4py.rc.thread_level"):
            xjax.distributed.initialize()
        assert not xjax.distributed.is_initialized()
        print("ok")
    """
    res = _run_alone(code)
    assert res.returncode == 0 and res.stdout.split() == ["ok"], res.stdout + res.stderr
    # SERIALIZED is enough.
    res = _run_alone("""
        import mpi4py
        mpi4py.rc.thread_level = "serialized"
        import xjax
        xjax.distributed.initialize()
        print("ok")
    """)
    assert res.returncode == 0 and res.stdout.split() == ["ok"], res.stdout + res.stderr


_SHIM_CODE = """
    import builtins, json, warnings
    import numpy as np, xjax
    from xjax import lax
    from xjax._src import mpi_shim
    from xjax._src import mpi_channel

    real_open = builtins.open
    def guarded_open(file, *args, **kwargs):  # the MPI library is found through mpi4py, not /proc
        assert "/proc/self/maps" not in str(file), file
        return real_open(file, *args, **kwargs)
    builtins.open = guarded_open
    xjax.distributed.initialize(collective_timeout=10)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        installed = mpi_channel.ensure_installed()
    f = xjax.pmap(lambda v: lax.fori_loop(0, 3, lambda i, c: lax.psum(c, "i") + 1, v), axis_name="i")
    np.testing.assert_array_equal(np.asarray(f(np.ones((1, 4), np.float32))), 4)
    print(json.dumps([installed, mpi_shim.describe(), [str(w.message) for w in caught]]))
"""


@needs_mpi4py
def test_mpi_shim_is_built_against_mpi4py_mpi():
    # (The all-reduces run in the core across processes: tests/mpi/in_program.py.)
    res = _run_alone(_SHIM_CODE, XJAX_NUM_CPU_DEVICES="1")
    assert res.returncode == 0, res.stdout + res.stderr
    installed, describe, warnings_ = json.loads(res.stdout)
    assert installed and warnings_ == [], res.stdout + res.stderr
    from mpi4py import MPI  # the shim's mpi.h is that of mpi4py's MPI
    assert describe.startswith("compiled by "), describe
    assert ("against Open MPI" in describe) == MPI.Get_library_version().startswith("Open MPI"), describe


@needs_mpi4py
def test_without_a_working_mpi_compiler_the_collectives_run_from_python():
    res = _run_alone(_SHIM_CODE, XJAX_NUM_CPU_DEVICES="1", XJAX_MPICC="false")
    assert res.returncode == 0, res.stdout + res.stderr
    installed, describe, warnings_ = json.loads(res.stdout)
    assert not installed and describe == "", res.stdout
    assert len(warnings_) == 1 and "the core cannot call MPI (the MPI shim could not be built: false" in warnings_[0], \
        warnings_


def _all_reduce_graph(dtype, signature=b"\0" * 256, reduction="sum"):
    g = _core.Graph()
    x = g.parameter((3,), dtype)
    (y,) = g.add("all_reduce", [x], {"reduction": reduction, "signature": signature})
    g.set_outputs([y])
    return g


def test_core_all_reduce_checks_its_operands_and_needs_mpi():
    with pytest.raises(TypeError, match=r"\[all_reduce\] MPI cannot reduce float16"):
        _all_reduce_graph("float16")
    with pytest.raises(ValueError, match=r"\[all_reduce\] needs a 'signature' attribute of 256 bytes"):
        _all_reduce_graph("float32", signature=b"short")
    with pytest.raises(ValueError, match=r"\[all_reduce\] reduction must be 'sum', 'max' or 'min', got 'prod'"):
        _all_reduce_graph("float32", reduction="prod")
    # Without xjax.distributed.initialize in a multi-process run, the core has no MPI: a clear error.
    exe = _core.compile(_all_reduce_graph("float32"))
    with pytest.raises(RuntimeError, match=r"\[all_reduce\] a collective across processes ran before "
                                           r"xjax.distributed.initialize\(\)"):
        (r,) = exe.run([_core.Array.from_buffer(np.zeros(3, np.float32), (3,), "float32")])
        r.wait()


def test_core_mpi_call_checks_its_arguments():
    # pmap's one-call path (views, run, wait, result Arrays): the core checks what crosses the binding
    exe = _core.compile(_all_reduce_graph("float32"))
    aval = ShapedArray((1, 3), np.dtype(np.float32))
    call = _core.MpiCall(exe, [], [(3,)], [(1, 3)], [aval])
    x = jnp.zeros((1, 3), np.float32)
    with pytest.raises(ValueError, match=r"\[MpiCall\] 2 arguments for 1"):
        call([x, x], 0, 10.0, 2 ** 62)
    with pytest.raises(ValueError, match=r"\[MpiCall\] \(2,\) has 2 elements, \(3,\) needs 3"):
        call([jnp.zeros(2, np.float32)], 0, 10.0, 2 ** 62)
    with pytest.raises(TypeError, match=r"\[MpiCall\] the arguments must be xjax Arrays"):
        call([np.zeros((1, 3), np.float32)], 0, 10.0, 2 ** 62)
    with pytest.raises(ValueError, match=r"\[MpiCall\] no executable"):
        _core.MpiCall(None, [], [None], [None], [aval])
    with pytest.raises(ValueError, match=r"\[MpiCall\] 0 avals for 1 outputs"):
        _core.MpiCall(exe, [], [None], [None], [])
    with pytest.raises(RuntimeError, match=r"\[all_reduce\] a collective across processes ran before"):
        call([x], 0, 10.0, 2 ** 62)


def test_core_pmap_calls_check_their_arguments():
    # pmap's C++ call path across processes (fast_call_pmap.cpp): what crosses the binding is checked,
    # any call it cannot take goes to the wrapper's `_call_slow`, a failed run goes through on_error
    from xjax._src.distributed import state
    from xjax._src.sharded_array import ShardedArray
    exe = _core.compile(_all_reduce_graph("float32"))
    aval = ShapedArray((1, 3), np.dtype(np.float32))
    call = _core.MpiCall(exe, [], [(3,)], [(1, 3)], [aval])
    seen = []

    def on_error(err):
        seen.append(err)
        raise err

    class Calls(_core.fast_call.PmapCalls):
        def _call_slow(self, args, kwargs):
            return "python", args, kwargs

    with pytest.raises(TypeError, match="sharded_array an Array subclass"):
        Calls(state, on_error, int)
    calls = Calls(state, on_error, ShardedArray)
    x = jnp.zeros((1, 3), np.float32)
    one = xjax.tree_util.tree_structure(x)
    assert calls(x) == ("python", (x,), {})  # nothing installed
    with pytest.raises(TypeError, match=r"\[PmapCalls\] install takes \(args tuple, MpiCall"):
        calls.install((x,), call)
    with pytest.raises(ValueError, match=r"\[PmapCalls\] install: 2 leaves, 2 in_shardings for a program of 1 "
                                         r"inputs; 1 out_shardings and 1 avals for 1 outputs"):
        calls.install((x, x), call, [None, None], [None], [aval], one)
    with pytest.raises(TypeError, match=r"\[PmapCalls\] output avals must be ShapedArrays"):
        calls.install((x,), call, [None], [None], [None], one)
    with pytest.raises(ValueError, match=r"out_tree's leaves are not the program's outputs"):
        calls.install((x,), call, [None], [None], [aval], xjax.tree_util.tree_structure((x, x)))
    assert calls.install((np.zeros((1, 3), np.float32),), call, [None], [None], [aval], one) is False
    assert calls.size == 0
    assert calls.install((x,), call, [None], [None], [aval], one) is True and calls.size == 1
    assert calls.install((x,), call, [None], [None], [aval], one) is True and calls.size == 1  # (kept once)
    assert calls(x, k=x) == ("python", (x,), {"k": x})  # keywords: Python's
    y, z = jnp.zeros((1, 4), np.float32), np.zeros((1, 3), np.float32)
    assert calls(y) == ("python", (y,), {})  # another signature
    assert calls(z)[:2] == ("python", (z,))  # not an Array
    with pytest.raises(AttributeError, match="_call_slow"):
        _core.fast_call.PmapCalls(state, on_error, ShardedArray)(x)  # (the base alone has no Python path)
    seq = state.seq
    try:  # (one process: the run has no MPI; the core's error reaches on_error)
        with pytest.raises(RuntimeError, match=r"\[all_reduce\] a collective across processes ran before"):
            calls(x)
    finally:
        state.seq = seq
    assert len(seen) == 1 and calls.hits == 0


def test_core_shared_slots_check_what_they_map():
    # The shared-memory segment (shared_slots.cpp): its name comes from another process, so what it
    # maps is checked -- a name, an existing segment, of xjax's layout, for as many processes.
    from multiprocessing import shared_memory
    name = _core.mpi_shared_create(2)
    try:
        assert re.fullmatch(r"/xjax-\d+-[0-9a-f]{24}", name), name
        with pytest.raises(ValueError, match=r"not a segment name: 'a/b'"):
            _core.mpi_share("a/b", 2, 0)
        with pytest.raises(ValueError, match=r"process 2 of 2"):
            _core.mpi_share(name, 2, 2)
        with pytest.raises(RuntimeError, match=r"cannot open /xjax-none: No such file"):
            _core.mpi_share("/xjax-none", 2, 0)
        with pytest.raises(RuntimeError, match=r"bytes, not the \d+ of 3 processes' slots"):
            _core.mpi_share(name, 3, 0)
        size = os.stat("/dev/shm" + name).st_size
        other = shared_memory.SharedMemory(name="xjax-test-" + name[6:], create=True, size=size)
        try:  # the right size, not made by mpi_shared_create
            with pytest.raises(RuntimeError, match=r"is not a segment of xjax for 2 processes"):
                _core.mpi_share("/" + other.name, 2, 0)
        finally:
            other.close()
            other.unlink()
        assert not _core.mpi_sharing()
        _core.mpi_share(name, 2, 1)
        assert _core.mpi_sharing()
    finally:
        _core.mpi_unshare()
        _core.mpi_shared_unlink(name)
    assert not _core.mpi_sharing() and not os.path.exists("/dev/shm" + name)
    with pytest.raises(ValueError, match=r"cannot hold 0 processes"):
        _core.mpi_shared_create(0)


def _launcher_flags():
    """Open MPI refuses more processes than cores, and root, unless asked; MPICH's mpirun does not."""
    version = subprocess.run([MPIRUN, "--version"], capture_output=True, text=True).stdout
    if "Open MPI" not in version and "OpenRTE" not in version:
        return []
    return ["--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])


def mpirun(np_, script, *args, timeout=120, **env):
    """Runs tests/mpi/<script> in np_ processes (they inherit the environment); returns (exit code,
    output, seconds)."""
    full_env = dict(os.environ, PYTHONPATH=os.pathsep.join([PYTHON_DIR, TESTS_DIR]), XJAX_NUM_THREADS="1", **env)
    full_env.pop("JAX_NUM_CPU_DEVICES", None)
    cmd = [MPIRUN, "-np", str(np_), *_launcher_flags(), sys.executable, os.path.join(TESTS_DIR, "mpi", script), *args]
    start = time.monotonic()
    res = subprocess.run(cmd, capture_output=True, text=True, env=full_env, timeout=timeout)
    return res.returncode, res.stdout + res.stderr, time.monotonic() - start


@needs_mpirun
@pytest.mark.parametrize("processes, devices", [(2, 1), (3, 1), (2, 2)])
def test_collectives_across_processes(processes, devices):
    rc, out, _ = mpirun(processes, "collectives.py", str(devices), XJAX_NUM_CPU_DEVICES=str(devices))
    assert rc == 0, out
    assert out.count("ok 32") == processes, out


FAULTS = {
    # case: what the output must say (a regular expression)
    "raise": r"DistributedError: process 1 failed \(ValueError: a failure on purpose\); process 0 stopped in "
             r"collective #2 \(psum",
    # a killed process: mpirun ends the job and names it, or the others' timeout does
    "kill": r"process rank 1 .*(\n.*)?signal 9|process\(es\) \[1\] did not reach",
    "hang": r"DistributedError: process\(es\) \[1\] did not reach collective #2 \(psum\(axis_name=\('i',\)\) of "
            r"float32\[3\]\) of process 0 within 4 s",
    "shape": r"mismatched collectives across processes: process 0 runs collective #2 psum\(axis_name=\('i',\)\) of "
             r"float32\[3\], process 1 runs collective #2 psum\(axis_name=\('i',\)\) of float32\[4\]",
    "order": r"mismatched collectives across processes: process 0 runs collective #2 psum.*, process 1 runs "
             r"collective #2 all_gather",
    "exit": r"process 0 exited after 1 collective\(s\) while process 1 waits in collective #2",
}


@needs_mpirun
@pytest.mark.parametrize("case", sorted(FAULTS))
@pytest.mark.parametrize("shared", ["1", "0"])  # the processes wait in their shared memory; for MPI messages
def test_a_failing_process_is_named_by_the_others(case, shared):
    # (Array operands: the failing psum runs from pmap's C++ call path; of three processes, NumPy's)
    rc, out, seconds = mpirun(2, "faults.py", case, "arrays", XJAX_COLLECTIVE_TIMEOUT="4", XJAX_MPI_SHARED_MEMORY=shared)
    assert rc != 0, out
    assert re.search(FAULTS[case], out), out
    assert "finished" not in out, out
    assert seconds < 40, (seconds, out)  # the hanging process sleeps 60 s: the timeout ended the job


FAULTS_OF_THREE = {
    # the last of 3 processes misbehaves; process 0 names it (a roll call finds which one is absent)
    "hang": r"DistributedError: process\(es\) \[2\] did not reach collective #2 \(psum\(axis_name=\('i',\)\) of "
            r"float32\[3\]\) of process [01] within 4 s",
    "shape": r"mismatched collectives across processes: process [01] runs collective #2 psum\(axis_name=\('i',\)\) of "
             r"float32\[3\], process 2 runs collective #2 psum\(axis_name=\('i',\)\) of float32\[4\]",
    "raise": r"DistributedError: process 2 failed \(ValueError: a failure on purpose\); process [01] stopped in "
             r"collective #2 \(psum",
}


@needs_mpirun
@pytest.mark.parametrize("case", sorted(FAULTS_OF_THREE))
@pytest.mark.parametrize("devices", [1, 2])  # the psums in the core; from Python
def test_a_failing_process_among_three_is_named(case, devices):
    rc, out, seconds = mpirun(3, "faults.py", case, XJAX_COLLECTIVE_TIMEOUT="4", XJAX_NUM_CPU_DEVICES=str(devices))
    assert rc != 0, out
    assert re.search(FAULTS_OF_THREE[case], out), out
    assert "finished" not in out, out
    assert seconds < 40, (seconds, out)


@needs_mpirun
@pytest.mark.parametrize("path", ["core", "python", "shared"])
def test_a_late_process_completes_what_another_abandoned(path):
    # Process 0 times out and goes on; process 1's late data completes the operation process 0
    # abandoned: it lands in memory kept for it (process 0 checks its arrays meanwhile).
    rc, out, _ = mpirun(2, "late.py", path, XJAX_NUM_CPU_DEVICES="2" if path == "python" else "1",
                        XJAX_MPI_SHARED_MEMORY="1" if path == "shared" else "0")
    assert rc == 0, out
    assert out.count("ok late") == 2, out


@needs_mpirun
@pytest.mark.parametrize("processes", [2, 3])
def test_data_parallel_training_matches_one_process(processes):
    rc, out, _ = mpirun(processes, "training.py")
    assert rc == 0, out
    assert out.count("ok training") == processes, out


@needs_mpirun
def test_main_job_data_parallel_over_two_processes(tmp_path):
    job = [sys.executable, "-m", "xjax.examples.train", "--steps", "12", "--epochs", "1"]
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR, XJAX_NUM_THREADS="1")
    env.pop("JAX_NUM_CPU_DEVICES", None)
    one = subprocess.run(job + ["--out", str(tmp_path / "one")], capture_output=True, text=True, env=env, timeout=300)
    two = subprocess.run([MPIRUN, "-np", "2", *_launcher_flags(), *job, "--distributed", "--out", str(tmp_path / "two")],
                         capture_output=True, text=True, env=env, timeout=300)
    assert one.returncode == 0 and two.returncode == 0, one.stdout + one.stderr + two.stdout + two.stderr
    assert two.stdout.count("test accuracy:") == 1 and two.stdout.count("plot:") == 1, two.stdout  # process 0 reports
    assert (tmp_path / "two" / "training.png").exists()

    def accuracy(out):
        return float(re.search(r"test accuracy: ([0-9.]+)", out).group(1))
    # Half a batch per process, gradients averaged: the same training as one process on the whole batch.
    assert abs(accuracy(one.stdout) - accuracy(two.stdout)) <= 2 / 359, one.stdout + two.stdout


@needs_mpi4py
def test_main_job_distributed_batch_must_split_evenly(tmp_path):
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR, XJAX_NUM_CPU_DEVICES="2")
    res = subprocess.run([sys.executable, "-m", "xjax.examples.train", "--distributed", "--batch-size", "33",
                          "--out", str(tmp_path)], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
    assert "does not split evenly over 2 devices" in res.stderr


@needs_mpirun
@pytest.mark.parametrize("processes, devices", [(2, 1), (2, 2)])
def test_independent_allreduces_share_one_exchange(processes, devices):
    rc, out, _ = mpirun(processes, "packed.py", XJAX_NUM_CPU_DEVICES=str(devices))
    assert rc == 0, out
    assert out.count("ok") == processes, out


@needs_mpirun
@pytest.mark.parametrize("processes", [2, 3])
@pytest.mark.parametrize("shared", ["1", "0"])  # through the processes' shared memory; MPI alone
def test_all_reduces_through_shared_memory_or_mpi_give_the_same_bits(processes, shared):
    rc, out, _ = mpirun(processes, "shared.py", shared, XJAX_NUM_CPU_DEVICES="1", XJAX_MPI_SHARED_MEMORY=shared)
    assert rc == 0, out
    assert out.count("ok shared") == processes, out


@needs_mpirun
@pytest.mark.parametrize("processes", [2, 3])
def test_all_reduces_inside_one_compiled_program(processes):
    rc, out, _ = mpirun(processes, "in_program.py", XJAX_NUM_CPU_DEVICES="1")
    assert rc == 0, out
    assert out.count("ok") == processes, out
