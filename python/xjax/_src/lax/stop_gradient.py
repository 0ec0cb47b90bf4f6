"""stop_gradient: the identity whose derivative is zero (custom_jvp's nondiff_argnums rely on it)."""
from xjax._src import core, data_leaves, dtypes
from xjax._src.interpreters import ad, batching
from xjax._src.lax.base import asarray

stop_gradient_p = core.Primitive("stop_gradient")
stop_gradient_p.def_rules(abstract_eval=lambda aval: aval, impl=lambda x: x, lowering=lambda ctx, x: [x])
ad.defjvp_zero(stop_gradient_p)
batching.defvectorized(stop_gradient_p)  # batching (vmap): elementwise


def stop_gradient(x):
    """x (a pytree) with zero derivative: differentiation treats its leaves as constants."""

    def stop(leaf):
        if isinstance(leaf, (str, bytes)) or callable(leaf):
            raise TypeError(f"Value {leaf!r} of type {type(leaf)} is not a valid JAX type")
        leaf = asarray(leaf)
        if not dtypes.is_float(core.get_aval(leaf).dtype):
            return leaf  # integers and bools have no derivative to stop
        return bind_stop_gradient(leaf)

    return data_leaves.tree_map(stop, x)  # (a key: its data, an integer array)


def bind_stop_gradient(x):
    """stop_gradient of one array or tracer. A JVP tracer gives its primal (its derivatives are what is
    stopped), as JAX does, so the value stays usable by rules that run in enclosing traces."""
    while isinstance(x, ad.JVPTracer):
        x = x.primal
    return stop_gradient_p.bind(x) if isinstance(x, core.Tracer) else x
