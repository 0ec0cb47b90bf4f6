"""shard_map's collectives over a mesh whose devices belong to several processes.

Each process runs the body on its own devices' blocks (pmap_program.Program, as over a local mesh)
and, at a cut equation, meets the others here. Every process holds the same number of the mesh's
devices; every process takes part in every exchange, in program order (mpi_channel checks it).
With one device per process on a mesh of one axis, a body whose collectives are all-reduces runs as
pmap's does: compiled whole, the all-reduces in the core.

  psum, pmax, pmin: each process reduces its devices' blocks per group (the devices that differ only
    along the reduced axes), into a table with one row per group (the reduction's identity where it
    holds no device of the group); one all-reduce of the tables (lax/parallel_mpi.allreduce_many,
    which also packs independent equations, a gradient's leaves, into one exchange) completes every
    group, and each device takes its group's row. Groups that no process boundary crosses need no
    exchange.
  all_gather, ppermute, all_to_all, psum_scatter: as routes of pieces of blocks between devices
    (lax/parallel_routes.py): each process sends each other one only the pieces its devices need,
    in one all-to-all, and none where the groups lie within processes.
  every other cut equation (control flow holding collectives): its operands' blocks are gathered
    from every process (one all-gather each), put in the mesh's device order, and the equation runs
    as over a local mesh (one vmap per mesh axis, pmap_program._bind_over_mesh); each device keeps
    its own result.
"""
import math

import numpy as np

from xjax._src import distributed
from xjax._src.interpreters.graph_lowering import as_array
from xjax._src.lax import parallel as P, parallel_mpi, parallel_routes, reduction
from xjax._src.lax.base import asarray
from xjax._src.lax.layout import broadcast_in_dim, concatenate, expand_dims, index_in_dim
from xjax._src.pmap_program import _bind_over_mesh, _read, gathered_operands
from xjax._src.sharded_array import _starts, assemble


_REDUCE = {"psum": reduction.reduce_sum, "pmax": reduction.reduce_max, "pmin": reduction.reduce_min}


def _identity(name, dtype):
    """The value that leaves a reduction unchanged: 0 for psum, the lowest (highest) for pmax (pmin)."""
    if name == "psum":
        value = 0
    elif dtype == np.bool_:
        value = name == "pmin"
    elif np.issubdtype(dtype, np.inexact):
        value = -np.inf if name == "pmax" else np.inf
    else:
        value = np.iinfo(dtype).min if name == "pmax" else np.iinfo(dtype).max
    return asarray(np.array(value, dtype))


class MeshPlace:
    """Where this process's devices sit in a mesh across processes, and its collectives there."""

    _made = {}

    @classmethod
    def of(cls, mesh):
        place = cls._made.get(mesh)
        if place is None:
            if len(cls._made) > 64:
                cls._made.clear()
            place = cls._made[mesh] = cls(mesh)
        return place

    def __init__(self, mesh):
        self.mesh_axes = tuple(zip(mesh.axis_names, mesh.axis_sizes))
        self.size, self.local = mesh.size, mesh.local_positions
        self.process = [d.process_index for d in mesh.devices.flat]
        counts = [self.process.count(p) for p in range(distributed.process_count())]
        if len(set(counts)) != 1:
            raise NotImplementedError(f"shard_map over a mesh holding {counts} devices of the processes 0 .. "
                                      f"{len(counts) - 1}: across processes, xjax needs a mesh holding as many "
                                      "devices of every process")
        # The all-gather stacks process 0's blocks (its devices in mesh order), then process 1's, ...
        gathered = sorted(range(self.size), key=lambda i: (self.process[i], i))
        self.rows = [gathered.index(i) for i in range(self.size)]
        self.shards = parallel_mpi.Shards("mesh", self.size, 0, len(self.local))
        self._routes = {}  # (primitive, params) -> parallel_routes.Routes

    def whole(self, program):
        """With one device per process on a mesh of one axis (pmap's case), the program compiled
        whole with its all-reduces in the core (Program.whole_across), else None."""
        if len(self.local) != 1 or len(self.mesh_axes) != 1:
            return None
        return program.whole_across(self.shards, self.mesh_axes[0][0])

    def _groups(self, axis_name):
        """Per device of the mesh, its group for a reduction over axis_name (the others' positions)."""
        missing = [a for a in axis_name if a not in dict(self.mesh_axes)]
        if missing:
            raise NotImplementedError(f"a collective over the axes {axis_name} inside shard_map across processes: "
                                      f"{missing} are no axes of its mesh")
        kept = [k for k, (name, _) in enumerate(self.mesh_axes) if name not in axis_name]
        sizes = [s for _, s in self.mesh_axes]
        groups = []
        for i in range(self.size):
            pos = np.unravel_index(i, sizes)
            groups.append(int(np.ravel_multi_index([pos[k] for k in kept], [sizes[k] for k in kept])) if kept else 0)
        return groups, math.prod(sizes[k] for k in kept)

    def allreduce(self, eqns, envs):
        """Independent psum (pmax, pmin) equations over the same axes, as one exchange."""
        prim, axis_name = eqns[0].primitive, eqns[0].params["axis_name"]
        groups, count = self._groups(axis_name)
        crossing = any(len({self.process[i] for i in range(self.size) if groups[i] == g}) > 1 for g in range(count))
        tables = [self._table(P.ALL_REDUCES[prim], [as_array(_read(env, eqn.invars[0])) for env in envs], groups, count)
                  for eqn in eqns]
        if crossing:
            tables = [t[0] for t in parallel_mpi.allreduce_many(prim, parallel_mpi.Shards(axis_name, count, 0, 1),
                                                                [[t] for t in tables], axis_name)]
        for eqn, table in zip(eqns, tables):
            for env, i in zip(envs, self.local):
                env[eqn.outvars[0]] = table if count == 1 else index_in_dim(table, groups[i], 0, keepdims=False)

    def _table(self, name, blocks, groups, count):
        """(count, *block): per group, the reduction of this process's blocks in it (else the identity);
        one group's is the block itself."""
        rows, empty = [], None
        for g in range(count):
            mine = [b for b, i in zip(blocks, self.local) if groups[i] == g]
            if len(mine) > 1:
                row = _REDUCE[name](concatenate([expand_dims(b, (0,)) for b in mine], 0), (0,))
            elif mine:
                row = mine[0]
            else:
                if empty is None:
                    empty = broadcast_in_dim(_identity(name, blocks[0].dtype), blocks[0].shape, ())
                row = empty
            rows.append(row)
        return rows[0] if count == 1 else concatenate([expand_dims(r, (0,)) for r in rows], 0)

    def _every_block(self, blocks):
        """Every device's block of one value, stacked along axis 0 in the mesh's device order."""
        stacked = parallel_mpi.allgather_stack(self.shards, blocks)
        if self.rows == list(range(self.size)):
            return stacked
        return concatenate([index_in_dim(stacked, r, 0, keepdims=True) for r in self.rows], 0)

    def routes(self, eqn):
        """The parallel_routes.Routes of a collective that moves blocks, else None."""
        if eqn.primitive not in parallel_routes.KINDS:
            return None
        key = (eqn.primitive, repr(sorted(eqn.params.items())))
        routes = self._routes.get(key)
        if routes is None:
            if len(self._routes) > 256:
                self._routes.clear()
            routes = self._routes[key] = parallel_routes.Routes(self, eqn.primitive, eqn.params)
        return routes

    def run_gathered(self, eqn, envs):
        """A cut equation over every device's operand blocks; each device keeps its own result.
        Collectives that move blocks send each process only what its devices need."""
        routes = self.routes(eqn)
        if routes is not None:
            outs = routes([as_array(_read(env, eqn.invars[0])) for env in envs])
            for env, out in zip(envs, outs):
                env[eqn.outvars[0]] = out
            return
        ins, mapped = gathered_operands(eqn, envs, self._every_block)
        outs = _bind_over_mesh(eqn, ins, mapped, self.size, self.mesh_axes)
        for var, (val, _) in zip(eqn.outvars, outs):
            for env, i in zip(envs, self.local):
                env[var] = index_in_dim(val, i, 0, keepdims=False)


def global_value(x):
    """The whole of a ShardedArray spanning processes, on every process: every block gathered."""
    place = MeshPlace.of(x.sharding.mesh)
    every = place._every_block(list(x._shards))
    first = {}  # a block's starts -> the first device holding it
    for i, idx in enumerate(x.sharding.devices_indices_map(x.shape).values()):
        first.setdefault(_starts(idx), i)
    return assemble({k: index_in_dim(every, i, 0, keepdims=False) for k, i in first.items()}, x.ndim)
