"""Random shapes and dtypes through every op family must give a result or a Python exception.

The fuzzing (tests/fuzz_shapes.py: a fixed-seed hypothesis batch) runs in a subprocess, so that a
crash fails this test instead of killing the test run.
"""
import os
import subprocess
import sys

EXAMPLES_PER_FAMILY_GROUP = 200


def test_random_shapes_never_crash():
    script = os.path.join(os.path.dirname(__file__), "fuzz_shapes.py")
    try:
        out = subprocess.run([sys.executable, script, str(EXAMPLES_PER_FAMILY_GROUP)], capture_output=True,
                             text=True, timeout=300)
    except subprocess.TimeoutExpired as e:
        raise AssertionError(f"the shape fuzzing hung:\n{e.stdout}\n{e.stderr}") from None
    assert out.returncode == 0, f"exit status {out.returncode}\nstdout:\n{out.stdout}\nstderr:\n{out.stderr}"
    assert out.stdout.split() == ["fuzz_numpy", "ok", "fuzz_core", "ok", "fuzz_fused_rank", "ok"]
