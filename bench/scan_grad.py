"""Grads of scans, where the loop bodies' per-step costs show: 64 float32 scalar carry leaves over 200
steps (jax #40150) and a tanh RNN (100 steps, 16x64 hidden). xjax (jit) and JAX (jit) interleaved in
one process; prints the median of the rounds in ms, and with --plan the steps of each loop body.

    python bench/scan_grad.py [--rounds 7] [--reps 20] [--plan]
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


def many_scalars(jx, np_):
    def loss(ws):
        def body(carry, x):
            return tuple(c * w + x for c, w in zip(carry, ws)), None
        carry, _ = jx.lax.scan(body, tuple(np_.float32(1.0) for _ in ws), np_.linspace(0.0, 1.0, 200))
        return sum(np_.tanh(c) for c in carry)
    ws = tuple(np_.float32(0.5 + 0.001 * i) for i in range(64))
    return jx.grad(loss), (ws,)


def rnn(jx, np_):
    rng = np.random.default_rng(2)
    wh = np_.asarray((rng.normal(size=(64, 64)) * 0.1).astype(np.float32))
    wx = np_.asarray((rng.normal(size=(32, 64)) * 0.1).astype(np.float32))
    xs = np_.asarray(rng.normal(size=(100, 16, 32)).astype(np.float32))

    def loss(wh, wx, xs):
        def cell(h, x):
            h = np_.tanh(h @ wh + x @ wx)
            return h, np_.sum(h * h)
        h, ys = jx.lax.scan(cell, np_.zeros((16, 64)), xs)
        return np_.sum(ys) + np_.sum(h)
    return jx.grad(loss, argnums=(0, 1)), (wh, wx, xs)


def body_steps(f, args):
    """Per loop body of f's compiled plan: its number of steps."""
    graph, outs, _, _ = graph_lowering.lower_closed_jaxpr(xjax.make_jaxpr(f)(*args))
    graph.set_outputs(list(dict.fromkeys(outs)))
    text = _core.compile(graph).plan_text()
    return [sum(ln.strip().startswith("step ") for ln in body.split("subplan 0:")[0].splitlines())
            for body in text.split("subplan 1:")[1:]]


def timed(f, args, reps):
    jax.block_until_ready(f(*args))
    t = time.perf_counter()
    for _ in range(reps):
        jax.block_until_ready(f(*args))
    return (time.perf_counter() - t) / reps * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--plan", action="store_true")
    a = ap.parse_args()
    for name, make in [("scan_grad_many_scalars", many_scalars), ("scan_rnn_grad_t100", rnn)]:
        fx, ax = make(xjax, xnp)
        fj, aj = make(jax, jnp)
        if a.plan:
            print(f"{name}: steps per loop body {body_steps(fx, ax)}")
        fx, fj = xjax.jit(fx), jax.jit(fj)
        tx, tj = [], []
        for _ in range(a.rounds):
            tx.append(timed(fx, ax, a.reps))
            tj.append(timed(fj, aj, a.reps))
        mx, mj = statistics.median(tx), statistics.median(tj)
        print(f"{name}: xjax {mx:.3f} ms  jax {mj:.3f} ms  ratio {mx / mj:.2f}")


if __name__ == "__main__":
    main()
