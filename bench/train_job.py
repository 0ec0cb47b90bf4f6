"""The main job's train step (python -m xjax.examples.train) in xjax next to the same model in JAX + optax.

Both libraries run the very same model and step definitions (xjax.examples.models / .step take the
library as an argument) on the same batches: digits 8x8 as the job uses them, or random 28x28
images (MNIST-shaped, `--image-size 28`). Each round runs `--steps` train steps as the job's loop
does (index a NumPy batch, call the jitted step, wait only at the end); rounds of the two
libraries alternate, so drift hits both. Prints steps/s medians (and min..max) and the ratio.

    python bench/train_job.py [--lib both|xjax|jax] [--model cnn|mlp] [--batch-size 32]
                              [--image-size 8|28] [--rounds 7] [--steps 100]
"""
import argparse
import importlib
import os
import statistics
import time

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from xjax.examples import data, models, step  # noqa: E402  (after JAX_PLATFORMS)


def load_images(image_size):
    if image_size == 8:
        ds = data.load_digits()
        return ds.train_images, ds.train_labels
    rng = np.random.default_rng(0)
    return rng.random((2048, image_size, image_size, 1), dtype=np.float32), rng.integers(0, 10, 2048).astype(np.int32)


def make_round(lib_name, args, images, labels):
    """Compiles the library's train step; returns run(n) that does n steps and waits for the last."""
    jax = importlib.import_module(lib_name)
    importlib.import_module(lib_name + ".numpy")
    optim = importlib.import_module("optax" if lib_name == "jax" else "xjax.optim")
    model = models.MODELS[args.model](jax)
    params = model.init(jax.random.PRNGKey(0), images.shape[1:], data.NUM_CLASSES)
    optimizer = optim.adam(optim.cosine_decay_schedule(3e-3, 10_000))
    train_step, _ = step.make_steps(jax, optim, model, optimizer)
    state = [(params, optimizer.init(params))]
    rng = np.random.default_rng(1)

    def run(n):
        order = rng.permutation(len(labels))
        s = state[0]
        for i in range(n):
            batch = order[(i * args.batch_size) % (len(labels) - args.batch_size):][:args.batch_size]
            s, loss, _ = train_step(s, images[batch], labels[batch])
        jax.block_until_ready(s)
        state[0] = s

    run(3)  # compile and warm up
    return run


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--lib", choices=["both", "xjax", "jax"], default="both")
    p.add_argument("--model", choices=sorted(models.MODELS), default="cnn")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--image-size", type=int, choices=[8, 28], default=8)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--steps", type=int, default=100, help="train steps per round")
    args = p.parse_args()
    libs = ["xjax", "jax"] if args.lib == "both" else [args.lib]
    images, labels = load_images(args.image_size)
    runs = {name: make_round(name, args, images, labels) for name in libs}
    rates = {name: [] for name in libs}
    for _ in range(args.rounds):
        for name, run in runs.items():
            t = time.perf_counter()
            run(args.steps)
            rates[name].append(args.steps / (time.perf_counter() - t))
    label = f"train_job {args.model} {args.image_size}x{args.image_size} batch {args.batch_size}"
    med = {name: statistics.median(r) for name, r in rates.items()}
    parts = [f"{name} {med[name]:.1f} steps/s ({min(rates[name]):.1f}..{max(rates[name]):.1f})" for name in libs]
    ratio = f"  ratio xjax/jax {med['xjax'] / med['jax']:.2f} (above 1: xjax faster)" if len(libs) == 2 else ""
    print(f"{label}: " + "  ".join(parts) + ratio)


if __name__ == "__main__":
    main()
