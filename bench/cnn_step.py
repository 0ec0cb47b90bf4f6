"""The CNN training step of ../shared/bench (cnn_train_step_b64), xjax next to JAX in one process.

Two convolutions (3x3 "SAME", NHWC x HWIO) with relu and 2x2 max-pooling, a dense layer, softmax
cross-entropy, value_and_grad and an SGD update, jitted; relu and log_softmax are written with
jnp ops so that the step needs nothing beyond lax and jnp. Prints medians over interleaved rounds.

    python bench/cnn_step.py [--batch 64] [--rounds 5] [--reps 20]
"""
import argparse
import importlib
import statistics
import time

import numpy as np


def make_step(jax, jnp, batch):
    rng = np.random.default_rng(3)
    params = {
        "c1": jnp.asarray((rng.normal(size=(3, 3, 1, 16)) * 0.3).astype(np.float32)),
        "c2": jnp.asarray((rng.normal(size=(3, 3, 16, 32)) * 0.1).astype(np.float32)),
        "w": jnp.asarray((rng.normal(size=(7 * 7 * 32, 10)) * 0.02).astype(np.float32)),
    }
    x = jnp.asarray(rng.random((batch, 28, 28, 1), dtype=np.float32))
    y = jnp.asarray(np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch)])
    dn = ("NHWC", "HWIO", "NHWC")

    def log_softmax(z):
        z = z - jax.lax.stop_gradient(jnp.max(z, axis=-1, keepdims=True))
        return z - jnp.log(jnp.sum(jnp.exp(z), axis=-1, keepdims=True))

    def model(p, x):
        for k in ("c1", "c2"):
            x = jax.lax.conv_general_dilated(x, p[k], (1, 1), "SAME", dimension_numbers=dn)
            x = jnp.maximum(x, 0.0)
            x = jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        return x.reshape(x.shape[0], -1) @ p["w"]

    def loss(p, x, y):
        return -jnp.mean(jnp.sum(y * log_softmax(model(p, x)), axis=-1))

    @jax.jit
    def step(p, x, y):
        l, g = jax.value_and_grad(loss)(p, x, y)
        return l, jax.tree_util.tree_map(lambda a, b: a - 0.01 * b, p, g)

    def run():
        step(params, x, y)[0].block_until_ready()

    run()
    return run


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--reps", type=int, default=20)
    args = p.parse_args()
    runs = {}
    for name in ("xjax", "jax"):
        lib = importlib.import_module(name)
        runs[name] = make_step(lib, importlib.import_module(name + ".numpy"), args.batch)
    samples = {name: [] for name in runs}
    for _ in range(args.rounds):  # interleaved, so that drift hits both
        for name, run in runs.items():
            for _ in range(args.reps):
                t = time.perf_counter()
                run()
                samples[name].append(time.perf_counter() - t)
    med = {name: statistics.median(s) * 1e3 for name, s in samples.items()}
    print(f"cnn_train_step_b{args.batch}: xjax {med['xjax']:.3f} ms  jax {med['jax']:.3f} ms  "
          f"ratio {med['xjax'] / med['jax']:.2f}")


if __name__ == "__main__":
    main()
