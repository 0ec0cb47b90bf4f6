"""xjax.interpreters.batching (jax.interpreters.batching): vmap rules of primitives, in JAX's
conventions, stored on the primitives themselves.

    batching.primitive_batchers[p] = rule          # rule(args, dims, **params) -> (out, out dims)
    batching.fancy_primitive_batchers[p] = rule    # rule(axis_data, args, dims, **params): xjax's own
    batching.axis_primitive_batchers[p] = rule     # rule(size, name, None, args, dims, **params)

Dims are an operand's batch axis, or `not_mapped` (None).
"""
from xjax._src.interpreters import batching as _batching
from xjax._src.interpreters.batching import (AxisData, BatchTrace, BatchTracer, bdim_at_front,  # noqa: F401
                                             defbroadcasting, defvectorized, not_mapped)
from xjax._src.interpreters.rule_tables import RuleTable as _RuleTable


def _unmapped(primitive, vals, params):
    out = primitive.bind(*vals, **params)
    return (out, [not_mapped] * len(out)) if primitive.multiple_results else (out, not_mapped)


def _from_plain(rule, primitive):
    def batch(axis_data, vals, dims, **params):
        if all(d is not_mapped for d in dims):  # JAX calls such rules on mapped operands only
            return _unmapped(primitive, vals, params)
        return rule(vals, dims, **params)

    return batch


def _to_plain(rule, primitive):
    def batch(vals, dims, **params):
        return rule(AxisData(None, _batching.size_of(vals, dims)), vals, dims, **params)

    return batch


def _from_axis(rule, primitive):
    return lambda axis_data, vals, dims, **params: rule(axis_data.size, axis_data.name, None, vals, dims, **params)


def _to_axis(rule, primitive):
    return lambda size, name, spmd_name, vals, dims, **params: rule(AxisData(name, size, spmd_name), vals, dims,
                                                                     **params)


primitive_batchers = _RuleTable("batching.primitive_batchers", "batch", _from_plain, _to_plain)
fancy_primitive_batchers = _RuleTable("batching.fancy_primitive_batchers", "batch",
                                      lambda rule, p: lambda *a, **k: rule(*a, **k), lambda rule, p: rule)
axis_primitive_batchers = _RuleTable("batching.axis_primitive_batchers", "batch", _from_axis, _to_axis)


def broadcast(x, sz, axis, mesh_axis=None):
    """x (unmapped) repeated sz times along a new axis at position `axis`."""
    del mesh_axis  # xjax has no meshes inside vmap
    return _batching.broadcast_batched(x, sz, axis)


def defreducer(prim, ident=None):
    """A reduction over the axes its `axes` param names."""
    del ident  # xjax's reductions know their own identity
    _batching.defreducer(prim)


def register_vmappable(*args, **kwargs):
    raise NotImplementedError("batching.register_vmappable: custom vmappable types are not supported by xjax")


def unregister_vmappable(*args, **kwargs):
    raise NotImplementedError("batching.unregister_vmappable: custom vmappable types are not supported by xjax")
