"""Helpers for the example tests: run the main job in a subprocess, write a small fake MNIST directory."""
import os
import subprocess
import sys

import numpy as np

import xjax
from xjax.examples.idx import write_idx

# The subprocess imports the xjax this test imports (an installed one in CI, python/ in the edit loop).
PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(xjax.__file__)))
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def env_with(*paths, **extra):
    """os.environ with `paths` then xjax's directory on PYTHONPATH, plus `extra` variables."""
    return dict(os.environ, PYTHONPATH=os.pathsep.join([*map(str, paths), PYTHON_DIR]), **extra)


def run_train(*args, cwd, paths=(), timeout=120):
    """Runs `python -m xjax.examples.train args` in `cwd`; returns the CompletedProcess (text)."""
    return subprocess.run([sys.executable, "-m", "xjax.examples.train", *map(str, args)], cwd=cwd,
                          env=env_with(*paths), capture_output=True, text=True, timeout=timeout)


def assert_one_line_error(proc, *fragments):
    """Exit code 2 and exactly one line on stderr, naming the job and holding every fragment; no traceback."""
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("python -m xjax.examples.train: error: "), lines[0]
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


def blocks_images(labels, size, rng):
    """uint8 images where class k lights a 4x4 block at its own place: learnable in a few dozen steps."""
    images = rng.integers(0, 40, size=(len(labels), size, size), dtype=np.uint8)
    for i, k in enumerate(labels):
        r, c = 4 * (k // 3) + 2, 4 * (k % 3) + 2
        images[i, r:r + 4, c:c + 4] = 250
    return images


def write_fake_mnist(directory, n_train=320, n_test=100, size=28, gz=("train-images-idx3-ubyte",), seed=0):
    """The four MNIST files with block images; names listed in `gz` are written gzipped (.gz)."""
    rng = np.random.default_rng(seed)
    arrays = {}
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        labels = rng.integers(0, 10, n).astype(np.uint8)
        arrays[f"{prefix}-images-idx3-ubyte"] = blocks_images(labels, size, rng)
        arrays[f"{prefix}-labels-idx1-ubyte"] = labels
    os.makedirs(directory, exist_ok=True)
    for name, array in arrays.items():
        compress = name in gz
        write_idx(os.path.join(directory, name + (".gz" if compress else "")), array, compress=compress)
    return arrays
