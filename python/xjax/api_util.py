"""xjax.api_util (jax.api_util): helpers for libraries that trace Python functions through JAX's
internal API (Flax's nn.scan): debug information, pytree flattening of a WrappedFun's arguments and
results, and the abstract value of an argument."""
import collections

from xjax._src import core, linear_util, tree_util

# What a traced function is, for error messages: JAX's fields, our values.
DebugInfo = collections.namedtuple("DebugInfo", "traced_for func_src_info arg_names result_paths")


def debug_info(traced_for, fun, args, kwargs, *, static_argnums=(), static_argnames=(), result_paths_thunk=None,
               sourceinfo=None, signature=None):
    """The DebugInfo of tracing `fun` for `traced_for` (e.g. "jit") with these arguments."""
    del static_argnums, static_argnames, signature
    name = getattr(fun, "__qualname__", getattr(fun, "__name__", type(fun).__name__))
    code = getattr(fun, "__code__", None)
    src = sourceinfo or (f"{name} at {code.co_filename}:{code.co_firstlineno}" if code else name)
    n_args = len(tree_util.tree_leaves((args, kwargs)))
    return DebugInfo(traced_for, src, tuple(f"args[{i}]" for i in range(n_args)), result_paths_thunk)


def _flatten_results(f, store, in_tree, *flat_args):
    args, kwargs = tree_util.tree_unflatten(in_tree, flat_args)
    leaves, out_tree = tree_util.tree_flatten(f(*args, **kwargs))
    store.store(out_tree)
    return leaves


def _flatten_results_nokwargs(f, store, in_tree, *flat_args):
    leaves, out_tree = tree_util.tree_flatten(f(*tree_util.tree_unflatten(in_tree, flat_args)))
    store.store(out_tree)
    return leaves


def flatten_fun(fun, in_tree):
    """(fun taking the leaves of (args, kwargs) of structure in_tree and returning its results' leaves,
    a thunk giving the results' structure once it has run)."""
    return linear_util.transformation_with_aux2(_flatten_results)(fun, in_tree)


def flatten_fun_nokwargs(fun, in_tree):
    """As flatten_fun, for in_tree the structure of the positional arguments alone."""
    return linear_util.transformation_with_aux2(_flatten_results_nokwargs)(fun, in_tree)


def shaped_abstractify(x):
    """The abstract value (shape, dtype, weak type) of an array or scalar."""
    return core.get_aval(x)
