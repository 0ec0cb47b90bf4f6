"""Runs a snippet in a fresh interpreter, so that a crash or hang fails one test instead of the run."""
import os
import subprocess
import sys
import textwrap

import pytest


def run_isolated(code, prelude="", timeout=120, env=None):
    """Runs prelude + `code` in a fresh interpreter (with `env` added to the environment); returns its stdout,
    failing on a crash, hang or error."""
    code = prelude + textwrap.dedent(code)
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                             env=dict(os.environ, **(env or {})))
    except subprocess.TimeoutExpired:
        pytest.fail(f"hung for {timeout} s:\n{code}")
    assert out.returncode == 0, f"exit status {out.returncode}\nstdout:\n{out.stdout}\nstderr:\n{out.stderr}"
    return out.stdout


def digests_by_thread_count(code, counts=(1, 3), timeout=300):
    """The hex digest `code` prints when run with each number of threads in `counts`: for tests that the
    bits of a result do not depend on the thread count (each must be a SHA-1 digest)."""
    digests = [run_isolated(code, timeout=timeout, env={"XJAX_NUM_THREADS": str(n)}).strip() for n in counts]
    assert all(len(d) == 40 and int(d, 16) >= 0 for d in digests), digests
    return digests
