"""Runs a snippet in a fresh interpreter, so that a crash or hang fails one test instead of the run."""
import os
import subprocess
import sys
import textwrap

import pytest


def run_isolated(code, prelude="", timeout=120):
    """Runs prelude + `code` in a fresh interpreter; returns its stdout, failing on a crash, hang or error."""
    code = prelude + textwrap.dedent(code)
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                             env=dict(os.environ))
    except subprocess.TimeoutExpired:
        pytest.fail(f"hung for {timeout} s:\n{code}")
    assert out.returncode == 0, f"exit status {out.returncode}\nstdout:\n{out.stdout}\nstderr:\n{out.stderr}"
    return out.stdout
