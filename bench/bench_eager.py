"""Eager op benchmarks: xjax next to JAX and NumPy (medians; ratios against JAX).

    python bench/bench_eager.py            # everything
    python bench/bench_eager.py --only tiny_mul,matmul_1024_f32
"""
import argparse
import statistics
import time

import numpy as np

N_BIG = 16_000_000


def median_time(fn, reps):
    fn()  # warm-up: compiles and caches
    samples = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


def workloads(jnp, ready, is_numpy):
    rng = np.random.default_rng(0)
    small = [jnp.asarray(np.ones(4, np.float32)) for _ in range(2)]
    big = jnp.asarray(rng.random(N_BIG, dtype=np.float32))
    big2 = jnp.asarray(rng.random(N_BIG, dtype=np.float32))
    mat = jnp.asarray(rng.random((1024, 1024), dtype=np.float32))
    a, b = small
    return {
        "tiny_mul": (lambda: ready(a * b), 2000),
        "add_16e6_f32": (lambda: ready(big + big2), 10),
        "exp_16e6_f32": (lambda: ready(jnp.exp(big)), 10),
        "sum_16e6_f32": (lambda: ready(jnp.sum(big)), 10),
        "max_axis0_4096x4096": (lambda: ready(jnp.max(big.reshape(4000, 4000), axis=0)), 10),
        "matmul_1024_f32": (lambda: ready(mat @ mat), 10),
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--only", default="")
    args = p.parse_args()
    libs = {}
    import xjax.numpy as xjnp

    libs["xjax"] = (xjnp, lambda x: x.block_until_ready())
    try:
        import jax.numpy as jjnp

        libs["jax"] = (jjnp, lambda x: x.block_until_ready())
    except ImportError:
        pass
    libs["numpy"] = (np, lambda x: x)
    loads = {name: workloads(m, r, name == "numpy") for name, (m, r) in libs.items()}
    print(f"timer resolution: {time.get_clock_info('perf_counter').resolution:.1e} s")
    print(f"{'workload':24s}" + "".join(f"{n + ' ms':>12s}" for n in libs) + f"{'xjax/jax':>10s}")
    for w in loads["xjax"]:
        if args.only and w not in args.only.split(","):
            continue
        times = {n: median_time(*loads[n][w]) for n in libs}
        ratio = f"{times['xjax'] / times['jax']:10.2f}" if "jax" in times else ""
        print(f"{w:24s}" + "".join(f"{t * 1e3:12.4f}" for t in times.values()) + ratio, flush=True)
    # Memory bandwidth reference: a plain copy of 16M float32 (64 MB read + 64 MB written).
    src = np.ones(N_BIG, np.float32)
    dst = np.empty_like(src)
    t = median_time(lambda: np.copyto(dst, src), 10)
    print(f"reference: NumPy copy of 16e6 f32 (128 MB moved) {t * 1e3:.3f} ms = {0.128 / t:.1f} GB/s")


if __name__ == "__main__":
    main()
