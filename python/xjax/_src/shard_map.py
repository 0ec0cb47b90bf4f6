"""shard_map: a function written for one device's blocks, run on every device of a mesh.

Each argument is split over the mesh as its in_spec says (a sharded array already split so gives
its shards as they are); the body is traced once over one device's blocks with every mesh axis
bound as a named axis, and runs as pmap's program does (pmap_program.Program): its compiled
segments on every device at once, its collectives over the blocks stacked, one vmap per mesh
axis, so that psum(x, 'X') reduces over the devices that differ in their X position alone. The
results are the devices' blocks, assembled as out_specs say into sharded arrays.

Under a transformation (jit, grad, vmap, make_jaxpr: the arguments are tracers) the body's jaxpr
is one shard_map equation (shard_map_primitive.py). An axis that an out_spec leaves out is one the
body's result is replicated over: its first device's value stands for all.
"""
import functools
import math

from xjax._src import core, data_leaves, tree_util, vmap as vmap_api
from xjax._src.interpreters import partial_eval as pe
from xjax._src.interpreters.graph_lowering import as_array
from xjax._src.pmap_program import Program, inline_collective_calls
from xjax._src.sharded_array import ShardedArray, place
from xjax._src.shard_map_primitive import ContextAbstractMesh, _manual_order, _mesh_bound, _run, _spec_axes, shard_map_p
from xjax._src.shard_map_vma import check_out_specs
from xjax._src.sharding import AxisType, Mesh, NamedSharding, PartitionSpec, _axis_names, _check_unique_axes, \
    _names_of, get_mesh, typed_sharding


def _check_in(fun, mesh, spec, x, i):
    aval = core.get_aval(x)
    name = pe.fun_name(fun)
    if len(spec) > aval.ndim:
        raise ValueError(
            f"shard_map applied to the function '{name}' was given an in_specs entry which is too long to be "
            f"compatible with the corresponding input value from the function:\n\nin_specs is {spec} which has "
            f"length {len(spec)}, but the passed args[{i}] has shape {aval.dtype.name}[{','.join(map(str, aval.shape))}], "
            f"which has rank {aval.ndim} (and {aval.ndim} < {len(spec)})")
    for dim, axes in enumerate(_spec_axes(spec, aval.ndim)):
        parts = math.prod(mesh.shape[a] for a in axes)
        if aval.shape[dim] % parts:
            raise ValueError(
                f"shard_map applied to the function '{name}' was given argument arrays with axis sizes that are not "
                f"evenly divisible by the corresponding mesh axis sizes:\n\nThe mesh given has shape {mesh.axis_sizes} "
                f"with corresponding axis names {mesh.axis_names}.\n\nthe passed args[{i}] of shape "
                f"{aval.dtype.name}[{','.join(map(str, aval.shape))}] corresponds to in_specs of value {spec}, which "
                f"maps array axis {dim} (of size {aval.shape[dim]}) to mesh axis {axes[0] if len(axes) == 1 else axes} "
                f"(of size {parts}), but {parts} does not evenly divide {aval.shape[dim]}")
    if type(x) is ShardedArray and mesh.explicit_axes:
        have = typed_sharding(x.sharding, aval.ndim).spec
        want = typed_sharding(NamedSharding(mesh, spec), aval.ndim).spec
        if have != want:
            raise ValueError(f"in_specs passed to shard_map: {spec} does not match the specs of the input: {have} "
                             f"for arg: {x.aval.with_sharding(typed_sharding(x.sharding, aval.ndim))}.")


def _specs(name, tree, specs):
    specs_leaves = vmap_api.flatten_axes(name, tree, specs, "shard_map")
    for s in specs_leaves:
        if not isinstance(s, PartitionSpec):
            raise TypeError(f"shard_map {name} must be PartitionSpecs (jax.P), got {s!r}")
        _check_unique_axes(s)
    return specs_leaves


def _flat_body(fun, in_tree, out_trees):
    """fun over one device's flat blocks, returning its flat results (their tree goes to out_trees)."""
    def body(*blocks):
        args, kwargs = in_tree.unflatten(blocks)
        out = fun(*args, **kwargs)
        leaves, tree = data_leaves.flatten(out)
        out_trees.append(tree)
        return leaves

    return body


def _trace_body(fun, mesh, manual, in_tree, avals, in_specs_flat, out_specs, check_vma):
    """(the body's jaxpr over one device's blocks with the manual mesh axes bound, its output tree);
    with check_vma, out_specs checked against the axes each output may vary over."""
    out_trees = []
    flat_fun = _flat_body(fun, in_tree, out_trees)
    dbg = pe.DebugInfo("shard_map", fun, names_fn=lambda: [])
    if check_vma:  # a block varies over the axes that split it
        avals = [a.with_vma(_manual_order(mesh, _axis_names(s))) for a, s in zip(avals, in_specs_flat)]
    with _mesh_bound(mesh, manual, check_vma):
        closed = pe.trace_to_jaxpr(flat_fun, avals, dbg, what=f"function {pe.func_src_info(fun)} traced for shard_map")
    out_tree = out_trees[0]
    if check_vma:
        flat_out = _specs("out_specs", out_tree.unflatten([0] * out_tree.num_leaves), out_specs)
        check_out_specs(pe.fun_name(fun), mesh, out_tree, flat_out, [a.vma for a in closed.out_avals])
    return closed, out_tree


def _block_aval(aval, axes, mesh):
    return aval.update(shape=tuple(d // math.prod(mesh.shape[n] for n in names) for d, names in zip(aval.shape, axes)))


# ---- eagerly: the program on every device -------------------------------------------------------

_programs = {}  # (fun, mesh, specs, avals, axis env) -> (Program, out tree)


def _eager(fun, mesh, manual, in_specs_flat, out_specs, flat_args, in_tree, check_vma):
    shardings = [NamedSharding(mesh, s) for s in in_specs_flat]
    shards = [place(as_array(x), s)._shards for x, s in zip(flat_args, shardings)]
    avals = [blocks[0].aval for blocks in shards]
    mesh_axes = tuple(zip(mesh.axis_names, mesh.axis_sizes))
    key = (fun, mesh, manual, tuple(in_specs_flat), in_tree, tuple(avals), core.axis_env(), check_vma)
    entry = _programs.get(key)
    if entry is None:
        closed, out_tree = _trace_body(fun, mesh, manual, in_tree, avals, in_specs_flat, out_specs, check_vma)
        closed, lifted = pe.split_tracer_consts(closed)
        if lifted:  # it closes over tracers of an enclosing transformation
            return None
        entry = (Program(inline_collective_calls(closed), None, mesh_axes), out_tree)
        if len(_programs) > 256:
            _programs.clear()
        _programs[key] = entry
    program, out_tree = entry
    flat_specs = _specs("out_specs", out_tree.unflatten([0] * out_tree.num_leaves), out_specs)
    return out_tree.unflatten(_run(program, mesh, shards, flat_specs))


def _bind(f, mesh, manual, specs, out_specs, flat_args, in_tree, check_vma):
    """shard_map over tracers: the body traced once, one shard_map equation."""
    in_axes = [_spec_axes(s, core.get_aval(x).ndim) for x, s in zip(flat_args, specs)]
    avals = [_block_aval(core.get_aval(x), a, mesh) for x, a in zip(flat_args, in_axes)]
    closed, out_tree = _trace_body(f, mesh, manual, in_tree, avals, specs, out_specs, check_vma)
    closed, lifted = pe.split_tracer_consts(closed)  # values it closes over: replicated operands
    flat_out = _specs("out_specs", out_tree.unflatten([0] * out_tree.num_leaves), out_specs)
    for spec, aval in zip(flat_out, closed.out_avals):
        if len(spec) > aval.ndim:
            raise ValueError(f"shard_map out_specs entry {spec} is longer than the rank {aval.ndim} of the output")
    outs = shard_map_p.bind(*lifted, *flat_args, jaxpr=closed, mesh=mesh,
                            in_specs=(PartitionSpec(),) * len(lifted) + tuple(specs), out_specs=tuple(flat_out),
                            check_vma=check_vma, newly_manual_axes=manual)
    return out_tree.unflatten(outs)


class _Infer:
    """in_specs' default (JAX's Infer): the arguments' own specs, over a mesh whose manual axes are Explicit."""

    def __repr__(self):
        return "Infer"


Infer = _Infer()


def _inferred_specs(mesh, manual, flat_args):
    """Each argument's spec from its type's sharding, restricted to the manual axes (JAX's rule)."""
    if not all(mesh.axis_types[mesh.axis_names.index(a)] is AxisType.Explicit for a in manual):
        types = ", ".join(str(mesh.axis_types[mesh.axis_names.index(a)]) for a in manual)
        raise TypeError("shard_map in_specs argument must be a pytree of `jax.sharding.PartitionSpec` instances, but "
                        f"it was `None` when axis_names={manual} are of type {types}")
    specs = []
    for x in flat_args:
        typed = getattr(core.get_aval(x), "_sharding", None) if isinstance(x, core.Tracer) else None
        spec = (typed_sharding(x.sharding, core.get_aval(x).ndim).spec if type(x) is ShardedArray else
                typed.spec if typed is not None else PartitionSpec())
        entries = [tuple(n for n in _names_of(p) if n in manual) for p in spec]
        entries = [e[0] if len(e) == 1 else e or None for e in entries]
        while entries and entries[-1] is None and typed is None:  # (a traced type's spec is JAX's, whole)
            entries.pop()
        specs.append(PartitionSpec(*entries))
    return specs


def _manual_axes(mesh, axis_names, in_specs, out_specs):
    """The mesh axes the body is manual over (axis_names, all by default): the only ones the specs may
    name (JAX's errors). The others stay Auto; xjax keeps values whole along them (nothing partitions)."""
    manual = frozenset(axis_names) or frozenset(mesh.axis_names)
    if not manual <= frozenset(mesh.axis_names):
        raise ValueError(f"jax.shard_map requires axis_names={manual} to be a subset of "
                         f"mesh.axis_names={frozenset(mesh.axis_names)}")
    for prefix, specs in (("in", in_specs), ("out", out_specs)):
        msgs = [f"  {prefix}_specs{tree_util.keystr(path)} refers to {name!r}"
                for path, p in tree_util.tree_leaves_with_path(specs) if isinstance(p, PartitionSpec)
                for name in _axis_names(p) if name not in manual]
        if msgs:
            raise ValueError(f"shard_map {prefix}_specs argument must refer to an axis marked as manual ({manual}), "
                             "but:\n\n" + "\n\n".join(msgs) + f"\n\nCheck the {prefix}_specs values passed to shard_map.")
    return manual


def shard_map(f=None, /, *, out_specs, in_specs=Infer, mesh=None, axis_names=frozenset(), check_vma=True):
    """Maps `f` over the blocks of its arguments on the devices of `mesh` (JAX's shard_map; see the
    module docstring). mesh=None takes the mesh of jax.set_mesh."""
    if f is None:
        return functools.partial(shard_map, out_specs=out_specs, in_specs=in_specs, mesh=mesh, axis_names=axis_names,
                                 check_vma=check_vma)
    if not callable(f):
        raise TypeError(f"shard_map requires a callable, got {f!r}")
    if not isinstance(axis_names, (frozenset, set)):
        raise TypeError(f"`axis_names` argument of shard_map should be of type `frozenset` or `set`. Got type: "
                        f"{type(axis_names)}")
    if in_specs is None:  # (JAX: every argument static)
        raise NotImplementedError("shard_map with in_specs=None (static arguments) is not implemented in xjax; pass "
                                  "PartitionSpecs, or leave in_specs out to infer them from the arguments")

    @functools.wraps(f)
    def mapped(*args, **kwargs):
        m = mesh if mesh is not None else get_mesh()
        if not isinstance(m, Mesh) or m.empty:
            raise ValueError("shard_map requires a mesh: pass mesh= or set one with jax.set_mesh")
        manual = _manual_axes(m, axis_names, () if in_specs is Infer else in_specs, out_specs)
        if kwargs:
            raise TypeError(f"shard_map'd functions take positional arguments only (in_specs match them), got keyword "
                            f"arguments {sorted(kwargs)}")
        flat_args, in_tree = data_leaves.flatten((args, {}))
        specs = _inferred_specs(m, manual, flat_args) if in_specs is Infer else _specs("in_specs", args, in_specs)
        for i, (x, s) in enumerate(zip(flat_args, specs)):
            NamedSharding(m, s)  # (JAX's errors for a bad spec)
            _check_in(f, m, s, x, i)
        if not any(isinstance(x, core.Tracer) for x in flat_args):
            out = _eager(f, m, manual, specs, out_specs, flat_args, in_tree, check_vma)
            if out is not None:
                return out
        # (JAX's param names the abstract mesh where the mesh is jax.set_mesh's)
        return _bind(f, m if mesh is not None else ContextAbstractMesh(m), manual, specs, out_specs, flat_args, in_tree,
                     check_vma)

    return mapped
