"""Run under mpirun (2 processes x 2 CPU devices) by tests/test_distributed_sharding.py: all_gather,
ppermute, all_to_all and psum_scatter over a 2x2 mesh across the processes ('data' over the
processes or over each process's devices: argv[1]), in shard_map and in jit of shard_map, against a
NumPy loop over the devices' blocks; and the bytes each process sends (mpi_channel.bytes_sent) are
exactly those of the pieces that other processes' devices need, counted here by a loop over the
mesh. argv[1] "line": 3 processes of one device, a 3 x 1 mesh. Each process prints "ok routes" when its checks pass; argv[2], when given, is XJAX_NUM_THREADS."""
import itertools
import os
import sys

import numpy as np

if len(sys.argv) > 2:  # (read when xjax starts)
    os.environ["XJAX_NUM_THREADS"] = sys.argv[2]

import xjax as jax  # noqa: E402
from xjax import lax  # noqa: E402
from xjax._src import mpi_channel  # noqa: E402
from xjax.sharding import AxisType, Mesh, PartitionSpec as P  # noqa: E402

jax.distributed.initialize()
layout = sys.argv[1]
me = jax.process_index()
if layout == "line":  # one device in each of 3 processes: a 3 x 1 mesh
    mesh = Mesh(np.array(jax.devices()).reshape(3, 1), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
else:
    grid = np.array(jax.devices()).reshape(2, 2)  # row p: process p's devices
    mesh = Mesh(grid if layout == "processes" else grid.T, ("data", "model"), axis_types=(AxisType.Auto,) * 2)
SIZES = dict(zip(mesh.axis_names, mesh.devices.shape))
BR, BC = 12, 24  # a block's shape: its chunks split it among 1, 2, 3 or 4 devices
R, C = BR * SIZES["data"], BC * SIZES["model"]
x_np = np.arange(R * C, dtype=np.float32).reshape(R, C) - 40
x = jax.device_put(x_np, jax.NamedSharding(mesh, P("data", "model")))
BLOCK = {(i, j): x_np[BR * i:BR * (i + 1), BC * j:BC * (j + 1)] for i in range(SIZES["data"]) for j in range(SIZES["model"])}


def members(pos, axes):
    """The mesh positions of pos's group over `axes`, in member order (row-major in axes' order)."""
    out = []
    for idx in itertools.product(*[range(SIZES[a]) for a in axes]):
        p = dict(zip(("data", "model"), pos))
        p.update(zip(axes, idx))
        out.append((p["data"], p["model"]))
    return out


def process_of(pos):
    return mesh.devices[pos].process_index


def check(f, want, sent):
    """f's per-device results (shard_map's and jit's) are want(position) on this process's devices,
    and the collective sent `sent` bytes."""
    sm = jax.shard_map(f, mesh=mesh, in_specs=P("data", "model"), out_specs=P("data", "model"), check_vma=False)
    for run in (sm, jax.jit(sm)):
        run(x)  # (warm: traced and compiled)
        before = mpi_channel.bytes_sent
        out = run(x)
        assert mpi_channel.bytes_sent - before == sent, (f, mpi_channel.bytes_sent - before, sent)
        for s in out.addressable_shards:
            pos = tuple(int(k) for k in np.argwhere(mesh.devices == s.device)[0])
            np.testing.assert_array_equal(np.asarray(s.data), want(pos))


def crossing(axes, nbytes, targets=None):
    """Bytes this process's devices send: per route to a device of another process, one piece."""
    total = 0
    for pos in itertools.product(range(SIZES["data"]), range(SIZES["model"])):
        if process_of(pos) != me:
            continue
        group = members(pos, axes)
        for d in (targets(group.index(pos)) if targets else range(len(group))):
            total += nbytes * (process_of(group[d]) != me)
    return total


block_bytes = BLOCK[0, 0].nbytes
for axes in [("data",), ("model",), ("data", "model"), ("model", "data")]:
    n = len(members((0, 0), axes))
    for tiled in (True, False):
        for dim in (0, 1):
            def gathered(pos, axes=axes, tiled=tiled, dim=dim):
                blocks = [BLOCK[m] for m in members(pos, axes)]
                return np.concatenate(blocks, dim) if tiled else np.stack(blocks, dim)
            check(lambda a, axes=axes, tiled=tiled, dim=dim: lax.all_gather(a, axes, axis=dim, tiled=tiled),
                  gathered, crossing(axes, block_bytes))
    # a ring, and a shift that leaves member 0 without a sender (zeros)
    for perm in ([(k, (k + 1) % n) for k in range(n)], [(k, k + 1) for k in range(n - 1)]):
        def permuted(pos, axes=axes, perm=perm):
            group = members(pos, axes)
            src = [s for s, t in perm if t == group.index(pos)]
            return BLOCK[group[src[0]]] if src else np.zeros_like(BLOCK[pos])
        check(lambda a, axes=axes, perm=perm: lax.ppermute(a, axes, perm), permuted,
              crossing(axes, block_bytes, lambda s, perm=perm: [t for f, t in perm if f == s]))
    # all_to_all: member s's chunk d goes to member d
    for split, concat in ((1, 0), (1, 1), (0, 1)):
        def exchanged(pos, axes=axes, split=split, concat=concat):
            group = members(pos, axes)
            d = group.index(pos)
            chunks = [np.array_split(BLOCK[m], n, axis=split)[d] for m in group]
            return np.concatenate(chunks, concat)
        check(lambda a, axes=axes, split=split, concat=concat: lax.all_to_all(a, axes, split, concat, tiled=True),
              exchanged, crossing(axes, block_bytes // n))

    def scattered(pos, axes=axes):
        group = members(pos, axes)
        return sum(np.array_split(BLOCK[m], n, axis=0)[group.index(pos)] for m in group)
    check(lambda a, axes=axes: lax.psum_scatter(a, axes, scatter_dimension=0, tiled=True), scattered,
          crossing(axes, block_bytes // n))

# untiled all_to_all: the split axis has the group's size
k = SIZES["data"]


def untiled(pos):
    group = members(pos, ("data",))
    d = group.index(pos)
    return np.stack([BLOCK[m][:k][d] for m in group], 1)


check(lambda a: lax.all_to_all(a[:k], "data", 0, 1, tiled=False), untiled, crossing(("data",), BC * 4))
# other dtypes travel as bytes
for dtype in (np.int8, np.bool_, jax.numpy.bfloat16, np.complex64):
    def shifted(pos, dtype=dtype):
        group = members(pos, ("data",))
        d = group.index(pos)
        return ((BLOCK[group[d - 1]] % 7) if d else np.zeros_like(BLOCK[pos])).astype(dtype)
    shift = [(d, d + 1) for d in range(k - 1)]
    check(lambda a, dtype=dtype, shift=shift: lax.ppermute((a % 7).astype(dtype), "data", shift), shifted,
          crossing(("data",), BR * BC * np.dtype(dtype).itemsize, lambda s, shift=shift: [t for f, t in shift if f == s]))
# the ring over every device of the 2x2 mesh: where each process holds a row of it, each sends one block
ring = [(k, (k + 1) % 4) for k in range(4)]
if layout == "processes":
    assert crossing(("data", "model"), block_bytes, lambda s: [t for f, t in ring if f == s]) == block_bytes
print("ok routes")
