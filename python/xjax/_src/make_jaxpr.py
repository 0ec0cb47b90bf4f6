"""make_jaxpr and eval_shape: tracing a function on example arguments (arrays or ShapeDtypeStructs)."""
import contextlib
import functools

from xjax._src import core, data_leaves, tree_util
from xjax._src import shape_poly
from xjax._src.interpreters import partial_eval as pe
from xjax._src.jit import _abstractify, _normalize_argnums
from xjax._src.stages import ShapeDtypeStruct

_flatten = data_leaves.flatten  # keys as their data


def _trace_for(fun, static_argnums, args, kwargs, traced_for="jit"):
    static = frozenset(_normalize_argnums(static_argnums))
    n = len(args)
    static = {i % n for i in static if -n <= i < n} if n else set()
    dyn_args = tuple(a for i, a in enumerate(args) if i not in static)
    leaves, treedef = _flatten((dyn_args, kwargs))

    def names_fn():
        return pe.arg_names_of(fun, args, kwargs, static)

    avals, _, _ = _abstractify(leaves, fun, names_fn, abstract_ok=True)
    out_trees = []

    def flat_fun(*tracers):
        dyn, kw = treedef.unflatten(tracers)
        it = iter(dyn)
        full = [args[i] if i in static else next(it) for i in range(n)]
        leaves_out, tree = _flatten(fun(*full, **kw))
        out_trees.append(tree)
        return leaves_out

    closed = pe.trace_to_jaxpr(flat_fun, avals, pe.DebugInfo(traced_for, fun, names_fn=names_fn),
                               what=f"function {pe.func_src_info(fun)} traced for {traced_for}")
    return closed, out_trees[0]


def make_jaxpr(fun, static_argnums=(), axis_env=None, return_shape=False, abstracted_axes=None):
    """A function returning the ClosedJaxpr of `fun` for given example arguments (arrays or ShapeDtypeStructs)."""

    @functools.wraps(fun)
    def make(*args, **kwargs):
        with contextlib.ExitStack() as stack:
            for name, size in axis_env or ():  # named axes bound for collectives, as under pmap
                stack.enter_context(core.extend_axis_env(name, size))
            closed, out_tree = _trace_for(fun, static_argnums, args, kwargs)
        if return_shape:
            shapes = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type, sharding=getattr(a, "_sharding", None))
                        for a in closed.out_avals]
            return closed, out_tree.unflatten(shapes)
        return closed

    return make


def eval_shape(fun, *args, **kwargs):
    """The shapes and dtypes of fun's results (ShapeDtypeStructs), computed without running it."""
    if shape_poly.has_symbolic_dims(tree_util.tree_leaves((args, kwargs))):
        return shape_poly.eval_shape_symbolic(eval_shape, tree_util, ShapeDtypeStruct, fun, args, kwargs)
    closed, out_tree = _trace_for(fun, (), args, kwargs)
    return out_tree.unflatten([ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type,
                                                sharding=getattr(a, "_sharding", None)) for a in closed.out_avals])
