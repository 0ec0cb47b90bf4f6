"""Concurrent runs: two Python threads calling independent jitted functions against one thread
doing the same calls in turn (medians; speedup = one thread's time / two threads' time).

    python bench/bench_threads.py                  # every size
    python bench/bench_threads.py --only 256K --reps 9
"""
import argparse
import statistics
import threading
import time

import numpy as np

SIZES = {"4K": 4096, "256K": 1 << 18, "2M": 1 << 21, "8M": 1 << 23}


def make_fn(jax, jnp, k):
    # A fused elementwise chain into a reduction; k makes each thread's function distinct.
    return jax.jit(lambda x: jnp.sum(jnp.tanh(x * (1.0 + k)) * 2.0 + 1.0))


def run_calls(fn, x, calls):
    for _ in range(calls):
        fn(x).block_until_ready()


def two_threads(target_args):
    threads = [threading.Thread(target=run_calls, args=a) for a in target_args]
    t = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return time.perf_counter() - t


def one_thread(fns, xs, calls):
    t = time.perf_counter()
    run_calls(fns[0], xs[0], calls)
    run_calls(fns[1], xs[1], calls)
    return time.perf_counter() - t


def bench(jax, jnp, n, calls, reps):
    rng = np.random.default_rng(0)
    xs = [jnp.asarray(rng.random(n, dtype=np.float32)) for _ in range(2)]
    fns = [make_fn(jax, jnp, k) for k in range(2)]
    for f, x in zip(fns, xs):
        run_calls(f, x, 3)  # compile and warm up
    one, two = [], []
    for _ in range(reps):
        # One thread: both functions, one after the other; two threads: one function each.
        one.append(one_thread(fns, xs, calls))
        two.append(two_threads([(fns[0], xs[0], calls), (fns[1], xs[1], calls)]))
    return statistics.median(one), statistics.median(two)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", help="comma-separated sizes: " + ",".join(SIZES))
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--jax", action="store_true", help="run JAX instead of xjax")
    args = p.parse_args()
    if args.jax:
        import jax
        import jax.numpy as jnp
    else:
        import xjax as jax
        import xjax.numpy as jnp
    sizes = args.only.split(",") if args.only else list(SIZES)
    print(f"{'size':>6} {'calls':>6} {'1 thread ms':>12} {'2 threads ms':>13} {'speedup':>8}")
    for name in sizes:
        n = SIZES[name]
        calls = max(4, (1 << 24) // n // 4)
        one, two = bench(jax, jnp, n, calls, args.reps)
        print(f"{name:>6} {calls:>6} {one * 1e3:12.1f} {two * 1e3:13.1f} {one / two:8.2f}")


if __name__ == "__main__":
    main()
