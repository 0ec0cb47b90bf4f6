"""The shard_map primitive: one equation holding a body's jaxpr over one device's blocks, with the
manual mesh axes bound in it, printed as JAX's jaxprs show it, and all its rules.

Its impl runs the body on every device of the mesh at once (pmap_program.Program); its lowering is
the body written with one vmap per mesh axis over its operands' blocks (_to_blocks/_from_blocks
reshape and transpose between a global array and its grid of blocks), so collectives compute by
their vmap rules and a compiled program runs on one device until jit partitions. Its JVP, partial
evaluation, transpose and batching rules are JAX's: each gives another shard_map equation, of the
body's JVP, its known and unknown parts (residuals split per device), its transpose (with
check_vma=False, cotangents of replicated values divided among, and summed over, the devices they
are replicated on; with check_vma, the body's pvary and psum_invariant transposed do that), or the
body batched with the batch axis an unsplit dimension in front.
"""
import contextlib
import math
import weakref

from xjax._src import core, vmap as vmap_api
from xjax._src.interpreters import ad, batching, partial_eval as pe
from xjax._src.interpreters.graph_lowering import as_array
from xjax._src.interpreters.python_lowering import PythonLowering
from xjax._src.jaxpr import ClosedJaxpr, Jaxpr, eval_jaxpr, memoize_per_jaxpr
from xjax._src.jit_primitive import _pruned_split
from xjax._src.mesh_across import MeshPlace
from xjax._src.lax.layout import broadcast, index_in_dim, reshape, squeeze, transpose
from xjax._src.lax.parallel import psum
from xjax._src.pmap_program import Program, inline_collective_calls
from xjax._src.sharded_array import ShardedArray, place
from xjax._src.sharding import AbstractMesh, NamedSharding, PartitionSpec, _axis_names, _names_of, typed_sharding


class ContextAbstractMesh(AbstractMesh):
    """The mesh param of a shard_map whose mesh is jax.set_mesh's: JAX's params name its abstract
    mesh; this one keeps the concrete mesh (`concrete`) the impl and jit's partitioning place over.
    Equal to, and printed as, the abstract mesh."""

    def __init__(self, mesh):
        a = mesh.abstract_mesh
        super().__init__(a.axis_sizes, a.axis_names, a.axis_types, _platform=a._platform)
        self.concrete = mesh


def concrete_mesh(mesh):
    """The mesh of devices a shard_map's mesh param stands for."""
    return mesh.concrete if isinstance(mesh, ContextAbstractMesh) else mesh


@contextlib.contextmanager
def _mesh_bound(mesh, manual, check_vma):
    """The manual axes of the mesh bound as named axes (the others stay Auto: unnamed in the body);
    with check_vma, the body's values typed with the manual axes they vary over (core.shard_map_body)."""
    with contextlib.ExitStack() as stack:
        for name, size in zip(mesh.axis_names, mesh.axis_sizes):
            if name in manual:
                stack.enter_context(core.extend_axis_env(name, size))
        stack.enter_context(core.shard_map_body(_manual_order(mesh, manual), check_vma))
        yield


def _manual_order(mesh, axes):
    axes = set(axes)
    return tuple(n for n in mesh.axis_names if n in axes)


def _spec_axes(spec, ndim):
    """Per dimension, the mesh axes that split it."""
    entries = list(spec) + [None] * (ndim - len(spec))
    return [_names_of(p) for p in entries]



# ---- the blocks' axes as vmapped axes (under a transformation) ----------------------------------

def _to_blocks(x, axes, mesh):
    """x with each mesh axis that splits it brought out front, in mesh order, its blocks after."""
    shape, split_dims = [], []
    for dim, names in enumerate(axes):
        for n in names:
            split_dims.append((mesh.axis_names.index(n), len(shape)))
            shape.append(mesh.shape[n])
        shape.append(x.shape[dim] // math.prod(mesh.shape[n] for n in names))
    if not split_dims:
        return x
    x = reshape(x, tuple(shape))
    front = [pos for _, pos in sorted(split_dims)]
    return transpose(x, tuple(front + [d for d in range(len(shape)) if d not in front]))


def _from_blocks(y, axes, mesh):
    """The inverse of _to_blocks: y's leading mesh axes (in mesh order) back into its dimensions."""
    used = sorted((mesh.axis_names.index(n), n) for names in axes for n in names)
    if not used:
        return y
    k = len(used)
    lead = [n for _, n in used]
    # where each leading axis goes: just before its dimension's block, in the spec's order
    order, shape = [], []
    for dim, names in enumerate(axes):
        for n in names:
            order.append(lead.index(n))
            shape.append(mesh.shape[n])
        order.append(k + dim)
        shape.append(y.shape[k + dim])
    y = transpose(y, tuple(order))
    return reshape(y, tuple(math.prod(shape[j] for j in group) for group in _groups(axes)))


def _groups(axes):
    i, out = 0, []
    for names in axes:
        out.append(list(range(i, i + len(names) + 1)))
        i += len(names) + 1
    return out



def _over_blocks(body, mesh, in_axes, flat_out_specs, flat_args):
    """body (flat blocks -> flat blocks) as one vmap per mesh axis over the arguments' blocks."""
    names = mesh.axis_names
    fun_v = body
    for level in reversed(range(len(names))):
        level_in = [0 if names[level] in {n for a in axes for n in a} else None for axes in in_axes]
        fun_v = vmap_api.vmap(fun_v, in_axes=level_in, axis_name=names[level], axis_size=mesh.axis_sizes[level])
    outs = fun_v(*[_to_blocks(x, axes, mesh) for x, axes in zip(flat_args, in_axes)])
    results = []
    for y, spec in zip(outs, flat_out_specs):
        axes = _spec_axes(spec, y.ndim - len(names))
        kept = {n for a in axes for n in a}
        for level in reversed(range(len(names))):  # an axis the out_spec leaves out: its first device's value
            if names[level] not in kept:
                y = index_in_dim(y, 0, level, keepdims=False)
        results.append(_from_blocks(y, axes, mesh))
    return results



def _run(program, mesh, shards, flat_specs):
    """The program on every device of the mesh (shards: per argument, its blocks in device order);
    its results assembled as flat_specs say. Over a mesh across processes, the shards and results are
    this process's devices' blocks."""
    devices = [d.local_hardware_id for d in mesh.local_devices]
    across = MeshPlace.of(mesh) if mesh.is_multi_process else None  # collectives between processes
    outs = program([list(per_device) for per_device in zip(*shards)] if shards else [[] for _ in devices], devices,
                   mesh_place=across)
    results = []
    for i, spec in enumerate(flat_specs):
        blocks = [as_array(o[i]) for o in outs]
        results.append(ShardedArray(blocks, *_layout(blocks[0].aval, spec, mesh)))
    return results


_layouts = {}  # (block aval, spec, mesh) -> (sharding, global aval): the same for every call of a program


def _layout(aval, spec, mesh):
    key = (aval, spec, mesh)
    found = _layouts.get(key)
    if found is None:
        if len(spec) > aval.ndim:
            raise ValueError(f"shard_map out_specs entry {spec} is longer than the rank {aval.ndim} of the output")
        if len(_layouts) > 1024:
            _layouts.clear()
        found = _layouts[key] = (NamedSharding(mesh, spec), _global_aval(aval, spec, mesh))
    return found


def _global_aval(aval, spec, mesh):
    tiling = [math.prod(mesh.shape[n] for n in names) for names in _spec_axes(spec, aval.ndim)]
    return aval.update(shape=tuple(d * t for d, t in zip(aval.shape, tiling))).with_vma(())


# ---- the primitive ------------------------------------------------------------------------------

shard_map_p = core.Primitive("shard_map", multiple_results=True)




def _sm_abstract_eval(*avals, jaxpr, mesh, out_specs, **_):
    return [_global_aval(a, s, mesh) for a, s in zip(jaxpr.out_avals, out_specs)]


def _sm_sharding(*avals, jaxpr, mesh, out_specs, **_):
    """The results' types split as out_specs say over the mesh's Explicit axes (JAX's)."""
    mesh = concrete_mesh(mesh)
    return [typed_sharding(NamedSharding(mesh, s), a.ndim) for a, s in zip(jaxpr.out_avals, out_specs)]


_impl_programs = weakref.WeakKeyDictionary()


def _sm_impl(*args, jaxpr, mesh, in_specs, out_specs, **_):
    mesh = concrete_mesh(mesh)
    program = memoize_per_jaxpr(_impl_programs, jaxpr, (mesh, core.axis_env()), lambda: Program(
        inline_collective_calls(jaxpr), None, tuple(zip(mesh.axis_names, mesh.axis_sizes))))
    shards = [place(as_array(x), NamedSharding(mesh, s))._shards for x, s in zip(args, in_specs)]
    return _run(program, mesh, shards, out_specs)


def _sm_vmapped(*args, jaxpr, mesh, in_specs, out_specs, **_):
    """The equation as one vmap per mesh axis over its operands' blocks."""
    in_axes = [_spec_axes(s, core.get_aval(x).ndim) for x, s in zip(args, in_specs)]
    body = lambda *blocks: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *blocks)  # noqa: E731
    return _over_blocks(body, mesh, in_axes, out_specs, args)


def _sm_jvp(primals, tangents, *, jaxpr, mesh, in_specs, out_specs, **params):
    """JAX's rule: one shard_map of the body's JVP, each tangent split as its primal."""
    nonzeros = [type(t) is not ad.Zero for t in tangents]
    with _mesh_bound(mesh, params["newly_manual_axes"], params["check_vma"]):
        jvp_closed, out_nonzeros = ad.jvp_jaxpr(jaxpr, nonzeros)
    outs = shard_map_p.bind(
        *primals, *[t for t in tangents if type(t) is not ad.Zero], jaxpr=jvp_closed, mesh=mesh,
        in_specs=in_specs + tuple(s for s, nz in zip(in_specs, nonzeros) if nz),
        out_specs=out_specs + tuple(s for s, nz in zip(out_specs, out_nonzeros) if nz), **params)
    n = len(out_specs)
    rest = iter(outs[n:])
    avals = _sm_abstract_eval(jaxpr=jaxpr, mesh=mesh, out_specs=out_specs)
    return outs[:n], [next(rest) if nz else ad.Zero(ad.tangent_aval(a)) for a, nz in zip(avals, out_nonzeros)]


def _res_spec(manual, mesh, aval, check_vma):
    """A residual's spec: each device's own, split along its first dimension over every manual axis
    (with check_vma: over the axes its type varies over, as JAX's; none: replicated)."""
    names = aval.vma if check_vma else tuple(n for n in mesh.axis_names if n in manual)
    return PartitionSpec(names[0] if len(names) == 1 else names) if names else PartitionSpec()


def _sm_partial_eval(trace, args, unknown, *, jaxpr, mesh, in_specs, out_specs, **params):
    """JAX's rule: a known shard_map (run now) giving the known outputs and the residuals, each device's
    own (scalars made [1]), and an unknown one (recorded) reading them; residuals that are known
    operands or outputs are passed as they are."""
    manual = params["newly_manual_axes"]
    with _mesh_bound(mesh, manual, params["check_vma"]):
        known, unknown_closed, out_unknowns, num_res = pe.partial_eval_jaxpr(jaxpr, unknown)
        known, unknown_closed, res_src = _pruned_split(known, unknown_closed, num_res)
        known, unknown_closed = _promote_scalar_residuals(known, unknown_closed, res_src)
    n_primal = len(out_unknowns) - sum(out_unknowns)
    k = known.jaxpr  # JAX's order of the known outputs: residuals first
    known = ClosedJaxpr(Jaxpr(k.constvars, k.invars, k.outvars[n_primal:] + k.outvars[:n_primal], k.eqns), known.consts)
    known_args = [a for a, u in zip(args, unknown) if not u]
    known_in_specs = tuple(s for s, u in zip(in_specs, unknown) if not u)
    known_out_specs = tuple(s for s, u in zip(out_specs, out_unknowns) if not u)
    n_res_out = len(known.out_avals) - n_primal
    res_specs_out = [_res_spec(manual, mesh, a, params["check_vma"]) for a in known.out_avals[:n_res_out]]
    known_outs = trace.bind_in_parent(shard_map_p, known_args, dict(
        jaxpr=known, mesh=mesh, in_specs=known_in_specs,
        out_specs=tuple(res_specs_out) + known_out_specs, **params))
    known_outs = known_outs[n_res_out:] + known_outs[:n_res_out]
    residuals, res_specs = [], []
    for kind, i in res_src:
        if kind == "in":
            residuals.append(known_args[i]), res_specs.append(known_in_specs[i])
        elif kind == "out":
            residuals.append(known_outs[i]), res_specs.append(known_out_specs[i])
        else:
            residuals.append(known_outs[n_primal + i]), res_specs.append(res_specs_out[i])
    unknown_outs = pe.DynamicJaxprTrace.process_primitive(trace, shard_map_p, [
        *residuals, *(a for a, u in zip(args, unknown) if u)], dict(
        jaxpr=unknown_closed, mesh=mesh, in_specs=tuple(res_specs) + tuple(s for s, u in zip(in_specs, unknown) if u),
        out_specs=tuple(s for s, u in zip(out_specs, out_unknowns) if u), **params))
    k, u = iter(known_outs[:n_primal]), iter(unknown_outs)
    return [next(u) if unk else next(k) for unk in out_unknowns]


def _promote_scalar_residuals(known, unknown, res_src):
    """Scalar residuals of the known part as [1] (a device's own value has a dimension to split)."""
    n_primal = len(known.out_avals) - sum(kind == "res" for kind, _ in res_src)
    promote = [a.ndim == 0 for a in known.out_avals[n_primal:]]
    if not any(promote):
        return known, unknown
    known_ = pe.trace_to_jaxpr(lambda *xs: [
        broadcast(o, (1,)) if i >= n_primal and promote[i - n_primal] else o
        for i, o in enumerate(eval_jaxpr(known.jaxpr, known.consts, *xs))], list(known.in_avals))
    res_promoted = iter(promote)
    which = [kind == "res" and next(res_promoted) for kind, _ in res_src]
    unknown_ = pe.trace_to_jaxpr(lambda *xs: eval_jaxpr(unknown.jaxpr, unknown.consts, *[
        squeeze(x, (0,)) if i < len(which) and which[i] else x for i, x in enumerate(xs)]), [
        a.update(shape=(1,)) if i < len(which) and which[i] else a for i, a in enumerate(unknown.in_avals)])
    return known_, unknown_


def _sm_transpose(cts, *args, jaxpr, mesh, in_specs, out_specs, **params):
    """JAX's rule: the body transposed. With check_vma=False also an output's cotangent divided among
    the devices it is replicated over and an input's cotangent summed over the axes it is replicated
    over; with check_vma the body's types do that (pvary and psum_invariant transpose to each other)."""
    manual = params["newly_manual_axes"]
    unmentioned = lambda spec: () if params["check_vma"] else tuple(  # noqa: E731
        n for n in mesh.axis_names if n in manual and n not in set(_axis_names(spec)))
    linear = [ad.is_undefined(a) for a in args]
    ct_nonzeros = [type(c) is not ad.Zero for c in cts]
    cts = [c if type(c) is ad.Zero or not unmentioned(s) else
           c / math.prod(mesh.shape[n] for n in unmentioned(s))
           for c, s in zip(cts, out_specs)]
    res = [a for a, lin in zip(args, linear) if not lin]
    with _mesh_bound(mesh, manual, params["check_vma"]):
        t_closed = ad.transpose_jaxpr(jaxpr, linear, ct_nonzeros)
        lin_specs = [s for s, lin in zip(in_specs, linear) if lin]
        n_ct = sum(ct_nonzeros)

        def body(*cts_res):  # JAX's order: cotangents, then residuals
            outs = eval_jaxpr(t_closed.jaxpr, t_closed.consts, *cts_res[n_ct:], *cts_res[:n_ct])
            return [psum(o, unmentioned(s)) if unmentioned(s) else o for o, s in zip(outs, lin_specs)]
        ct_avals = [a for a, nz in zip(jaxpr.out_avals, ct_nonzeros) if nz]
        closed = pe.trace_to_jaxpr(body, ct_avals + [a for a, lin in zip(jaxpr.in_avals, linear) if not lin])
    outs = iter(shard_map_p.bind(
        *[c for c in cts if type(c) is not ad.Zero], *res, jaxpr=closed, mesh=mesh,
        in_specs=tuple(s for s, nz in zip(out_specs, ct_nonzeros) if nz) + tuple(
            s for s, lin in zip(in_specs, linear) if not lin), out_specs=tuple(lin_specs), **params))
    return [next(outs) if lin else None for lin in linear]


def _front_spec(spec):
    return PartitionSpec(None, *spec)


def _sm_batch(axis, vals, dims, *, jaxpr, mesh, in_specs, out_specs, **params):
    """JAX's rule: the body batched, the batch axis an unsplit dimension in front of its specs."""
    in_batched = [d is not batching.not_mapped for d in dims]
    vals = [batching.moveaxis(v, d, 0) if b else v for v, d, b in zip(vals, dims, in_batched)]
    with _mesh_bound(mesh, params["newly_manual_axes"], params["check_vma"]):
        batched, out_batched = batching.batch_jaxpr(jaxpr, axis, in_batched)
    outs = shard_map_p.bind(
        *vals, jaxpr=batched, mesh=mesh, in_specs=tuple(_front_spec(s) if b else s for s, b in zip(in_specs, in_batched)),
        out_specs=tuple(_front_spec(s) if b else s for s, b in zip(out_specs, out_batched)), **params)
    return outs, [0 if b else batching.not_mapped for b in out_batched]


def _show_manual(axes, mesh):
    return "frozenset({" + ", ".join(repr(n) for n in mesh.axis_names if n in axes) + "})"


shard_map_p.def_rules(
    abstract_eval=_sm_abstract_eval, sharding=_sm_sharding, impl=_sm_impl, jvp=_sm_jvp, batch=_sm_batch, partial_eval=_sm_partial_eval,
    transpose=_sm_transpose,
    pp_params=lambda eqn, ctx: [(k, _show_manual(v, eqn.params["mesh"]) if k == "newly_manual_axes" else v)
                                for k, v in sorted(eqn.params.items())])
PythonLowering(_sm_vmapped, multiple_results=True).install(shard_map_p)
