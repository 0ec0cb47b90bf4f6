"""Indexing and batched linear algebra on arrays split over Explicit mesh axes, jitted (medians, ms):
gather, scatter-add and cholesky, each run by the partitioner on the devices' blocks (partition_rules.py:
_gather, _scatter, _per_batch_block), against the same program on one whole array, with 2 devices of
one thread each. (Before those rules, each gathered its operands, ran whole on every device and sliced
its result: 3.5x, 4.6x and 2.9x the whole array's time.)

    python bench/sharded_indexing.py [--reps 21]
"""
import argparse
import json
import os
import subprocess
import sys

WORKER = r"""
import json, statistics, sys, time
import numpy as np
import xjax as jax, xjax.numpy as jnp
from xjax.sharding import AxisType, NamedSharding, PartitionSpec as P

reps = int(sys.argv[1])
mesh = jax.make_mesh((2,), ("X",), axis_types=(AxisType.Explicit,))
rng = np.random.default_rng(0)
x_np = rng.standard_normal((4096, 256), dtype=np.float32)
ids = rng.integers(0, 256, 64).astype(np.int32)
a = rng.standard_normal((64, 32, 32), dtype=np.float32)
spd = np.einsum("bij,bkj->bik", a, a) + 32 * np.eye(32, dtype=np.float32)
programs = {
    "gather x[:, ids]": (lambda x: jnp.tanh(x[:, ids]), x_np),
    "scatter x.at[:, ids].add": (lambda x: x.at[:, ids].add(1.0), x_np),
    "cholesky of a stack": (jnp.linalg.cholesky, spd),
}
out = {}
for name, (f, a) in programs.items():
    g = jax.jit(f)
    for how, arg in (("whole", jax.device_put(a)), ("split", jax.device_put(a, NamedSharding(mesh, P("X"))))):
        with jax.set_mesh(mesh):
            jax.block_until_ready(g(arg))
            times = []
            for _ in range(reps):
                t = time.perf_counter()
                jax.block_until_ready(g(arg))
                times.append((time.perf_counter() - t) * 1e3)
        out[f"{name} {how}"] = statistics.median(times)
print(json.dumps(out))
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=21)
    args = parser.parse_args()
    env = dict(os.environ, XJAX_NUM_CPU_DEVICES="2", XJAX_NUM_THREADS="1")
    got = json.loads(subprocess.run([sys.executable, "-c", WORKER, str(args.reps)], env=env, capture_output=True,
                                    text=True, check=True).stdout)
    for name in dict.fromkeys(k.rsplit(" ", 1)[0] for k in got):
        whole, split = got[f"{name} whole"], got[f"{name} split"]
        print(f"{name:28s} whole {whole:8.3f} ms   split {split:8.3f} ms   split/whole {split / whole:5.2f}")


if __name__ == "__main__":
    main()
