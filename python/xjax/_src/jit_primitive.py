"""The jit primitive: one equation holding a jitted callee's jaxpr, with its evaluation, lowering,
printing, differentiation (jvp, partial eval, transpose) and batching rules."""
import weakref

from xjax._src import core
from xjax._src.interpreters import ad, batching, partial_eval as pe
from xjax._src.interpreters.graph_lowering import (as_array, compile_closed_jaxpr, inline_jaxpr_lowering,
                                                   jaxpr_is_lowerable)
from xjax._src.jaxpr import ClosedJaxpr, Jaxpr, Literal, live_equations, memoize_per_jaxpr

# ---- the jit primitive ----------------------------------------------------------------------

jit_p = core.Primitive("jit", multiple_results=True)


def _jit_abstract_eval(*avals, jaxpr, **_):
    return jaxpr.out_avals


partitioned = None  # partition.py's call of a jaxpr on sharded operands (None where it does not partition)


def _jit_impl(*args, jaxpr, **_):
    if partitioned is not None:  # (operands split over devices: the program partitioned over their mesh)
        outs = partitioned(jaxpr, args)
        if outs is not None:
            return outs
    return compile_closed_jaxpr(jaxpr)([as_array(a) for a in args])


_jit_lowering = inline_jaxpr_lowering("jaxpr")


def _jit_pp_params(eqn, ctx):
    p = eqn.params
    inner = p["jaxpr"].jaxpr
    if inner not in ctx.shared:
        ctx.suggest_same_names(inner.invars, eqn.invars)
        ctx.suggest_same_names(inner.outvars, eqn.outvars)
    pairs = [("name", p["name"])]
    if p.get("ctx_mesh") is not None:
        pairs.append(("ctx_mesh", p["ctx_mesh"]))
    if any(p["donated_invars"]):
        pairs.append(("donated_invars", p["donated_invars"]))
    pairs.append(("jaxpr", p["jaxpr"]))
    return pairs


def _jit_jvp(primals, tangents, *, jaxpr, name, **params):
    """A nested jit stays one equation: jit of the JVP of its jaxpr."""
    nonzeros = [type(t) is not ad.Zero for t in tangents]
    jvp_closed, out_nonzeros = ad.jvp_jaxpr(jaxpr, nonzeros)
    ts = [t for t in tangents if type(t) is not ad.Zero]
    n_in = len(primals) + len(ts)
    outs = jit_p.bind(*primals, *ts, jaxpr=jvp_closed, name=name, **_fresh(params, n_in))
    n = len(jaxpr.out_avals)
    rest = iter(outs[n:])
    return outs[:n], [next(rest) if nz else ad.Zero(ad.tangent_aval(a)) for a, nz in zip(jaxpr.out_avals, out_nonzeros)]


def _jit_partial_eval(trace, args, unknown, *, jaxpr, name, **params):
    """Known part runs now (one jit equation in the parent); the unknown part is recorded (another).
    As JAX's jit linearisation: both parts keep the jit's name, dead equations are dropped, and a
    residual that is an operand or a primal output of the known part is not output again."""
    known, unknown_closed, out_unknowns, num_res = pe.partial_eval_jaxpr(jaxpr, unknown)
    known, unknown_closed, res_src = _pruned_split(known, unknown_closed, num_res)
    known_args = [a for a, u in zip(args, unknown) if not u]
    known_outs = trace.bind_in_parent(jit_p, known_args,
                                      dict(jaxpr=known, name=name, **_fresh(params, len(known_args))))
    n_primal = len(out_unknowns) - sum(out_unknowns)
    residuals = [known_args[i] if kind == "in" else known_outs[i] if kind == "out" else known_outs[n_primal + i]
                 for kind, i in res_src]
    unknown_args = [*residuals, *(a for a, u in zip(args, unknown) if u)]
    unknown_outs = pe.DynamicJaxprTrace.process_primitive(
        trace, jit_p, unknown_args, dict(jaxpr=unknown_closed, name=name, **_fresh(params, len(unknown_args))))
    k, u = iter(known_outs[:n_primal]), iter(unknown_outs)
    return [next(u) if unk else next(k) for unk in out_unknowns]


_pruned = weakref.WeakKeyDictionary()


def _closed(closed, constvars, invars, outvars, eqns):
    consts = dict(zip(closed.jaxpr.constvars, closed.consts))
    return ClosedJaxpr(Jaxpr(constvars, invars, outvars, eqns), [consts[v] for v in constvars])


def _pruned_split(known, unknown, num_res):
    """(known, unknown, where each residual the unknown part reads comes from: ("in", i) the i-th known
    operand, ("out", i) the i-th primal output of the known part, ("res", k) its k-th residual output).
    Unknown equations nobody reads are dropped, then the residuals they alone read, then the known
    equations only those needed."""
    def make():
        u = unknown.jaxpr
        u_eqns, u_live = live_equations(u, u.outvars)
        used = [v in u_live for v in u.invars[:num_res]]
        unknown_ = _closed(unknown, [v for v in u.constvars if v in u_live],
                           [v for v, k in zip(u.invars[:num_res], used) if k] + u.invars[num_res:], u.outvars, u_eqns)
        k = known.jaxpr
        n_primal = len(k.outvars) - num_res
        primal_outs = k.outvars[:n_primal]
        in_pos = {v: i for i, v in enumerate(k.invars)}
        out_pos = {v: i for i, v in enumerate(primal_outs) if type(v) is not Literal}
        res_src, res_outs = [], []
        for v, keep in zip(k.outvars[n_primal:], used):
            if not keep:
                continue
            if type(v) is not Literal and v in in_pos:
                res_src.append(("in", in_pos[v]))
            elif type(v) is not Literal and v in out_pos:
                res_src.append(("out", out_pos[v]))
            else:
                res_src.append(("res", len(res_outs)))
                res_outs.append(v)
        outvars = primal_outs + res_outs
        k_eqns, k_live = live_equations(k, outvars)
        known_ = _closed(known, [v for v in k.constvars if v in k_live], k.invars, outvars, k_eqns)
        return known_, unknown_, res_src

    return memoize_per_jaxpr(_pruned, known, (unknown, num_res), make)


def _jit_transpose(cts, *args, jaxpr, name, **params):
    linear = [ad.is_undefined(a) for a in args]
    ct_nonzeros = [type(c) is not ad.Zero for c in cts]
    t_closed = ad.transpose_jaxpr(jaxpr, linear, ct_nonzeros)
    ins = [a for a, lin in zip(args, linear) if not lin] + [c for c in cts if type(c) is not ad.Zero]
    outs = iter(jit_p.bind(*ins, jaxpr=t_closed, name=name, **_fresh(params, len(ins))))
    return [next(outs) if lin else None for lin in linear]


def _fresh(params, n):
    """The options of a derived jit equation: nothing donated."""
    return dict(donated_invars=(False,) * n, inline=params.get("inline", False),
                keep_unused=params.get("keep_unused", False))


jit_p.def_rules(abstract_eval=_jit_abstract_eval, impl=_jit_impl, jaxpr_lowering=_jit_lowering,
                vma=core.vma_of_body(_jit_abstract_eval),
                can_lower=lambda params: jaxpr_is_lowerable(params["jaxpr"].jaxpr), pp_params=_jit_pp_params,
                jvp=_jit_jvp, partial_eval=_jit_partial_eval, transpose=_jit_transpose)


# ---- batching (vmap) ------------------------------------------------------------------------
def _jit_batch(axis, vals, dims, *, jaxpr, name, **params):
    """A vmapped jit call stays one jit equation, holding the batched jaxpr (memoised, so the compiled
    graph cached on it is found again on the next call)."""
    in_batched = [d is not batching.not_mapped for d in dims]
    vals = [batching.moveaxis(v, d, 0) if b else v for v, d, b in zip(vals, dims, in_batched)]
    batched, out_batched = batching.batch_jaxpr(jaxpr, axis, in_batched)
    outs = jit_p.bind(*vals, jaxpr=batched, name=name, **params)
    return outs, [0 if b else batching.not_mapped for b in out_batched]


jit_p.def_rules(batch=_jit_batch)
