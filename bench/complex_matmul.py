"""A complex64 matrix product (512 x 512 and 1024 x 1024), xjax next to JAX in one process, jitted.
Prints the median of interleaved rounds and the ratio (xjax / JAX; below 1.0: xjax is faster).

    python bench/complex_matmul.py [--rounds 5] [--reps 10]
"""
import argparse
import importlib
import statistics
import time

import numpy as np


def make(lib, n):
    jax = importlib.import_module(lib)
    jnp = importlib.import_module(lib + ".numpy")
    rng = np.random.default_rng(0)
    a, b = ((rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))).astype(np.complex64) for _ in range(2))
    a, b = jnp.asarray(a), jnp.asarray(b)
    f = jax.jit(lambda a, b: a @ b)
    f(a, b).block_until_ready()
    return lambda: f(a, b).block_until_ready()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--reps", type=int, default=10)
    args = p.parse_args()
    for n in (512, 1024):
        runs = {lib: make(lib, n) for lib in ("xjax", "jax")}
        times = {lib: [] for lib in runs}
        for _ in range(args.rounds):
            for lib, run in runs.items():
                t = time.perf_counter()
                for _ in range(args.reps):
                    run()
                times[lib].append((time.perf_counter() - t) / args.reps)
        x, j = (statistics.median(times[lib]) * 1e3 for lib in ("xjax", "jax"))
        print(f"matmul_c64_{n}   xjax {x:8.3f} ms   jax {j:8.3f} ms   ratio {x / j:.2f}")


if __name__ == "__main__":
    main()
