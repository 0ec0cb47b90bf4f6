"""jit(vmap(convolve)) against a hand-vectorised jitted convolve (slicing and matmul), in one run.

The seed's convolve is written for one example; vmap should make it as fast as the batched code a
user would write by hand (issue 9: within 1.2x). Prints both medians and their ratio; `--lib jax`
runs the same two functions on JAX for reference.

    PYTHONPATH=python python bench/vmap_vs_hand.py
    PYTHONPATH=python python bench/vmap_vs_hand.py --batch 4096 --n 64 --reps 50 --lib jax
"""
import argparse
import importlib
import statistics
import time

import numpy as np


def convolve(jnp, x, w):
    """The seed's per-example convolve (workloads.py): one dot per output element."""
    output = []
    for i in range(1, len(x) - 1):
        output.append(jnp.dot(x[i - 1:i + 2], w))
    return jnp.array(output)


def convolve_by_hand(jnp, xs, ws):
    """The same for a batch, vectorised by hand: the windows as a (batch, n-2, 3) stack, one matmul."""
    windows = jnp.stack([xs[:, :-2], xs[:, 1:-1], xs[:, 2:]], axis=-1)
    return jnp.matmul(windows, ws[:, :, None])[..., 0]


def median_ms(fn, args, reps):
    for _ in range(3):
        fn(*args).block_until_ready()
    samples = []
    for _ in range(reps):
        t = time.perf_counter()
        fn(*args).block_until_ready()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples) * 1e3


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--lib", default="xjax")
    p.add_argument("--batch", type=int, default=4096)
    p.add_argument("--n", type=int, default=64)
    p.add_argument("--reps", type=int, default=50)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    jax = importlib.import_module(args.lib)
    jnp = importlib.import_module(args.lib + ".numpy")
    rng = np.random.default_rng(0)
    xs = jnp.asarray(rng.random((args.batch, args.n), dtype=np.float32))
    ws = jnp.asarray(rng.random((args.batch, 3), dtype=np.float32))
    vmapped = jax.jit(jax.vmap(lambda x, w: convolve(jnp, x, w)))
    by_hand = jax.jit(lambda xs, ws: convolve_by_hand(jnp, xs, ws))
    np.testing.assert_allclose(np.asarray(vmapped(xs, ws)), np.asarray(by_hand(xs, ws)), rtol=1e-5, atol=1e-5)
    v, h = [], []
    for _ in range(args.rounds):  # interleaved, so that drift hits both
        v.append(median_ms(vmapped, (xs, ws), args.reps))
        h.append(median_ms(by_hand, (xs, ws), args.reps))
    v, h = min(v), min(h)
    print(f"{args.lib} convolve {args.batch}x{args.n}: jit(vmap) {v:.3f} ms, by hand {h:.3f} ms, ratio {v / h:.2f}")


if __name__ == "__main__":
    main()
