"""The sharding rules of indexing primitives (gather, scatter, dynamic_slice, dynamic_update_slice, split,
top_k), as JAX 0.10.2's: each result's type keeps the splits of dimensions the primitive does not index
into; where JAX's rule cannot decide, JAX's ShardingTypeError. See lax/sharding_rules.py."""
from xjax._src.errors import ShardingTypeError
from xjax._src.lax import indexing
from xjax._src.lax.layout import dynamic_slice_p, dynamic_update_slice_p, split_p
from xjax._src.lax.sharding_rules import mesh_of, spec_of, typed
from xjax._src.lax.sorting import top_k_p
from xjax._src.sharding import EMPTY_ABSTRACT_MESH


def _parts(mesh, p):
    """How many blocks the mesh axes of one spec entry make."""
    names = () if p is None else (p,) if isinstance(p, str) else p
    size = 1
    for n in names:
        size *= mesh.shape[n]
    return size


def keeping_divisible(x, shape, name):
    """JAX's _get_sharding_for_varying_out_shape: the operand's layout, each split dimension whose size
    changes dividing over its axes."""
    spec, mesh = spec_of(x), mesh_of(x)
    for old, new, p in zip(x.shape, shape, spec):
        if old != new and p is not None and new % _parts(mesh, p):
            raise ShardingTypeError(f"{name} on sharded dims where out dim ({new}) is not divisible by mesh axes "
                                    f"({_parts(mesh, p)}) with spec ({p}) is not implemented. Got input "
                                    f"type={x.str_short()} and output shape={tuple(shape)}")
    return typed(mesh, spec)


def _dynamic_slice(x, *starts, slice_sizes):
    return keeping_divisible(x, slice_sizes, "dynamic_slice")


def _with_axis_types(aval):
    """JAX's str_short(mesh_axis_types=True): `float32[8@X,4]({Explicit: ('X', 'Y')})`."""
    mesh = aval._sharding.mesh if aval._sharding is not None else EMPTY_ABSTRACT_MESH
    groups = {}
    for n, t in zip(mesh.axis_names, mesh.axis_types):
        groups.setdefault(t, []).append(n)
    types = ", ".join(f"{getattr(t, 'name', t)}: {tuple(ns)!r}" for t, ns in groups.items())
    return f"{aval.dtype.name}[{aval._dims_text()}]({{{types}}})"


def _dynamic_update_slice(x, update, *starts):
    if spec_of(x) != spec_of(update) or mesh_of(x) != mesh_of(update):
        raise ShardingTypeError("dynamic_update_slice operand sharding must be equal to update sharding, got operand "
                                f"sharding {_with_axis_types(x)} and update sharding {_with_axis_types(update)}.")
    return typed(mesh_of(x), spec_of(x))


def _split(x, *, sizes, axis):
    return [keeping_divisible(x, x.shape[:axis] + (int(s),) + x.shape[axis + 1:], "split") for s in sizes]


def _top_k(x, *, k, axis=-1):
    axis = axis % x.ndim
    if spec_of(x)[axis] is not None:
        raise ShardingTypeError("The input should be unsharded over the axis along which to compute the top_k values. "
                                f"Got input type={x} and axis={axis}")
    out = typed(mesh_of(x), spec_of(x))
    return [out, out]


# ---- gather and scatter ------------------------------------------------------------------------

def _gather_spec(operand, indices, dn, slice_sizes):
    """JAX's _gather_spec_computation: dimensions sliced into must be whole or unsplit, batch dimensions
    split alike (or on one side), the indices unsplit outside their batch dimensions; None otherwise."""
    ospec, ispec = spec_of(operand), list(spec_of(indices))
    if all(p is None for p in ospec + tuple(ispec)):
        return [None] * (len(dn.offset_dims) + indices.ndim - 1)
    full_or_unsplit = all(slice_sizes[i] == operand.shape[i] or ospec[i] is None for i in dn.start_index_map)
    batches = list(zip(dn.operand_batching_dims, dn.start_indices_batching_dims))
    resolvable = all(ispec[i] == ospec[o] or ospec[o] is None or ispec[i] is None for o, i in batches)
    indices_unsplit = all(p is None for i, p in enumerate(ispec) if i not in dn.start_indices_batching_dims)
    if not (full_or_unsplit and resolvable and indices_unsplit):
        return None
    for o, i in batches:
        ispec[i] = ispec[i] or ospec[o]
    return _gathered_spec(ospec, ispec, dn)


def _gathered_spec(ospec, ispec, dn):
    """Per dimension of a gather's result: an offset dimension split as the operand's, another as the
    indices' dimension it comes from."""
    kept = iter(ospec[i] for i in range(len(ospec))
                if i not in dn.collapsed_slice_dims and i not in dn.operand_batching_dims)
    from_indices = iter(ispec)
    return [next(kept) if d in dn.offset_dims else next(from_indices)
            for d in range(len(dn.offset_dims) + len(ispec) - 1)]


def slice_sharding(operand, indices, dn):
    """The sharding of the window a gather reads and a scatter writes (jnp's .at[] broadcasts its updates
    to it, as JAX's indexer's slice_sharding); None where no type carries one."""
    mesh = mesh_of(operand, indices)
    if mesh is None:
        return None
    return typed(mesh, _gathered_spec(spec_of(operand), list(spec_of(indices)), dn))


def _gather(operand, indices, *, dimension_numbers, slice_sizes, **_):
    spec = _gather_spec(operand, indices, dimension_numbers, slice_sizes)
    if spec is None:
        raise ShardingTypeError("Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the gather "
                                "indexing as out sharding could not be resolved unambiguously (or would require "
                                f"collectives on inputs). Got operand={operand!r}, indices={indices!r}")
    return typed(mesh_of(operand, indices), spec)


def _one_axis(*entries):
    return len({p for p in entries if p is not None}) <= 1


def _scatter_spec(operand, indices, updates, dn):
    """JAX's _scatter_spec_computation (the gather rule inverted); None where it cannot decide."""
    ospec, ispec, uspec = spec_of(operand), spec_of(indices), spec_of(updates)
    if all(p is None for p in ospec + ispec + uspec):
        return [None] * operand.ndim
    vector_dim = indices.ndim - 1
    queries = [d for d in range(updates.ndim) if d not in dn.update_window_dims]  # in the indices' order
    ubatch = [queries[i] for i in dn.scatter_indices_batching_dims]
    owindow = [i for i in range(operand.ndim) if i not in dn.inserted_window_dims and i not in dn.operand_batching_dims]
    batches = list(zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims, ubatch))
    ok = (all(_one_axis(ospec[o], ispec[i], uspec[u]) for o, i, u in batches)
          and all((updates.shape[u] == operand.shape[o] and uspec[u] == ospec[o])
                  or (uspec[u] is None and ospec[o] is None) for u, o in zip(dn.update_window_dims, owindow))
          and all(ospec[i] is None for i in dn.inserted_window_dims)
          and all(p is None for i, p in enumerate(uspec) if i not in ubatch and i not in dn.update_window_dims)
          and all(p is None for i, p in enumerate(ispec[:vector_dim]) if i not in dn.scatter_indices_batching_dims)
          and ispec[vector_dim] is None)
    if not ok:
        return None
    out = list(ospec)
    for o, i, u in batches:
        out[o] = out[o] or ispec[i] or uspec[u]
    for u, o in zip(dn.update_window_dims, owindow):
        out[o] = out[o] or uspec[u]
    return out


def _scatter(operand, indices, updates, *, dimension_numbers, **_):
    spec = _scatter_spec(operand, indices, updates, dimension_numbers)
    if spec is None:
        raise ShardingTypeError("Use `.at[...].set/add/mul/...(out_sharding=)` to provide output PartitionSpec for "
                                "the scatter update as out sharding could not be resolved unambiguously (or would "
                                f"require collectives on inputs). Got operand={operand!r}, indices={indices!r}, "
                                f"updates={updates!r}")
    return typed(mesh_of(operand, indices, updates), spec)


def _register():
    indexing.gather_p.def_rules(sharding=_gather)
    for p in (indexing.scatter_p, indexing.scatter_add_p, indexing.scatter_mul_p, indexing.scatter_min_p,
              indexing.scatter_max_p):
        p.def_rules(sharding=_scatter)
    dynamic_slice_p.def_rules(sharding=_dynamic_slice)
    dynamic_update_slice_p.def_rules(sharding=_dynamic_update_slice)
    split_p.def_rules(sharding=_split)
    top_k_p.def_rules(sharding=_top_k)


_register()
