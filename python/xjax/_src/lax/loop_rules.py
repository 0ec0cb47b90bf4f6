"""The differentiation (jvp, partial eval, transpose) and batching rules of the loop primitives,
`while` and `scan` (loops.py)."""
from xjax._src import core
from xjax._src.interpreters import ad, batching
from xjax._src.interpreters import partial_eval as pe
from xjax._src.jaxpr import ClosedJaxpr as _ClosedJaxpr, Jaxpr as _Jaxpr, Var as _Var, eval_jaxpr
from xjax._src.lax.loops import _scalar_predicate, _scan_abstract_eval, scan_p, while_p


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
