"""examples/linear_regression.py and examples/training_loop.py run (in subprocesses, few steps) and print what the
same scripts print under JAX 0.10.2 + optax (recorded by running them with `import jax` / `import optax as optim`)."""
import os
import re
import subprocess
import sys

import pytest

from examples_util import ROOT, env_with

EXAMPLES = os.path.join(ROOT, "examples")

# JAX 0.10.2's output for the same arguments.
JAX_LINEAR_REGRESSION = {
    (): "initial loss: 7.1285\nfinal loss: 0.0091\nw: 3.01, b: -1.01  (the data was made with w = 3, b = -1)\n",
    ("--steps", "5", "--lr", "0.05"):
        "initial loss: 7.1285\nfinal loss: 2.8254\nw: 1.72, b: 0.23  (the data was made with w = 3, b = -1)\n",
}
JAX_TRAINING_LOOP = {
    ("--epochs", "2"): "epoch 1: loss 1.6041, train accuracy 0.366\nepoch 2: loss 0.7240, train accuracy 0.828\n"
                       "validation accuracy: 0.790\n",
    ("--epochs", "2", "--batch-size", "64"): "epoch 1: loss 1.9921, train accuracy 0.247\n"
                                             "epoch 2: loss 1.4698, train accuracy 0.654\nvalidation accuracy: 0.700\n",
}


def run_example(name, *args):
    proc = subprocess.run([sys.executable, os.path.join(EXAMPLES, name), *args], env=env_with(), cwd=EXAMPLES,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def assert_close_output(got, expected, atol):
    """Same lines and words; numbers within `atol` (float32 sums may round differently in the last digit)."""
    number = r"-?\d+\.\d+"
    assert re.sub(number, "#", got) == re.sub(number, "#", expected), got
    for a, b in zip(re.findall(number, got), re.findall(number, expected)):
        assert abs(float(a) - float(b)) <= atol, (got, expected)


@pytest.mark.parametrize("args", sorted(JAX_LINEAR_REGRESSION))
def test_linear_regression(args):
    assert_close_output(run_example("linear_regression.py", *args), JAX_LINEAR_REGRESSION[args], atol=0.011)


@pytest.mark.parametrize("args", sorted(JAX_TRAINING_LOOP))
def test_training_loop(args):
    assert_close_output(run_example("training_loop.py", *args), JAX_TRAINING_LOOP[args], atol=0.0105)
