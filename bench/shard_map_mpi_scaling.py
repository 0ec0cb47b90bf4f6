"""shard_map across MPI processes: a compute-bound data-parallel training step over 2 processes of
one one-thread CPU device each, against the same step in one process of one one-thread device
(medians; target >= 1.6x). Also the CPU time per step of each process: what the load of other
programs does not change (Linux's autogroup scheduling gives one session -- mpirun and its
processes -- one share of a busy machine, so wall times scale only where cores are free).

The step: an MLP (512 -> 1024 -> 512, tanh) on a global batch of 4096 examples, as one shard_map
over a mesh of every process's devices ('data'): each device's gradient of its rows, pmean'd over
'data' (across processes: one MPI all-reduce of the packed gradient leaves), and an SGD update of the
replicated parameters. One process runs the whole batch on its one device; two run half each.

With --own-sessions each process runs in a session of its own (setsid), as a process on a node of
its own: autogroup then gives each the share that the lone process of the baseline gets.
With --jit the same step is written with plain jit over the global arrays (no shard_map, no pmean):
jit partitions it over their mesh (partition.py), the gradient's psums across processes.

    python bench/shard_map_mpi_scaling.py [--reps 10] [--own-sessions] [--jit]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

WORKER = r"""
import json, statistics, sys, time
import numpy as np
import xjax, xjax.numpy as jnp
import xjax.experimental.multihost_utils
from xjax import lax
from xjax.sharding import NamedSharding, PartitionSpec as P

xjax.distributed.initialize()
reps, batch, d, h = int(sys.argv[1]), 4096, 512, 1024
use_jit = sys.argv[2] == "jit"
rng = np.random.default_rng(0)
mesh = xjax.make_mesh((len(xjax.devices()),), ("data",))
rows = NamedSharding(mesh, P("data"))
me, n = xjax.process_index(), xjax.process_count()
mine = slice(batch // n * me, batch // n * (me + 1))
xs = xjax.make_array_from_process_local_data(rows, rng.standard_normal((batch, d), dtype=np.float32)[mine])
ys = xjax.make_array_from_process_local_data(rows, rng.standard_normal((batch, d), dtype=np.float32)[mine])
params = {"w1": rng.standard_normal((d, h), dtype=np.float32) / np.sqrt(d), "b1": np.zeros(h, np.float32),
          "w2": rng.standard_normal((h, d), dtype=np.float32) / np.sqrt(h), "b2": np.zeros(d, np.float32)}
params = xjax.device_put(params, NamedSharding(mesh, P()))

def loss(p, a, y):
    return jnp.mean((jnp.tanh(a @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - y) ** 2)

def local_step(p, a, y):
    l, g = xjax.value_and_grad(loss)(p, a, y)
    g = lax.pmean(g, "data")
    return lax.pmean(l, "data"), xjax.tree.map(lambda v, gv: v - 0.01 * gv, p, g)

def global_step(p, a, y):  # over the global arrays: partitioned by jit
    l, g = xjax.value_and_grad(loss)(p, a, y)
    return l, xjax.tree.map(lambda v, gv: v - 0.01 * gv, p, g)

step = xjax.jit(global_step) if use_jit else xjax.shard_map(
    local_step, mesh=mesh, in_specs=(P(), P("data"), P("data")), out_specs=(P(), P()), check_vma=False)
for _ in range(3):
    l, params = step(params, xs, ys)
    xjax.block_until_ready(params)
cpu, times = time.process_time(), []
for _ in range(reps):
    t = time.perf_counter()
    l, params = step(params, xs, ys)
    xjax.block_until_ready(params)
    times.append(time.perf_counter() - t)
cpu = (time.process_time() - cpu) / reps
cpus = [float(c) for c in xjax.experimental.multihost_utils.process_allgather(np.float64(cpu))]
if me == 0:
    print(json.dumps({"processes": n, "median_s": statistics.median(times), "loss": float(l), "cpu_s": cpus,
                      "threads": [d.num_threads for d in xjax.local_devices()]}))
"""


def run(processes, reps, own_sessions=False, use_jit=False):
    python_dir = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python")
    env = dict(os.environ, PYTHONPATH=python_dir, XJAX_NUM_THREADS="1", XJAX_NUM_CPU_DEVICES="1")
    env.pop("JAX_NUM_CPU_DEVICES", None)
    cmd = (["setsid", "--wait"] if own_sessions else []) + [sys.executable, "-c", WORKER, str(reps),
                                                             "jit" if use_jit else "shard_map"]
    if processes > 1:
        mpirun = shutil.which("mpirun", path=os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", "")]))
        version = subprocess.run([mpirun, "--version"], capture_output=True, text=True).stdout
        flags = ["--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else []) \
            if "Open MPI" in version or "OpenRTE" in version else []
        cmd = [mpirun, "-np", str(processes), *flags] + cmd
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--own-sessions", action="store_true")
    parser.add_argument("--jit", action="store_true")
    args = parser.parse_args()
    one, two = run(1, args.reps, args.own_sessions, args.jit), run(2, args.reps, args.own_sessions, args.jit)
    print(f"data-parallel step ({'jit' if args.jit else 'shard_map'}), batch 4096: one process "
          f"{one['median_s'] * 1e3:.1f} ms, 2 MPI processes "
          f"{two['median_s'] * 1e3:.1f} ms: {one['median_s'] / two['median_s']:.2f}x (threads per device "
          f"{one['threads']} vs {two['threads']}; losses {one['loss']:.6f} vs {two['loss']:.6f})")
    print(f"CPU time per step: one process {one['cpu_s'][0] * 1e3:.1f} ms, each of 2 processes "
          f"{', '.join(f'{c * 1e3:.1f}' for c in two['cpu_s'])} ms: {one['cpu_s'][0] / max(two['cpu_s']):.2f}x")


if __name__ == "__main__":
    main()
