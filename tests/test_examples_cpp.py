"""C++ embedding: examples/cpp built against xjax's CMake package (`python -m xjax --cmake-dir`).
digits_predict prints the test accuracy Python printed, digits_train continues training, and the
export battery of test_export.py run through the C++ API (xjx_run) gives the jitted functions' bits.
Skipped where there is no C++ compiler, cmake, or C++ package."""
import functools
import os
import pathlib
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import xjax as jax
from test_export import OPTIMIZER, SEED_CASES, TRANSFORM_CASES, _mlp_setup, train_step

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "cpp"


def _python_env():
    package_root = str(pathlib.Path(jax.__file__).resolve().parents[1])
    return dict(os.environ, PYTHONPATH=os.pathsep.join([package_root, os.environ.get("PYTHONPATH", "")]))


def _xjax_cli(*flags):
    proc = subprocess.run([sys.executable, "-m", "xjax", *flags], env=_python_env(), capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else None


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The examples' build directory (skips when they cannot be built here)."""
    if shutil.which("cmake") is None or not any(shutil.which(c) for c in ("c++", "g++", "clang++")):
        pytest.skip("no cmake or C++ compiler")
    cmake_dir = _xjax_cli("--cmake-dir")
    if cmake_dir is None:
        pytest.skip("xjax's C++ package is not installed (pip install . or -DXJAX_DEV_INPLACE=ON)")
    build = tmp_path_factory.mktemp("examples_cpp")
    gen = ["-G", "Ninja"] if shutil.which("ninja") else []
    subprocess.run(["cmake", "-S", str(EXAMPLES), "-B", str(build), *gen, f"-Dxjax_DIR={cmake_dir}"], check=True,
                   capture_output=True, text=True)
    proc = subprocess.run(["cmake", "--build", str(build)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return build


@functools.lru_cache(None)
def _blas_args():
    lib = _xjax_cli("--blas-library")
    return (lib,) if lib else ()


def _blas():
    """The BLAS Python uses, for the C++ programs (same products, same bits)."""
    return list(_blas_args())


def test_digits_predict_prints_pythons_accuracy_and_train_continues(built, tmp_path):
    model = tmp_path / "digits.xjx"
    py = subprocess.run([sys.executable, str(EXAMPLES / "train_digits.py"), str(model), "5"], env=_python_env(),
                        capture_output=True, text=True, timeout=300)
    assert py.returncode == 0, py.stderr[-3000:]
    py_accuracy = re.search(r"test accuracy (\d\.\d{4})", py.stdout).group(1)
    assert float(py_accuracy) > 0.8
    pred = subprocess.run([str(built / "digits_predict"), str(model), *_blas()], capture_output=True, text=True)
    assert pred.returncode == 0, pred.stderr
    assert pred.stdout.strip() == f"c++: test accuracy {py_accuracy}"
    train = subprocess.run([str(built / "digits_train"), str(model), "3", *_blas()], capture_output=True, text=True)
    assert train.returncode == 0, train.stderr
    assert f"c++: test accuracy before {py_accuracy}" in train.stdout
    losses = [float(v) for v in re.findall(r"epoch \d+ loss (\d+\.\d+)", train.stdout)]
    assert len(losses) == 3 and losses[-1] < losses[0]
    assert re.search(r"test accuracy after 0\.(8|9)\d{3}", train.stdout), train.stdout


def _run_in_cpp(built, tmp_path, fun, args):
    """fun's jitted results and the C++ API's (xjx_run), as lists of raw bytes."""
    jitted = fun if isinstance(fun, jax._src.jit.JitWrapped) else jax.jit(fun)
    want = jax.tree_util.tree_leaves(jitted(*args))
    exp = jax.export.export(jitted)(*args)
    path = tmp_path / "f.xjx"
    path.write_bytes(exp.serialize())
    leaves = jax.tree_util.tree_leaves(args)
    for i, (x, aval) in enumerate(zip(leaves, exp.in_avals)):
        (tmp_path / f"in{i}.bin").write_bytes(np.asarray(x, dtype=aval.dtype).tobytes())
    proc = subprocess.run([str(built / "xjx_run"), str(path), exp.fun_name, str(tmp_path), *_blas()],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    got = [(tmp_path / f"out{i}.bin").read_bytes() for i in range(len(exp.out_avals))]
    return [np.asarray(w).tobytes() for w in want], got


@pytest.mark.parametrize("name", sorted(SEED_CASES) + sorted(TRANSFORM_CASES))
def test_battery_gives_the_same_bits_in_cpp(built, tmp_path, name):
    fun, args = SEED_CASES.get(name) or TRANSFORM_CASES[name]
    want, got = _run_in_cpp(built, tmp_path, fun, args)
    assert got == want


def test_mlp_train_step_gives_the_same_bits_in_cpp(built, tmp_path):
    params, x, y = _mlp_setup()
    want, got = _run_in_cpp(built, tmp_path, train_step, (params, OPTIMIZER.init(params), x, y))
    assert got == want
