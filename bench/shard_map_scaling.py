"""shard_map and sharded eager ops over 2 CPU devices of one thread each, against one device of one
thread (medians).

Each configuration runs in its own process (the numbers of devices and threads are fixed at start):
XJAX_NUM_CPU_DEVICES=2 XJAX_NUM_THREADS=2 for the mesh, XJAX_NUM_THREADS=1 for one device.
  shard_map: a chain of 512x512 matmuls and tanh on each device's 512x512 block of a (1024, 512)
             array split over a mesh axis of 2 (eager shard_map: every device at once), against
             jit of the chain on one block (rate = blocks per second; target >= 1.7x one device).
  eager op:  jnp.tanh(x) * x + x on a (2048, 2048) float32 array split over the 2 devices (each op runs
             per device), against the same ops on the whole array on one device.

    python bench/shard_map_scaling.py [--reps 15] [--depth 4]
"""
import argparse
import json
import os
import subprocess
import sys

WORKER = r"""
import json, statistics, sys, time
import numpy as np
import xjax, xjax.numpy as jnp
from xjax.sharding import NamedSharding, PartitionSpec as P

mode, reps, depth = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
w = jnp.asarray(rng.standard_normal((512, 512), dtype=np.float32) / np.sqrt(512))

def chain(v, w):
    for _ in range(depth):
        v = jnp.tanh(v @ w)
    return v

def timed(fn):
    for _ in range(3):
        fn().block_until_ready()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn().block_until_ready()
        times.append(time.perf_counter() - t)
    return statistics.median(times)

big = jnp.asarray(rng.standard_normal((2048, 2048), dtype=np.float32))
if mode == "one":
    block = jnp.asarray(rng.standard_normal((512, 512), dtype=np.float32))
    f = xjax.jit(chain)
    out = {"shard_map_s": timed(lambda: f(block, w)), "blocks": 1,
           "eager_op_s": timed(lambda: jnp.tanh(big) * big + big)}
else:
    mesh = xjax.make_mesh((2,), ("d",))
    x = xjax.device_put(jnp.asarray(rng.standard_normal((1024, 512), dtype=np.float32)), NamedSharding(mesh, P("d")))
    f = xjax.shard_map(chain, mesh=mesh, in_specs=(P("d"), P()), out_specs=P("d"))
    s = xjax.device_put(big, NamedSharding(mesh, P("d")))
    out = {"shard_map_s": timed(lambda: f(x, w)), "blocks": 2, "eager_op_s": timed(lambda: jnp.tanh(s) * s + s)}
out["threads"] = [d.num_threads for d in xjax.devices()]
print(json.dumps(out))
"""

CONFIGS = {"one": {"XJAX_NUM_THREADS": "1", "XJAX_NUM_CPU_DEVICES": "1"},
           "mesh2": {"XJAX_NUM_THREADS": "2", "XJAX_NUM_CPU_DEVICES": "2"}}


def run(mode, reps, depth):
    python_dir = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python")
    env = dict(os.environ, PYTHONPATH=python_dir, **CONFIGS[mode])
    env.pop("JAX_NUM_CPU_DEVICES", None)
    out = subprocess.run([sys.executable, "-c", WORKER, mode, str(reps), str(depth)], env=env, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--depth", type=int, default=4)
    args = parser.parse_args()
    one, two = run("one", args.reps, args.depth), run("mesh2", args.reps, args.depth)
    rate = (two["blocks"] / two["shard_map_s"]) / (one["blocks"] / one["shard_map_s"])
    print(f"shard_map: one device {one['shard_map_s'] * 1e3:.2f} ms/block, 2 devices {two['shard_map_s'] * 1e3:.2f} "
          f"ms/2 blocks: {rate:.2f}x the data rate (threads {one['threads']} vs {two['threads']})")
    print(f"eager tanh(x)*x+x on 2048x2048: one device {one['eager_op_s'] * 1e3:.2f} ms, split over 2 "
          f"{two['eager_op_s'] * 1e3:.2f} ms: {one['eager_op_s'] / two['eager_op_s']:.2f}x")


if __name__ == "__main__":
    main()
