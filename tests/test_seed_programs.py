"""Runs the seed programs in ../shared/seed-programs (when present) and diffs their output."""
import os
import pathlib
import subprocess
import sys

import pytest

SEED_DIR = pathlib.Path(__file__).resolve().parents[1].parent / "shared" / "seed-programs"
SEEDS = sorted(p.stem for p in SEED_DIR.glob("seed_*.py")) if SEED_DIR.is_dir() else []

# Seeds that need features of later issues (grad: #5+, vmap, PRNG, optim, jit: #4). Strict, so a
# seed that starts passing fails here until its marker is removed.
NEEDS_LATER_ISSUES = {
    "seed_000_accelerated_numpy": "needs grad and jit",
    "seed_002_jit": "needs jit, vmap, grad and PRNG",
    "seed_003_vmap": "needs vmap and jit",
    "seed_004_training_loop": "needs grad, jit, PRNG and optim",
}


PARAMS = [pytest.param(n, marks=pytest.mark.xfail(reason=NEEDS_LATER_ISSUES[n], strict=True))
          if n in NEEDS_LATER_ISSUES else n for n in SEEDS]


@pytest.mark.skipif(not SEEDS, reason="../shared/seed-programs not present")
@pytest.mark.parametrize("name", PARAMS or ["none"])
def test_seed_program(name):
    env = dict(os.environ, SEED_LIB="xjax")
    proc = subprocess.run([sys.executable, f"{name}.py"], cwd=SEED_DIR, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    expected = (SEED_DIR / "expected" / f"{name}.txt").read_text()
    assert proc.stdout == expected
