"""FFT timings, xjax next to JAX (DUCC) in one process: jitted, medians of interleaved rounds.

    python bench/fft.py [--reps 20] [--rounds 3]
"""
import argparse
import importlib
import statistics
import time

import numpy as np


def cases(jax, jnp):
    rng = np.random.default_rng(0)

    def cplx(n):
        return jnp.asarray((rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64))

    x20, xp = cplx(2 ** 20), cplx(100003)
    img = jnp.asarray(rng.standard_normal((8, 512, 512), dtype=np.float32))
    fft, rfft2 = jax.jit(jnp.fft.fft), jax.jit(jnp.fft.rfft2)
    return {
        "fft c64 2^20": lambda: fft(x20).block_until_ready(),
        "fft c64 100003 (prime)": lambda: fft(xp).block_until_ready(),
        "rfft2 f32 (8, 512, 512)": lambda: rfft2(img).block_until_ready(),
    }


def median_ms(f, reps):
    f()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    libs = {}
    for name in ("xjax", "jax"):
        mod = importlib.import_module(name)
        libs[name] = cases(mod, importlib.import_module(name + ".numpy"))
    results = {lib: {c: [] for c in libs[lib]} for lib in libs}
    for _ in range(args.rounds):
        for lib, cs in libs.items():
            for c, f in cs.items():
                results[lib][c].append(median_ms(f, args.reps))
    print(f"{'case':28s} {'xjax ms':>9s} {'jax ms':>9s} {'ratio':>6s}")
    for c in libs["xjax"]:
        a, b = min(results["xjax"][c]), min(results["jax"][c])
        print(f"{c:28s} {a:9.2f} {b:9.2f} {a / b:6.2f}")


if __name__ == "__main__":
    main()
