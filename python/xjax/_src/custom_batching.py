"""jax.custom_batching: custom_vmap (a function with its own vmap rule) and sequential_vmap.

A call binds `custom_vmap_call`, lazily with the function on flat leaves as custom_jvp's calls are
(`Trace.process_custom_call` decides): evaluation runs the function, a jaxpr trace stages it to
`call_jaxpr`, and a BatchTrace runs the user's rule

    rule(axis_size, in_batched, *args) -> (out, out_batched)

on the arguments with their batch axes in front (`in_batched`, `out_batched`: pytrees of bools like
args and out). Differentiation goes through the function: the tangents are the function's JVP.
"""
import functools

from xjax._src import core, tree_util
from xjax._src.autodiff import jvp_flat
from xjax._src.interpreters import ad, batching, partial_eval as pe
from xjax._src.interpreters.graph_lowering import inline_jaxpr_lowering, jaxpr_is_lowerable
from xjax._src.jaxpr import eval_jaxpr
from xjax._src.lax.loops import map as lax_map


class CustomVmapCallPrimitive(core.Primitive):
    """custom_vmap_call(*leaves, fun | call_jaxpr, rule, in_tree, out_trees)."""

    __slots__ = ()

    def __init__(self):
        super().__init__("custom_vmap_call", multiple_results=True)

    def bind(self, *args, **params):
        if "fun" not in params:
            return core.Primitive.bind(self, *args, **params)
        return core.current_trace().process_custom_call(self, args, params)

    def stage(self, args, params):
        fun = params["fun"]
        closed = pe.trace_to_jaxpr(fun, [core.get_aval(a) for a in args])
        closed, consts = pe.convert_constvars(closed)  # the values it closes over become operands
        staged = {k: v for k, v in params.items() if k != "fun"}
        return [*consts, *args], dict(staged, call_jaxpr=closed, num_consts=len(consts))

    def process_batched(self, trace, args, params):
        return trace.process_primitive(self, args, params)  # the batching rule runs the user's rule


custom_vmap_call_p = CustomVmapCallPrimitive()


class _OutTrees:
    """The output structures of one call, as its function or rule produce them (a param compared by
    identity, so that appending to it does not change the equation's cache key)."""

    __slots__ = ("trees",)

    def __init__(self):
        self.trees = []


def _function(params):
    """The call's function on its operands (consts first when staged)."""
    if "fun" in params:
        return params["fun"]
    closed = params["call_jaxpr"]
    return lambda *args: eval_jaxpr(closed.jaxpr, closed.consts, *args)


def _abstract_eval(*avals, call_jaxpr, **_):
    return call_jaxpr.out_avals


def _impl(*args, call_jaxpr, **_):
    return eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *args)


def _jvp(primals, tangents, *, rule, in_tree, out_trees, num_consts=0, **params):
    """The JVP is itself a custom_vmap call (as JAX's): its function is the JVP of the function, its
    vmap rule the JVP of the rule, so a vmap of the JVP still runs the user's rule."""
    fun = _function(params)
    nonzero = [type(t) is not ad.Zero for t in tangents]
    n = len(primals)

    def split(args):
        it = iter(args[n:])
        return list(args[:n]), [next(it) if nz else t for t, nz in zip(tangents, nonzero)]

    def jvp_fun(*args):
        outs, t_outs = jvp_flat(fun, *split(args))
        return outs + [ad.instantiate(t) for t in t_outs]

    def jvp_rule(axis_size, in_batched, *args):
        # every operand batched (a primal and its tangent must agree), every output batched
        args = [a if b else batching.broadcast_batched(a, axis_size) for a, b in zip(args, in_batched)]
        consts = args[:num_consts]

        def batched_fun(*ps):
            out, out_batched = rule(axis_size, [True] * (n - num_consts),
                                    *tree_util.tree_unflatten(in_tree, list(ps[num_consts:])))
            leaves, tree = tree_util.tree_flatten(out)
            out_trees.trees.append(tree)
            flags = _broadcast_prefix(out_batched, out, "out_batched")
            return [x if b else batching.broadcast_batched(x, axis_size) for x, b in zip(leaves, flags)]

        ps, ts = split(args)
        ps[:num_consts] = consts
        outs, t_outs = jvp_flat(batched_fun, ps, [ad.Zero(ad.tangent_aval(core.get_aval(p))) if type(t) is ad.Zero
                                                  else t for p, t in zip(ps, ts)])
        outs = outs + [ad.instantiate(t) for t in t_outs]
        return outs, [True] * len(outs)

    call = custom_vmap(jvp_fun)
    call.def_vmap(jvp_rule)
    outs = call(*primals, *[t for t, nz in zip(tangents, nonzero) if nz])
    return outs[:len(outs) // 2], outs[len(outs) // 2:]


def _batch(axis, vals, dims, *, rule, in_tree, out_trees, num_consts=0, **params):
    if any(d is not batching.not_mapped for d in dims[:num_consts]):
        raise NotImplementedError("custom_vmap: the function closes over a value batched by the vmap; pass it "
                                  "as an argument instead")
    args = [v if d is batching.not_mapped else batching.moveaxis(v, d, 0) for v, d in zip(vals, dims)][num_consts:]
    in_batched = tree_util.tree_unflatten(in_tree, [d is not batching.not_mapped for d in dims[num_consts:]])
    out, out_batched = rule(axis.size, list(in_batched), *tree_util.tree_unflatten(in_tree, args))
    leaves, tree = tree_util.tree_flatten(out)
    flags = _broadcast_prefix(out_batched, out, "out_batched")
    out_trees.trees.append(tree)
    return leaves, [0 if b else batching.not_mapped for b in flags]


def _broadcast_prefix(flags, tree, name):
    """The bools of `flags` (a pytree prefix of `tree`) repeated over the leaves they stand for."""
    try:
        return [b for f, sub in zip(*_prefix_pairs(flags, tree)) for b in [bool(f)] * len(tree_util.tree_leaves(sub))]
    except ValueError as e:
        raise ValueError(f"custom_vmap rule: {name} must be a pytree of bools like the output: {e}") from None


def _prefix_pairs(prefix, tree):
    flags, prefix_tree = tree_util.tree_flatten(prefix)
    subtrees = prefix_tree.flatten_up_to(tree)
    return flags, subtrees


custom_vmap_call_p.def_rules(abstract_eval=_abstract_eval, impl=_impl, jvp=_jvp, batch=_batch,
                             jaxpr_lowering=inline_jaxpr_lowering("call_jaxpr"),
                             can_lower=lambda params: jaxpr_is_lowerable(params["call_jaxpr"].jaxpr))


class custom_vmap:  # noqa: N801 - JAX's name
    """A function with a custom vmap rule: `f.def_vmap(rule)`, rule(axis_size, in_batched, *args)
    -> (out, out_batched)."""

    def __init__(self, fun):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule = None

    def def_vmap(self, rule):
        self.vmap_rule = rule
        return rule

    def __call__(self, *args, **kwargs):
        if kwargs:
            raise TypeError("custom_vmap-decorated functions take positional arguments only")
        if self.vmap_rule is None:
            raise AttributeError(f"No batching rule defined for custom_vmap function {self.__name__} using "
                                 "def_vmap.")
        leaves, in_tree = tree_util.tree_flatten(args)
        out_trees = _OutTrees()

        def flat_fun(*flat):
            out = self.fun(*tree_util.tree_unflatten(in_tree, list(flat)))
            out_flat, tree = tree_util.tree_flatten(out)
            out_trees.trees.append(tree)
            return out_flat

        outs = custom_vmap_call_p.bind(*leaves, fun=flat_fun, rule=self.vmap_rule, in_tree=in_tree,
                                       out_trees=out_trees)
        return tree_util.tree_unflatten(out_trees.trees[-1], outs)


def sequential_vmap(f):
    """f as a custom_vmap whose rule maps f over the batch one example at a time (lax.map)."""
    f = custom_vmap(f)

    @f.def_vmap
    def rule(axis_size, in_batched, *args):
        leaves, tree = tree_util.tree_flatten(args)
        batched = tree_util.tree_leaves(in_batched)
        mapped = [x for x, b in zip(leaves, batched) if b]

        def one(xs):
            it = iter(xs)
            return f.fun(*tree_util.tree_unflatten(tree, [next(it) if b else x for x, b in zip(leaves, batched)]))

        out = lax_map(one, mapped)
        return out, tree_util.tree_map(lambda _: True, out)

    return f
