"""jnp.array of (nested) lists holding arrays: built from lax ops as JAX builds it (each part
converted and expanded, then concatenated), so eager and traced calls run the same code. Eagerly
the ops are traced once per (list structure, leaf types, dtype) into one compiled graph, so a
call is one dispatch rather than one per element."""
import numpy as np

from xjax._src import core, lax, tree_util
from xjax._src.array import Array, scalar
from xjax._src.interpreters import partial_eval as pe
from xjax._src.interpreters.graph_lowering import compile_closed_jaxpr
from xjax._src.lru_cache import LRUCache
from xjax._src.numpy import util


def map_nested(obj, fn):
    """fn applied to the leaves of nested lists and tuples (as lists)."""
    if isinstance(obj, (list, tuple)):
        return [map_nested(e, fn) for e in obj]
    return fn(obj)


def stack(obj, dtype):
    """The nested list `obj` (arrays, tracers, scalars, NumPy data) as one array of `dtype`."""
    if type(core.current_trace()) is core.EvalTrace:
        return _stack_eager(obj, dtype)
    return stack_nested(obj, dtype)


def stack_nested(obj, dtype):
    """The lax ops: convert and expand each part, concatenate (in groups of 16, as JAX does, so that
    few concatenate arities compile)."""
    if not isinstance(obj, (list, tuple)):
        check_python_int(obj, dtype)
        x = util.convert(obj, dtype, False)
        return lax.elementwise._convert(x, dtype, weak_type=False) if x.aval.weak_type else x
    if not obj:
        return util.full((0,), 0, dtype)
    parts = []
    for e in obj:
        p = stack_nested(e, dtype)
        shape = p.aval.shape
        parts.append(lax.broadcast_in_dim(p, (1,) + shape, tuple(range(1, len(shape) + 1))))
    _check_concatenate([p.aval.shape for p in parts])
    while len(parts) > 16:
        parts = [lax.concatenate(parts[i:i + 16], 0) for i in range(0, len(parts), 16)]
    return lax.concatenate(parts, 0) if len(parts) > 1 else parts[0]


# (list structure, dtype, leaf avals) -> compiled stack_nested; bounded like the other caches
_compiled = LRUCache(256)


def _stack_eager(obj, dtype):
    leaves, tree = tree_util.tree_flatten(obj)
    args = [x if type(x) is Array else _leaf_array(x, dtype) for x in leaves]
    avals = [a.aval for a in args]
    key = (tree, dtype, *avals)
    call = _compiled.get(key)
    if call is None:
        closed = pe.trace_to_jaxpr(lambda *xs: [stack_nested(tree.unflatten(xs), dtype)], avals)
        call = compile_closed_jaxpr(closed)
        _compiled.put(key, call)
    return call(args)[0]


def _leaf_array(x, dtype):
    """A host leaf as an array: Python scalars straight in `dtype` (their value, not a wrapped one)."""
    if type(x) in util._PY_SCALARS:
        check_python_int(x, dtype)
        return scalar(x, dtype, False)
    return util.asarray(x)


def _check_concatenate(shapes):
    """lax.concatenate's TypeError (as JAX words it) for parts that cannot be stacked."""
    if any(len(s) != len(shapes[0]) for s in shapes):
        raise TypeError("Cannot concatenate arrays with different numbers of dimensions: got "
                        f"{', '.join(map(str, shapes))}.")
    if any(s[1:] != shapes[0][1:] for s in shapes):
        raise TypeError("Cannot concatenate arrays with shapes that differ in dimensions other than the one being "
                        f"concatenated: concatenating along dimension 0 for shapes {', '.join(map(str, shapes))}.")


def check_python_int(x, dtype):
    """NumPy's OverflowError for a Python int that the integer `dtype` cannot hold."""
    if type(x) is int and dtype.kind in "iu":
        info = np.iinfo(dtype)
        if not info.min <= x <= info.max:
            raise OverflowError(f"Python integer {x} out of bounds for {dtype.name}")
