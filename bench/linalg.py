"""Linear-algebra timings: xjax next to JAX and NumPy in one process (jitted, medians, interleaved).

Cases (float32): cholesky of 512x512, solve of 512x512 (LU and two triangular solves), a batch of
1000 3x3 solves, svd of 256x256 (u, s, vh), qr of 256x256, eigh of 256x256, and jnp.linalg's inv
and det of 256x256. Solves are jnp.linalg.solve (NumPy: np.linalg.solve, LAPACK gesv).

    python bench/linalg.py [--lib xjax,jax,numpy] [--only chol512,svd256] [--rounds 5] [--reps 5]

xjax's LAPACK runs single-threaded per call (its pool splits batches, and one large Cholesky or LU
by blocks); JAX's and NumPy's OpenBLAS use its own threads: OPENBLAS_NUM_THREADS=1 compares
single-threaded LAPACK with single-threaded LAPACK.
"""
import argparse
import importlib
import statistics
import time

import numpy as np

LIBS = ("xjax", "jax", "numpy")


def inputs():
    rng = np.random.default_rng(0)

    def spd(n):
        a = rng.standard_normal((n, n), dtype=np.float32)
        return (a @ a.T / n + np.eye(n, dtype=np.float32)).astype(np.float32)

    return {
        "chol512": (spd(512),),
        "solve512": (spd(512) + rng.standard_normal((512, 512), dtype=np.float32) * 0.1,
                     rng.standard_normal((512, 1), dtype=np.float32)),
        "solve3x3x1000": (rng.standard_normal((1000, 3, 3), dtype=np.float32) + 3 * np.eye(3, dtype=np.float32),
                          rng.standard_normal((1000, 3, 1), dtype=np.float32)),
        "svd256": (rng.standard_normal((256, 256), dtype=np.float32),),
        "qr256": (rng.standard_normal((256, 256), dtype=np.float32),),
        "eigh256": (spd(256),),
        "inv256": (spd(256) + rng.standard_normal((256, 256), dtype=np.float32) * 0.1,),
        "det256": (spd(256) / 2,),
    }


def cases(name, data):
    if name == "numpy":
        fns = {"chol512": np.linalg.cholesky, "solve512": np.linalg.solve,
               "solve3x3x1000": np.linalg.solve,
               "svd256": np.linalg.svd, "qr256": np.linalg.qr, "eigh256": np.linalg.eigh,
               "inv256": np.linalg.inv, "det256": np.linalg.det}
        return {k: (lambda f=fns[k], args=args: f(*args)) for k, args in data.items()}
    jax = importlib.import_module(name)
    jnp = importlib.import_module(name + ".numpy")
    lax = jax.lax
    solve = jnp.linalg.solve
    fns = {"chol512": lambda a: lax.linalg.cholesky(a), "solve512": solve, "solve3x3x1000": solve,
           "svd256": lambda a: lax.linalg.svd(a), "qr256": lambda a: lax.linalg.qr(a),
           "eigh256": lambda a: lax.linalg.eigh(a), "inv256": jnp.linalg.inv, "det256": jnp.linalg.det}
    out = {}
    for k, args in data.items():
        f = jax.jit(fns[k])
        dev = [jnp.asarray(a) for a in args]
        out[k] = lambda f=f, dev=dev: jax.block_until_ready(f(*dev))
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--lib", default=",".join(LIBS))
    p.add_argument("--only", default="")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--reps", type=int, default=5)
    args = p.parse_args()
    libs = [lib for lib in args.lib.split(",") if lib]
    data = {k: v for k, v in inputs().items() if not args.only or k in args.only.split(",")}
    runs = {lib: cases(lib, data) for lib in libs}
    samples = {(lib, case): [] for lib in libs for case in data}
    for lib in libs:
        for run in runs[lib].values():
            run()  # compile
    for _ in range(args.rounds):  # interleaved, so a busy moment hits every library alike
        for case in data:
            for lib in libs:
                for _ in range(args.reps):
                    t = time.perf_counter()
                    runs[lib][case]()
                    samples[(lib, case)].append(time.perf_counter() - t)
    med = {key: statistics.median(v) * 1e3 for key, v in samples.items()}
    head = "".join(f"{lib + ' ms':>12s}" for lib in libs)
    ratios = [lib for lib in libs if lib != "xjax"] if "xjax" in libs else []
    print(f"{'case':16s}{head}" + "".join(f"{'xjax/' + r:>13s}" for r in ratios))
    for case in data:
        row = "".join(f"{med[(lib, case)]:12.3f}" for lib in libs)
        row += "".join(f"{med[('xjax', case)] / med[(r, case)]:13.2f}" for r in ratios)
        print(f"{case:16s}{row}")


if __name__ == "__main__":
    main()
