"""call and closed_call (JAX's call primitives): apply the jaxpr in their `call_jaxpr` param. xjax
never emits them (its calls are `jit`s or inlined); libraries build and match equations of them."""
from xjax._src import core
from xjax._src.custom_calls import _call_transpose
from xjax._src.interpreters import ad, batching
from xjax._src.interpreters import partial_eval as pe
from xjax._src.interpreters.graph_lowering import GraphLowerer, jaxpr_is_lowerable
from xjax._src.jaxpr import ClosedJaxpr, eval_jaxpr

call_p = core.Primitive("call", multiple_results=True)
closed_call_p = core.Primitive("closed_call", multiple_results=True)


def _closed(call_jaxpr):
    return call_jaxpr if isinstance(call_jaxpr, ClosedJaxpr) else ClosedJaxpr(call_jaxpr, [])


def _abstract_eval(*avals, call_jaxpr, **_):
    return _closed(call_jaxpr).out_avals


def _impl(*args, call_jaxpr, **_):
    closed = _closed(call_jaxpr)
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def _jvp(primals, tangents, *, call_jaxpr, **_):
    closed = _closed(call_jaxpr)
    nonzeros = [type(t) is not ad.Zero for t in tangents]
    jvp_closed, out_nonzeros = ad.jvp_jaxpr(closed, nonzeros)
    outs = closed_call_p.bind(*primals, *[t for t in tangents if type(t) is not ad.Zero], call_jaxpr=jvp_closed)
    n = len(closed.out_avals)
    rest = iter(outs[n:])
    return outs[:n], [next(rest) if nz else ad.Zero(ad.tangent_aval(a))
                      for nz, a in zip(out_nonzeros, closed.out_avals)]


def _batch(axis, vals, dims, *, call_jaxpr, **_):
    in_batched = [d is not batching.not_mapped for d in dims]
    batched, out_batched = batching.batch_jaxpr(_closed(call_jaxpr), axis, in_batched)
    vals = [v if d is batching.not_mapped else batching.moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    outs = closed_call_p.bind(*vals, call_jaxpr=batched)
    return outs, [0 if b else batching.not_mapped for b in out_batched]


def _transpose(cts, *args, call_jaxpr, **_):
    return _call_transpose(cts, *args, call_jaxpr=_closed(call_jaxpr))


def _partial_eval(trace, args, unknown, *, call_jaxpr, **_):
    """The known part runs now, in the parent; the unknown part, fed the residuals, is recorded."""
    known, unknown_closed, out_unknowns, num_res = pe.partial_eval_jaxpr(_closed(call_jaxpr), unknown)
    known_outs = trace.bind_in_parent(closed_call_p, [a for a, u in zip(args, unknown) if not u],
                                      dict(call_jaxpr=known))
    n_known = len(known_outs) - num_res
    unknown_outs = pe.DynamicJaxprTrace.process_primitive(
        trace, closed_call_p, [*known_outs[n_known:], *(a for a, u in zip(args, unknown) if u)],
        dict(call_jaxpr=unknown_closed))
    k, u = iter(known_outs[:n_known]), iter(unknown_outs)
    return [next(u) if unk else next(k) for unk in out_unknowns]


def _lowering(lowerer: GraphLowerer, eqn, ins):
    return lowerer.lower_closed_jaxpr(_closed(eqn.params["call_jaxpr"]), ins)


for _p in (call_p, closed_call_p):
    _p.def_rules(abstract_eval=_abstract_eval, impl=_impl, jvp=_jvp, batch=_batch, transpose=_transpose,
                 partial_eval=_partial_eval,
                 jaxpr_lowering=_lowering,
                 can_lower=lambda params: jaxpr_is_lowerable(_closed(params["call_jaxpr"]).jaxpr))
