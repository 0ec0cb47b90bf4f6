"""Convolution and pooling timings, xjax next to JAX in one process (jitted, medians, interleaved).

For each shape: the forward convolution, the input gradient and the kernel gradient (each the
convolution JAX's transpose rules produce, jitted alone through vjp), and max-pooling forward and
backward.

    python bench/conv.py [--only cnn_c2,resnet_3x3] [--rounds 3] [--reps 10]
"""
import argparse
import importlib
import statistics
import time

import numpy as np

# name: (lhs NHWC shape, kernel HWIO shape, strides, padding)
SHAPES = {
    "cnn_c1": ((64, 28, 28, 1), (3, 3, 1, 16), (1, 1), "SAME"),
    "cnn_c2": ((64, 14, 14, 16), (3, 3, 16, 32), (1, 1), "SAME"),
    "resnet_3x3": ((8, 56, 56, 64), (3, 3, 64, 64), (1, 1), "SAME"),
    "resnet_1x1": ((8, 28, 28, 256), (1, 1, 256, 128), (1, 1), "VALID"),
    "strided_3x3": ((16, 32, 32, 32), (3, 3, 32, 64), (2, 2), "SAME"),
}
POOLS = {
    "maxpool_cnn_c1": (64, 28, 28, 16),
    "maxpool_resnet": (8, 112, 112, 64),
}


def cases(jax, jnp, only):
    rng = np.random.default_rng(0)
    dn = ("NHWC", "HWIO", "NHWC")
    out = {}
    for name, (xs, ws, strides, pad) in SHAPES.items():
        if only and name not in only:
            continue
        x = jnp.asarray(rng.standard_normal(xs, dtype=np.float32))
        w = jnp.asarray(rng.standard_normal(ws, dtype=np.float32) * 0.1)

        def conv(x, w, strides=strides, pad=pad):
            return jax.lax.conv_general_dilated(x, w, strides, pad, dimension_numbers=dn)

        y, vjp = jax.vjp(conv, x, w)
        ct = jnp.ones_like(y)
        fwd = jax.jit(conv)
        dx = jax.jit(lambda w, ct, conv=conv, x=x: jax.vjp(lambda x: conv(x, w), x)[1](ct)[0])
        dw = jax.jit(lambda x, ct, conv=conv, w=w: jax.vjp(lambda w: conv(x, w), w)[1](ct)[0])
        out[name + "/fwd"] = lambda f=fwd, x=x, w=w: f(x, w).block_until_ready()
        out[name + "/dx"] = lambda f=dx, w=w, ct=ct: f(w, ct).block_until_ready()
        out[name + "/dw"] = lambda f=dw, x=x, ct=ct: f(x, ct).block_until_ready()
    for name, xs in POOLS.items():
        if only and name not in only:
            continue
        x = jnp.asarray(rng.standard_normal(xs, dtype=np.float32))

        def pool(x):
            return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

        fwd = jax.jit(pool)
        bwd = jax.jit(jax.grad(lambda x: jnp.sum(pool(x) ** 2)))
        out[name + "/fwd"] = lambda f=fwd, x=x: f(x).block_until_ready()
        out[name + "/bwd"] = lambda f=bwd, x=x: f(x).block_until_ready()
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--only", default="")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--reps", type=int, default=10)
    args = p.parse_args()
    only = set(args.only.split(",")) if args.only else set()
    libs = {name: cases(importlib.import_module(name), importlib.import_module(name + ".numpy"), only)
            for name in ("xjax", "jax")}
    samples = {(lib, case): [] for lib in libs for case in libs[lib]}
    for run in (r for lib in libs.values() for r in lib.values()):
        run()  # compile
    for _ in range(args.rounds):
        for case in libs["xjax"]:
            for lib in libs:
                for _ in range(args.reps):
                    t = time.perf_counter()
                    libs[lib][case]()
                    samples[(lib, case)].append(time.perf_counter() - t)
    print(f"{'case':24s} {'xjax ms':>10s} {'jax ms':>10s} {'ratio':>7s}")
    for case in libs["xjax"]:
        a = statistics.median(samples[("xjax", case)]) * 1e3
        b = statistics.median(samples[("jax", case)]) * 1e3
        print(f"{case:24s} {a:10.3f} {b:10.3f} {a / b:7.2f}")


if __name__ == "__main__":
    main()
