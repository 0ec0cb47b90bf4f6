"""The main job, `python -m xjax.examples.train`, end to end in subprocesses: the default run's accuracy, the
plot, the printed lines, --data on a fake MNIST directory, and one-line errors with exit code 2."""
import re

import numpy as np
import pytest

from examples_util import assert_one_line_error, run_train, write_fake_mnist
from xjax.examples import plot, train

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def parse_report(stdout):
    """The three closing lines: (test accuracy, steps per second, plot path)."""
    match = re.search(r"test accuracy: ([0-9.]+)\nsteps per second: ([0-9.]+) \(batch \d+, \d+ steps[^\n]*\)\n"
                      r"plot: (.+\.png)\n$", stdout)
    assert match, stdout
    return float(match[1]), float(match[2]), match[3]


def test_default_run_reaches_098_on_digits(tmp_path):
    proc = run_train(cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith("data: digits 8x8, 1438 train / 359 test images; model: cnn, "), proc.stdout
    accuracy, steps_per_second, path = parse_report(proc.stdout)
    assert accuracy >= 0.98 and steps_per_second > 0
    assert path == str(tmp_path / "training.png")
    assert (tmp_path / "training.png").read_bytes()[:8] == PNG_MAGIC
    assert "epoch 10/10" in proc.stderr and "440/440" in proc.stderr and "loss=" in proc.stderr  # the tqdm bar


def test_few_steps_mlp_into_named_png(tmp_path):
    out = tmp_path / "plots" / "curves.png"
    proc = run_train("--model", "mlp", "--epochs", 1, "--batch-size", 16, "--steps", 5, "--seed", 3, "--out", out,
                     cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "model: mlp, " in proc.stdout
    accuracy, _, path = parse_report(proc.stdout)
    assert 0.0 <= accuracy <= 1.0 and path == str(out)
    assert "batch 16, 5 steps" in proc.stdout and out.read_bytes()[:8] == PNG_MAGIC


def test_data_reads_fake_mnist_and_learns_it(tmp_path):
    write_fake_mnist(tmp_path / "mnist", gz=("train-images-idx3-ubyte", "t10k-labels-idx1-ubyte"))
    proc = run_train("--data", tmp_path / "mnist", "--epochs", 6, "--out", tmp_path, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith(f"data: MNIST 28x28 from {tmp_path / 'mnist'}, 320 train / 100 test images")
    accuracy, _, _ = parse_report(proc.stdout)
    assert accuracy >= 0.9  # the labels line up with the images: each class is a block in its own place


@pytest.mark.parametrize("args, fragments", [
    (["--model", "resnet"], ["argument --model: invalid choice: 'resnet'"]),
    (["--epochs", "0"], ["argument --epochs: must be positive, got 0"]),
    (["--batch-size", "ten"], ["argument --batch-size: expected an integer, got 'ten'"]),
    (["--lr", "-0.1"], ["argument --lr: must be positive"]),
    (["--bogus"], ["unrecognized arguments: --bogus"]),
    (["--batch-size", "5000"], ["--batch-size 5000 is larger than the training set (1438 images)"]),
    (["--data", "no-such-dir"], ["--data: no-such-dir: not a directory"]),
    (["--out", "file.txt/sub"], ["--out file.txt/sub: cannot create directory file.txt/sub"]),
])
def test_bad_options_one_line_exit_2(tmp_path, args, fragments):
    (tmp_path / "file.txt").write_text("x")
    proc = run_train(*args, cwd=tmp_path)
    assert_one_line_error(proc, *fragments)
    assert proc.stdout == ""


@pytest.mark.parametrize("missing, package", [("tqdm", "tqdm"), ("matplotlib", "matplotlib"),
                                              ("sklearn", "scikit-learn")])
def test_missing_package_named(tmp_path, missing, package):
    # A module of that name that fails to import stands in for the package not being installed.
    (tmp_path / f"{missing}.py").write_text("raise ImportError('not installed')\n")
    proc = run_train(cwd=tmp_path, paths=[tmp_path])
    assert_one_line_error(proc, f"this job needs {package}: pip install {package}", 'pip install "xjax[examples]"')


def test_plot_path_rules(tmp_path):
    assert train.plot_path(str(tmp_path / "a" / "b")) == str(tmp_path / "a" / "b" / "training.png")
    assert (tmp_path / "a" / "b").is_dir()
    assert train.plot_path(str(tmp_path / "c" / "x.PNG")) == str(tmp_path / "c" / "x.PNG")
    (tmp_path / "d.png").mkdir()
    with pytest.raises(train.JobError, match="d.png is a directory"):
        train.plot_path(str(tmp_path / "d.png"))


def test_smooth_is_a_trailing_running_mean():
    values = np.array([4.0, 2.0, 6.0, 0.0, 8.0])
    np.testing.assert_allclose(plot.smooth(values, 2), [4.0, 3.0, 4.0, 3.0, 4.0])
    np.testing.assert_allclose(plot.smooth(values, 10), np.cumsum(values) / np.arange(1, 6))
    assert plot.smooth([], 3).shape == (0,)
