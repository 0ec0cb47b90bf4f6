"""From a jitted function and argument types to what an .xjx file stores: its graph (lowered as jit
lowers it, before optimisation), its signature and the arrays it closes over (its weights)."""
from xjax._src import core, data_leaves
from xjax._src.backends import cpu
from xjax._src.interpreters import partial_eval as pe
from xjax._src.interpreters.graph_lowering import is_lowerable, lower_closed_jaxpr
from xjax._src.jaxpr import ClosedJaxpr, Jaxpr


class Lowered:
    """One signature of a function, lowered: the parts of an Exported before it is compiled."""

    __slots__ = ("fun_name", "in_tree", "out_tree", "in_avals", "out_avals", "graph", "weights")

    def __init__(self, fun_name, in_tree, out_tree, in_avals, out_avals, graph, weights):
        self.fun_name = fun_name
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.in_avals = tuple(in_avals)
        self.out_avals = tuple(out_avals)
        self.graph = graph  # _core.Graph: parameters are the inputs, then the weights
        self.weights = list(weights)  # xjax Arrays, one per weight parameter


def _sub_jaxprs(params):
    for v in params.values():
        for x in (v if type(v) is tuple else (v,)):
            if isinstance(x, ClosedJaxpr):
                yield x.jaxpr
            elif isinstance(x, Jaxpr):
                yield x


def check_exportable(jaxpr, fun):
    """Raises ValueError for an equation that cannot run outside Python (a host callback such as
    debug.print) or cannot be lowered to a graph, naming its primitive and where it was written."""
    for eqn in jaxpr.eqns:
        prim = eqn.primitive
        if getattr(prim, "has_effect", False):
            where = eqn.params.get("source_info", "an unknown line")
            raise ValueError(
                f"xjax.export: {fun} calls {prim.name} at {where}: it runs a Python callback, which an exported "
                "program cannot (the file runs without Python). Remove the call before exporting.")
        if not is_lowerable(eqn):
            raise ValueError(f"xjax.export: {fun} uses the primitive {prim.name}, which has no lowering to the "
                             "C++ graph: it cannot be exported")
        for sub in _sub_jaxprs(eqn.params):
            check_exportable(sub, fun)


def _check_avals(avals, what):
    for a in avals:
        if type(a) is not core.ShapedArray or getattr(a.dtype, "name", None) not in cpu._NP_DTYPE:
            raise TypeError(f"xjax.export: {what} of type {a} cannot be exported (arrays of numeric dtypes only)")


def lower(jitted, args, kwargs):
    """Traces jitted(*args, **kwargs) (arrays or ShapeDtypeStructs) and lowers it for export."""
    fun = jitted._fun
    name = pe.fun_name(fun)
    src = pe.func_src_info(fun)
    traced = jitted.trace(*args, **kwargs)
    entry = traced._entry
    if entry.lifted:
        raise ValueError(f"xjax.export: {src} closes over values of an enclosing trace: export it outside "
                         "any transformation")
    dyn_args, dyn_kwargs, _ = jitted._split(args, kwargs)
    in_tree = data_leaves.structure((tuple(dyn_args), dict(dyn_kwargs)))
    closed = entry.jaxpr
    check_exportable(closed.jaxpr, src)
    in_avals, out_avals = list(traced.in_avals), list(closed.jaxpr.out_avals)
    _check_avals(in_avals, "an argument")
    _check_avals(out_avals, "a result")
    graph, outs, extern, lowerer = lower_closed_jaxpr(closed)
    assert not lowerer.callbacks, "callbacks were checked for above"
    graph.set_outputs(list(outs))
    return Lowered(name, in_tree, entry.out_tree, in_avals, out_avals, graph, [*closed.consts, *extern])
