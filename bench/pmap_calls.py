"""The cost of a small pmap call, xjax next to JAX 0.10.2 (both over 2 CPU devices, each in its own
process, since the device count is fixed at start): a call on whole arguments (its results split over
the devices, as JAX's), a psum, a result fed back into the next call (its blocks passed as they are),
and the gradient and vmap of a pmap, eagerly and under jit (pmap as jit of a shard_map). Best of the
rounds, microseconds per call.

    python bench/pmap_calls.py [--rounds 7] [--calls 300]
"""
import argparse
import json
import os
import subprocess
import sys

WORKER = r"""
import json, sys, time
import numpy as np
lib, rounds, calls = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if lib == "jax":
    import jax
    from jax import lax
else:
    import xjax as jax
    from xjax import lax

x = jax.device_put(np.linspace(-1, 1, 2 * 64, dtype=np.float32).reshape(2, 64))
w = jax.device_put(np.linspace(0, 1, 64, dtype=np.float32))
scale = jax.pmap(lambda v: v * 0.5 + 1.0)
total = jax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")
loss = jax.pmap(lambda w, v: lax.psum(jax.numpy.tanh(v * w).sum(), "i"), axis_name="i", in_axes=(None, 0),
                out_axes=None)
grad = jax.grad(loss)
step = jax.jit(grad)
xs = jax.device_put(np.stack([np.asarray(x)] * 3))
batched = jax.vmap(lambda v: loss(w, v))
cases = {"elementwise": lambda y: scale(x), "psum": lambda y: total(x), "fed back": scale,
         "grad(pmap)": lambda y: grad(w, x), "jit(grad(pmap))": lambda y: step(w, x),
         "vmap(pmap)": lambda y: batched(xs)}
out = {}
for name, fn in cases.items():
    y = fn(x)
    y.block_until_ready()
    best = float("inf")
    for _ in range(rounds):
        y = x
        t = time.perf_counter()
        for _ in range(calls):
            y = fn(y)
        y.block_until_ready()
        best = min(best, (time.perf_counter() - t) / calls)
    out[name] = best * 1e6
print(json.dumps(out))
"""


def run(lib, rounds, calls):
    python_dir = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python")
    env = dict(os.environ, XJAX_NUM_CPU_DEVICES="2", XLA_FLAGS="--xla_force_host_platform_device_count=2",
               JAX_PLATFORMS="cpu")
    if lib == "xjax":
        env["PYTHONPATH"] = os.pathsep.join([python_dir, env.get("PYTHONPATH", "")])
    res = subprocess.run([sys.executable, "-c", WORKER, lib, str(rounds), str(calls)], capture_output=True, text=True,
                         env=env, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    xj, jx = run("xjax", args.rounds, args.calls), run("jax", args.rounds, args.calls)
    print(f"{'case':18s} {'xjax us':>9s} {'JAX us':>9s} {'ratio':>6s}")
    for name in xj:
        print(f"{name:18s} {xj[name]:9.1f} {jx[name]:9.1f} {xj[name] / jx[name]:6.2f}")


if __name__ == "__main__":
    main()
