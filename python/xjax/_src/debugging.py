"""jax.debug.print and jax.debug.callback: host callbacks that run from compiled code.

Both are primitives with no results and an effect (so no pass drops them): `debug_print`
formats its operands with `str.format` under the NumPy print options captured when it was
traced; `debug_callback` calls a Python function with the operands as arrays. Eagerly they run
at once; under jit they lower to the core's `host_callback` op (when the core has it), which
calls back into Python with the computed values, in program order.
"""
import os
import sys

import numpy as np

from xjax import _core
from xjax._src import core, data_leaves, errors
from xjax._src.array import Array
from xjax._src.jaxpr import params_printer
from xjax._src.lax import layout
from xjax._src.lax.base import asarray

debug_print_p = core.Primitive("debug_print", multiple_results=True)
debug_callback_p = core.Primitive("debug_callback", multiple_results=True)
debug_print_p.has_effect = debug_callback_p.has_effect = True

_HAS_HOST_CALLBACK = hasattr(_core, "register_callback")


class _Effect:
    """The effect param JAX shows on debug equations."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


DEBUG_EFFECT = _Effect("Debug")
ORDERED_DEBUG_EFFECT = _Effect("OrderedDebug")


def _format_print(args, fmt, in_tree, static_args, np_printoptions):
    leaves = list(args)
    for i, v in static_args:
        leaves.insert(i, v)
    a, kw = in_tree.unflatten(leaves)
    with np.printoptions(**dict(np_printoptions)):
        print(fmt.format(*a, **kw), flush=True)


def _debug_print_impl(*args, fmt, has_placeholders, in_tree, logging_record, np_printoptions, ordered, partitioned,
                      static_args, source_info=None):
    _format_print([asarray(x) for x in args], fmt, in_tree, static_args, np_printoptions)
    return []


def _debug_callback_impl(*args, callback, effect, partitioned, source_info=None):
    callback(*[asarray(x) for x in args])
    return []


def _no_outputs(*avals, **params):
    return []


def _host_callback_lowering(run_callback):
    """A lowering to the core's host_callback op: the values come back as xjax Arrays.

    The callback is registered with the core for as long as the compiled graph lives (the lowerer
    records its id).
    """

    def lower(lowerer, eqn, ins):
        avals = [a.aval for a in eqn.invars]
        params = eqn.params

        def fn(values):
            try:
                run_callback([Array(v, a) for v, a in zip(values, avals)], params)
            except Exception as e:  # (eager, the callback's own exception propagates, as in JAX)
                raise errors.callback_error(e) from None

        cid = _core.register_callback(fn)
        lowerer.callbacks.append(cid)
        lowerer.graph.add("host_callback", list(ins), {"callback_id": cid})
        return []

    return lower


debug_print_p.abstract_eval = _no_outputs
debug_print_p.impl = _debug_print_impl
debug_print_p.can_lower = lambda params: _HAS_HOST_CALLBACK
debug_print_p.jaxpr_lowering = _host_callback_lowering(
    lambda arrays, p: _format_print(arrays, p["fmt"], p["in_tree"], p["static_args"], p["np_printoptions"]))
debug_callback_p.abstract_eval = _no_outputs
debug_callback_p.impl = _debug_callback_impl
debug_callback_p.can_lower = lambda params: _HAS_HOST_CALLBACK
debug_callback_p.jaxpr_lowering = _host_callback_lowering(lambda arrays, p: p["callback"](*arrays))
# The source line of each call is a param (export names it when it refuses one); JAX shows no such param.
debug_print_p.pp_params = debug_callback_p.pp_params = params_printer(drop=("source_info",))


def _is_array_leaf(x):
    return isinstance(x, (core.Tracer, bool, int, float, np.ndarray, np.generic)) or type(x) in core.ARRAY_TYPES


_XJAX_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _user_source():
    """'file:line (in function)' of the first caller outside xjax: where a callback was written
    (export names it when it refuses the callback)."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_XJAX_DIR):
        f = f.f_back
    if f is None:
        return "unknown"
    return f"{f.f_code.co_filename}:{f.f_lineno} (in {f.f_code.co_name})"


def _operand(x):
    return x if isinstance(x, core.Tracer) else asarray(x)


def debug_print(fmt, *args, ordered=False, partitioned=False, **kwargs):
    """Prints `fmt.format(*args, **kwargs)` with the values the arrays have when the program runs."""
    leaves, in_tree = data_leaves.flatten((args, kwargs))  # (keys as their data)
    static_args = tuple((i, x) for i, x in enumerate(leaves) if not _is_array_leaf(x))
    operands = [_operand(x) for x in leaves if _is_array_leaf(x)]
    debug_print_p.bind(*operands, fmt=fmt, has_placeholders="{" in fmt, in_tree=in_tree, logging_record=None,
                       np_printoptions=tuple(np.get_printoptions().items()), ordered=bool(ordered),
                       partitioned=bool(partitioned), static_args=static_args, source_info=_user_source())


def debug_callback(callback, *args, ordered=False, partitioned=False, **kwargs):
    """Calls callback(*args, **kwargs) with the arrays' values when the program runs; returns None."""
    if not callable(callback):
        raise TypeError(f"first argument to jax.debug.callback must be callable, but got an object of type "
                        f"{type(callback)}")
    leaves, in_tree = data_leaves.flatten((args, kwargs))  # (keys as their data)
    array_pos = [i for i, x in enumerate(leaves) if _is_array_leaf(x)]
    static = {i: x for i, x in enumerate(leaves) if not _is_array_leaf(x)}

    def _flat_callback(*flat):
        it = iter(flat)
        full = [static[i] if i in static else next(it) for i in range(len(leaves))]
        a, kw = in_tree.unflatten(full)
        callback(*a, **kw)

    _flat_callback.__qualname__ = "debug_callback.<locals>._debug_callback.<locals>._flat_callback"
    operands = [_operand(leaves[i]) for i in array_pos]
    debug_callback_p.bind(*operands, callback=_flat_callback,
                          effect=ORDERED_DEBUG_EFFECT if ordered else DEBUG_EFFECT, partitioned=bool(partitioned),
                          source_info=_user_source())


def breakpoint(*args, **kwargs):  # noqa: A001 - JAX's name
    raise NotImplementedError("jax.debug.breakpoint is not supported by xjax")



# ---- differentiation rules ------------------------------------------------------------------
# Under jvp the callback sees the primal values only (as in JAX): the tangents are dropped and
# there are no outputs to give tangents to. Reverse mode runs that primal callback while
# linearising, once; the linear jaxpr holds no debug equation, so transposition never meets one.

def _debug_jvp(prim):
    def jvp(primals, tangents, **params):
        return prim.bind(*primals, **params), []

    return jvp


debug_print_p.def_rules(jvp=_debug_jvp(debug_print_p))
debug_callback_p.def_rules(jvp=_debug_jvp(debug_callback_p))


# ---- batching (vmap) ------------------------------------------------------------------------
# As in JAX, a callback under vmap runs once per example, in order, on that example's values (an
# unmapped operand is passed whole to each): what the user sees is the unbatched program's output.

def _debug_batch(prim):
    def rule(axis, vals, dims, **params):
        for i in range(axis.size):
            prim.bind(*[v if d is None else layout.index_in_dim(v, i, d, keepdims=False) for v, d in zip(vals, dims)],
                      **params)
        return [], []

    return rule


debug_print_p.def_rules(batch=_debug_batch(debug_print_p))
debug_callback_p.def_rules(batch=_debug_batch(debug_callback_p))
