"""A jitted training step on arrays split over 2 CPU devices of one thread each (jit partitions it over
their mesh), against the same step on one device of one thread (medians).

Each configuration runs in its own process (the numbers of devices and threads are fixed at start):
XJAX_NUM_CPU_DEVICES=2 XJAX_NUM_THREADS=2 for the mesh, XJAX_NUM_THREADS=1 for one device. The step
is an SGD step of a 3-layer tanh MLP (width 512, batch 1024, float32), written once with plain jit:
  data-parallel: the batch split over the mesh axis, the parameters replicated (gradients psum'd);
  megatron:      the batch whole, the layers split column-wise then row-wise (a psum per pair).
Target: the data-parallel step >= 1.7x the speed of one device. The CPU time a step costs (both
devices together) bounds that speed-up where each device has a core of its own, whatever the load.
With --loop scan, one jitted call runs 4 such steps inside lax.scan, over 4 batches stacked along a
leading dimension (unsplit, the batch split as above): the loop is partitioned, its body run on
every device with the psums inside it (partition_control.py, program_control.py).

    python bench/jit_partition_scaling.py [--reps 15] [--loop scan]
"""
import argparse
import json
import os
import subprocess
import sys

WORKER = r"""
import json, resource, statistics, sys, time
import numpy as np
import xjax, xjax.numpy as jnp
from xjax.sharding import AxisType, NamedSharding, PartitionSpec as P

mode, reps, loop = sys.argv[1], int(sys.argv[2]), sys.argv[3]
steps = 4 if loop == "scan" else 1
rng = np.random.default_rng(0)
width, batch = 512, 1024
params = [rng.standard_normal((width, width), dtype=np.float32) / np.sqrt(width) for _ in range(4)]
lead = (steps,) if loop == "scan" else ()  # (the batches' leading dimension, unsplit)
batch_split = (None,) * len(lead) + ("d",)
x = rng.standard_normal(lead + (batch, width), dtype=np.float32)
y = rng.standard_normal(lead + (batch, width), dtype=np.float32)

def loss(ws, xb, yb):
    h = xb
    for w in ws[:-1]:
        h = jnp.tanh(h @ w)
    return jnp.mean((h @ ws[-1] - yb) ** 2)

def sgd(ws, xb, yb):
    l, g = xjax.value_and_grad(loss)(ws, xb, yb)
    return [w - 0.01 * d for w, d in zip(ws, g)], l

@xjax.jit
def step(ws, xb, yb):
    if loop == "scan":
        return xjax.lax.scan(lambda c, b: sgd(c, *b), ws, (xb, yb))
    return sgd(ws, xb, yb)

def cpu_s():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime

def timed(ws, xb, yb):
    for _ in range(15 // steps):  # (the first calls of a process run its devices' threads unevenly)
        xjax.block_until_ready(step(ws, xb, yb))
    times, cpu0 = [], cpu_s()
    for _ in range(reps):
        t = time.perf_counter()
        xjax.block_until_ready(step(ws, xb, yb))
        times.append(time.perf_counter() - t)
    return statistics.median(times), (cpu_s() - cpu0) / reps

if mode == "one":
    out = {"dp_s": timed([jnp.asarray(w) for w in params], jnp.asarray(x), jnp.asarray(y))}
    out["megatron_s"] = out["dp_s"]
else:
    mesh = xjax.make_mesh((2,), ("d",), axis_types=(AxisType.Auto,))
    put = lambda v, *spec: xjax.device_put(jnp.asarray(v), NamedSharding(mesh, P(*spec)))
    out = {"dp_s": timed([put(w) for w in params], put(x, *batch_split), put(y, *batch_split)),
           "megatron_s": timed([put(w, *((None, "d") if i % 2 == 0 else ("d",))) for i, w in enumerate(params)],
                               put(x), put(y))}
out["threads"] = [d.num_threads for d in xjax.devices()]
print(json.dumps(out))
"""

CONFIGS = {"one": {"XJAX_NUM_THREADS": "1", "XJAX_NUM_CPU_DEVICES": "1"},
           "mesh2": {"XJAX_NUM_THREADS": "2", "XJAX_NUM_CPU_DEVICES": "2"}}


def run(mode, reps, loop):
    python_dir = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python")
    env = dict(os.environ, PYTHONPATH=python_dir, **CONFIGS[mode])
    env.pop("JAX_NUM_CPU_DEVICES", None)
    out = subprocess.run([sys.executable, "-c", WORKER, mode, str(reps), loop], env=env, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--loop", choices=("none", "scan"), default="none")
    args = parser.parse_args()
    one, two = run("one", args.reps, args.loop), run("mesh2", args.reps, args.loop)
    what = "call of 4 steps in lax.scan" if args.loop == "scan" else "step"
    for name in ("dp", "megatron"):
        (t1, c1), (t2, c2) = one[name + "_s"], two[name + "_s"]
        print(f"{name} {what}: one device {t1 * 1e3:.2f} ms, 2 devices {t2 * 1e3:.2f} ms: {t1 / t2:.2f}x (threads "
              f"{one['threads']} vs {two['threads']}); CPU time per call {c1 * 1e3:.1f} ms vs {c2 * 1e3:.1f} ms "
              f"(both devices): {2 * c1 / c2:.2f}x where each device has a core of its own")


if __name__ == "__main__":
    main()
