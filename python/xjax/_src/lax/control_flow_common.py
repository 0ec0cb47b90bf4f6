"""What the control-flow primitives share: tracing user functions to jaxprs with their consts as
operands, forwarding and pruning, carry type checks worded as JAX's, and eager runs as jit."""
import inspect
import weakref

import numpy as np

from xjax._src import core, data_leaves, dtypes, errors, tree_util
from xjax._src.backends import cpu
from xjax._src.config import config
from xjax._src.interpreters import partial_eval as pe
from xjax._src.interpreters.graph_lowering import equation_call
from xjax._src.jaxpr import ClosedJaxpr, Jaxpr, Literal, live_equations
from xjax._src.lax import elementwise as ew, layout
from xjax._src.lax.base import asarray

_flatten = data_leaves.flatten  # keys as their data
_PY_SCALARS = (bool, int, float)


def aval_str(a):
    return ("~" if a.weak_type else "") + errors.long_str(a)


def typematch(a, b):
    """Equal shapes, dtypes and varying manual axes (weak types may differ)."""
    return a.shape == b.shape and a.dtype == b.dtype and getattr(a, "vma", ()) == getattr(b, "vma", ())


def is_tracing():
    return type(core.current_trace()) is not core.EvalTrace


def operand(x):
    return x if isinstance(x, core.Tracer) else asarray(x)


class _TracedWhat:
    """`function f at file:line traced for cond`, worded only when an error needs it."""

    __slots__ = ("dbg",)

    def __init__(self, dbg):
        self.dbg = dbg

    def __str__(self):
        return f"function {pe.func_src_info(self.dbg.fun)} traced for {self.dbg.traced_for}"


def trace_fun(fun, args, in_avals, traced_for, split_out=None, debug=None, in_tree=None, cache_on=None):
    """(jaxpr with its consts as leading invars, consts, output tree) of fun(*args) on abstract args.

    split_out(out) -> (leaves, tree) replaces plain flattening of the result (scan's (carry, y) pairs);
    debug = (function, traced_for, names_fn) names a user function that fun wraps, for error messages;
    in_tree: the tree of args when the caller has it. The trace is cached under the user's function:
    fun itself, or cache_on = (function, tag) when fun is a wrapper of function made on each call
    (the tag names the wrapping, so function and tag together stand for everything fun does).
    Nothing is worded or inspected before an error needs it: this runs on every eager call.
    """
    if in_tree is None:
        in_tree = _flatten(args)[1]
    cache_on, tag = (fun, None) if cache_on is None else cache_on
    key = (traced_for, tag, in_tree, *in_avals)
    hit = _cached_trace(cache_on, key)
    if hit is not None:
        return hit
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
    closed = pe.trace_to_jaxpr(flat_fun, in_avals, dbg, what=_TracedWhat(dbg))
    closed, consts = pe.convert_constvars(closed)
    out = Traced(closed, consts, trees[0])
    _remember_trace(cache_on, key, out)
    return out


class Traced:
    """What trace_fun gives: unpacks as (closed jaxpr, consts, output tree).

    `derived(key, compute)` remembers what a caller computes from the trace alone (the rewritten
    loop jaxprs), so that a cached trace also gives the same rewritten jaxprs, whose compiled
    graph is then found by identity of their structural key.
    """

    __slots__ = ("closed", "consts", "tree", "_memo")

    def __init__(self, closed, consts, tree):
        self.closed = closed
        self.consts = consts
        self.tree = tree
        self._memo = None

    def __iter__(self):
        return iter((self.closed, self.consts, self.tree))

    def derived(self, key, compute):
        memo = self._memo
        if memo is None:
            memo = self._memo = {}
        value = memo.get(key)
        if value is None:
            if len(memo) >= 8:  # keys may hold other traces: stay small
                memo.clear()
            value = memo[key] = compute()
        return value


# ---- the trace cache ------------------------------------------------------------------------
# As in JAX, a function given to control flow is traced once per (function object, what it is
# traced for, argument structure and types): a repeated eager `cond(p, f, g, x)` reuses the
# jaxprs of f and g (and so finds their compiled graph at once), and Python side effects in f
# run at its first trace only. A new lambda on each call is a new function: traced each time,
# its graph found by the jaxpr's structure. Traces closing over tracers are not kept.

_traces = {}  # id(function) -> (weak reference to it, {key: Traced}, oldest first)
_TRACES_PER_FUNCTION = 16


def _cached_trace(fun, key):
    entry = _traces.get(id(fun))
    if entry is None or entry[0]() is not fun:
        return None
    return entry[1].get(key)


def _remember_trace(fun, key, out):
    if any(isinstance(c, core.Tracer) for c in out.consts):
        return
    fid = id(fun)
    entry = _traces.get(fid)
    if entry is None or entry[0]() is not fun:
        try:
            ref = weakref.ref(fun, lambda r, fid=fid: _forget(fid, r))
        except TypeError:  # a callable that cannot be weakly referenced: not cached
            return
        entry = _traces[fid] = (ref, {})
    per_fun = entry[1]
    if len(per_fun) >= _TRACES_PER_FUNCTION:
        del per_fun[next(iter(per_fun))]
    per_fun[key] = out


def _forget(fid, ref):
    entry = _traces.get(fid)
    if entry is not None and entry[0] is ref:
        del _traces[fid]


def clear_trace_cache(name=None, value=None):
    """Forgets every cached trace (a config change can change what tracing gives)."""
    _traces.clear()


def jit_disabled():
    return config._values["jax_disable_jit"]  # (config.jax_disable_jit is a slow __getattr__)


config.on_change(clear_trace_cache)


def forwarding(jaxpr):
    """For each output, the index of the input it is, or None."""
    idx = {v: i for i, v in enumerate(jaxpr.invars)}
    return [None if type(v) is Literal else idx.get(v) for v in jaxpr.outvars]


def dce_inputs(jaxpr, keep_inputs):
    """(jaxpr without its unused equations and unused inputs not in keep_inputs, which inputs remain)."""
    eqns, live = live_equations(jaxpr)
    kept = [k or v in live for v, k in zip(jaxpr.invars, keep_inputs)]
    new = Jaxpr([], [v for v, k in zip(jaxpr.invars, kept) if k], jaxpr.outvars, eqns)
    return ClosedJaxpr(new, []), kept


def move_inputs_to_front(closed, move):
    j = closed.jaxpr
    moved = [v for v, m in zip(j.invars, move) if m]
    rest = [v for v, m in zip(j.invars, move) if not m]
    return ClosedJaxpr(Jaxpr([], moved + rest, j.outvars, j.eqns), [])


def prune_outputs(closed, keep):
    if all(keep):
        return closed
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
    """What differs between two types, as JAX's errors list it."""
    diffs = [what for what, differ in (("the dtypes do not match", a.dtype != b.dtype),
                                       ("the shapes do not match", a.shape != b.shape),
                                       ("the manual axis types do not match",
                                        getattr(a, "vma", ()) != getattr(b, "vma", ()))) if differ]
    if not diffs:
        return ""
    return ", so " + (diffs[0] if len(diffs) == 1 else ", ".join(diffs[:-1]) + ", and " + diffs[-1])


def pvary_advice(subjects):
    """JAX's hint for values that vary over fewer manual axes than they must: (axes missing, where)."""
    fixes = [f"applying `jax.lax.pcast(..., {axes}, to='varying')`{where}" for axes, where in subjects]
    if not fixes:
        return ""
    text = f"This might be fixed by {fixes[0]}.\n" if len(fixes) == 1 else (
        "This might be fixed by:\n" + "\n".join(f"  * {d};\n" for d in fixes[:-1]) + f"  * {fixes[-1]}.\n")
    return text + "See https://docs.jax.dev/en/latest/notebooks/shard_map.html#scan-vma for more information.\n\n"


def carry_name(fun):
    try:
        params = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        return None
    return params[0] if params else None


def check_carry(name, fun, in_tree, in_avals, out_tree, out_avals):
    """TypeError as JAX words it when a loop body's carry output differs from its input."""
    if in_tree == out_tree and all(typematch(a, b) for a, b in zip(in_avals, out_avals)):
        return  # (the usual case, on every eager call: no names looked up)
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
    advice = pvary_advice([
        (tuple(n for n in b.vma if n not in a.vma), f", to the initial carry value corresponding to {component(p)}")
        for p, a, b in zip(paths, in_avals, out_avals)
        if not typematch(a, b) and a.vma != b.vma and set(b.vma) - set(a.vma)])
    raise TypeError(f"{name} function carry input and carry output must have equal types, but they differ:\n\n{text}"
                    f"\n{advice}Revise the function so that all output types match the corresponding input types.")


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


def run_as_jit(prim, args, params, fallback):
    """Eager impl: the compiled graph of the one equation (found by its structure: the jaxprs in
    params are traced again on every call, but a repeated call compiles once), or, when the core
    cannot run it, fallback(args)."""
    args = [asarray(a) for a in args]
    call = equation_call(prim, tuple([a.aval for a in args]), params)
    return fallback(args) if call is None else call(args)


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


_I32_SCALARS = {}


def scalar_i32(v):
    """A 0-d int32 array of v (arrays are immutable: small ones are made once)."""
    v = int(v)
    x = _I32_SCALARS.get(v)
    if x is None:
        x = cpu.scalar(v, dtypes.int32, False)
        if -16 <= v < 256:
            _I32_SCALARS[v] = x
    return x


def shaped_repr(a):
    weak = ", weak_type=True" if a.weak_type else ""
    return f"ShapedArray({errors.long_str(a)}{weak})"


def per_example(pred, like):
    """A per-example value of a batch (shape (B,)) broadcast to `like`'s batched shape (B, ...): a
    batched predicate's select in the batching rules of cond and while."""
    shape = core.get_aval(like).shape
    nd = core.get_aval(pred).ndim  # the leading dims: one batch axis, or a loop's nested ones
    return pred if len(shape) == nd else layout.broadcast_in_dim(pred, shape, tuple(range(nd)))
