"""Runs the seed programs in ../shared/seed-programs (when present) and diffs their output."""
import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

SEED_DIR = pathlib.Path(__file__).resolve().parents[1].parent / "shared" / "seed-programs"
SEEDS = sorted(p.stem for p in SEED_DIR.glob("seed_*.py")) if SEED_DIR.is_dir() else []

PARAMS = SEEDS  # every seed passes now


@pytest.mark.skipif(not SEEDS, reason="../shared/seed-programs not present")
@pytest.mark.parametrize("name", PARAMS or ["none"])
def test_seed_program(name):
    proc = _run_seed(name)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout == (SEED_DIR / "expected" / f"{name}.txt").read_text()


KERAS_SEED = "keras_seed_004"  # Keras 3 on its JAX backend: it runs with `jax` aliased to xjax
KERAS_SEED_MISSING = next((why for why, missing in [
    ("../shared/seed-programs not present", not (SEED_DIR / f"{KERAS_SEED}.py").is_file()),
    ("keras is not installed", importlib.util.find_spec("keras") is None),
    ("scikit-learn is not installed", importlib.util.find_spec("sklearn") is None)] if missing), None)


@pytest.mark.skipif(KERAS_SEED_MISSING is not None, reason=str(KERAS_SEED_MISSING))
def test_keras_seed_program():
    proc = _run_seed(KERAS_SEED)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout == (SEED_DIR / "expected" / f"{KERAS_SEED}.txt").read_text()


def _run_seed(name):
    import xjax

    # The seeds run from their own folder: point them at the xjax this test imports.
    package_root = str(pathlib.Path(xjax.__file__).resolve().parents[1])
    env = dict(os.environ, SEED_LIB="xjax", PYTHONPATH=os.pathsep.join([package_root, os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, f"{name}.py"], cwd=SEED_DIR, env=env, capture_output=True, text=True,
                          timeout=600)


@pytest.mark.skipif("seed_002_jit" not in SEEDS, reason="../shared/seed-programs not present")
def test_seed_002_jit_parts_print_exactly():
    """Everything seed_002 prints before its first vmap (jaxprs, jit, static args, caching) is exact."""
    proc = _run_seed("seed_002_jit")
    expected = (SEED_DIR / "expected" / "seed_002_jit.txt").read_text()
    assert expected.startswith(proc.stdout), proc.stdout
    assert "30 30 30\n" in proc.stdout  # got at least through the jit sections
