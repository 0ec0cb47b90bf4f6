"""What the control-flow primitives share: tracing user functions to jaxprs with their consts as
operands, forwarding and pruning, carry type checks worded as JAX's, and eager runs as jit."""
import numpy as np

from xjax._src import core, dtypes, errors, tree_util
from xjax._src.backends import cpu
from xjax._src.config import config
from xjax._src.interpreters import partial_eval as pe
from xjax._src.interpreters.graph_lowering import compile_closed_jaxpr
from xjax._src.jaxpr import ClosedJaxpr, Jaxpr, Literal, Var
from xjax._src.lax import elementwise as ew
from xjax._src.lax.base import asarray

_flatten = tree_util.tree_flatten
_PY_SCALARS = (bool, int, float)


def aval_str(a):
    return ("~" if a.weak_type else "") + errors.long_str(a)


def typematch(a, b):
    """Equal shapes and dtypes (weak types may differ)."""
    return a.shape == b.shape and a.dtype == b.dtype


def is_tracing():
    return type(core.current_trace()) is not core.EvalTrace


def operand(x):
    return x if isinstance(x, core.Tracer) else asarray(x)


def trace_fun(fun, args, in_avals, traced_for, split_out=None, debug=None):
    """(jaxpr with its consts as leading invars, consts, output tree) of fun(*args) on abstract args.

    split_out(out) -> (leaves, tree) replaces plain flattening of the result (scan's (carry, y) pairs);
    debug = (function, traced_for, names_fn) names a user function that fun wraps, for error messages.
    """
    _, in_tree = _flatten(args)
    trees = []

    def flat_fun(*tracers):
        out = fun(*in_tree.unflatten(tracers))
        leaves, tree = split_out(out) if split_out else _flatten(out)
        trees.append(tree)
        return leaves

    def names_fn():
        return pe.arg_names_of(fun, in_tree.unflatten(in_avals), {})

    dbg = pe.DebugInfo(traced_for, fun, names_fn=names_fn) if debug is None else pe.DebugInfo(
        debug[1], debug[0], names_fn=debug[2])
    closed = pe.trace_to_jaxpr(flat_fun, in_avals, dbg,
                               what=f"function {pe.func_src_info(dbg.fun)} traced for {dbg.traced_for}")
    closed, consts = pe.convert_constvars(closed)
    return closed, consts, trees[0]


def forwarding(jaxpr):
    """For each output, the index of the input it is, or None."""
    idx = {v: i for i, v in enumerate(jaxpr.invars)}
    return [None if type(v) is Literal else idx.get(v) for v in jaxpr.outvars]


def dce_inputs(jaxpr, keep_inputs):
    """(jaxpr without its unused equations and unused inputs not in keep_inputs, which inputs remain)."""
    live = {v for v in jaxpr.outvars if type(v) is not Literal}
    eqns = []
    for eqn in reversed(jaxpr.eqns):
        if getattr(eqn.primitive, "has_effect", False) or any(v in live for v in eqn.outvars):
            eqns.append(eqn)
            live.update(a for a in eqn.invars if type(a) is not Literal)
    kept = [k or v in live for v, k in zip(jaxpr.invars, keep_inputs)]
    new = Jaxpr([], [v for v, k in zip(jaxpr.invars, kept) if k], jaxpr.outvars, eqns[::-1])
    return ClosedJaxpr(new, []), kept


def move_inputs_to_front(closed, move):
    j = closed.jaxpr
    moved = [v for v, m in zip(j.invars, move) if m]
    rest = [v for v, m in zip(j.invars, move) if not m]
    return ClosedJaxpr(Jaxpr([], moved + rest, j.outvars, j.eqns), [])


def prune_outputs(closed, keep):
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr([], j.invars, [v for v, k in zip(j.outvars, keep) if k], j.eqns), [])


def tree_mismatch(tree_a, tree_b):
    """How two output structures differ, in JAX's words."""
    if tree_a.num_leaves == 1 and tree_a.num_nodes == 1:
        what_a = "a pytree leaf"
    else:
        what_a = f"a {type(tree_a.unflatten([0] * tree_a.num_leaves))}"
    if tree_b.num_leaves == 1 and tree_b.num_nodes == 1:
        what_b = "a pytree leaf"
    else:
        what_b = f"a {type(tree_b.unflatten([0] * tree_b.num_leaves))}"
    if what_a != what_b:
        return what_a, what_b, "their Python types differ"
    return f"{tree_a}", f"{tree_b}", "their structures differ"


def mismatch_extra(a, b):
    if a.shape != b.shape:
        return ", so the shapes do not match"
    if a.dtype != b.dtype:
        return ", so the dtypes do not match"
    return ""


def carry_name(fun):
    import inspect

    try:
        params = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        return None
    return params[0] if params else None


def check_carry(name, fun, in_tree, in_avals, out_tree, out_avals):
    """TypeError as JAX words it when a loop body's carry output differs from its input."""
    carry = carry_name(fun)
    component = (lambda p: f"the input carry component {carry}{p}" if p else f"the input carry {carry}") if carry \
        else (lambda p: f"the input carry at path {p}" if p else "the input carry")
    if in_tree != out_tree:
        a, b, why = tree_mismatch(in_tree, out_tree)
        if a == "a pytree leaf":
            a = f"a {type(in_avals[0])}" if in_avals else a
        raise TypeError(f"{name} function carry input and carry output must have the same pytree structure, but "
                        f"they differ:\n\n{component('')[0].upper()}{component('')[1:]} is {a} but the corresponding "
                        f"component of the carry output is {b}, so {why}.\n\nRevise the function so that the carry "
                        "output has the same pytree structure as the carry input.")
    paths = [tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(in_tree.unflatten(in_avals))[0]]
    diffs = [f"{component(p)} has type {errors.long_str(a)} but the corresponding output carry component has type "
             f"{errors.long_str(b)}{mismatch_extra(a, b)}"
             for p, a, b in zip(paths, in_avals, out_avals) if not typematch(a, b)]
    if not diffs:
        return
    if len(diffs) == 1:
        text = diffs[0][0].upper() + diffs[0][1:] + ".\n"
    else:
        text = "\n".join(f"  * {d};\n" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n"
    raise TypeError(f"{name} function carry input and carry output must have equal types, but they differ:\n\n{text}"
                    "\nRevise the function so that all output types match the corresponding input types.")


def promote_weak(vals, in_avals, out_avals):
    """Weakly typed initial values whose loop output has another dtype take that dtype (JAX's rule)."""
    changed = False
    out = []
    for x, a, b in zip(vals, in_avals, out_avals):
        if a.weak_type and not typematch(a, b):
            x = ew.convert_element_type(x, dtypes.result_type(x, b.dtype))
            changed = True
        out.append(x)
    return out, changed


def run_as_jit(prim, args, params):
    """Eager impl through a one-equation jaxpr (compiled like any jitted function)."""
    args = [asarray(a) for a in args]
    avals = [a.aval for a in args]
    invars = [Var(a) for a in avals]
    out_avals = prim.abstract_eval(*avals, **params)
    from xjax._src.jaxpr import JaxprEqn

    outvars = [Var(a) for a in out_avals]
    closed = ClosedJaxpr(Jaxpr([], invars, outvars, [JaxprEqn(invars, outvars, prim, params)]), [])
    return compile_closed_jaxpr(closed)(args)


def lowerable(prim, params):
    check = getattr(prim, "can_lower", None)
    return check is not None and check(params)


def concrete_scalar(x):
    """x as a Python scalar if it is a concrete (non-traced) value, else None."""
    if isinstance(x, core.Tracer):
        return None
    if type(x) in _PY_SCALARS or isinstance(x, np.generic):
        return x
    if type(x) in core.ARRAY_TYPES and not x.shape:
        return x.item()
    return None


def scalar_i32(v):
    return cpu.scalar(int(v), dtypes.int32, False)


def shaped_repr(a):
    weak = ", weak_type=True" if a.weak_type else ""
    return f"ShapedArray({errors.long_str(a)}{weak})"
