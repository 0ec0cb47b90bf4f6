"""custom_gradient and closure_convert: conveniences built on custom_vjp."""
from xjax._src import core, data_leaves, tree_util
from xjax._src.custom_derivatives import as_array, custom_vjp
from xjax._src.interpreters import ad
from xjax._src.interpreters import partial_eval as pe
from xjax._src.jaxpr import eval_jaxpr

_flatten = data_leaves.flatten  # keys as their data


# ---- custom_gradient ----------------------------------------------------------------------------

@tree_util.register_pytree_node_class
class _Residuals:
    """custom_gradient's residuals: the traced gradient function's jaxpr (static) and its consts (leaves)."""

    def __init__(self, jaxpr, in_tree, out_tree, consts):
        self.jaxpr, self.in_tree, self.out_tree, self.consts = jaxpr, in_tree, out_tree, consts

    def tree_flatten(self):
        return self.consts, (self.jaxpr, self.in_tree, self.out_tree)

    @classmethod
    def tree_unflatten(cls, aux, consts):
        return cls(*aux, list(consts))


def custom_gradient(fun):
    """A function with a custom VJP, TensorFlow style: fun returns (output, vjp function of the cotangent)."""

    @custom_vjp
    def wrapped(*args, **kwargs):
        return fun(*args, **kwargs)[0]

    def fwd(*args, **kwargs):
        ans, rule = fun(*args, **kwargs)
        ans_flat, out_tree = _flatten((ans,))
        in_trees = []

        def flat_rule(*cts):
            leaves, tree = _flatten(rule(*out_tree.unflatten(cts)))
            in_trees.append(tree)
            return leaves

        avals = [ad.tangent_aval(core.get_aval(x)) for x in ans_flat]
        closed = pe.trace_to_jaxpr(flat_rule, avals, pe.DebugInfo("custom_gradient fwd", rule))
        closed, consts = pe.convert_constvars(closed)
        return ans, _Residuals(closed, in_trees[0], out_tree, consts)

    def bwd(res, cts):
        cts_flat, _ = _flatten((cts,))
        out = res.in_tree.unflatten(eval_jaxpr(res.jaxpr.jaxpr, res.jaxpr.consts, *res.consts, *cts_flat))
        return (out,) if tree_util.treedef_is_leaf(res.in_tree) else out

    wrapped.defvjp(fwd, bwd)
    return wrapped


# ---- closure_convert ----------------------------------------------------------------------------

def _maybe_perturbed(x):
    """Whether x may carry a tangent (then closure_convert hoists it): tracers that are not known constants."""
    if not isinstance(x, core.Tracer):
        return False
    if isinstance(x, ad.JVPTracer) and type(x.tangent) is ad.Zero:
        return _maybe_perturbed(x.primal)
    if isinstance(x, ad.JVPTracer):
        return True
    return ad.is_differentiable(x.aval.dtype)


def closure_convert(fun, *example_args):
    """(converted function, hoisted constants): the traced values fun closes over that may be differentiated
    become trailing arguments of the converted function, so custom_vjp rules can see them."""
    flat_args, in_tree = _flatten(example_args)
    avals = [core.get_aval(x) for x in flat_args]
    out_trees = []

    def flat_fun(*leaves):
        out, tree = _flatten(fun(*in_tree.unflatten(leaves)))
        out_trees.append(tree)
        return out

    closed = pe.trace_to_jaxpr(flat_fun, avals, pe.DebugInfo("closure_convert", fun))
    jaxpr, consts = closed.jaxpr, closed.consts
    hoist = [_maybe_perturbed(c) for c in consts]
    hoisted = [c for c, h in zip(consts, hoist) if h]
    n_hoisted = len(hoisted)
    out_tree = out_trees[0]

    def converted_fun(*args_and_consts):
        n = len(args_and_consts) - n_hoisted
        args, given = args_and_consts[:n], iter(args_and_consts[n:])
        all_consts = [next(given) if h else c for c, h in zip(consts, hoist)]
        leaves, tree = _flatten(tuple(args))
        if tree != in_tree:
            raise TypeError("The inputs to the closure produced by closure_convert must have the same Pytree "
                            "structure as the example arguments passed when closure_convert was called. Expected "
                            f"{in_tree}, but got {tree}")
        leaves = [x if isinstance(x, core.Tracer) or type(x) in core.ARRAY_TYPES else as_array(x)
                  for x in leaves]
        return out_tree.unflatten(eval_jaxpr(jaxpr, all_consts, *leaves))

    return converted_fun, hoisted
