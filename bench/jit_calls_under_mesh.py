"""The cost of a small jit call under jax.set_mesh next to the same call without a mesh, xjax and JAX
0.10.2 (each in its own process over 2 CPU devices): the call path keys a signature on the context
mesh, so a call under a mesh should cost what a plain one does. Median of the rounds (alternating the
two), microseconds per call.

    python bench/jit_calls_under_mesh.py [--rounds 9] [--calls 2000] [--xjax-python DIR]

--xjax-python runs another checkout's xjax (its python/ folder), to compare with an older build.
"""
import argparse
import json
import os
import subprocess
import sys

WORKER = r"""
import json, statistics, sys, time
import numpy as np
lib, rounds, calls = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if lib == "jax":
    import jax
else:
    import xjax as jax

x = jax.device_put(np.linspace(-1, 1, 10, dtype=np.float32))
w = {"a": jax.device_put(np.ones(10, np.float32)), "b": jax.device_put(np.float32(2))}
one = jax.jit(lambda v: v * 2.0 + 1.0)
tree = jax.jit(lambda p, v: p["a"] * v + p["b"])
mesh = jax.make_mesh((2,), ("x",))
cases = {"one arg": lambda: one(x), "pytree": lambda: tree(w, x)}


def per_call_us(fn):
    t = time.perf_counter()
    for _ in range(calls):
        y = fn()
    y.block_until_ready()
    return (time.perf_counter() - t) / calls * 1e6


out = {}
for name, fn in cases.items():  # (rounds alternate the two, so that load changes hit both alike)
    plain, meshed = [], []
    fn().block_until_ready()
    for _ in range(rounds):
        plain.append(per_call_us(fn))
        with jax.set_mesh(mesh):
            meshed.append(per_call_us(fn))
    out[name], out[name + " under mesh"] = statistics.median(plain), statistics.median(meshed)
print(json.dumps(out))
"""


def run(lib, rounds, calls, python_dir):
    env = dict(os.environ, XJAX_NUM_CPU_DEVICES="2", XLA_FLAGS="--xla_force_host_platform_device_count=2",
               JAX_PLATFORMS="cpu")
    if lib == "xjax":
        env["PYTHONPATH"] = os.pathsep.join([python_dir, env.get("PYTHONPATH", "")])
    res = subprocess.run([sys.executable, "-c", WORKER, lib, str(rounds), str(calls)], capture_output=True, text=True,
                         env=env, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--xjax-python", default=os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "python"))
    args = parser.parse_args()
    xj, jx = run("xjax", args.rounds, args.calls, args.xjax_python), run("jax", args.rounds, args.calls, None)
    print(f"{'case':20s} {'xjax us':>9s} {'JAX us':>9s} {'ratio':>6s}")
    for name in xj:
        print(f"{name:20s} {xj[name]:9.2f} {jx[name]:9.2f} {xj[name] / jx[name]:6.2f}")


if __name__ == "__main__":
    main()
