"""pmap across processes under a transformation (jit, grad, vjp, vmap of a pmap).

As JAX's docs describe multi-process pmap: the mapped axis covers every process's devices and each
process passes (and gets back) the slice of its own devices, its host-local arrays. Under a
transformation pmap is jit(shard_map(_fun)) over the mesh of every process's devices, whose operands
and results are global arrays; two primitives move between the views:

- `to_global`: a process's local slice (mapped along `axis`; None: the same value everywhere) as the
  global array split over `mesh` (JAX's host_local_array_to_global_array);
- `to_local`: a global array split so, as this process's slice: its own devices' blocks over
  `local_mesh`, the mesh of those devices, as an eager pmap across processes returns it.

Each is linear, the other's transpose, and batches with the batch axis in front. A conversion needs
this process's view of the mesh, which neither a compiled graph nor a per-device program has: a jitted
program holding one runs equation by equation (partition.eager_equations), the shard_map's jit among
them partitioned over the global mesh, its collectives across processes (mesh_across.MeshPlace).
"""
from xjax._src import core, partition
from xjax._src.api import device_put
from xjax._src.interpreters import ad, batching
from xjax._src.interpreters.graph_lowering import as_array
from xjax._src.sharded_array import ShardedArray, make_array_from_process_local_data
from xjax._src.sharding import NamedSharding, PartitionSpec


def _spec(mesh, axis):
    return PartitionSpec() if axis is None else PartitionSpec(*[None] * axis, mesh.axis_names[0])


def _processes(mesh):
    return mesh.size // len(mesh.local_devices)


def _scaled(aval, axis, mul, div=1):
    """aval with its mapped axis (None: none) mul/div times as long."""
    if axis is None:
        return aval
    shape = list(aval.shape)
    shape[axis] = shape[axis] * mul // div
    return aval.update(shape=tuple(shape))


def _to_global_eval(x, *, mesh, axis, local_mesh):
    return _scaled(x, axis, _processes(mesh))


def _to_global_impl(x, *, mesh, axis, local_mesh):
    sharding = NamedSharding(mesh, _spec(mesh, axis))
    shape = _scaled(core.get_aval(x), axis, _processes(mesh)).shape
    return make_array_from_process_local_data(sharding, as_array(x), shape)


def _to_local_eval(y, *, mesh, axis, local_mesh):
    return _scaled(y, axis, 1, _processes(mesh))


def _to_local_impl(y, *, mesh, axis, local_mesh):
    want = NamedSharding(mesh, _spec(mesh, axis))
    if type(y) is not ShardedArray or y.sharding != want:
        y = device_put(y, want)  # (resharded across processes where it needs to be)
    return ShardedArray(y._shards, NamedSharding(local_mesh, _spec(local_mesh, axis)),
                        _to_local_eval(y.aval, mesh=mesh, axis=axis, local_mesh=local_mesh))


def _batched(prim):
    def rule(axis_data, vals, dims, /, *, mesh, axis, local_mesh):  # (positional: the `axis` param)
        x = batching.bdim_at_front(vals[0], dims[0], axis_data.size)
        return prim.bind(x, mesh=mesh, axis=None if axis is None else axis + 1, local_mesh=local_mesh), 0
    return rule


def _pp(eqn, ctx):
    return [("axis", eqn.params["axis"]), ("mesh", eqn.params["mesh"])]


to_global_p = core.Primitive("pmap_to_global")
to_local_p = core.Primitive("pmap_to_local")
to_global_p.def_rules(abstract_eval=_to_global_eval, impl=_to_global_impl, batch=_batched(to_global_p), pp_params=_pp)
to_local_p.def_rules(abstract_eval=_to_local_eval, impl=_to_local_impl, batch=_batched(to_local_p), pp_params=_pp)
ad.deflinear(to_global_p, lambda ct, x, **p: [ad.Zero(x.aval) if type(ct) is ad.Zero else to_local_p.bind(ct, **p)])
ad.deflinear(to_local_p, lambda ct, y, **p: [ad.Zero(y.aval) if type(ct) is ad.Zero else to_global_p.bind(ct, **p)])
partition.EAGER_ONLY.update({to_global_p, to_local_p})


def to_global(x, mesh, axis, local_mesh):
    return to_global_p.bind(x, mesh=mesh, axis=axis, local_mesh=local_mesh)


def to_local(y, mesh, axis, local_mesh):
    return to_local_p.bind(y, mesh=mesh, axis=axis, local_mesh=local_mesh)
