"""A chain of complex elementwise ops, exp(1j x) z + w over 1e6 complex64 values (x float32), and its sum:
xjax fused (jit), xjax op by op (the same graph compiled with fuse=False) and JAX (jit), interleaved in
one process. Prints the median of the rounds in ms.

    python bench/complex_fusion.py [--n 1000000] [--rounds 7] [--reps 10]
"""
import argparse
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

import xjax
import xjax.numpy as xnp
from xjax import _core
from xjax._src.interpreters import graph_lowering


def chain(np_):
    return lambda x, z, w: np_.exp(1j * x) * z + w


def chain_sum(np_):
    return lambda x, z, w: np_.sum(np_.exp(1j * x) * z + w)


def xjax_unfused(f, args):
    """The graph jit compiles for f, compiled op by op."""
    closed = xjax.make_jaxpr(f)(*args)
    graph, outs, extern, _ = graph_lowering.lower_closed_jaxpr(closed)
    graph.set_outputs(list(outs))
    exe = _core.compile(graph, fuse=False)
    values = [a._value for a in args] + [v._value for v in extern]

    def run():
        outs = exe.run(values)
        for r in outs:
            r.wait()
        return outs
    return run


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=1_000_000)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--reps", type=int, default=10)
    args = p.parse_args()
    rng = np.random.default_rng(0)
    x = rng.standard_normal(args.n).astype(np.float32)
    z, w = ((rng.standard_normal(args.n) + 1j * rng.standard_normal(args.n)).astype(np.complex64) for _ in range(2))
    for name, make in (("exp(1j*x)*z+w", chain), ("sum(exp(1j*x)*z+w)", chain_sum)):
        xa = [xnp.asarray(a) for a in (x, z, w)]
        ja = [jnp.asarray(a) for a in (x, z, w)]
        fx, fj = xjax.jit(make(xnp)), jax.jit(make(jnp))
        fused_out, unfused_run = fx(*xa), xjax_unfused(make(xnp), xa)
        assert np.asarray(fused_out).tobytes() == bytes(unfused_run()[0].bytes_view())  # the same bits
        runs = {"xjax fused": lambda: fx(*xa).block_until_ready(),
                "xjax op by op": unfused_run,
                "jax": lambda: fj(*ja).block_until_ready()}
        times = {k: [] for k in runs}
        for run in runs.values():
            run()
        for _ in range(args.rounds):
            for k, run in runs.items():
                t = time.perf_counter()
                for _ in range(args.reps):
                    run()
                times[k].append((time.perf_counter() - t) / args.reps)
        cells = "   ".join(f"{k} {statistics.median(v) * 1e3:8.3f} ms" for k, v in times.items())
        print(f"{name:20s} {cells}")


if __name__ == "__main__":
    main()
