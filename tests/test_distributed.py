"""Multi-process runs: mpirun starts 2 or 3 xjax processes on this machine (over loopback).

The scripts under tests/mpi/ run in every process; each prints "ok ..." when its checks pass.
Skipped where mpi4py or mpirun is missing (pip install ".[distributed]" brings both).
"""
import os
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
