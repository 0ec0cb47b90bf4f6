"""xjax.interpreters.mlir (jax.interpreters.mlir): how a primitive defined outside xjax is compiled.

xjax compiles jaxprs to its own graphs, not to MLIR. A primitive whose lowering is a Python
function (`mlir.register_lowering(p, mlir.lower_fun(f, multiple_results=...))`) is lowered by
tracing f at the equation's types and lowering that jaxpr in its place. Rules that emit MLIR
directly cannot run here: the primitive is then computed by its impl rule (def_impl).
"""
from xjax._src.interpreters.python_lowering import PythonLowering as _PythonLowering


def lower_fun(fun, multiple_results=True):
    """The lowering that computes fun(*operands, **params) (its result a list if multiple_results)."""
    return _PythonLowering(fun, multiple_results)


def register_lowering(prim, rule, platform=None, **kwargs):
    """Sets prim's lowering to `rule` when it comes from lower_fun (for every platform: xjax's graphs
    are the same on each); other rules emit MLIR, which xjax cannot use, and are not kept."""
    if isinstance(rule, _PythonLowering):
        rule.install(prim)
    return rule
