"""jax.reshard and jax.lax.with_sharding_constraint, as JAX's: on arrays they place the array over the
mesh (sharded_array.device_put); on traced values they bind `reshard` / `sharding_constraint`
(lax/sharding_ops.py), whose eager impls are given here. Over a mesh whose axes are all Explicit,
with_sharding_constraint is an assertion on the value's type, as in JAX.
"""
from xjax._src import core, sharded_array, tree_util
from xjax._src.lax.sharding_ops import context_mesh_for, reshard_p, sharding_constraint_p, spec_for
from xjax._src.sharding import (Mesh, NamedSharding, PartitionSpec, Sharding, SingleDeviceSharding,
                                get_abstract_mesh, get_mesh)


def _typed_target(sharding, aval, api):
    """The sharding a `reshard` to `sharding` gives aval's type: over the abstract mesh, Explicit axes
    only (JAX's ValueError for an axis of another type or one the mesh lacks)."""
    if isinstance(sharding, PartitionSpec):
        mesh = context_mesh_for(sharding)
        spec = sharding
    elif isinstance(sharding, NamedSharding):
        mesh, spec = sharding.mesh.abstract_mesh, sharding.spec
    else:
        raise TypeError(f"{api}: expected a jax.sharding.NamedSharding or PartitionSpec, got {sharding!r}")
    for p in spec:
        for n in (() if p is None else (p,) if isinstance(p, str) else p):
            if n not in mesh.axis_names:
                raise ValueError(f"Resource axis: {n} of {spec!r} is not found in mesh: {tuple(mesh.axis_names)}.")
            if n not in mesh.explicit_axes:
                raise ValueError(f"PartitionSpec passed to {api} cannot contain axis names that are of type Auto or "
                                 f"Manual. Got PartitionSpec: {spec!r} with axis name: {n} of type: "
                                 f"{mesh.axis_types[mesh.axis_names.index(n)]}.")
    return NamedSharding(mesh, spec_for(spec, aval.ndim))


def _reshard_impl(x, *, dst_sharding, concrete_mesh):
    mesh = concrete_mesh if concrete_mesh is not None else _concrete(x, dst_sharding.mesh)
    if mesh is None:  # no mesh to place over: the spec can only leave the array whole
        if any(p is not None for p in dst_sharding.spec):
            raise ValueError(f"reshard to {dst_sharding.spec!r} needs the concrete mesh of {dst_sharding.mesh}: set it "
                             "with jax.set_mesh")
        return x
    return sharded_array.device_put(x, NamedSharding(mesh, dst_sharding.spec))


def _concrete(x, abstract):
    """The concrete mesh that x lives on or jax.set_mesh set, if its abstract form is `abstract`."""
    for m in (getattr(getattr(x, "sharding", None), "mesh", None), get_mesh()):
        if isinstance(m, Mesh) and not m.empty and m.abstract_mesh == abstract:
            return m
    return None


def reshard_traced(x, sharding):
    """jax.reshard of one traced value: a reshard equation."""
    aval = core.get_aval(x)
    dst = _typed_target(sharding, aval, "reshard")
    concrete = sharding.mesh if isinstance(sharding, NamedSharding) and isinstance(sharding.mesh, Mesh) else None
    return reshard_p.bind(x, dst_sharding=dst, concrete_mesh=concrete)


def _assert_type(aval, sharding):
    """with_sharding_constraint over Explicit axes only: an assertion that aval's type has that sharding."""
    have = tuple(getattr(aval, "_sharding", None).spec) if getattr(aval, "_sharding", None) is not None else \
        (None,) * aval.ndim
    want = tuple(spec_for(sharding.spec, aval.ndim))
    if have != want:
        raise AssertionError("`with_sharding_constraint` acts as an assert when all axes of mesh are of type "
                             f"`Explicit`. The array sharding: {PartitionSpec(*have)!r} did not match the sharding "
                             f"provided: {PartitionSpec(*want)!r}. Please use `jax.sharding.reshard` to shard your "
                             "input to the sharding you want.")


def constraint_traced(x, sharding):
    """jax.lax.with_sharding_constraint of one traced value, as JAX's."""
    if isinstance(sharding, SingleDeviceSharding):
        return x
    aval = core.get_aval(x)
    context = get_abstract_mesh()
    if isinstance(sharding, PartitionSpec):
        if context.empty:
            raise RuntimeError("with_sharding_constraint requires a non-empty mesh in context if you are passing "
                               "`PartitionSpec`s to shardings. You can define a context mesh via `jax.set_mesh(mesh)`. "
                               "Alternatively, provide `Sharding`s to shardings and then the mesh context manager is "
                               "not required.")
        sharding = NamedSharding(get_mesh(), sharding)
    if not isinstance(sharding, NamedSharding):
        raise TypeError(f"with_sharding_constraint: expected a jax.sharding.Sharding or PartitionSpec, got {sharding!r}")
    if sharding.is_fully_replicated:  # (a layout leaving the value whole asks nothing: no equation, as before)
        return x
    if context.are_all_axes_explicit:
        _assert_type(aval, sharding)
        return x
    mesh = sharding.mesh.abstract_mesh if isinstance(sharding.mesh, Mesh) else sharding.mesh
    explicit = [n for p in sharding.spec for n in ((p,) if isinstance(p, str) else p or ())
                if n not in mesh.auto_axes]
    if explicit:
        raise ValueError("The spec of NamedSharding passed to with_sharding_constraint can only refer to Auto axes of "
                         f"the mesh. Got spec={sharding.spec!r} and mesh={mesh}. You probably meant to use `reshard` "
                         "API?")
    return sharding_constraint_p.bind(x, sharding=sharding, layout=None, context_mesh=get_mesh() if context.empty
                                      else context, unconstrained_dims=frozenset())


def _apply(x, shardings, one):
    """`one(leaf, sharding)` over the pytree x, `shardings` one for all leaves or a matching pytree."""
    if isinstance(shardings, (Sharding, PartitionSpec)):
        return tree_util.tree_map(lambda leaf: one(leaf, shardings), x)
    return tree_util.tree_map(one, x, shardings)


def reshard(x, out_shardings):
    """jax.reshard: x (a pytree) laid out as `out_shardings` says (one sharding or P for all leaves, or a
    matching pytree of them): arrays are placed so, traced values get reshard equations."""
    return _apply(x, out_shardings, lambda leaf, s: reshard_traced(leaf, s) if isinstance(leaf, core.Tracer)
                  else sharded_array.device_put(leaf, s))


def with_sharding_constraint(x, shardings):
    """jax.lax.with_sharding_constraint: arrays are placed so; traced values as JAX's (constraint_traced)."""
    return _apply(x, shardings, lambda leaf, s: constraint_traced(leaf, s) if isinstance(leaf, core.Tracer)
                  else sharded_array.device_put(leaf, s))




reshard_p.def_rules(impl=_reshard_impl)
sharding_constraint_p.def_rules(impl=lambda x, *, sharding, **params: sharded_array.device_put(x, sharding)
                                if isinstance(sharding.mesh, Mesh) else x)
