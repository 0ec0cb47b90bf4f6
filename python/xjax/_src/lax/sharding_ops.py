"""The `reshard` and `sharding_constraint` primitives (JAX's), which jax.reshard and
jax.lax.with_sharding_constraint bind on traced values (reshard.py, which also gives their eager impls,
placing arrays over meshes).

`reshard` changes the sharding in a value's type (Explicit mesh axes): its type is the target's, and
jit's partitioner moves the blocks (partition_rules). `sharding_constraint` asks for a layout over
Auto axes, which types do not carry: its type is its operand's and the partitioner lays the value out
so. A program compiled whole runs both as the identity.
"""
from xjax._src import core
from xjax._src.interpreters import ad, batching
from xjax._src.jaxpr import params_printer
from xjax._src.sharding import Mesh, NamedSharding, PartitionSpec, check_trivial, get_abstract_mesh, get_mesh


def spec_for(spec, ndim):
    """spec padded with unsplit dimensions to ndim entries."""
    entries = tuple(spec)
    return PartitionSpec(*(entries + (None,) * (ndim - len(entries))))


def with_batch_dim(sharding, x, x_dim, out_dim):
    """A result's type sharding (per example) with a batch dimension at out_dim, split as x's type splits
    its batch dimension x_dim (None stays None)."""
    if sharding is None:
        return None
    typed = getattr(core.get_aval(x), "_sharding", None)
    entries = list(sharding.spec)
    entries.insert(out_dim, None if typed is None else spec_for(typed.spec, core.get_aval(x).ndim)[x_dim])
    return NamedSharding(sharding.mesh, PartitionSpec(*entries))


def out_sharding_of(sharding, ndim, api, operands):
    """An out_sharding argument as typed_sharding_of gives it; None where it leaves the result whole and no
    operand's type carries a sharding (such a layout asks nothing of a value on one device)."""
    if sharding is None:
        return None
    if not any(getattr(core.get_aval(o), "_sharding", None) is not None for o in operands):
        try:
            check_trivial(sharding, api)
            return None
        except NotImplementedError:
            pass
    return typed_sharding_of(sharding, ndim, api)


def bind_with_out_sharding(prim, operands, out_sharding, typed, param="out_sharding", **params):
    """prim bound with `typed` (out_sharding_of's answer) as the param typing its result. Traced, that is
    the type; eagerly, the primitive runs on the operands replicated and its result is placed as asked."""
    if typed is None or any(isinstance(a, core.Tracer) for a in operands) or \
            not isinstance(core.current_trace(), core.EvalTrace):  # (traced: the type says it)
        return prim.bind(*operands, **params, **{param: typed})
    return placed(prim.bind(*[_replicated(a) for a in operands], **params, **{param: None}), typed, out_sharding)


def placed(x, typed, out_sharding):
    """Eagerly, x placed as `typed` says over out_sharding's concrete mesh (or jax.set_mesh's); a traced
    value as it is (its type says it)."""
    if isinstance(x, core.Tracer):
        return x
    concrete = getattr(out_sharding, "mesh", None)
    if not isinstance(concrete, Mesh):
        meshes = (getattr(getattr(x, "sharding", None), "mesh", None), get_mesh())
        concrete = next((m for m in meshes if isinstance(m, Mesh) and not m.empty and m.abstract_mesh == typed.mesh),
                        None)
        if concrete is None:  # (no mesh of this process to place over: whole, as an eager value may be)
            return x
    return reshard_p.bind(x, dst_sharding=typed, concrete_mesh=concrete)


def splits_explicit(sharding):
    """Whether an out_sharding argument (a P under jax.set_mesh, or a NamedSharding) splits over Explicit
    mesh axes: the result's type carries it (JAX's sharding in types)."""
    if isinstance(sharding, PartitionSpec):
        mesh, spec = get_abstract_mesh(), sharding
    elif isinstance(sharding, NamedSharding):
        mesh, spec = sharding.mesh, sharding.spec
    else:
        return False
    return any(n in mesh.explicit_axes for p in spec if p is not None
               for n in ((p,) if isinstance(p, str) else p))


def _replicated(a):
    """An array split over a mesh, replicated over it (others as they are)."""
    s = getattr(a, "sharding", None)
    if not isinstance(s, NamedSharding) or s.is_fully_replicated:
        return a
    return reshard_p.bind(a, dst_sharding=NamedSharding(s.mesh.abstract_mesh, PartitionSpec(*([None] * a.ndim))),
                          concrete_mesh=s.mesh)


def context_mesh_for(spec):
    """The abstract mesh a PartitionSpec refers to: the one jax.set_mesh set (JAX's error without)."""
    mesh = get_abstract_mesh()
    if mesh.empty:
        raise ValueError("Using PartitionSpec when you are not under a mesh context is not allowed. Please pass a "
                         f"NamedSharding instance or enter into a mesh context via `jax.set_mesh`. Got {spec!r}")
    return mesh


def typed_sharding_of(sharding, ndim, api):
    """An out_sharding argument (a P under jax.set_mesh, or a NamedSharding) as the sharding of a type
    of rank ndim: over the abstract mesh, every dimension given."""
    if isinstance(sharding, PartitionSpec):
        return NamedSharding(context_mesh_for(sharding), spec_for(sharding, ndim))
    if not isinstance(sharding, NamedSharding):
        raise TypeError(f"{api}: out_sharding must be a jax.sharding.NamedSharding or PartitionSpec, got {sharding!r}")
    mesh = sharding.mesh.abstract_mesh if isinstance(sharding.mesh, Mesh) else sharding.mesh
    return NamedSharding(mesh, spec_for(sharding.spec, ndim))


# ---- reshard -------------------------------------------------------------------------------------

def _reshard_eval(aval, *, dst_sharding, concrete_mesh):
    return aval.with_sharding(dst_sharding)


def _unsplit_like(aval, mesh):
    s = getattr(aval, "_sharding", None)
    return s if s is not None else NamedSharding(mesh, PartitionSpec(*([None] * aval.ndim)))


def _reshard_transpose(ct, x, *, dst_sharding, concrete_mesh):
    if type(ct) is ad.Zero:
        return [None]
    return [reshard_p.bind(ct, dst_sharding=_unsplit_like(x.aval, dst_sharding.mesh), concrete_mesh=concrete_mesh)]


def _reshard_batch(axis, vals, dims, *, dst_sharding, concrete_mesh):
    (x,), (d,) = vals, dims
    if d is batching.not_mapped:
        return reshard_p.bind(x, dst_sharding=dst_sharding, concrete_mesh=concrete_mesh), d
    spec = list(dst_sharding.spec)  # (the batch dimension keeps its split, as JAX's rule)
    aval = getattr(x, "traced_aval", None) or core.get_aval(x)  # (an array split over Explicit axes: its type)
    spec.insert(d, spec_for(aval.sharding.spec, aval.ndim)[d])
    return reshard_p.bind(x, dst_sharding=NamedSharding(dst_sharding.mesh, PartitionSpec(*spec)),
                          concrete_mesh=concrete_mesh), d


reshard_p = core.Primitive("reshard")
reshard_p.def_rules(abstract_eval=_reshard_eval, lowering=lambda ctx, x, **params: [x],
                    sharding=lambda x, *, dst_sharding, concrete_mesh: dst_sharding, batch=_reshard_batch,
                    pp_params=params_printer(drop=("dst_sharding", "concrete_mesh")))
ad.deflinear(reshard_p, _reshard_transpose)


# ---- sharding_constraint -------------------------------------------------------------------------

def _constraint_transpose(ct, x, **params):
    return [None if type(ct) is ad.Zero else sharding_constraint_p.bind(ct, **params)]


def _constraint_batch(axis, vals, dims, *, sharding, **params):
    (x,), (d,) = vals, dims
    if d is not batching.not_mapped:
        spec = list(spec_for(sharding.spec, core.get_aval(x).ndim - 1))
        spec.insert(d, None)
        sharding = NamedSharding(sharding.mesh, PartitionSpec(*spec))
    return sharding_constraint_p.bind(x, sharding=sharding, **params), d


class _Shown:
    """A param printed as the given text (JAX's spellings of an empty mesh and set)."""

    def __init__(self, text):
        self.text = text

    __repr__ = __str__ = lambda self: self.text


sharding_constraint_p = core.Primitive("sharding_constraint")
sharding_constraint_p.pp_params = params_printer(formats={
    "context_mesh": lambda m: _Shown("Mesh()") if m.empty else m,
    "unconstrained_dims": lambda d: _Shown(f"frozenset({{{', '.join(map(repr, sorted(d)))}}})")})
sharding_constraint_p.def_rules(abstract_eval=lambda aval, **params: aval, lowering=lambda ctx, x, **params: [x], batch=_constraint_batch,
                                sharding=lambda x, **params: getattr(x, "_sharding", None))
ad.deflinear(sharding_constraint_p, _constraint_transpose)


