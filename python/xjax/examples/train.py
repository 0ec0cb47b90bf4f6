"""The main job: train a small CNN (or an MLP) on handwritten digits with xjax, plot the curves, report accuracy.

    python -m xjax.examples.train [--model cnn|mlp] [--epochs N] [--batch-size B] [--lr LR]
                                  [--seed S] [--out DIR_OR_PNG] [--data MNIST_DIR] [--distributed]
    mpirun -np 2 python -m xjax.examples.train --distributed

By default it trains on scikit-learn's 8x8 digits (shipped in that package) and holds out a fixed
20% as the test set; `--data DIR` reads real MNIST from the four IDX files in DIR instead. The
train step is one jitted function (value_and_grad with has_aux, xjax.optim.adam with cosine decay); a tqdm bar
shows loss and accuracy. Any bad option or malformed input ends with one line on stderr and exit
code 2. Needs the `examples` extra: pip install "xjax[examples]" (tqdm, matplotlib, scikit-learn).
"""
import argparse
import importlib
import os
import sys
import time

import numpy as np

import xjax
from xjax import optim
from xjax.examples import data, idx, models, plot, step

PROG = "python -m xjax.examples.train"
DEFAULTS = {"model": "cnn", "epochs": 10, "mnist_epochs": 2, "batch_size": 32, "lr": 3e-3, "seed": 0}
EVAL_BATCH = 1000


class JobError(Exception):
    """An error the user can fix (an option, a file, a missing package): reported as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line instead of usage + error, still exit code 2
        raise JobError(f"{message} (see --help)")


def _positive(kind, noun):
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {noun}, got {text!r}") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"must be positive, got {text}")
        return value
    return parse


def parse_args(argv):
    p = _Parser(prog=PROG, description=__doc__.split("\n")[0],
                epilog="Prints the test accuracy, the steps per second and the plot's path. "
                       "Bad options or input files: one line on stderr, exit code 2.")
    positive_int = _positive(int, "an integer")
    p.add_argument("--model", choices=["cnn", "mlp"], default=DEFAULTS["model"],
                   help="cnn: conv-relu-maxpool twice, then dense; mlp: two relu hidden layers (default: %(default)s)")
    p.add_argument("--epochs", type=positive_int,
                   help=f"passes over the training set (default: {DEFAULTS['epochs']} on digits, "
                        f"{DEFAULTS['mnist_epochs']} on MNIST)")
    p.add_argument("--batch-size", type=positive_int, default=DEFAULTS["batch_size"],
                   help="images per train step (default: %(default)s)")
    p.add_argument("--lr", type=_positive(float, "a number"), default=DEFAULTS["lr"],
                   help="Adam's initial learning rate (cosine decay to 0 over the run; default: %(default)s)")
    p.add_argument("--seed", type=int, default=DEFAULTS["seed"],
                   help="seeds the initial weights and the batch order (default: %(default)s)")
    p.add_argument("--out", default=".", metavar="DIR_OR_PNG",
                   help="where the loss/accuracy plot goes: a path ending in .png, or a directory "
                        "(created if missing) that receives training.png (default: the current directory)")
    p.add_argument("--data", metavar="DIR",
                   help="train on MNIST read from DIR (train-images-idx3-ubyte, train-labels-idx1-ubyte, "
                        "t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte, each plain or .gz) instead of "
                        "scikit-learn's digits")
    p.add_argument("--distributed", action="store_true",
                   help="data-parallel over MPI processes (mpirun -np N ... --distributed): each process "
                        "takes a slice of every batch, gradients are averaged with pmean, process 0 reports")
    p.add_argument("--steps", type=positive_int, help=argparse.SUPPRESS)  # stops early: quick runs in the tests
    args = p.parse_args(argv)
    if args.epochs is None:
        args.epochs = DEFAULTS["epochs" if args.data is None else "mnist_epochs"]
    return args


def require(module, package):
    """Imports `module`, or raises a JobError naming the package to install."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise JobError(f"this job needs {package}: pip install {package} "
                       f"(or pip install \"xjax[examples]\" for all the examples' packages)") from None


def plot_path(out):
    """The PNG to write: `out` itself when it ends in .png, else training.png inside the directory `out`."""
    directory, path = (os.path.dirname(out) or ".", out) if out.lower().endswith(".png") else \
        (out, os.path.join(out, "training.png"))
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as e:
        raise JobError(f"--out {out}: cannot create directory {directory}: {e.strerror or e}") from None
    if os.path.isdir(path):
        raise JobError(f"--out {out}: {path} is a directory")
    return os.path.abspath(path)


def start_processes(args):
    """--distributed: joins the MPI run (one process without mpirun); the batch must split evenly."""
    require("mpi4py", "mpi4py")
    try:
        xjax.distributed.initialize()
    except (RuntimeError, ValueError, ImportError) as e:
        raise JobError(f"--distributed: {e}") from None
    shards = xjax.process_count() * xjax.local_device_count()
    if args.batch_size % shards:
        raise JobError(f"--batch-size {args.batch_size} does not split evenly over {shards} devices "
                       f"({xjax.process_count()} processes)")


def load_data(args):
    if args.data is None:
        require("sklearn", "scikit-learn")
        return data.load_digits()
    try:
        return data.load_mnist(args.data)
    except idx.IdxError as e:
        raise JobError(f"--data: {e}") from None


def evaluate(eval_step, params, images, labels):
    """Test accuracy, in fixed-size chunks so a large test set never becomes one huge batch."""
    correct = 0
    for start in range(0, len(labels), EVAL_BATCH):
        correct += int(eval_step(params, images[start:start + EVAL_BATCH], labels[start:start + EVAL_BATCH]))
    return correct / len(labels)


def local_shard(images, labels):
    """The batch as this process's train step takes it: all of it in one process; under
    --distributed, this process's slice with a leading axis of its devices."""
    if not xjax.distributed.is_initialized():
        return images, labels
    p, count, devices = xjax.process_index(), xjax.process_count(), xjax.local_device_count()
    n = len(labels) // (count * devices) * devices  # equal slices on every device
    part = slice(p * n, (p + 1) * n)
    return (images[part].reshape(devices, -1, *images.shape[1:]), labels[part].reshape(devices, -1))


def run_epoch(train_step, state, ds, batches, bar, exclude_first):
    """Runs the train steps over `batches` (index arrays); returns (state, losses, train accuracy, seconds).

    Seconds count the steps only, waiting for the last; with `exclude_first` the clock starts after
    the first step, which compiles. The bar's loss and accuracy are read every 10 steps: reading a
    value waits for its step, and waiting every step would keep the next from being queued.
    """
    losses, pending, correct, seen = [], [], 0, 0
    start = time.perf_counter()
    for i, batch in enumerate(batches):
        state, loss, hits = train_step(state, *local_shard(ds.train_images[batch], ds.train_labels[batch]))
        losses.append(loss)
        pending.append(hits)
        seen += len(batch)
        if i == 0 and exclude_first:
            loss.block_until_ready()
            start = time.perf_counter()
        if i % 10 == 9 or i == len(batches) - 1:
            correct += sum(int(h) for h in pending)
            pending.clear()
            bar.set_postfix(loss=f"{float(loss):.4f}", acc=f"{correct / seen:.3f}", refresh=False)
        bar.update(1)
    xjax.block_until_ready(state)
    return state, losses, correct / seen, time.perf_counter() - start


def train(args, ds, tqdm):
    """The training loop; returns (history for the plot, steps run, seconds of timed steps)."""
    model = models.MODELS[args.model](xjax)
    params = model.init(xjax.random.PRNGKey(args.seed), ds.train_images.shape[1:], data.NUM_CLASSES)
    steps_per_epoch = len(ds.train_labels) // args.batch_size  # a last partial batch would recompile: dropped
    total = steps_per_epoch * args.epochs if args.steps is None else min(args.steps, steps_per_epoch * args.epochs)
    # Cosine decay to zero: the last epochs settle instead of bouncing around at a constant rate.
    optimizer = optim.adam(optim.cosine_decay_schedule(args.lr, total))
    axis = "batch" if xjax.distributed.is_initialized() else None
    train_step, eval_step = step.make_steps(xjax, optim, model, optimizer, axis_name=axis)
    state = (params, optimizer.init(params))
    n_params = sum(int(np.prod(p.shape)) for p in xjax.tree_util.tree_leaves(params))
    report(f"data: {ds.name}, {len(ds.train_labels)} train / {len(ds.test_labels)} test images; "
          f"model: {args.model}, {n_params} parameters", flush=True)

    rng = np.random.default_rng(args.seed)
    history = {"loss": [], "train_acc": [], "test_acc": []}
    steps, seconds = 0, 0.0
    bar = tqdm.tqdm(total=total, unit="step", dynamic_ncols=True, disable=xjax.process_index() != 0)
    for epoch in range(args.epochs):
        if steps == total:
            break
        bar.set_description(f"epoch {epoch + 1}/{args.epochs}")
        order = rng.permutation(len(ds.train_labels))
        n = min(steps_per_epoch, total - steps)
        batches = [order[i * args.batch_size:(i + 1) * args.batch_size] for i in range(n)]
        state, losses, train_acc, took = run_epoch(train_step, state, ds, batches, bar, steps == 0 and total > 1)
        steps, seconds = steps + n, seconds + took
        test_acc = evaluate(eval_step, state[0], ds.test_images, ds.test_labels)
        history["loss"] += [float(v) for v in losses]
        history["train_acc"].append((steps, train_acc))
        history["test_acc"].append((steps, test_acc))
        bar.set_postfix(loss=f"{history['loss'][-1]:.4f}", acc=f"{train_acc:.3f}", test_acc=f"{test_acc:.3f}")
    bar.close()
    if axis is not None:  # every process took the same steps from the same start: same parameters
        from xjax.experimental import multihost_utils  # lazy: only multi-process runs need it (mpi4py)
        multihost_utils.assert_equal(state[0], "the processes' parameters differ after training")
    return history, steps, seconds


def report(*args, **kwargs):
    """print, on process 0 only (every process of a --distributed run computes the same results)."""
    if xjax.process_index() == 0:
        print(*args, **kwargs)


def main(argv=None):
    try:
        args = parse_args(argv)
        if args.distributed:
            start_processes(args)
        tqdm = require("tqdm", "tqdm")
        require("matplotlib", "matplotlib")
        path = plot_path(args.out)
        ds = load_data(args)
        if len(ds.train_labels) < args.batch_size:
            raise JobError(f"--batch-size {args.batch_size} is larger than the training set "
                           f"({len(ds.train_labels)} images)")
        history, steps, seconds = train(args, ds, tqdm)
        try:
            if xjax.process_index() == 0:
                plot.write_curves(path, history, f"xjax: {args.model} on {ds.name}")
        except OSError as e:
            raise JobError(f"cannot write {path}: {e.strerror or e}") from None
    except JobError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    timed_steps = max(steps - 1, 1)
    report(f"test accuracy: {history['test_acc'][-1][1]:.4f}")
    report(f"steps per second: {timed_steps / seconds:.1f} (batch {args.batch_size}, {steps} steps, "
           f"first step's compile excluded)" if steps > 1 else
           f"steps per second: {1 / seconds:.1f} (one step, compile included)")
    report(f"plot: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
