"""Eager control flow against the cached jit of the same function, in one run (medians and ratios).

A repeated eager `lax.cond` / `switch` / `while_loop` / `fori_loop` / `scan` finds its compiled
graph in the structural cache (and, for function objects it has seen, its traces in the trace
cache), so it should cost a small multiple of a cached jit call of the same function.

    PYTHONPATH=python python bench/bench_eager_control.py
    PYTHONPATH=python python bench/bench_eager_control.py --only cond,scan --reps 500
"""
import argparse
import statistics
import time

import numpy as np


def median_time(fn, reps):
    for _ in range(5):  # warm-up: compiles and caches
        fn()
    samples = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


def cases(jax, jnp):
    """name -> (function of arrays making one control-flow call, its arguments).

    The `*_lambda` cases make their functions anew on each call (the usual inline style): those
    are traced on every call, their graphs found by the jaxpr's structure. The others pass the
    same function objects each time: as in JAX, their traces are cached too.
    """
    lax = jax.lax
    x = jnp.ones(4)
    p = x[0] > 0
    xs = jnp.arange(12.0).reshape(6, 2)
    sin, cos, tanh = jnp.sin, jnp.cos, jnp.tanh

    def while_cond(c):
        return c[0] < 10.0

    def while_body(c):
        return c * 2.0 + 1.0

    def fori_body(i, c):
        return c * 0.5 + i

    def scan_body(c, r):
        return c + r, c * r

    return {
        "cond": (lambda p, x: lax.cond(p, sin, cos, x), (p, x)),
        "cond_lambda": (lambda p, x: lax.cond(p, lambda v: v + 1.0, lambda v: v - 1.0, x), (p, x)),
        "switch": (lambda x: lax.switch(2, [sin, cos, tanh], x), (x,)),
        "while_loop": (lambda x: lax.while_loop(while_cond, while_body, x), (x,)),
        "while_lambda": (lambda x: lax.while_loop(lambda c: c[0] < 10.0, lambda c: c * 2.0 + 1.0, x), (x,)),
        "fori_loop": (lambda x: lax.fori_loop(0, 10, fori_body, x), (x,)),
        "fori_lambda": (lambda x: lax.fori_loop(0, 10, lambda i, c: c * 0.5 + i, x), (x,)),
        "fori_traced_bounds": (lambda n, x: lax.fori_loop(0, n, fori_body, x), (jnp.int32(10), x)),
        "scan": (lambda xs: lax.scan(scan_body, jnp.zeros(2), xs), (xs,)),
        "scan_lambda": (lambda xs: lax.scan(lambda c, r: (c + r, c * r), jnp.zeros(2), xs), (xs,)),
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--only", default="")
    p.add_argument("--reps", type=int, default=300)
    args = p.parse_args()
    import xjax as jax
    import xjax.numpy as jnp

    ready = jax.block_until_ready
    print(f"{'case':20s} {'eager us':>9s} {'jit us':>9s} {'ratio':>6s}")
    for name, (f, fargs) in cases(jax, jnp).items():
        if args.only and name not in args.only.split(","):
            continue
        jf = jax.jit(f)
        eager = median_time(lambda: ready(f(*fargs)), args.reps)
        jitted = median_time(lambda: ready(jf(*fargs)), args.reps)
        for a, b in zip(jax.tree.leaves(f(*fargs)), jax.tree.leaves(jf(*fargs))):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b))
        print(f"{name:20s} {eager * 1e6:9.1f} {jitted * 1e6:9.1f} {eager / jitted:6.2f}", flush=True)


if __name__ == "__main__":
    main()
