"""Per-example gradients of a small MLP (jit(vmap(grad(loss)))): xjax against jax in one process.

The workload of ../shared/bench's `per_example_grads_b64`, with log_softmax written in jnp ops
(logits minus their logsumexp, as jax.nn.log_softmax computes it), so it runs before xjax.nn
exists; it needs the batching rules of dot_general, the reductions and the layout ops. Rounds
interleave the two libraries; it prints the median of each one's round medians (and its fastest
call: on a shared machine the medians swing with the load).

    PYTHONPATH=python python bench/per_example_grads.py
    PYTHONPATH=python python bench/per_example_grads.py --batch 256 --rounds 5 --reps 50
"""
import argparse
import importlib
import statistics
import time

import numpy as np


def workload(jax, jnp, batch):
    rng = np.random.default_rng(0)
    params = [dict(w=jnp.asarray((rng.normal(size=(i, o)) * np.sqrt(2 / i)).astype(np.float32)), b=jnp.zeros(o))
              for i, o in zip([784, 64], [64, 10])]
    rng = np.random.default_rng(1)
    x = jnp.asarray(rng.random((batch, 784), dtype=np.float32))
    y = jnp.asarray(np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch)])

    def log_softmax(logits):
        shifted = logits - jax.lax.stop_gradient(logits.max(-1, keepdims=True))
        return shifted - jnp.log(jnp.sum(jnp.exp(shifted), -1, keepdims=True))

    def loss(params, x, y):
        h = jnp.tanh(x @ params[0]["w"] + params[0]["b"])
        logits = h @ params[1]["w"] + params[1]["b"]
        return -jnp.sum(y * log_softmax(logits))

    f = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))
    f(params, x, y)[0]["w"].block_until_ready()
    return lambda: f(params, x, y)[0]["w"].block_until_ready()


def times(run, reps):
    samples = []
    for _ in range(reps):
        t = time.perf_counter()
        run()
        samples.append(time.perf_counter() - t)
    return samples


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--reps", type=int, default=30)
    args = p.parse_args()
    libs = {name: (importlib.import_module(name), importlib.import_module(name + ".numpy")) for name in ("xjax", "jax")}
    runs = {name: workload(jax, jnp, args.batch) for name, (jax, jnp) in libs.items()}
    medians = {name: [] for name in runs}
    fastest = {name: float("inf") for name in runs}
    for _ in range(args.rounds):  # interleaved, so that drift on a shared machine hits both
        for name, run in runs.items():
            samples = times(run, args.reps)
            medians[name].append(statistics.median(samples))
            fastest[name] = min(fastest[name], min(samples))
    ms = {name: statistics.median(m) * 1e3 for name, m in medians.items()}
    print(f"per_example_grads_b{args.batch}: median xjax {ms['xjax']:.3f} ms, jax {ms['jax']:.3f} ms, "
          f"ratio {ms['xjax'] / ms['jax']:.2f}; fastest xjax {fastest['xjax'] * 1e3:.3f} ms, "
          f"jax {fastest['jax'] * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
