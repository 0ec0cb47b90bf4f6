"""jit over sharded arguments: the traced program partitioned over their mesh, run on every device.

`plan` propagates a layout from the arguments' shardings to every value of the jaxpr and writes the
per-device program at the same time: the global jaxpr is interpreted over one device's blocks,
each equation through its rule (partition_rules.py), inside a trace with the mesh axes bound as
named axes, so the collectives a rule needs (psum after a split contraction or reduction,
all_gather and axis_index slices to reshard) are ordinary equations of the per-device jaxpr. The
plan then runs as a shard_map does (pmap_program.Program, compiled segments on every device at
once), its in_specs the arguments' and its out_specs the propagated layouts of the results, which
come back as sharded arrays. Plans are kept per (jaxpr, mesh, argument layouts). Control flow's
rules are partition_control.py's. Over a mesh across processes the same plan runs on this process's
devices, its collectives meeting the other processes through mesh_across.MeshPlace (as shard_map's).

Partitioned: eager calls of a jitted function whose sharded arguments share one mesh (jit's
in_shardings place them first; over Explicit axes the results' layouts are JAX's types, see
partition_rules.py), and the eager evaluation of jit equations on such operands (the parts of
grad or vmap of a jitted function that run now: `jit_primitive.partitioned`). Not partitioned, and
run on the gathered arguments as before: arguments over several meshes, calls with named axes bound
around them, and programs where a rule refuses to gather an Explicit axis (results whole). A program on
whole arguments holding shard_maps over one mesh (a jit of a pmap) runs compiled whole, its results
placed as the plan lays them out (`placed_as_jax`).
"""
import weakref
from typing import NamedTuple

from xjax._src import core, jit_primitive, partition_control, partition_rules, sharded_array
from xjax._src.array import Array
from xjax._src.custom_calls import custom_jvp_call_p, custom_vjp_call_p
from xjax._src.interpreters import partial_eval as pe
from xjax._src.jaxpr import ClosedJaxpr, Jaxpr, Literal, eval_jaxpr, has_effect, literal_value, memoize_per_jaxpr
from xjax._src.jit_primitive import jit_p
from xjax._src.lax.layout import index_in_dim
from xjax._src.lax.parallel import COLLECTIVES, all_gather, axis_index_p
from xjax._src.partition_rules import RULES, count, gathered, reshard, whole
from xjax._src.pmap_program import Program, inline_collective_calls
from xjax._src.sharded_array import ShardedArray, place
from xjax._src.shard_map_primitive import _mesh_bound, _run, _spec_axes, concrete_mesh, shard_map_p
from xjax._src.sharding import NamedSharding, PartitionSpec


def partition_jaxpr(jaxpr, consts, ins, mesh):
    """The equations of `jaxpr` over blocks: ins and the results as (block, axes) pairs."""
    env = {v: (c, whole(core.get_aval(c).ndim)) for v, c in zip(jaxpr.constvars, consts)}
    env.update(zip(jaxpr.invars, ins))

    def read(a):
        return (literal_value(a), ()) if type(a) is Literal else env[a]

    for eqn in jaxpr.eqns:
        outs = RULES.get(eqn.primitive, gathered)(mesh, eqn, [read(a) for a in eqn.invars])
        env.update(zip(eqn.outvars, outs))
    return [read(a) for a in jaxpr.outvars]


def _inlined(param):
    """A primitive holding the jaxpr it computes: its body partitioned in place."""
    def rule(mesh, eqn, ins):
        closed = eqn.params[param]
        return partition_jaxpr(closed.jaxpr, closed.consts, ins, mesh)
    return rule


def _axes(spec, ndim):
    return tuple(map(tuple, _spec_axes(spec, ndim)))


def _shard_map(mesh, eqn, ins):
    """A shard_map over this mesh, manual over all of it: its body is per-device code already, run on
    the operands resharded to its in_specs; its results are split as its out_specs say (an axis they
    leave out takes its first device's value, unless check_vma proved them the same there)."""
    p = eqn.params
    if concrete_mesh(p["mesh"]) != mesh or set(p["newly_manual_axes"]) != set(mesh.axis_names):
        return gathered(mesh, eqn, ins)
    blocks = [reshard(x, axes, _axes(s, len(axes)), mesh) for (x, axes), s in zip(ins, p["in_specs"])]
    outs = eval_jaxpr(p["jaxpr"].jaxpr, p["jaxpr"].consts, *blocks)
    results = []
    for o, s, v in zip(outs, p["out_specs"], eqn.outvars):
        axes = _axes(s, v.aval.ndim)
        named = {n for a in axes for n in a}
        for n in mesh.axis_names:
            if n not in named and not p["check_vma"]:
                o = index_in_dim(all_gather(o, n), 0, 0, keepdims=False)
        results.append((o, axes))
    return results


RULES.update({jit_p: _inlined("jaxpr"), custom_jvp_call_p: _inlined("call_jaxpr"),
              custom_vjp_call_p: _inlined("call_jaxpr"), shard_map_p: _shard_map})


def collectives_late(closed):
    """The equations reordered, dependencies kept, so that collectives run as late as they can, those
    ready together one after another (axis_index first): the program's compiled segments between
    them, which every device runs at once, become fewer and larger (a gradient's psums: one run)."""
    jaxpr = closed.jaxpr
    if any(has_effect(e) for e in jaxpr.eqns):
        return closed
    ready = set(jaxpr.invars) | set(jaxpr.constvars)
    is_ready = lambda e: all(type(a) is Literal or a in ready for a in e.invars)  # noqa: E731
    order = [e for e in jaxpr.eqns if e.primitive is axis_index_p]
    pending = [e for e in jaxpr.eqns if e.primitive is not axis_index_p]
    ready.update(v for e in order for v in e.outvars)
    while pending:
        emitted = len(order)
        for cut in (False, True):  # every computation that can run, then the collectives that can
            waiting, cut_outs = [], []
            for e in pending:
                if (e.primitive in COLLECTIVES) != cut or not is_ready(e):
                    waiting.append(e)
                    continue
                order.append(e)
                if cut:
                    cut_outs += e.outvars
                else:
                    ready.update(e.outvars)
            pending = waiting
            ready.update(cut_outs)
        if len(order) == emitted:
            raise AssertionError("collectives_late: equations whose inputs are never defined")
    return ClosedJaxpr(Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, order), closed.consts)


RULES.update(partition_control.rules(partition_jaxpr, collectives_late))


def _spec(axes, mesh):
    """A layout as the PartitionSpec JAX gives: over every dimension where the mesh has Explicit axes
    (the type's), else without trailing unsplit dimensions."""
    entries = [None if not a else a[0] if len(a) == 1 else a for a in axes]
    while entries and entries[-1] is None and not mesh.explicit_axes:
        entries.pop()
    return PartitionSpec(*entries)


class Plan(NamedTuple):
    jaxpr: ClosedJaxpr  # over one device's blocks
    in_specs: tuple
    out_specs: tuple
    program: Program


def plan(closed, mesh, in_axes):
    """The per-device program of `closed` for arguments laid out as in_axes (see the module docstring)."""
    avals = [a.update(shape=tuple(n // count(mesh, names) for n, names in zip(a.shape, axes)))
             for a, axes in zip(closed.in_avals, in_axes)]
    out_axes = []

    def body(*blocks):
        outs = partition_jaxpr(closed.jaxpr, closed.consts, list(zip(blocks, in_axes)), mesh)
        out_axes[:] = [axes for _, axes in outs]
        return [x for x, _ in outs]

    try:
        with _mesh_bound(mesh, frozenset(mesh.axis_names), False):  # (layouts, not varying types, tracked here)
            per_device = pe.trace_to_jaxpr(body, avals)
    finally:
        partition_rules.broadcasts.clear()
    per_device = collectives_late(inline_collective_calls(per_device))
    program = Program(per_device, None, tuple(zip(mesh.axis_names, mesh.axis_sizes)))
    return Plan(per_device, tuple(_spec(a, mesh) for a in in_axes), tuple(_spec(a, mesh) for a in out_axes), program)


def mesh_of(args):
    """The one mesh of these concrete arguments' sharded ones, over which a call on them is partitioned;
    None where it is not (see the module docstring)."""
    meshes = {x._sharding.mesh for x in args if type(x) is ShardedArray}
    if len(meshes) != 1 or core.axis_env() or any(type(x) not in (Array, ShardedArray) for x in args):
        return None
    return meshes.pop()


EAGER_ONLY = set()  # primitives that need this process's view of a mesh across processes (pmap_across.py)


def _holds_eager_only(jaxpr):
    return any(eqn.primitive in EAGER_ONLY or (eqn.primitive is jit_p and _holds_eager_only(eqn.params["jaxpr"].jaxpr))
               for eqn in jaxpr.eqns)


_eager_only = weakref.WeakKeyDictionary()  # ClosedJaxpr -> {(): whether it holds an EAGER_ONLY equation}


def eager_equations(closed, args):
    """A jitted program holding an EAGER_ONLY equation, run equation by equation on these concrete
    arguments (its jit equations partitioned where their operands are sharded); None for any other."""
    if not memoize_per_jaxpr(_eager_only, closed, (), lambda: _holds_eager_only(closed.jaxpr)):
        return None
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def _shard_map_meshes(jaxpr):
    """The meshes of the shard_maps manual over all of their mesh in a jaxpr and the jit bodies it
    calls (which partitioning inlines)."""
    meshes = set()
    for eqn in jaxpr.eqns:
        if eqn.primitive is shard_map_p:
            mesh = concrete_mesh(eqn.params["mesh"])
            if set(eqn.params["newly_manual_axes"]) == set(mesh.axis_names):
                meshes.add(mesh)
        elif eqn.primitive is jit_p:
            meshes |= _shard_map_meshes(eqn.params["jaxpr"].jaxpr)
    return meshes


_shard_map_mesh = weakref.WeakKeyDictionary()  # ClosedJaxpr -> {(): the one mesh of its shard_maps or None}


def placed_as_jax(closed, avals, run):
    """`run` (the compiled program of `closed`, whole arguments of these avals -> whole results) with its
    results placed as JAX lays them out where the program holds shard_maps over one mesh of this
    process's devices (a jit of a pmap: split as their out_specs say, and as the plan propagates them
    on); None for any other program. The compiled program computes, on one device, what the plan would
    on each: a small jit of a pmap keeps the cost of one compiled call."""
    def one():
        meshes = _shard_map_meshes(closed.jaxpr)
        return meshes.pop() if len(meshes) == 1 else _UNPARTITIONED
    mesh = memoize_per_jaxpr(_shard_map_mesh, closed, (), one)
    if mesh is _UNPARTITIONED or mesh.is_multi_process:
        return None
    try:
        specs = plan(closed, mesh, tuple(whole(a.ndim) for a in avals)).out_specs
    except NotImplementedError:
        return None
    shardings = [NamedSharding(mesh, s) for s in specs]
    return lambda args: [place(out, s) for out, s in zip(run(args), shardings)]


_plans = weakref.WeakKeyDictionary()  # ClosedJaxpr -> {(mesh, argument layouts): Plan}


def plan_for(closed, args, mesh):
    """The Plan for these arguments, or None where a rule refuses an Explicit axis (NotImplementedError)."""
    in_axes = tuple(_axes(x._sharding.spec, x.ndim) if type(x) is ShardedArray else whole(x.ndim) for x in args)

    def make():
        try:
            return plan(closed, mesh, in_axes)
        except NotImplementedError:
            return _UNPARTITIONED
    p = memoize_per_jaxpr(_plans, closed, (mesh, in_axes), make)
    return None if p is _UNPARTITIONED else p


_UNPARTITIONED = object()


def call(closed, args, mesh):
    """The jaxpr run partitioned over `mesh` on every device at once: its results as sharded arrays;
    None where it is not partitioned (run on the gathered arguments)."""
    p = plan_for(closed, args, mesh)
    if p is None:
        return None
    shards = [x._shards if type(x) is ShardedArray else [x] * len(mesh.local_devices) for x in args]
    return _run(p.program, mesh, shards, p.out_specs)


def _jit_impl_partitioned(closed, args):
    """The jit primitive's eager evaluation (the parts of grad or vmap of a jitted function that run
    now) on sharded operands: partitioned as a jitted call is; None otherwise."""
    outs = eager_equations(closed, args)
    if outs is not None:
        return outs
    if ShardedArray not in map(type, args):
        return None
    mesh = mesh_of(args)
    return None if mesh is None else call(closed, args, mesh)


jit_primitive.partitioned = _jit_impl_partitioned


_reshard_programs = {}  # (aval, mesh, layout before, layout after) -> Program


def resharded(x, sharding):
    """x (a ShardedArray) laid out over its mesh as `sharding` says, its blocks moved by the collectives
    of `reshard` run on every device: across processes they meet through the mesh's MeshPlace."""
    mesh = sharding.mesh
    key = (x.aval, mesh, _axes(x._sharding.spec, x.ndim), _axes(sharding.spec, x.ndim))
    program = _reshard_programs.get(key)
    if program is None:
        aval, _, have, want = key
        block = aval.update(shape=tuple(n // count(mesh, a) for n, a in zip(aval.shape, have)))
        with _mesh_bound(mesh, frozenset(mesh.axis_names), False):
            closed = pe.trace_to_jaxpr(lambda b: [reshard(b, have, want, mesh)], [block])
        if len(_reshard_programs) > 256:
            _reshard_programs.clear()
        program = _reshard_programs[key] = Program(collectives_late(closed), None,
                                                   tuple(zip(mesh.axis_names, mesh.axis_sizes)))
    (out,) = _run(program, mesh, [x._shards], [sharding.spec])
    return ShardedArray(out._shards, sharding, x.aval)


sharded_array.resharded_across = resharded


_primitive_jaxprs = {}  # (primitive, params, operand avals) -> the ClosedJaxpr binding it once


def primitive_partitioned(prim, args, params):
    """An eager primitive on arrays split over the devices of several processes, run as JAX runs every
    eager primitive, a jitted call: partitioned over their mesh (None where it is not partitioned)."""
    mesh = mesh_of(args)
    if mesh is None:
        return None
    avals = tuple(core.get_aval(a) for a in args)
    try:
        key = (prim, tuple(sorted(params.items())), avals)
        closed = _primitive_jaxprs.get(key)
    except TypeError:  # an unhashable param: traced each time
        key, closed = None, None
    if closed is None:
        def bound(*xs):
            out = prim.bind(*xs, **params)
            return list(out) if prim.multiple_results else [out]
        closed = pe.trace_to_jaxpr(bound, list(avals))
        if key is not None:
            if len(_primitive_jaxprs) > 256:
                _primitive_jaxprs.clear()
            _primitive_jaxprs[key] = closed
    outs = call(closed, list(args), mesh)
    if outs is None or prim.multiple_results:
        return outs
    return outs[0]


sharded_array.partitioned_across = primitive_partitioned
