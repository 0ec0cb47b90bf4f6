"""Primitives defined by a composition of other lax operations (JAX's primitives that XLA's CPU backend
expands, such as tile, mulhi, reduce_precision), and JAX's lax.composite.

A composed primitive is one Python function `fun(*operands, **params)` and every rule derives from it:
its type is the traced function's, it runs eagerly as the function, it lowers to the function's jaxpr
(python_lowering), its JVP is the function's JVP (so linearize records, and transpose meets, only the
component primitives), and it batches by vmapping the function. Jaxprs show the primitive by its name."""
import functools

from xjax._src import core, tree_util
from xjax._src.interpreters import ad, batching
from xjax._src.interpreters import partial_eval as pe
from xjax._src.interpreters.python_lowering import PythonLowering
from xjax._src.jaxpr import params_key
from xjax._src.vmap import vmap

__all__ = ["composite"]


def define_composed_primitive(name, fun, *, multiple_results=False):
    """A primitive computed by fun(*operands, **params), with every rule taken from fun."""
    prim = core.Primitive(name, multiple_results)

    def as_list(*args, **params):
        out = fun(*args, **params)
        return list(out) if multiple_results else [out]

    types = {}

    def abstract_eval(*avals, **params):
        key = (avals, params_key(params))
        out = types.get(key)
        if out is None:
            out = types[key] = pe.trace_to_jaxpr(functools.partial(as_list, **params), list(avals)).out_avals
        return list(out) if multiple_results else out[0]

    def jvp(primals, tangents, **params):
        tangents = [ad.instantiate_zero_tangent(t) if type(t) is ad.Zero else t for t in tangents]
        outs, out_tangents = ad.jvp_flat(functools.partial(as_list, **params), list(primals), tangents)
        if multiple_results:
            return outs, out_tangents
        return outs[0], out_tangents[0]

    def batch(axis, vals, dims, **params):
        vals = [batching.bdim_at_front(v, d, axis.size) for v, d in zip(vals, dims)]
        out = vmap(functools.partial(fun, **params))(*vals)
        return out, ([0] * len(out) if multiple_results else 0)

    prim.def_rules(abstract_eval=abstract_eval, impl=fun, jvp=jvp, batch=batch)
    PythonLowering(fun, multiple_results).install(prim)
    return prim


def _run_composite(*flat_args, decomposition, in_tree, attributes, name, version):
    del name, version
    outs = decomposition(*tree_util.tree_unflatten(in_tree, flat_args), **dict(attributes))
    return tree_util.tree_leaves(outs)


def _composite_jvp(primals, tangents, **params):
    raise ValueError("JVP rule for composite not implemented. You can use `jax.custom_jvp` to add support. See "
                     "https://docs.jax.dev/en/latest/_autosummary/jax.custom_jvp.html")


composite_p = define_composed_primitive("composite", _run_composite, multiple_results=True)
composite_p.def_rules(jvp=_composite_jvp)  # JAX's composites are not differentiable either


def composite(decomposition, name, version=0):
    """JAX's lax.composite: `decomposition` wrapped as one operation named `name` (a `composite` equation in
    jaxprs). Positional arguments are its operands, keyword arguments its attributes (static values). No xjax
    backend has a kernel to put in a composite's place, so its
    decomposition always runs; as in JAX, it cannot be differentiated (use custom_jvp)."""

    @functools.wraps(decomposition)
    def call(*args, **kwargs):
        if any(isinstance(v, core.Tracer) for v in kwargs.values()):
            raise TypeError(f"Found a JAX Tracer as an attribute in the decomposition for the composite op '{name}': "
                            "values that are not known at compile time must be passed as arguments")
        flat, in_tree = tree_util.tree_flatten(args)
        attributes = tuple(kwargs.items())
        out_tree = []

        def flat_fun(*xs):
            out = decomposition(*tree_util.tree_unflatten(in_tree, xs), **kwargs)
            leaves, tree = tree_util.tree_flatten(out)
            out_tree.append(tree)
            return leaves

        pe.trace_to_jaxpr(flat_fun, [core.get_aval(x) for x in flat])
        outs = composite_p.bind(*flat, decomposition=decomposition, in_tree=in_tree, attributes=attributes, name=name,
                                version=version)
        return tree_util.tree_unflatten(out_tree[0], outs)

    return call
