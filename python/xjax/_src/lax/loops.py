"""Loops: the `while` primitive (while_loop, fori_loop with traced bounds) and `scan` (scan, map,
fori_loop with static bounds)."""
import builtins
import operator

import numpy as np

from xjax._src import core, dtypes, errors, tree_util
from xjax._src.backends import cpu
from xjax._src.interpreters import partial_eval as pe
from xjax._src.interpreters import graph_lowering as gl
from xjax._src.interpreters.graph_lowering import compile_closed_jaxpr, jaxpr_is_lowerable
from xjax._src.lax import elementwise as ew
from xjax._src.lax import layout
from xjax._src.lax.control_flow_common import (aval_str, check_carry, concrete_scalar, dce_inputs, forwarding,
                                                is_tracing, jit_disabled, move_inputs_to_front, operand, promote_weak,
                                                prune_outputs, run_as_jit, shaped_repr, trace_fun)

_flatten = tree_util.tree_flatten

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


while_p.def_rules(abstract_eval=_while_abstract_eval, impl=_while_impl, jaxpr_lowering=_while_lowering,
                  can_lower=_while_can_lower)


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
    jaxpr = closed.jaxpr
    avals = [a.aval for a in eqn.invars]
    x_avals = avals[nc + ncarry:]
    y_avals = [v.aval for v in jaxpr.outvars[ncarry:]]
    nx, ny = len(x_avals), len(y_avals)
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


scan_p.def_rules(abstract_eval=_scan_abstract_eval, impl=_scan_impl, jaxpr_lowering=_scan_lowering,
                 can_lower=_scan_can_lower)


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
        from xjax._src.tree_util import tree_map

        return carry, tree_map(lambda *v: layout.concatenate([layout.expand_dims(e, (0,)) for e in v], 0), *ys)

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
    from xjax._src.vmap import vmap

    n = core.get_aval(leaves[0]).shape[0]
    nb, rem = divmod(n, batch_size) if batch_size else (0, n)
    vf = vmap(f)
    ys = None
    if nb:
        main = tree_util.tree_map(lambda a: layout.reshape(layout.slice_in_dim(a, 0, nb * batch_size),
                                                           (nb, batch_size, *core.get_aval(a).shape[1:])), xs)
        _, ys = scan(lambda _, x: ((), vf(x)), (), main)
        ys = tree_util.tree_map(lambda y: layout.reshape(y, (nb * batch_size, *core.get_aval(y).shape[2:])), ys)
    if rem:
        tail = vf(tree_util.tree_map(lambda a: layout.slice_in_dim(a, nb * batch_size, n), xs))
        ys = tail if ys is None else tree_util.tree_map(lambda a, b: layout.concatenate([a, b], 0), ys, tail)
    return ys


# ---- differentiation rules ------------------------------------------------------------------
from xjax._src.interpreters import ad  # noqa: E402
from xjax._src.jaxpr import ClosedJaxpr as _ClosedJaxpr, Jaxpr as _Jaxpr, Var as _Var, eval_jaxpr  # noqa: E402


def _reordered(closed, in_order, out_order):
    """The same jaxpr with its inputs and outputs listed in another order (no retracing)."""
    j = closed.jaxpr
    return _ClosedJaxpr(_Jaxpr(j.constvars, [j.invars[i] for i in in_order], [j.outvars[i] for i in out_order],
                               j.eqns), closed.consts)


def _carry_fixpoint(body, const_nz, carry_nz, x_nz, num_ys):
    """Which carries have nonzero tangents: those given, plus those the body makes nonzero, to a fixpoint."""
    carry_nz = list(carry_nz)
    while True:
        _, out_nz = ad.jvp_jaxpr(body, [*const_nz, *carry_nz, *x_nz], instantiate=[*carry_nz, *[False] * num_ys])
        new = [a or b for a, b in zip(carry_nz, out_nz[:len(carry_nz)])]
        if new == carry_nz:
            return carry_nz
        carry_nz = new


def _group_jvp_jaxpr(body, groups_nz, instantiate, in_groups, out_groups):
    """jvp_jaxpr of a loop body with each input and output followed by its tangent (where nonzero), so
    that the loop primitive's consts/carry/xs groups keep their primals and tangents together."""
    nonzeros = [nz for g in groups_nz for nz in g]
    jvp_closed, out_nz = ad.jvp_jaxpr(body, nonzeros, instantiate=instantiate)
    n_in = len(nonzeros)
    t_pos = iter(range(n_in, n_in + sum(nonzeros)))
    in_order = []
    t_of = {}
    for i, nz in enumerate(nonzeros):
        if nz:
            t_of[i] = next(t_pos)
    for i in range(n_in):  # each value followed by its tangent
        in_order += [i, t_of[i]] if i in t_of else [i]
    n_out = len(out_nz)
    t_out = iter(range(n_out, n_out + sum(out_nz)))
    ot = {i: next(t_out) for i, nz in enumerate(out_nz) if nz}
    out_order = []
    for i in range(n_out):
        out_order += [i, ot[i]] if i in ot else [i]
    return _reordered(jvp_closed, in_order, out_order), out_nz


def _nonzero(ts):
    return [t for t in ts if type(t) is not ad.Zero]


def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    nc = cond_nconsts + body_nconsts
    cc, bc, carry = primals[:cond_nconsts], primals[cond_nconsts:nc], primals[nc:]
    bc_t, carry_t = tangents[cond_nconsts:nc], tangents[nc:]
    bc_nz = [type(t) is not ad.Zero for t in bc_t]
    carry_nz = _carry_fixpoint(body_jaxpr, bc_nz, [type(t) is not ad.Zero for t in carry_t], [], 0)
    body, _ = _group_jvp_jaxpr(body_jaxpr, [bc_nz, carry_nz], carry_nz, [len(bc), len(carry)], [len(carry)])
    carry_t = [ad.instantiate_zero(t) if nz else t for t, nz in zip(carry_t, carry_nz)]
    # The condition reads the primal carries only: it gets unused inputs for the tangents.
    j = cond_jaxpr.jaxpr
    t_vars = [_Var(ad.tangent_aval(v.aval)) for v, nz in zip(j.invars[cond_nconsts:], carry_nz) if nz]
    cond = _ClosedJaxpr(_Jaxpr(j.constvars, j.invars + t_vars, j.outvars, j.eqns), cond_jaxpr.consts)
    carry_order = []
    prim_iter, tan_iter = iter(carry), iter(_nonzero(carry_t))
    for nz in carry_nz:
        carry_order.append(next(prim_iter))
        if nz:
            carry_order.append(next(tan_iter))
    # The body's carries interleave primal and tangent per carry group; the condition expects all
    # primal carries first: reorder its inputs to match.
    n = len(carry)
    inter = []
    k = 0
    for i, nz in enumerate(carry_nz):
        inter.append(("p", i))
        if nz:
            inter.append(("t", k))
            k += 1
    cond_in = list(range(cond_nconsts)) + [cond_nconsts + (i if kind == "p" else n + i) for kind, i in inter]
    cond = _reordered(cond, cond_in, range(len(j.outvars)))
    # The body's consts interleave primal and tangent too (as _group_jvp_jaxpr orders them).
    bc_order = [v for p, t, nz in zip(bc, bc_t, bc_nz) for v in ((p, t) if nz else (p,))]
    outs = while_p.bind(*cc, *bc_order, *carry_order, cond_nconsts=cond_nconsts, cond_jaxpr=cond,
                        body_nconsts=body_nconsts + sum(bc_nz), body_jaxpr=body)
    it = iter(outs)
    p_out, t_out = [], []
    for nz, a in zip(carry_nz, body_jaxpr.out_avals):
        p_out.append(next(it))
        t_out.append(next(it) if nz else ad.Zero(ad.tangent_aval(a)))
    return p_out, t_out


def _while_partial_eval(trace, args, unknown, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    """As JAX: when the condition reads known values only, the known carries come from a loop over
    them alone, run now; the unknown ones from the whole loop, recorded (its known part computed
    again). So a while_loop linearizes (jvp and linearize work) but does not transpose."""
    params = dict(cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=cond_nconsts, body_nconsts=body_nconsts)
    nc = cond_nconsts + body_nconsts
    cc_uk, bc_uk, carry_uk = list(unknown[:cond_nconsts]), list(unknown[cond_nconsts:nc]), list(unknown[nc:])
    while True:
        body_split = pe.partial_eval_jaxpr(body_jaxpr, bc_uk + carry_uk)
        new = [a or b for a, b in zip(carry_uk, body_split[2])]
        if new == carry_uk:
            break
        carry_uk = new
    recorded = pe.DynamicJaxprTrace.process_primitive(trace, while_p, args, params)
    if pe.partial_eval_jaxpr(cond_jaxpr, cc_uk + carry_uk)[2][0] or all(carry_uk):
        return recorded
    cond = pe.partial_eval_jaxpr(cond_jaxpr, cc_uk + carry_uk)[0]
    known_body = body_split[0]
    n_known = len(carry_uk) - sum(carry_uk)
    known_body = _ClosedJaxpr(_Jaxpr(known_body.jaxpr.constvars, known_body.jaxpr.invars,
                                     known_body.jaxpr.outvars[:n_known], known_body.jaxpr.eqns), known_body.consts)
    cond, cond_consts = pe.convert_constvars(cond)
    known_body, body_consts = pe.convert_constvars(known_body)
    known = lambda xs, uk: [x for x, u in zip(xs, uk) if not u]  # noqa: E731
    ccs, bcs = args[:cond_nconsts], args[cond_nconsts:nc]
    known_outs = trace.bind_in_parent(while_p, [*cond_consts, *known(ccs, cc_uk), *body_consts, *known(bcs, bc_uk),
                                                *known(args[nc:], carry_uk)],
                                      dict(cond_jaxpr=cond, body_jaxpr=known_body,
                                           cond_nconsts=len(cond_consts) + cond_nconsts - sum(cc_uk),
                                           body_nconsts=len(body_consts) + body_nconsts - sum(bc_uk)))
    it = iter(known_outs)
    return [r if u else next(it) for r, u in zip(recorded, carry_uk)]


def _while_transpose(cts, *args, **params):
    raise ValueError("Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with dynamic "
                     "start/stop values. Try using lax.scan, or using fori_loop with static start/stop.")


while_p.def_rules(jvp=_while_jvp, partial_eval=_while_partial_eval, transpose=_while_transpose)


def _scan_jvp(primals, tangents, *, reverse, length, jaxpr, num_consts, num_carry, unroll):
    nx = len(primals) - num_consts - num_carry
    nz = [type(t) is not ad.Zero for t in tangents]
    const_nz, carry_nz, x_nz = nz[:num_consts], nz[num_consts:num_consts + num_carry], nz[num_consts + num_carry:]
    num_ys = len(jaxpr.out_avals) - num_carry
    carry_nz = _carry_fixpoint(jaxpr, const_nz, carry_nz, x_nz, num_ys)
    body, out_nz = _group_jvp_jaxpr(jaxpr, [const_nz, carry_nz, x_nz], [*carry_nz, *[False] * num_ys],
                                    [num_consts, num_carry, nx], [num_carry, num_ys])
    tangents = list(tangents)
    for i, c in enumerate(carry_nz):
        if c:
            tangents[num_consts + i] = ad.instantiate_zero_tangent(tangents[num_consts + i])

    def group(lo, hi, mask):
        out = []
        for p, t, m in zip(primals[lo:hi], tangents[lo:hi], mask):
            out += [p, t] if m else [p]
        return out

    # Consts, then carries, then xs, each primal followed by its tangent (the body's input order).
    args = (group(0, num_consts, const_nz) + group(num_consts, num_consts + num_carry, carry_nz)
            + group(num_consts + num_carry, len(primals), x_nz))
    y_nz = out_nz[num_carry:]
    outs = scan_p.bind(*args, reverse=reverse, length=length, jaxpr=body, num_consts=num_consts + sum(const_nz),
                       num_carry=num_carry + sum(carry_nz), unroll=unroll)
    it = iter(outs)
    p_out, t_out = [], []
    for m, a in zip([*carry_nz, *y_nz], _scan_abstract_eval(*[core.get_aval(p) for p in primals], reverse=reverse,
                                                            length=length, jaxpr=jaxpr, num_consts=num_consts,
                                                            num_carry=num_carry, unroll=unroll)):
        p_out.append(next(it))
        t_out.append(next(it) if m else ad.Zero(ad.tangent_aval(a)))
    return p_out, t_out


scan_p.def_rules(jvp=_scan_jvp)


def _scan_partial_eval(trace, args, unknown, *, reverse, length, jaxpr, num_consts, num_carry, unroll):
    """Known scan: known carries and ys, plus the residuals each iteration's unknown part reads (as
    stacked ys; those that are known consts pass through as consts). Unknown scan, recorded: the rest."""
    num_ys = len(jaxpr.out_avals) - num_carry
    const_uk, carry_uk, x_uk = (list(unknown[:num_consts]), list(unknown[num_consts:num_consts + num_carry]),
                                list(unknown[num_consts + num_carry:]))
    while True:
        split = pe.partial_eval_jaxpr(jaxpr, const_uk + carry_uk + x_uk, instantiate=carry_uk + [False] * num_ys)
        new = [a or b for a, b in zip(carry_uk, split[2][:num_carry])]
        if new == carry_uk:
            break
        carry_uk = new
    known, unk, out_uk, nres = split
    kj = known.jaxpr
    nk_consts = num_consts - sum(const_uk)
    n_known_outs = len(kj.outvars) - nres
    # Residuals that are known consts of the body are loop invariant: pass them as consts. Those that
    # are known xs are the xs themselves: the unknown scan reads them (no stacked copy).
    nk_carry = num_carry - sum(carry_uk)
    const_pos = {v: i for i, v in enumerate(kj.invars[:nk_consts])}
    x_pos = {v: i for i, v in enumerate(kj.invars[nk_consts + nk_carry:])}
    res_vars = kj.outvars[n_known_outs:]
    literal = [isinstance(v, pe.Literal) for v in res_vars]
    hoisted = [None if lit else const_pos.get(v) for v, lit in zip(res_vars, literal)]
    forwarded = [None if lit or h is not None else x_pos.get(v) for v, lit, h in zip(res_vars, literal, hoisted)]
    stacked = [i for i, (h, f) in enumerate(zip(hoisted, forwarded)) if h is None and f is None]
    known_body = _ClosedJaxpr(_Jaxpr(kj.constvars, kj.invars, kj.outvars[:n_known_outs] + [res_vars[i] for i in stacked],
                                     kj.eqns), known.consts)
    known_args = [a for a, u in zip(args, const_uk + carry_uk + x_uk) if not u]
    known_outs = trace.bind_in_parent(scan_p, known_args, dict(
        reverse=reverse, length=length, jaxpr=known_body, num_consts=nk_consts, num_carry=nk_carry, unroll=unroll))
    known_xs = known_args[nk_consts + nk_carry:]
    res_stacked = iter(known_outs[n_known_outs:])
    res_xs = [next(res_stacked) if f is None else known_xs[f] for h, f in zip(hoisted, forwarded) if h is None]
    known_consts = known_args[:nk_consts]
    res_hoisted = [known_consts[h] for h in hoisted if h is not None]
    # The unknown body takes (residuals, unknown consts, carries, xs): reorder to scan's layout.
    uj = unk.jaxpr
    r_vars, rest = uj.invars[:nres], uj.invars[nres:]
    n_uc, n_ucarry = sum(const_uk), sum(carry_uk)
    invars = ([r_vars[i] for i, h in enumerate(hoisted) if h is not None] + rest[:n_uc + n_ucarry]
              + [r_vars[i] for i, h in enumerate(hoisted) if h is None] + rest[n_uc + n_ucarry:])
    unknown_body = _ClosedJaxpr(_Jaxpr(uj.constvars, invars, uj.outvars, uj.eqns), unk.consts)
    u_args = [*res_hoisted, *(a for a, u in zip(args[:num_consts], const_uk) if u),
              *(a for a, u in zip(args[num_consts:num_consts + num_carry], carry_uk) if u),
              *res_xs, *(a for a, u in zip(args[num_consts + num_carry:], x_uk) if u)]
    unknown_outs = pe.DynamicJaxprTrace.process_primitive(trace, scan_p, u_args, dict(
        reverse=reverse, length=length, jaxpr=unknown_body, num_consts=len(res_hoisted) + n_uc, num_carry=n_ucarry,
        unroll=unroll))
    k, u = iter(known_outs[:n_known_outs]), iter(unknown_outs)
    return [next(u) if uk else next(k) for uk in out_uk]


def _scan_transpose(cts, *args, reverse, length, jaxpr, num_consts, num_carry, unroll):
    """A reverse scan: carries the cotangents of the carries and accumulates those of the linear consts."""
    # Every carry is transposed as linear: a known initial carry (instantiated zeros) gets no cotangent.
    carry_given = [ad.is_undefined(a) for a in args[num_consts:num_consts + num_carry]]
    aval = core.get_aval
    args = [*args[:num_consts], *(a if ad.is_undefined(a) else ad.UndefinedPrimal(aval(a))
                                  for a in args[num_consts:num_consts + num_carry]), *args[num_consts + num_carry:]]
    linear = [ad.is_undefined(a) for a in args]
    consts_lin, xs_lin = linear[:num_consts], linear[num_consts + num_carry:]
    lin_const_avals = [a.aval for a, lin in zip(args[:num_consts], consts_lin) if lin]
    ct_carry = [ad.instantiate_zero(c) for c in cts[:num_carry]]
    ct_ys = [ad.instantiate_zero(c) for c in cts[num_carry:]]
    # The linear consts' cotangents are carried accumulators, added to as each is found (JAX's order).
    # The carries' cotangents have the carry outputs' types (a weakly typed initial carry's too).
    carry_avals = [ad.tangent_aval(a) for a in jaxpr.out_avals[:num_carry]]
    transposed = ad.transpose_jaxpr(jaxpr, linear, [True] * len(cts), consts_lin + [False] * (len(linear) - num_consts),
                                    [None] * num_consts + carry_avals + [None] * (len(linear) - num_consts - num_carry))
    nl_consts = [a for a, lin in zip(args[:num_consts], consts_lin) if not lin]
    nl_xs = [a for a, lin in zip(args[num_consts + num_carry:], xs_lin) if not lin]
    n_lc, n_nlc = len(lin_const_avals), len(nl_consts)

    def body(*vals):
        # As JAX's transposed scan: consts (residuals), carries (the linear consts' accumulators, then
        # the carries' cotangents), xs (the ys' cotangents, then the scanned residuals).
        nlc, acc = vals[:n_nlc], vals[n_nlc:n_nlc + n_lc]
        ctc = vals[n_nlc + n_lc:n_nlc + n_lc + num_carry]
        rest = vals[n_nlc + n_lc + num_carry:]
        cty, nlx = rest[:len(ct_ys)], rest[len(ct_ys):]
        return eval_jaxpr(transposed.jaxpr, transposed.consts, *nlc, *nlx, *acc, *ctc, *cty)

    x_avals = [aval(a).update(shape=aval(a).shape[1:]) for a in ct_ys + nl_xs]
    body_avals = [aval(a) for a in nl_consts] + lin_const_avals + [aval(a) for a in ct_carry] + x_avals
    body_closed = pe.trace_to_jaxpr(body, body_avals)
    acc0 = [ad.zeros_like_aval(a) for a in lin_const_avals]
    outs = scan_p.bind(*nl_consts, *acc0, *ct_carry, *ct_ys, *nl_xs, reverse=not reverse, length=length,
                       jaxpr=body_closed, num_consts=n_nlc, num_carry=n_lc + num_carry, unroll=unroll)
    ct_lc, ct_c, ct_x = iter(outs[:n_lc]), outs[n_lc:n_lc + num_carry], iter(outs[n_lc + num_carry:])
    return ([next(ct_lc) if lin else None for lin in consts_lin] + [c if g else None for c, g in zip(ct_c, carry_given)]
            + [next(ct_x) if lin else None for lin in xs_lin])


scan_p.def_rules(partial_eval=_scan_partial_eval, transpose=_scan_transpose)


# ---- batching (vmap) ------------------------------------------------------------------------
import weakref as _weakref  # noqa: E402

from xjax._src.interpreters import batching  # noqa: E402
from xjax._src.jaxpr import memoize_per_jaxpr as _memoize_per_jaxpr  # noqa: E402
from xjax._src.lax import reduction as _reduction  # noqa: E402
from xjax._src.lax.control_flow_common import per_example  # noqa: E402

_not_mapped = batching.not_mapped


def _batched_carry_fixpoint(axis, body, const_b, carry_b, xs_b, num_ys):
    """Which carries are batched: those given batched, plus those the body makes batched, to a fixpoint."""
    carry_b = list(carry_b)
    while True:
        _, out_b = batching.batch_jaxpr(body, axis, [*const_b, *carry_b, *xs_b], [*carry_b, *[False] * num_ys])
        new = [a or b for a, b in zip(carry_b, out_b[:len(carry_b)])]
        if new == carry_b:
            return carry_b
        carry_b = new


def _while_batch(axis, vals, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    nc = cond_nconsts + body_nconsts
    batched = [d is not _not_mapped for d in dims]
    cc_b, bc_b = batched[:cond_nconsts], batched[cond_nconsts:nc]
    carry_b = _batched_carry_fixpoint(axis, body_jaxpr, bc_b, batched[nc:], [], 0)
    _, (pred_b,) = batching.batch_jaxpr(cond_jaxpr, axis, cc_b + carry_b)
    if cond_jaxpr.out_avals[0].shape and not pred_b:
        # Per-example predicates of an inner vmap, the same for this one's examples: made a scalar
        # first, since this batch axis goes in front of theirs (JAX puts it after them).
        pairs, p = _scalar_predicate(list(zip(vals, dims)), dict(
            cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=cond_nconsts, body_nconsts=body_nconsts))
        return _while_batch(axis, [v for v, _ in pairs], [d for _, d in pairs], **p)
    if pred_b:  # each example stops on its own: every carry is batched
        carry_b = [True] * len(carry_b)
    consts = [batching.moveaxis(v, d, 0) if b else v for v, d, b in zip(vals[:nc], dims[:nc], batched[:nc])]
    carry = [batching.bdim_at_front(v, d, axis.size) if b else v for v, d, b in zip(vals[nc:], dims[nc:], carry_b)]
    cond, _ = batching.batch_jaxpr(cond_jaxpr, axis, cc_b + carry_b)
    body, _ = batching.batch_jaxpr(body_jaxpr, axis, bc_b + carry_b, carry_b)
    # As JAX: with a batched predicate the loop's condition returns one per example; the lowering runs
    # it while any runs (_scalar_predicate).
    outs = while_p.bind(*consts, *carry, cond_nconsts=cond_nconsts, cond_jaxpr=cond, body_nconsts=body_nconsts,
                        body_jaxpr=body)
    return outs, [0 if b else _not_mapped for b in carry_b]


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


def _scan_batch(axis, vals, dims, *, reverse, length, jaxpr, num_consts, num_carry, unroll):
    """Consts and carries batched along axis 0, xs (and ys) along axis 1: axis 0 stays the scanned one."""
    batched = [d is not _not_mapped for d in dims]
    nk = num_consts + num_carry
    const_b, xs_b = batched[:num_consts], batched[nk:]
    num_ys = len(jaxpr.out_avals) - num_carry
    carry_b = _batched_carry_fixpoint(axis, jaxpr, const_b, batched[num_consts:nk], xs_b, num_ys)
    body, out_b = batching.batch_jaxpr(jaxpr, axis, [*const_b, *carry_b, *xs_b], [*carry_b, *[False] * num_ys])
    consts = [batching.moveaxis(v, d, 0) if b else v for v, d, b in zip(vals, dims, const_b)]
    carry = [batching.bdim_at_front(v, d, axis.size) if b else v
             for v, d, b in zip(vals[num_consts:nk], dims[num_consts:nk], carry_b)]
    xs = [batching.moveaxis(v, d, 1) if b else v for v, d, b in zip(vals[nk:], dims[nk:], xs_b)]
    outs = scan_p.bind(*consts, *carry, *xs, reverse=reverse, length=length, jaxpr=body, num_consts=num_consts,
                       num_carry=num_carry, unroll=unroll)
    out_dims = [0 if b else _not_mapped for b in carry_b] + [1 if b else _not_mapped for b in out_b[num_carry:]]
    return outs, out_dims


while_p.def_rules(batch=_while_batch)
scan_p.def_rules(batch=_scan_batch)
