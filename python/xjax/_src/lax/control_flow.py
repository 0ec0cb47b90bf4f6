"""Control flow primitives: cond (lax.cond, lax.switch), while (lax.while_loop, lax.fori_loop), scan (lax.scan, lax.map).

The Python functions are traced to jaxprs once (branches, loop bodies); their closed-over values
become explicit operands, as in JAX, so the primitives are pure functions of their operands and
print as JAX prints them. Under jit they lower into the C++ graph (control_flow_lowering);
called eagerly they run as the jit of the one primitive, or, while the core lacks the
control-flow ops, as Python loops over compiled bodies.
"""
import builtins

import numpy as np

from xjax._src import core, dtypes, errors, tree_util
from xjax._src.backends import cpu
from xjax._src.config import config
from xjax._src.interpreters import partial_eval as pe
from xjax._src.interpreters.graph_lowering import compile_closed_jaxpr, run_closed_jaxpr
from xjax._src.jaxpr import ClosedJaxpr, Jaxpr, Literal, Var
from xjax._src.lax import elementwise as ew
from xjax._src.lax import layout
from xjax._src.lax.base import asarray

_flatten = tree_util.tree_flatten
_PY_SCALARS = (bool, int, float)

cond_p = core.Primitive("cond", multiple_results=True)
while_p = core.Primitive("while", multiple_results=True)
scan_p = core.Primitive("scan", multiple_results=True)


# ---- helpers --------------------------------------------------------------------------------

def _aval_str(a):
    return ("~" if a.weak_type else "") + errors.long_str(a)


def _typematch(a, b):
    """Equal shapes and dtypes (weak types may differ)."""
    return a.shape == b.shape and a.dtype == b.dtype


def _is_tracing():
    return type(core.current_trace()) is not core.EvalTrace


def _operand(x):
    return x if isinstance(x, core.Tracer) else asarray(x)


def _trace(fun, args, in_avals, traced_for, split_out=None, debug=None):
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


def _forwarding(jaxpr):
    """For each output, the index of the input it is, or None."""
    idx = {v: i for i, v in enumerate(jaxpr.invars)}
    return [None if type(v) is Literal else idx.get(v) for v in jaxpr.outvars]


def _dce_inputs(jaxpr, keep_inputs):
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


def _move_inputs_to_front(closed, move):
    j = closed.jaxpr
    moved = [v for v, m in zip(j.invars, move) if m]
    rest = [v for v, m in zip(j.invars, move) if not m]
    return ClosedJaxpr(Jaxpr([], moved + rest, j.outvars, j.eqns), [])


def _prune_outputs(closed, keep):
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr([], j.invars, [v for v, k in zip(j.outvars, keep) if k], j.eqns), [])


def _tree_mismatch(tree_a, tree_b):
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


def _mismatch_extra(a, b):
    if a.shape != b.shape:
        return ", so the shapes do not match"
    if a.dtype != b.dtype:
        return ", so the dtypes do not match"
    return ""


def _carry_name(fun):
    import inspect

    try:
        params = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        return None
    return params[0] if params else None


def _check_carry(name, fun, in_tree, in_avals, out_tree, out_avals):
    """TypeError as JAX words it when a loop body's carry output differs from its input."""
    carry = _carry_name(fun)
    component = (lambda p: f"the input carry component {carry}{p}" if p else f"the input carry {carry}") if carry \
        else (lambda p: f"the input carry at path {p}" if p else "the input carry")
    if in_tree != out_tree:
        a, b, why = _tree_mismatch(in_tree, out_tree)
        if a == "a pytree leaf":
            a = f"a {type(in_avals[0])}" if in_avals else a
        raise TypeError(f"{name} function carry input and carry output must have the same pytree structure, but "
                        f"they differ:\n\n{component('')[0].upper()}{component('')[1:]} is {a} but the corresponding "
                        f"component of the carry output is {b}, so {why}.\n\nRevise the function so that the carry "
                        "output has the same pytree structure as the carry input.")
    paths = [tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(in_tree.unflatten(in_avals))[0]]
    diffs = [f"{component(p)} has type {errors.long_str(a)} but the corresponding output carry component has type "
             f"{errors.long_str(b)}{_mismatch_extra(a, b)}"
             for p, a, b in zip(paths, in_avals, out_avals) if not _typematch(a, b)]
    if not diffs:
        return
    if len(diffs) == 1:
        text = diffs[0][0].upper() + diffs[0][1:] + ".\n"
    else:
        text = "\n".join(f"  * {d};\n" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n"
    raise TypeError(f"{name} function carry input and carry output must have equal types, but they differ:\n\n{text}"
                    "\nRevise the function so that all output types match the corresponding input types.")


def _promote_weak(vals, in_avals, out_avals):
    """Weakly typed initial values whose loop output has another dtype take that dtype (JAX's rule)."""
    changed = False
    out = []
    for x, a, b in zip(vals, in_avals, out_avals):
        if a.weak_type and not _typematch(a, b):
            x = ew.convert_element_type(x, dtypes.result_type(x, b.dtype))
            changed = True
        out.append(x)
    return out, changed


def _run_as_jit(prim, args, params):
    """Eager impl through a one-equation jaxpr (compiled like any jitted function)."""
    args = [asarray(a) for a in args]
    avals = [a.aval for a in args]
    invars = [Var(a) for a in avals]
    out_avals = prim.abstract_eval(*avals, **params)
    from xjax._src.jaxpr import JaxprEqn

    outvars = [Var(a) for a in out_avals]
    closed = ClosedJaxpr(Jaxpr([], invars, outvars, [JaxprEqn(invars, outvars, prim, params)]), [])
    return compile_closed_jaxpr(closed)(args)


def _lowerable(prim, params):
    check = getattr(prim, "can_lower", None)
    return check is not None and check(params)


# ---- cond and switch ------------------------------------------------------------------------

def _cond_abstract_eval(index, *ops, branches):
    outs = [list(b.out_avals) for b in branches]
    return [a.update(weak_type=all(o[i].weak_type for o in outs)) for i, a in enumerate(outs[0])]


def _cond_impl(index, *ops, branches):
    if _lowerable(cond_p, {"branches": branches}):
        return _run_as_jit(cond_p, [index, *ops], {"branches": branches})
    i = builtins.min(builtins.max(int(index), 0), len(branches) - 1)
    return run_closed_jaxpr(branches[i], [asarray(o) for o in ops])


cond_p.abstract_eval = _cond_abstract_eval
cond_p.impl = _cond_impl


def _common_consts(traced):
    """All branches' consts once each (by identity, in order), and each branch taking all of them."""
    consts, seen = [], {}
    for _, cs in traced:
        for c in cs:
            if id(c) not in seen:
                seen[id(c)] = len(consts)
                consts.append(c)
    jaxprs = []
    for closed, cs in traced:
        j = closed.jaxpr
        own = {seen[id(c)]: v for c, v in zip(cs, j.invars[:len(cs)])}
        cvars = [own.get(k) or Var(core.get_aval(c)) for k, c in enumerate(consts)]
        jaxprs.append(ClosedJaxpr(Jaxpr([], cvars + j.invars[len(cs):], j.outvars, j.eqns), []))
    return consts, jaxprs


def _check_branches(what, names, funs, trees, avals_list):
    if builtins.any(t != trees[0] for t in trees[1:]):
        k = next(i for i, t in enumerate(trees) if t != trees[0])
        a, b, why = _tree_mismatch(trees[0], trees[k])
        lines = "\n".join(f"{n} is {pe.func_src_info(f)}" for n, f in zip(names, funs))
        raise TypeError(f"{what} branch outputs must have the same pytree structure, but they differ:\n\n{lines}\n\n"
                        f"{names[0]} output is {a} but {names[k]} output is {b}, so {why}.\n\n"
                        f"Revise {' and/or '.join(names) if len(names) == 2 else 'the branches'} so that they have "
                        "the same pytree structure.")
    for k, avals in enumerate(avals_list[1:], 1):
        for a, b in zip(avals_list[0], avals):
            if not _typematch(a, b):
                lines = "\n".join(f"{n} is {pe.func_src_info(f)}" for n, f in zip(names, funs))
                raise TypeError(
                    f"{what} branches must have equal output types but they differ.\n\n{lines}\n\nThe output of "
                    f"{names[0]} has type {errors.long_str(a)} but the corresponding output of {names[k]} has type "
                    f"{errors.long_str(b)}"
                    f"{_mismatch_extra(a, b)}.\n\nRevise {' and/or '.join(names) if len(names) == 2 else 'the branches'}"
                    " so that all output types match.")


def _concrete_scalar(x):
    """x as a Python scalar if it is a concrete (non-traced) value, else None."""
    if isinstance(x, core.Tracer):
        return None
    if type(x) in _PY_SCALARS or isinstance(x, np.generic):
        return x
    if type(x) in core.ARRAY_TYPES and not x.shape:
        return x.item()
    return None


def _scalar_i32(v):
    return cpu.scalar(int(v), dtypes.int32, False)


def _branches_call(index, branches, names, operands, what, traced_for):
    ops = [_operand(o) for o in _flatten(operands)[0]]
    in_avals = [core.get_aval(o) for o in ops]
    traced, trees = [], []
    for fun in branches:
        closed, consts, tree = _trace(fun, operands, in_avals, traced_for)
        traced.append((closed, consts))
        trees.append(tree)
    _check_branches(what, names, branches, trees, [c.out_avals for c, _ in traced])
    return traced, ops, trees[0]


def cond(pred, true_fun, false_fun, *operands, operand=None, linear=None):
    """true_fun(*operands) if pred else false_fun(*operands), with both traced and compiled."""
    if operand is not None:
        operands = (*operands, operand)
    if not (callable(true_fun) and callable(false_fun)):
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    shape = np.shape(pred) if not hasattr(pred, "aval") else pred.aval.shape
    if shape:
        raise TypeError(f"Pred must be a scalar, got {pred} of shape {shape}.")
    dtype = core.get_aval(pred).dtype if hasattr(pred, "aval") else np.result_type(pred)
    if dtype != dtypes.bool_ and not (dtypes.is_int(dtype) or dtypes.is_float(dtype)):
        raise TypeError(f"Pred type must be either boolean or number, got {dtype}.")
    concrete = _concrete_scalar(pred)
    if config.jax_disable_jit and concrete is not None and not _is_tracing():
        return true_fun(*operands) if concrete else false_fun(*operands)
    if concrete is not None:
        index = _scalar_i32(bool(concrete))
    elif dtype == dtypes.bool_:
        index = ew.convert_element_type(pred, dtypes.int32)
    else:
        index = ew.convert_element_type(ew.ne(pred, 0), dtypes.int32)
    traced, ops, out_tree = _branches_call(index, (true_fun, false_fun), ("true_fun", "false_fun"), operands,
                                           "cond", "cond")
    consts, (true_j, false_j) = _common_consts(traced)
    outs = cond_p.bind(index, *consts, *ops, branches=(false_j, true_j))
    return out_tree.unflatten(outs)


def switch(index, branches, *operands, operand=None):
    """branches[clamp(index)](*operands), with every branch traced and compiled."""
    if operand is not None:
        operands = (*operands, operand)
    branches = tuple(branches)
    if not branches:
        raise ValueError("Empty branch sequence")
    if not builtins.all(callable(b) for b in branches):
        raise TypeError("lax.switch: branches argument should be a sequence of callables.")
    shape = np.shape(index) if not hasattr(index, "aval") else index.aval.shape
    if shape:
        raise TypeError(f"Branch index must be scalar, got {index} of shape {shape}.")
    dtype = core.get_aval(index).dtype if hasattr(index, "aval") else np.result_type(index)
    if not dtypes.is_int(dtype):
        raise TypeError(f"Index type must be an integer, got {dtype}.")
    if len(branches) == 1:
        return branches[0](*operands)
    concrete = _concrete_scalar(index)
    if concrete is not None and type(index) not in core.ARRAY_TYPES:
        index = _scalar_i32(concrete)
    else:
        index = ew.convert_element_type(index, dtypes.int32)
    index = ew.clamp(_scalar_i32(0), index, _scalar_i32(len(branches) - 1))
    if config.jax_disable_jit and concrete is not None and not _is_tracing():
        return branches[int(index)](*operands)
    names = [f"branch {i}" for i in range(len(branches))]
    traced, ops, out_tree = _branches_call(index, branches, names, operands, "switch", "switch")
    consts, jaxprs = _common_consts(traced)
    outs = cond_p.bind(index, *consts, *ops, branches=tuple(jaxprs))
    return out_tree.unflatten(outs)


# ---- while_loop and fori_loop ---------------------------------------------------------------

def _while_abstract_eval(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    return list(body_jaxpr.out_avals)


def _while_impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    params = dict(cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=cond_nconsts, body_nconsts=body_nconsts)
    if _lowerable(while_p, params):
        return _run_as_jit(while_p, args, params)
    args = [asarray(a) for a in args]
    cc, bc, carry = args[:cond_nconsts], args[cond_nconsts:cond_nconsts + body_nconsts], args[cond_nconsts + body_nconsts:]
    cond_call, body_call = compile_closed_jaxpr(cond_jaxpr), compile_closed_jaxpr(body_jaxpr)
    while bool(cond_call(cc + carry)[0]):
        carry = body_call(bc + carry)
    return carry


while_p.abstract_eval = _while_abstract_eval
while_p.impl = _while_impl


def while_loop(cond_fun, body_fun, init_val, _body_debug=None):
    """Repeats body_fun while cond_fun holds: the loop is one primitive, its functions traced once."""
    if not (callable(body_fun) and callable(cond_fun)):
        raise TypeError("lax.while_loop: body_fun and cond_fun arguments should be callable.")
    if config.jax_disable_jit and not _is_tracing():
        try:
            val = init_val
            while cond_fun(val):
                val = body_fun(val)
            return val
        except errors.ConcretizationTypeError:
            pass
    init, in_tree = _flatten(init_val)
    init = [_operand(x) for x in init]
    in_avals = [core.get_aval(x) for x in init]

    def trace_both(avals):
        c_closed, c_consts, c_tree = _trace(cond_fun, (in_tree.unflatten(init),), avals, "while_cond")
        if c_tree.num_leaves != 1 or c_tree.num_nodes != 1:
            raise TypeError(f"cond_fun must return a boolean scalar, but got pytree {c_tree}.")
        pred = c_closed.out_avals[0]
        if pred.shape != () or pred.dtype != dtypes.bool_:
            raise TypeError("cond_fun must return a boolean scalar, but got output type(s) "
                            f"[{_shaped_repr(pred)}].")
        b_closed, b_consts, b_tree = _trace(body_fun, (in_tree.unflatten(init),), avals, "while_body",
                                            debug=_body_debug)
        return c_closed, c_consts, b_closed, b_consts, b_tree

    c_closed, c_consts, b_closed, b_consts, b_tree = trace_both(in_avals)
    body_out = b_closed.out_avals
    if b_tree == in_tree:
        init, changed = _promote_weak(init, in_avals, body_out)
        if changed:
            in_avals = [core.get_aval(x) for x in init]
            c_closed, c_consts, b_closed, b_consts, b_tree = trace_both(in_avals)
            body_out = b_closed.out_avals
    _check_carry("while_loop body", body_fun, in_tree, in_avals, b_tree, body_out)
    # Carries the body passes through unchanged and the condition ignores become body consts.
    nb = len(b_consts)
    fwd = _forwarding(b_closed.jaxpr)[:len(init)]
    nofwd = [nb + i != f for i, f in enumerate(fwd)]
    move = [False] * len(init)
    if not builtins.all(nofwd):
        dced, kept = _dce_inputs(c_closed.jaxpr, [True] * len(c_consts) + nofwd)
        move = [not k for k in kept[len(c_consts):]]
        if builtins.any(move):
            c_closed = dced
            b_closed = _prune_outputs(b_closed, [not m for m in move])
            b_closed = _move_inputs_to_front(b_closed, [False] * nb + move)
            b_consts = [x for x, m in zip(init, move) if m] + b_consts
            moved = [x for x, m in zip(init, move) if m]
            init = [x for x, m in zip(init, move) if not m]
    outs = while_p.bind(*c_consts, *b_consts, *init, cond_nconsts=len(c_consts), cond_jaxpr=c_closed,
                        body_nconsts=len(b_consts), body_jaxpr=b_closed)
    if builtins.any(move):
        it, mv = iter(outs), iter(moved)
        outs = [next(mv) if m else next(it) for m in move]
    return in_tree.unflatten(outs)


def _shaped_repr(a):
    weak = ", weak_type=True" if a.weak_type else ""
    return f"ShapedArray({errors.long_str(a)}{weak})"


def _fori_dtype(lower, upper):
    ld, lw = dtypes.dtype_and_weak(lower) if not hasattr(lower, "aval") else (lower.aval.dtype, lower.aval.weak_type)
    ud, uw = dtypes.dtype_and_weak(upper) if not hasattr(upper, "aval") else (upper.aval.dtype, upper.aval.weak_type)
    if ld == ud:
        return ld
    if np.issubdtype(ld, np.signedinteger) and np.issubdtype(ud, np.signedinteger):
        if lw and not uw:
            return ud
        if uw and not lw:
            return ld
    raise TypeError(f"lower and upper arguments to fori_loop must have equal types, got {ld.name} and {ud.name}")


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """for i in range(lower, upper): val = body_fun(i, val); a scan when the bounds are concrete."""
    if not callable(body_fun):
        raise TypeError("lax.fori_loop: body_fun argument should be callable.")
    dtype = _fori_dtype(lower, upper)
    lo, hi = _concrete_scalar(lower), _concrete_scalar(upper)
    if lo is not None and hi is not None:
        lo, hi = int(lo), int(hi)
        length = builtins.max(hi - lo, 0)

        def scanned_fun(loop_carry, _):
            i, x = loop_carry
            return (ew.add(i, 1), body_fun(i, x)), None

        debug = (body_fun, "fori_loop", lambda: pe.arg_names_of(body_fun, (0, init_val), {}))
        (_, result), _ = scan(scanned_fun, (lo, init_val), None, length=length,
                              unroll=False if unroll is None else unroll, _debug=debug)
        return result
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are statically known.")
    lower = ew.convert_element_type(lower, dtype) if core.get_aval(lower).dtype != dtype else lower
    upper = ew.convert_element_type(upper, dtype) if core.get_aval(upper).dtype != dtype else upper

    def cond_fun(carry):
        i, hi_, _ = carry
        return ew.lt(i, hi_)

    def body(carry):
        i, hi_, x = carry
        return ew.add(i, 1), hi_, body_fun(i, x)

    def names_fn():
        names = pe.arg_names_of(body_fun, (0, init_val), {})
        return names[:1] + [""] + names[1:]

    _, _, result = while_loop(cond_fun, body, (lower, upper, init_val), _body_debug=(body_fun, "fori_loop", names_fn))
    return result


# ---- scan and map ---------------------------------------------------------------------------

def _scan_abstract_eval(*avals, reverse, length, jaxpr, num_consts, num_carry, unroll):
    outs = jaxpr.out_avals
    return list(outs[:num_carry]) + [a.update(shape=(length, *a.shape)) for a in outs[num_carry:]]


def _stack(ys, aval, length):
    if length == 0 or not ys:
        zero = cpu.scalar(0, aval.dtype, False)
        return layout.broadcast_in_dim(zero, (length, *aval.shape), ())
    return layout.concatenate([layout.broadcast_in_dim(y, (1, *aval.shape), tuple(range(1, aval.ndim + 1)))
                               for y in ys], 0)


def _scan_impl(*args, reverse, length, jaxpr, num_consts, num_carry, unroll):
    params = dict(reverse=reverse, length=length, jaxpr=jaxpr, num_consts=num_consts, num_carry=num_carry,
                  unroll=unroll)
    if _lowerable(scan_p, params):
        return _run_as_jit(scan_p, args, params)
    args = [asarray(a) for a in args]
    consts, carry, xs = args[:num_consts], args[num_consts:num_consts + num_carry], args[num_consts + num_carry:]
    body = compile_closed_jaxpr(jaxpr)
    steps = []
    for t in (reversed(range(length)) if reverse else range(length)):
        x_t = [layout.index_in_dim(x, t, 0, keepdims=False) for x in xs]
        out = body([*consts, *carry, *x_t])
        carry = out[:num_carry]
        steps.append(out[num_carry:])
    if reverse:
        steps.reverse()
    y_avals = jaxpr.out_avals[num_carry:]
    return list(carry) + [_stack([s[k] for s in steps], a, length) for k, a in enumerate(y_avals)]


scan_p.abstract_eval = _scan_abstract_eval
scan_p.impl = _scan_impl


def _scan_length(xs_flat, length):
    bad = [x for x in xs_flat if not core.get_aval(x).shape]
    if bad:
        raise ValueError(f"scan got value with no leading axis to scan over: {', '.join(str(x) for x in bad)}.")
    lengths = [core.get_aval(x).shape[0] for x in xs_flat]
    if length is not None:
        try:
            length = int(length)
        except TypeError:
            raise errors.ConcretizationTypeError(length, "The `length` argument to `scan` expects a concrete `int` "
                                                 "value.") from None
        if not builtins.all(n == length for n in lengths):
            raise ValueError(f"scan got `length` argument of {length} which disagrees with leading axis sizes "
                             f"{lengths}.")
        return length
    if not lengths:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    if len(set(lengths)) > 1:
        raise ValueError(f"scan got values with different leading axis sizes: {', '.join(builtins.map(str, lengths))}.")
    return lengths[0]


def scan(f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False, _debug=None):
    """Loops f over the leading axis of xs carrying a state: returns (final carry, stacked ys)."""
    if not callable(f):
        raise TypeError("lax.scan: f argument should be a callable.")
    xs_flat, xs_tree = _flatten(xs)
    xs_flat = [_operand(x) for x in xs_flat]
    length = _scan_length(xs_flat, length)
    init_flat, init_tree = _flatten(init)
    init_flat = [_operand(x) for x in init_flat]
    x_avals = [core.get_aval(x).update(shape=core.get_aval(x).shape[1:]) for x in xs_flat]
    if config.jax_disable_jit and not _is_tracing():
        if length == 0:
            raise ValueError("zero-length scan is not supported in disable_jit() mode because the output type is "
                             "unknown.")
        carry, ys = init, []
        for i in (reversed(range(length)) if reverse else range(length)):
            carry, y = f(carry, xs_tree.unflatten([layout.index_in_dim(x, i, keepdims=False) for x in xs_flat]))
            ys.append(y)
        if reverse:
            ys.reverse()
        from xjax._src.tree_util import tree_map

        return carry, tree_map(lambda *v: layout.concatenate([layout.expand_dims(e, (0,)) for e in v], 0), *ys)

    split = {}

    def split_out(out):
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            leaves, tree = _flatten(out)
            shown = tree.unflatten([_aval_str(core.get_aval(x)) if hasattr(x, "aval") else x for x in leaves])
            raise TypeError(f"scan body output must be a pair, got {_fmt(shown)}.")
        c_leaves, c_tree = _flatten(out[0])
        y_leaves, y_tree = _flatten(out[1])
        split["trees"] = (c_tree, y_tree)
        return c_leaves + y_leaves, (c_tree, y_tree)

    def trace(avals):
        example = (init_tree.unflatten(init_flat), xs_tree.unflatten(xs_flat))
        closed, consts, _ = _trace(f, example, avals + x_avals, "scan", split_out, _debug)
        return closed, consts, split["trees"]

    in_avals = [core.get_aval(x) for x in init_flat]
    closed, consts, (c_tree, y_tree) = trace(in_avals)
    carry_out = closed.out_avals[:len(init_flat)]
    if c_tree == init_tree:
        init_flat, changed = _promote_weak(init_flat, in_avals, carry_out)
        if changed:
            in_avals = [core.get_aval(x) for x in init_flat]
            closed, consts, (c_tree, y_tree) = trace(in_avals)
            carry_out = closed.out_avals[:len(init_flat)]
    _check_carry("scan body", f, init_tree, in_avals, c_tree, carry_out)
    if isinstance(unroll, bool):
        unroll = builtins.max(length, 1) if unroll else 1
    unroll = int(unroll)
    if unroll < 0:
        raise ValueError("`unroll` must be a `bool` or a non-negative `int`.")
    num_carry, num_xs = len(init_flat), len(xs_flat)
    num_ys = len(closed.out_avals) - num_carry
    args = [*init_flat, *xs_flat]
    fwd = _forwarding(closed.jaxpr)
    carry_fwd, ext_fwd = fwd[:num_carry], fwd[num_carry:]
    move = [len(consts) + i == fw for i, fw in enumerate(carry_fwd)]
    new_consts = []
    if builtins.any(move):
        closed = _prune_outputs(closed, [not m for m in move] + [True] * num_ys)
        closed = _move_inputs_to_front(closed, [False] * len(consts) + move + [False] * num_xs)
        new_consts = [a for a, m in zip(args, move + [False] * num_xs) if m]
        args = [a for a, m in zip(args, move + [False] * num_xs) if not m]
        consts = new_consts + consts
        num_carry -= len(new_consts)
    ext_to_ext = [i - len(consts) if i is not None and i >= num_carry + len(consts) else None for i in ext_fwd]
    closed = _prune_outputs(closed, [True] * num_carry + [i is None for i in ext_to_ext])
    outs = scan_p.bind(*consts, *args, reverse=bool(reverse), length=length, jaxpr=closed, num_consts=len(consts),
                       num_carry=num_carry, unroll=unroll)
    carry_vals, ys = outs[:num_carry], iter(outs[num_carry:])
    ys = [next(ys) if i is None else args[i] for i in ext_to_ext]
    if builtins.any(move):
        it, nc = iter(carry_vals), iter(new_consts)
        carry_vals = [next(nc) if m else next(it) for m in move]
    return c_tree.unflatten(carry_vals), y_tree.unflatten(ys)


def _fmt(tree):
    return str(tree).replace("'", "")


def map(f, xs, *, batch_size=None):  # noqa: A001 - lax's name
    """[f(x) for x in xs] along the leading axis, as a scan (batch_size: that many at a time, vmapped)."""
    if batch_size is not None:
        from xjax._src import tree_util as tu

        leaves = tu.tree_leaves(xs)
        n = core.get_aval(leaves[0]).shape[0]
        batch_size = int(batch_size)
        nb, rem = divmod(n, batch_size)
        import xjax

        vf = xjax.vmap(f) if hasattr(xjax, "vmap") else (
            lambda xb: tu.tree_map(lambda *v: layout.concatenate([layout.expand_dims(e, (0,)) for e in v], 0),
                                   *[f(tu.tree_map(lambda a: layout.index_in_dim(a, i, keepdims=False), xb))
                                     for i in range(batch_size)]))
        main = tu.tree_map(lambda a: layout.reshape(layout.slice_in_dim(a, 0, nb * batch_size),
                                                    (nb, batch_size, *core.get_aval(a).shape[1:])), xs)
        _, ys = scan(lambda _, x: ((), vf(x)), (), main)
        ys = tu.tree_map(lambda y: layout.reshape(y, (nb * batch_size, *core.get_aval(y).shape[2:])), ys)
        if rem:
            tail = tu.tree_map(lambda a: layout.slice_in_dim(a, nb * batch_size, n), xs)
            _, ys_tail = scan(lambda _, x: ((), f(x)), (), tail)
            ys = tu.tree_map(lambda a, b: layout.concatenate([a, b], 0), ys, ys_tail)
        return ys
    _, ys = scan(lambda _, x: ((), f(x)), (), xs)
    return ys
