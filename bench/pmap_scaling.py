"""pmap scaling: a compute-bound function (a chain of 512x512 matmuls and tanh) over 2 CPU devices
of one thread each, against the same function on one device of one thread (medians).

Each configuration runs in its own process, since the number of devices and threads is fixed at
start: XJAX_NUM_CPU_DEVICES=2 XJAX_NUM_THREADS=2 for pmap (one thread per device), and
XJAX_NUM_THREADS=1 for the single device (jit of one shard, and pmap over that one device).
Data rate = shards (512x512 float32 inputs) processed per second; target: pmap >= 1.7x one device.

    python bench/pmap_scaling.py [--reps 15] [--depth 4]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

SIZE = 512

WORKER = r"""
import json, statistics, sys, time
import numpy as np
import xjax, xjax.numpy as jnp

mode, reps, depth = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

def f(v, w):
    for _ in range(depth):
        v = jnp.tanh(v @ w)
    return v

rng = np.random.default_rng(0)
w = jnp.asarray(rng.standard_normal((SIZE, SIZE), dtype=np.float32) / np.sqrt(SIZE))
shards = 2 if mode == "pmap2" else 1
x = jnp.asarray(rng.standard_normal((shards, SIZE, SIZE), dtype=np.float32))
if mode == "jit1":
    fn, arg = xjax.jit(f), x[0]
else:
    fn, arg = xjax.pmap(f, in_axes=(0, None)), x
for _ in range(3):
    fn(arg, w).block_until_ready()  # compile, warm up
times = []
for _ in range(reps):
    t = time.perf_counter()
    fn(arg, w).block_until_ready()
    times.append(time.perf_counter() - t)
print(json.dumps({"mode": mode, "shards": shards, "median_s": statistics.median(times),
                  "devices": len(xjax.devices()), "threads": [d.num_threads for d in xjax.devices()]}))
""".replace("SIZE", str(SIZE))

CONFIGS = [  # (mode, environment)
    ("jit1", {"XJAX_NUM_THREADS": "1", "XJAX_NUM_CPU_DEVICES": "1"}),
    ("pmap1", {"XJAX_NUM_THREADS": "1", "XJAX_NUM_CPU_DEVICES": "1"}),
    ("pmap2", {"XJAX_NUM_THREADS": "2", "XJAX_NUM_CPU_DEVICES": "2"}),
]


def run(mode, env, reps, depth):
    python_dir = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python")
    full = dict(os.environ, **env)
    full["PYTHONPATH"] = os.pathsep.join(p for p in [python_dir, os.environ.get("PYTHONPATH")] if p)
    out = subprocess.run([sys.executable, "-c", WORKER, mode, str(reps), str(depth)], env=full, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--reps", type=int, default=15)
    p.add_argument("--depth", type=int, default=4, help="matmul + tanh steps")
    p.add_argument("--rounds", type=int, default=3, help="alternating runs of every configuration (medians)")
    args = p.parse_args()
    rates = {mode: [] for mode, _ in CONFIGS}
    info = {}
    t0 = time.perf_counter()
    for _ in range(args.rounds):  # alternate, so that load from elsewhere hits every configuration alike
        for mode, env in CONFIGS:
            r = run(mode, env, args.reps, args.depth)
            rates[mode].append(r["shards"] / r["median_s"])
            info[mode] = r
    print(f"function: {args.depth} x (512x512 @ 512x512, tanh) per shard; {args.rounds} rounds x {args.reps} calls")
    print(f"{'config':>8} {'devices':>8} {'threads/device':>15} {'shards/s':>9} {'MB/s':>7}")
    mb = SIZE * SIZE * 4 / 1e6
    for mode, _ in CONFIGS:
        rate = statistics.median(rates[mode])
        print(f"{mode:>8} {info[mode]['devices']:>8} {str(info[mode]['threads']):>15} {rate:9.1f} {rate * mb:7.1f}")
    base = statistics.median(rates["jit1"])
    print(f"pmap over 2 devices / one device (jit, 1 thread): {statistics.median(rates['pmap2']) / base:.2f}x"
          f"   (pmap over 1 device / jit: {statistics.median(rates['pmap1']) / base:.2f}x)"
          f"   [{time.perf_counter() - t0:.0f} s]")


if __name__ == "__main__":
    main()
