"""Loops: the `while` primitive (while_loop, fori_loop with traced bounds) and `scan` (scan, map,
fori_loop with static bounds): their evaluation and lowering (their transformation rules: loop_rules.py)."""
import builtins
import operator

import numpy as np

from xjax._src import core, data_leaves, dtypes, errors, tree_util
from xjax._src.backends import cpu
from xjax._src.interpreters import graph_lowering as gl, partial_eval as pe
from xjax._src.interpreters.graph_lowering import compile_closed_jaxpr, jaxpr_is_lowerable
from xjax._src.lax import elementwise as ew, layout
from xjax._src.lax.control_flow_common import (aval_str, check_carry, concrete_scalar, dce_inputs, forwarding,
                                               is_tracing, jit_disabled, move_inputs_to_front, operand, promote_weak,
                                               prune_outputs, run_as_jit, shaped_repr, trace_fun)
from xjax._src.lax.loop_layouts import pretransposed_consts
from xjax._src.vmap import vmap

_flatten = data_leaves.flatten  # keys as their data

while_p = core.Primitive("while", multiple_results=True)
scan_p = core.Primitive("scan", multiple_results=True)


# ---- while_loop and fori_loop ---------------------------------------------------------------

def _while_abstract_eval(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    return list(body_jaxpr.out_avals)


def _scalar_predicate(args, params):
    """(args, params) of the same loop with a scalar predicate. A vmapped loop's condition may return
    one predicate per example (as JAX's): it then runs while any example runs, and its body updates
    only the running examples (as JAX's lowering does)."""
    if not params["cond_jaxpr"].out_avals[0].shape:
        return args, params
    cn, bn = params["cond_nconsts"], params["body_nconsts"]
    cond, body = _while_until_all_done(params["cond_jaxpr"], params["body_jaxpr"], cn, bn)
    return ([*args[:cn], *args[:cn], *args[cn:]],
            dict(cond_jaxpr=cond, body_jaxpr=body, cond_nconsts=cn, body_nconsts=cn + bn))


def _while_impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    params = dict(cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=cond_nconsts, body_nconsts=body_nconsts)
    args, params = _scalar_predicate(list(args), params)
    cond_jaxpr, body_jaxpr = params["cond_jaxpr"], params["body_jaxpr"]
    cond_nconsts, body_nconsts = params["cond_nconsts"], params["body_nconsts"]

    def python_loop(args):
        nc = cond_nconsts + body_nconsts
        cc, bc, carry = args[:cond_nconsts], args[cond_nconsts:nc], args[nc:]
        cond_call, body_call = compile_closed_jaxpr(cond_jaxpr), compile_closed_jaxpr(body_jaxpr)
        while bool(cond_call(cc + carry)[0]):
            carry = body_call(bc + carry)
        return carry

    return run_as_jit(while_p, args, params, python_loop)


def _while_lowering(lowerer, eqn, ins):
    """The core's `while` op; the consts of both functions are carried along unchanged."""
    avals = [a.aval for a in eqn.invars]
    pairs, p = _scalar_predicate(list(zip(avals, ins)), eqn.params)
    avals, ins = [a for a, _ in pairs], [r for _, r in pairs]
    cn, bn = p["cond_nconsts"], p["body_nconsts"]
    cond_j, body_j = p["cond_jaxpr"], p["body_jaxpr"]

    def cond_fn(sub, refs):
        return sub.lower_closed_jaxpr(cond_j, refs[:cn] + refs[cn + bn:])

    def body_fn(sub, refs):
        return refs[:cn + bn] + sub.lower_closed_jaxpr(body_j, refs[cn:])

    graphs = [lowerer.subgraph(avals, cond_fn), lowerer.subgraph(avals, body_fn)]
    return lowerer.graph.add_subgraph_op("while", list(ins), {}, graphs)[cn + bn:]


def _while_can_lower(params):
    return gl.HAS_SUBGRAPHS and jaxpr_is_lowerable(params["cond_jaxpr"].jaxpr) \
        and jaxpr_is_lowerable(params["body_jaxpr"].jaxpr)


while_p.def_rules(abstract_eval=_while_abstract_eval, vma=core.vma_of_body(_while_abstract_eval), impl=_while_impl,
                  jaxpr_lowering=_while_lowering, can_lower=_while_can_lower)


def while_loop(cond_fun, body_fun, init_val, _body_debug=None, _body_cache_on=None):
    """Repeats body_fun while cond_fun holds: the loop is one primitive, its functions traced once."""
    if not (callable(body_fun) and callable(cond_fun)):
        raise TypeError("lax.while_loop: body_fun and cond_fun arguments should be callable.")
    if jit_disabled() and not is_tracing():
        try:
            val = init_val
            while cond_fun(val):
                val = body_fun(val)
            return val
        except errors.ConcretizationTypeError:
            pass
    init, in_tree = _flatten(init_val)
    init = [operand(x) for x in init]
    in_avals = [core.get_aval(x) for x in init]

    def trace_both(avals):
        c_closed, c_consts, c_tree = trace_fun(cond_fun, (in_tree.unflatten(init),), avals, "while_cond")
        if c_tree.num_leaves != 1 or c_tree.num_nodes != 1:
            raise TypeError(f"cond_fun must return a boolean scalar, but got pytree {c_tree}.")
        pred = c_closed.out_avals[0]
        if pred.shape != () or pred.dtype != dtypes.bool_:
            raise TypeError("cond_fun must return a boolean scalar, but got output type(s) "
                            f"[{shaped_repr(pred)}].")
        b_traced = trace_fun(body_fun, (in_tree.unflatten(init),), avals, "while_body", debug=_body_debug,
                             cache_on=_body_cache_on)
        return c_closed, c_consts, b_traced

    c_closed, c_consts, b_traced = trace_both(in_avals)
    b_closed, b_consts, b_tree = b_traced
    body_out = b_closed.out_avals
    if b_tree == in_tree:
        init, changed = promote_weak(init, in_avals, body_out)
        if changed:
            in_avals = [core.get_aval(x) for x in init]
            c_closed, c_consts, b_traced = trace_both(in_avals)
            b_closed, b_consts, b_tree = b_traced
            body_out = b_closed.out_avals
    check_carry("while_loop body", body_fun, in_tree, in_avals, b_tree, body_out)
    c_closed, b_closed, move = b_traced.derived(
        ("while", c_closed, len(c_consts), len(init)), lambda: _while_rewrite(c_closed, len(c_consts), b_closed,
                                                                              len(b_consts), len(init)))
    if move is not None:
        moved = [x for x, m in zip(init, move) if m]
        b_consts = moved + b_consts
        init = [x for x, m in zip(init, move) if not m]
    outs = while_p.bind(*c_consts, *b_consts, *init, cond_nconsts=len(c_consts), cond_jaxpr=c_closed,
                        body_nconsts=len(b_consts), body_jaxpr=b_closed)
    if move is not None:
        it, mv = iter(outs), iter(moved)
        outs = [next(mv) if m else next(it) for m in move]
    return in_tree.unflatten(outs)


def _while_rewrite(c_closed, nc, b_closed, nb, ncarry):
    """(cond, body, which carries moved or None): carries the body passes through unchanged and the
    condition ignores become body consts."""
    fwd = forwarding(b_closed.jaxpr)[:ncarry]
    nofwd = [nb + i != f for i, f in enumerate(fwd)]
    if builtins.all(nofwd):
        return c_closed, b_closed, None
    dced, kept = dce_inputs(c_closed.jaxpr, [True] * nc + nofwd)
    move = [not k for k in kept[nc:]]
    if not builtins.any(move):
        return c_closed, b_closed, None
    b_closed = prune_outputs(b_closed, [not m for m in move])
    b_closed = move_inputs_to_front(b_closed, [False] * nb + move)
    return dced, b_closed, move




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
    lo, hi = concrete_scalar(lower), concrete_scalar(upper)
    if lo is not None and hi is not None:
        lo, hi = int(lo), int(hi)
        length = builtins.max(hi - lo, 0)

        def scanned_fun(loop_carry, _):
            i, x = loop_carry
            return (ew.add(i, 1), body_fun(i, x)), None

        debug = (body_fun, "fori_loop", lambda: pe.arg_names_of(body_fun, (0, init_val), {}))
        (_, result), _ = scan(scanned_fun, (lo, init_val), None, length=length,
                              unroll=False if unroll is None else unroll, _debug=debug,
                              _cache_on=(body_fun, "fori_scan"))
        return result
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are statically known.")
    lower = ew.convert_element_type(lower, dtype) if core.get_aval(lower).dtype != dtype else lower
    upper = ew.convert_element_type(upper, dtype) if core.get_aval(upper).dtype != dtype else upper

    def body(carry):
        i, hi_, x = carry
        return ew.add(i, 1), hi_, body_fun(i, x)

    def names_fn():
        names = pe.arg_names_of(body_fun, (0, init_val), {})
        return names[:1] + [""] + names[1:]

    _, _, result = while_loop(_fori_cond, body, (lower, upper, init_val),
                              _body_debug=(body_fun, "fori_loop", names_fn), _body_cache_on=(body_fun, "fori_while"))
    return result


def _fori_cond(carry):
    """The condition of a fori_loop with traced bounds (one function: its trace is cached)."""
    i, hi_, _ = carry
    return ew.lt(i, hi_)


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

    def python_loop(args):
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

    return run_as_jit(scan_p, args, params, python_loop)


def _scan_lowering(lowerer, eqn, ins):
    """The core's `while` op, as XLA does: the carry is (counter, consts, carry, xs, ys); each step reads
    x[t] with dynamic_slice and writes y[t] with dynamic_update_slice into buffers that start as zeros."""
    p = eqn.params
    nc, ncarry, length, reverse = p["num_consts"], p["num_carry"], p["length"], p["reverse"]
    closed = p["jaxpr"]
    avals = [a.aval for a in eqn.invars]
    transposed = pretransposed_consts(closed, nc) if length > 1 else None
    if transposed is not None:  # loop-invariant matrices as the body's products read them
        closed, which = transposed
        ins = [*ins[:nc], *(lowerer.op("transpose", ins[k], permutation=[1, 0])[0] for k in which), *ins[nc:]]
        avals = [*avals[:nc], *(avals[k].update(shape=avals[k].shape[::-1]) for k in which), *avals[nc:]]
        nc += len(which)
    jaxpr = closed.jaxpr
    x_avals = avals[nc + ncarry:]
    y_avals = [v.aval for v in jaxpr.outvars[ncarry:]]
    nx = len(x_avals)
    i32 = dtypes.int32
    counter = core.ShapedArray((), i32)
    if length == 0:
        return list(ins[nc:nc + ncarry]) + [lowerer.constant(0, a.dtype, (0, *a.shape)) for a in y_avals]
    # Every row of ys is written before the loop ends: buffers of unspecified contents (no fill, and
    # the loop updates them in place without copying a constant first).
    ys0 = [lowerer.op("empty", shape=[length, *a.shape], dtype=a.dtype)[0] if gl.HAS_EMPTY
           else lowerer.constant(0, a.dtype, (length, *a.shape)) for a in y_avals]
    carried = [lowerer.constant(0, i32), *ins, *ys0]
    carried_avals = [counter, *avals, *[a.update(shape=(length, *a.shape)) for a in y_avals]]

    def cond_fn(sub, refs):
        return sub.op("lt", refs[0], sub.constant(length, i32))

    def body_fn(sub, refs):
        i = refs[0]
        consts, carry = refs[1:1 + nc], refs[1 + nc:1 + nc + ncarry]
        xs, ys = refs[1 + nc + ncarry:1 + nc + ncarry + nx], refs[1 + nc + ncarry + nx:]
        t = sub.op("sub", sub.constant(length - 1, i32), i)[0] if reverse else i
        zero = sub.constant(0, i32)
        x_t = []
        for x, a in zip(xs, x_avals):
            (s,) = sub.op("dynamic_slice", x, t, *[zero] * (a.ndim - 1), slice_sizes=[1, *a.shape[1:]])
            x_t += sub.op("reshape", s, new_sizes=list(a.shape[1:]))
        outs = sub.lower_closed_jaxpr(closed, [*consts, *carry, *x_t])
        new_ys = []
        for y_buf, y, a in zip(ys, outs[ncarry:], y_avals):
            (y1,) = sub.op("reshape", y, new_sizes=[1, *a.shape])
            new_ys += sub.op("dynamic_update_slice", y_buf, y1, t, *[zero] * a.ndim)
        (i1,) = sub.op("add", i, sub.constant(1, i32))
        return [i1, *consts, *outs[:ncarry], *xs, *new_ys]

    graphs = [lowerer.subgraph(carried_avals, cond_fn), lowerer.subgraph(carried_avals, body_fn)]
    outs = lowerer.graph.add_subgraph_op("while", carried, {}, graphs)
    start = 1 + nc
    return outs[start:start + ncarry] + outs[start + ncarry + nx:]


def _scan_can_lower(params):
    return gl.HAS_SUBGRAPHS and jaxpr_is_lowerable(params["jaxpr"].jaxpr)


scan_p.def_rules(abstract_eval=_scan_abstract_eval, vma=core.vma_of_body(_scan_abstract_eval), impl=_scan_impl,
                 jaxpr_lowering=_scan_lowering, can_lower=_scan_can_lower)


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


def scan(f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False, _debug=None, _cache_on=None):
    """Loops f over the leading axis of xs carrying a state: returns (final carry, stacked ys)."""
    if not callable(f):
        raise TypeError("lax.scan: f argument should be a callable.")
    xs_flat, xs_tree = _flatten(xs)
    xs_flat = [operand(x) for x in xs_flat]
    length = _scan_length(xs_flat, length)
    init_flat, init_tree = _flatten(init)
    init_flat = [operand(x) for x in init_flat]
    x_avals = [core.get_aval(x).update(shape=core.get_aval(x).shape[1:]) for x in xs_flat]
    if jit_disabled() and not is_tracing():
        if length == 0:
            raise ValueError("zero-length scan is not supported in disable_jit() mode because the output type is "
                             "unknown.")
        carry, ys = init, []
        for i in (reversed(range(length)) if reverse else range(length)):
            carry, y = f(carry, xs_tree.unflatten([layout.index_in_dim(x, i, keepdims=False) for x in xs_flat]))
            ys.append(y)
        if reverse:
            ys.reverse()
        stack = lambda *v: layout.concatenate([layout.expand_dims(e, (0,)) for e in v], 0)  # noqa: E731
        return carry, data_leaves.tree_map(stack, *ys)

    def split_out(out):
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            leaves, tree = _flatten(out)
            shown = tree.unflatten([aval_str(core.get_aval(x)) if hasattr(x, "aval") else x for x in leaves])
            raise TypeError(f"scan body output must be a pair, got {_fmt(shown)}.")
        c_leaves, c_tree = _flatten(out[0])
        y_leaves, y_tree = _flatten(out[1])
        return c_leaves + y_leaves, (c_tree, y_tree)

    def trace(avals):
        example = (init_tree.unflatten(init_flat), xs_tree.unflatten(xs_flat))
        return trace_fun(f, example, avals + x_avals, "scan", split_out, _debug, cache_on=_cache_on)

    in_avals = [core.get_aval(x) for x in init_flat]
    traced = trace(in_avals)
    closed, consts, (c_tree, y_tree) = traced
    carry_out = closed.out_avals[:len(init_flat)]
    if c_tree == init_tree:
        init_flat, changed = promote_weak(init_flat, in_avals, carry_out)
        if changed:
            in_avals = [core.get_aval(x) for x in init_flat]
            traced = trace(in_avals)
            closed, consts, (c_tree, y_tree) = traced
            carry_out = closed.out_avals[:len(init_flat)]
    check_carry("scan body", f, init_tree, in_avals, c_tree, carry_out)
    if isinstance(unroll, bool):
        unroll = builtins.max(length, 1) if unroll else 1
    unroll = int(unroll)
    if unroll < 0:
        raise ValueError("`unroll` must be a `bool` or a non-negative `int`.")
    num_carry, num_xs = len(init_flat), len(xs_flat)
    closed, move, ext_to_ext = traced.derived(
        ("scan", num_carry, num_xs), lambda: _scan_rewrite(closed, len(consts), num_carry, num_xs))
    args = [*init_flat, *xs_flat]
    new_consts = []
    if move is not None:
        new_consts = [a for a, m in zip(args, move) if m]
        args = [a for a, m in zip(args, move + [False] * num_xs) if not m]
        consts = new_consts + consts
        num_carry -= len(new_consts)
    outs = scan_p.bind(*consts, *args, reverse=bool(reverse), length=length, jaxpr=closed, num_consts=len(consts),
                       num_carry=num_carry, unroll=unroll)
    carry_vals = outs[:num_carry]
    if ext_to_ext is not None:
        ys = iter(outs[num_carry:])
        ys = [next(ys) if i is None else args[i] for i in ext_to_ext]
    else:
        ys = outs[num_carry:]
    if move is not None:
        it, nc = iter(carry_vals), iter(new_consts)
        carry_vals = [next(nc) if m else next(it) for m in move]
    return c_tree.unflatten(carry_vals), y_tree.unflatten(ys)


def _scan_rewrite(closed, nconsts, num_carry, num_xs):
    """The body as scan takes it: carries passed through unchanged become consts, and ys that are
    just xs are not produced. Returns (body, which carries moved or None, for each y the xs index
    it is or None -- or None when none is)."""
    num_ys = len(closed.out_avals) - num_carry
    fwd = forwarding(closed.jaxpr)
    carry_fwd, ext_fwd = fwd[:num_carry], fwd[num_carry:]
    move = [nconsts + i == fw for i, fw in enumerate(carry_fwd)]
    if builtins.any(move):
        closed = prune_outputs(closed, [not m for m in move] + [True] * num_ys)
        closed = move_inputs_to_front(closed, [False] * nconsts + move + [False] * num_xs)
        moved = builtins.sum(move)
        nconsts += moved
        num_carry -= moved
    else:
        move = None
    ext_to_ext = [i - nconsts if i is not None and i >= num_carry + nconsts else None for i in ext_fwd]
    closed = prune_outputs(closed, [True] * num_carry + [i is None for i in ext_to_ext])
    return closed, move, ext_to_ext if builtins.any(i is not None for i in ext_to_ext) else None


def _fmt(tree):
    return str(tree).replace("'", "")


def map(f, xs, *, batch_size=None):  # noqa: A001 - lax's name
    """[f(x) for x in xs] along the leading axis, as a scan; with batch_size, a scan over chunks of
    that many examples, each vmapped, then the remainder vmapped (batch_size=0: one vmap), as JAX."""
    leaves = tree_util.tree_leaves(xs)
    if batch_size is not None:
        batch_size = operator.index(batch_size)
        if batch_size < 0:
            raise ValueError(f"lax.map batch_size must be non-negative, got {batch_size}")
    # No examples: no chunks and no remainder, the plain scan of length 0 gives the empty results.
    if batch_size is None or not leaves or core.get_aval(leaves[0]).shape[0] == 0:
        _, ys = scan(lambda _, x: ((), f(x)), (), xs, _cache_on=(f, "map"))
        return ys
    n = core.get_aval(leaves[0]).shape[0]
    nb, rem = divmod(n, batch_size) if batch_size else (0, n)
    vf = vmap(f)
    ys = None
    if nb:
        main = data_leaves.tree_map(lambda a: layout.reshape(layout.slice_in_dim(a, 0, nb * batch_size),
                                                           (nb, batch_size, *core.get_aval(a).shape[1:])), xs)
        _, ys = scan(lambda _, x: ((), vf(x)), (), main)
        ys = data_leaves.tree_map(lambda y: layout.reshape(y, (nb * batch_size, *core.get_aval(y).shape[2:])), ys)
    if rem:
        tail = vf(data_leaves.tree_map(lambda a: layout.slice_in_dim(a, nb * batch_size, n), xs))
        ys = tail if ys is None else data_leaves.tree_map(lambda a, b: layout.concatenate([a, b], 0), ys, tail)
    return ys


# ---- a batched predicate: the loop runs while any example runs ------------------------------
import weakref as _weakref  # noqa: E402

from xjax._src.jaxpr import eval_jaxpr, memoize_per_jaxpr as _memoize_per_jaxpr  # noqa: E402
from xjax._src.lax import reduction as _reduction  # noqa: E402
from xjax._src.lax.control_flow_common import per_example  # noqa: E402

_until_all_done = _weakref.WeakKeyDictionary()


def _while_until_all_done(cond, body, cond_nconsts, body_nconsts):
    """For a batched predicate: (loop while any example runs, body updating only the examples that run).
    The new body takes the cond consts in front of its own (memoised per pair of batched jaxprs)."""

    def make():
        def any_running(*args):
            (pred,) = eval_jaxpr(cond.jaxpr, cond.consts, *args)
            return [_reduction.reduce_or(pred, tuple(range(core.get_aval(pred).ndim)))]

        def step(*args):
            nc = cond_nconsts + body_nconsts
            cc, bc, carry = args[:cond_nconsts], args[cond_nconsts:nc], args[nc:]
            (pred,) = eval_jaxpr(cond.jaxpr, cond.consts, *cc, *carry)
            new = eval_jaxpr(body.jaxpr, body.consts, *bc, *carry)
            # The loop's results have the body's types, weak types included (as JAX's, which selects
            # in the lowering), not the select's.
            return [ew._convert(ew.select(per_example(pred, c), n, c), core.get_aval(n).dtype,
                                weak_type=core.get_aval(n).weak_type) for n, c in zip(new, carry)]

        new_cond = pe.trace_to_jaxpr(any_running, list(cond.in_avals))
        new_body = pe.trace_to_jaxpr(step, list(cond.in_avals[:cond_nconsts]) + list(body.in_avals))
        return new_cond, new_body

    return _memoize_per_jaxpr(_until_all_done, cond, (body, cond_nconsts), make)
