"""Multi-process runs: mpirun starts 2 or 3 xjax processes on this machine (over loopback).

The scripts under tests/mpi/ run in every process; each prints "ok ..." when its checks pass.
Skipped where mpi4py or mpirun is missing (pip install ".[distributed]" brings both).
"""
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

import xjax

pytest.importorskip("mpi4py")
PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(xjax.__file__)))
TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
MPIRUN = shutil.which("mpirun", path=os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")]))
pytestmark = pytest.mark.skipif(MPIRUN is None, reason="no mpirun")


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


@pytest.mark.parametrize("processes, devices", [(2, 1), (3, 1), (2, 2)])
def test_collectives_across_processes(processes, devices):
    rc, out, _ = mpirun(processes, "collectives.py", str(devices), XJAX_NUM_CPU_DEVICES=str(devices))
    assert rc == 0, out
    assert out.count("ok 31") == processes, out


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


@pytest.mark.parametrize("case", sorted(FAULTS))
def test_a_failing_process_is_named_by_the_others(case):
    rc, out, seconds = mpirun(2, "faults.py", case, XJAX_COLLECTIVE_TIMEOUT="4")
    assert rc != 0, out
    assert re.search(FAULTS[case], out), out
    assert "finished" not in out, out
    assert seconds < 40, (seconds, out)  # the hanging process sleeps 60 s: the timeout ended the job


@pytest.mark.parametrize("processes", [2, 3])
def test_data_parallel_training_matches_one_process(processes):
    rc, out, _ = mpirun(processes, "training.py")
    assert rc == 0, out
    assert out.count("ok training") == processes, out
