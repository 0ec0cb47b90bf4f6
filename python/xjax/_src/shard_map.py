"""shard_map: a function written for one device's blocks, run on every device of a mesh.

Each argument is split over the mesh as its in_spec says (a sharded array already split so gives
its shards as they are); the body is traced once over one device's blocks with every mesh axis
bound as a named axis, and runs as pmap's program does (pmap_program.Program): its compiled
segments on every device at once, its collectives over the blocks stacked, one vmap per mesh
axis, so that psum(x, 'X') reduces over the devices that differ in their X position alone. The
results are the devices' blocks, assembled as out_specs say into sharded arrays.

Under a transformation (jit, grad, vmap: the arguments are tracers) shard_map is the same
computation written with one vmap per mesh axis over the blocks' axes, whose collectives'
rules (psum's transpose included) are vmap's: one program, on one device, until jit partitions.
An axis that an out_spec leaves out is one the body's result is replicated over: its first
device's value stands for all (check_vma's static check is not implemented).
"""
import contextlib
import functools
import math
import weakref

from xjax._src import core, data_leaves, tree_util, vmap as vmap_api
from xjax._src.interpreters import ad, batching, partial_eval as pe
from xjax._src.interpreters.graph_lowering import as_array
from xjax._src.interpreters.python_lowering import PythonLowering
from xjax._src.jaxpr import eval_jaxpr, memoize_per_jaxpr
from xjax._src.lax.layout import index_in_dim, reshape, transpose
from xjax._src.pmap_program import Program, inline_collective_calls
from xjax._src.sharded_array import ShardedArray, place
from xjax._src.shard_map_vma import check_out_specs
from xjax._src.sharding import Mesh, NamedSharding, PartitionSpec, _axis_names, _check_unique_axes, _names_of, \
    get_mesh, typed_sharding


_CHECK_VMA = ("reverse-mode differentiation inside a shard_map body with check_vma=True: JAX's types of values "
              "varying over mesh axes (which make a gradient of a value replicated over an axis summed over it) are "
              "not implemented in xjax yet (issue 29). Take the gradient of the shard_map'd function instead, or pass "
              "check_vma=False for per-device gradients (collectives transposed as pmap's)")


@contextlib.contextmanager
def _body(check_vma):
    """Around the tracing of a body: reverse mode refused under check_vma (see _CHECK_VMA)."""
    prev = ad.refusal.message
    ad.refusal.message = _CHECK_VMA if check_vma else prev
    try:
        yield
    finally:
        ad.refusal.message = prev


@contextlib.contextmanager
def _mesh_bound(mesh, manual):
    """The manual axes of the mesh bound as named axes (the others stay Auto: unnamed in the body)."""
    with contextlib.ExitStack() as stack:
        for name, size in zip(mesh.axis_names, mesh.axis_sizes):
            if name in manual:
                stack.enter_context(core.extend_axis_env(name, size))
        yield


def _spec_axes(spec, ndim):
    """Per dimension, the mesh axes that split it."""
    entries = list(spec) + [None] * (ndim - len(spec))
    return [_names_of(p) for p in entries]


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


def _flat_body(fun, in_tree, check_vma, out_trees):
    """fun over one device's flat blocks, returning its flat results (their tree goes to out_trees)."""
    def body(*blocks):
        args, kwargs = in_tree.unflatten(blocks)
        with _body(check_vma):
            out = fun(*args, **kwargs)
        leaves, tree = data_leaves.flatten(out)
        out_trees.append(tree)
        return leaves

    return body


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


def _trace_body(fun, mesh, manual, in_tree, avals, in_specs_flat, out_specs, check_vma):
    """(the body's jaxpr over one device's blocks with the manual mesh axes bound, its output tree);
    with check_vma, out_specs checked against the axes each output may vary over."""
    out_trees = []
    flat_fun = _flat_body(fun, in_tree, check_vma, out_trees)
    dbg = pe.DebugInfo("shard_map", fun, names_fn=lambda: [])
    with _mesh_bound(mesh, manual):
        closed = pe.trace_to_jaxpr(flat_fun, avals, dbg, what=f"function {pe.func_src_info(fun)} traced for shard_map")
    out_tree = out_trees[0]
    if check_vma:
        flat_out = _specs("out_specs", out_tree.unflatten([0] * out_tree.num_leaves), out_specs)
        in_vary = [frozenset(_axis_names(s)) for s in in_specs_flat]
        check_out_specs(pe.fun_name(fun), mesh, closed.jaxpr, in_vary, [(s, frozenset(_axis_names(s))) for s in flat_out])
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


def _run(program, mesh, shards, flat_specs):
    """The program on every device of the mesh (shards: per argument, its blocks in device order);
    its results assembled as flat_specs say."""
    devices = [d.local_hardware_id for d in mesh.devices.flat]
    outs = program([list(per_device) for per_device in zip(*shards)] if shards else [[] for _ in devices], devices)
    results = []
    for i, spec in enumerate(flat_specs):
        blocks = [as_array(o[i]) for o in outs]
        aval = blocks[0].aval
        if len(spec) > aval.ndim:
            raise ValueError(f"shard_map out_specs entry {spec} is longer than the rank {aval.ndim} of the output")
        results.append(ShardedArray(blocks, NamedSharding(mesh, spec), _global_aval(aval, spec, mesh)))
    return results


def _global_aval(aval, spec, mesh):
    tiling = [math.prod(mesh.shape[n] for n in names) for names in _spec_axes(spec, aval.ndim)]
    return aval.update(shape=tuple(d * t for d, t in zip(aval.shape, tiling)))


# ---- the shard_map primitive (under a transformation) -----------------------------------------
# One equation holding the body's jaxpr over one device's blocks, the mesh axes bound in it, as
# JAX's jaxprs show it. Its impl runs the body on every device; its lowering, JVP and batching
# are those of the body vmapped over the mesh's axes (so grad and jit compute as pmap's rules do,
# on one device until jit partitions), while vmap keeps the equation, with the batch axis in front.

shard_map_p = core.Primitive("shard_map", multiple_results=True)




def _sm_abstract_eval(*avals, jaxpr, mesh, out_specs, **_):
    return [_global_aval(a, s, mesh) for a, s in zip(jaxpr.out_avals, out_specs)]


_impl_programs = weakref.WeakKeyDictionary()


def _sm_impl(*args, jaxpr, mesh, in_specs, out_specs, **_):
    program = memoize_per_jaxpr(_impl_programs, jaxpr, (mesh, core.axis_env()), lambda: Program(
        inline_collective_calls(jaxpr), None, tuple(zip(mesh.axis_names, mesh.axis_sizes))))
    shards = [place(as_array(x), NamedSharding(mesh, s))._shards for x, s in zip(args, in_specs)]
    return _run(program, mesh, shards, out_specs)


def _sm_vmapped(*args, jaxpr, mesh, in_specs, out_specs, **_):
    """The equation as one vmap per mesh axis over its operands' blocks."""
    in_axes = [_spec_axes(s, core.get_aval(x).ndim) for x, s in zip(args, in_specs)]
    body = lambda *blocks: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *blocks)  # noqa: E731
    return _over_blocks(body, mesh, in_axes, out_specs, args)


def _sm_jvp(primals, tangents, **params):
    tangents = [ad.instantiate_zero_tangent(t) if type(t) is ad.Zero else t for t in tangents]
    return ad.jvp_flat(functools.partial(_sm_vmapped, **params), list(primals), tangents)


def _front_spec(spec):
    return PartitionSpec(None, *spec)


def _sm_batch(axis, vals, dims, *, jaxpr, mesh, in_specs, out_specs, **params):
    """JAX's rule: the body batched, the batch axis an unsplit dimension in front of its specs."""
    in_batched = [d is not batching.not_mapped for d in dims]
    vals = [batching.moveaxis(v, d, 0) if b else v for v, d, b in zip(vals, dims, in_batched)]
    with _mesh_bound(mesh, params["newly_manual_axes"]):
        batched, out_batched = batching.batch_jaxpr(jaxpr, axis, in_batched)
    outs = shard_map_p.bind(
        *vals, jaxpr=batched, mesh=mesh, in_specs=tuple(_front_spec(s) if b else s for s, b in zip(in_specs, in_batched)),
        out_specs=tuple(_front_spec(s) if b else s for s, b in zip(out_specs, out_batched)), **params)
    return outs, [0 if b else batching.not_mapped for b in out_batched]


def _show_manual(axes, mesh):
    return "frozenset({" + ", ".join(repr(n) for n in mesh.axis_names if n in axes) + "})"


shard_map_p.def_rules(
    abstract_eval=_sm_abstract_eval, impl=_sm_impl, jvp=_sm_jvp, batch=_sm_batch,
    pp_params=lambda eqn, ctx: [(k, _show_manual(v, eqn.params["mesh"]) if k == "newly_manual_axes" else v)
                                for k, v in sorted(eqn.params.items())])
PythonLowering(_sm_vmapped, multiple_results=True).install(shard_map_p)


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


def shard_map(f=None, /, *, out_specs, in_specs=None, mesh=None, axis_names=frozenset(), check_vma=True):
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
    if in_specs is None:
        raise NotImplementedError("shard_map without in_specs (inferred from the arguments' shardings) is not "
                                  "implemented in xjax yet; pass in_specs")

    @functools.wraps(f)
    def mapped(*args, **kwargs):
        m = mesh if mesh is not None else get_mesh()
        if not isinstance(m, Mesh) or m.empty:
            raise ValueError("shard_map requires a mesh: pass mesh= or set one with jax.set_mesh")
        manual = _manual_axes(m, axis_names, in_specs, out_specs)
        if kwargs:
            raise TypeError(f"shard_map'd functions take positional arguments only (in_specs match them), got keyword "
                            f"arguments {sorted(kwargs)}")
        flat_args, in_tree = data_leaves.flatten((args, {}))
        specs = _specs("in_specs", args, in_specs)
        for i, (x, s) in enumerate(zip(flat_args, specs)):
            NamedSharding(m, s)  # (JAX's errors for a bad spec)
            _check_in(f, m, s, x, i)
        if not any(isinstance(x, core.Tracer) for x in flat_args):
            out = _eager(f, m, manual, specs, out_specs, flat_args, in_tree, check_vma)
            if out is not None:
                return out
        return _bind(f, m, manual, specs, out_specs, flat_args, in_tree, check_vma)

    return mapped
