"""Lowering the control-flow primitives to the core's control ops over subgraphs.

cond -> the core's `cond` (branches as subgraphs, index clamped by the core). while -> `while`
with the consts of both functions carried along unchanged. scan -> `while` too, as XLA does: the
carry is (counter, consts, carry, xs, ys); each step reads x[t] with dynamic_slice and writes
y[t] with dynamic_update_slice into buffers that start as zeros.
"""
from xjax._src.interpreters import graph_lowering as gl
from xjax._src.interpreters.graph_lowering import jaxpr_is_lowerable
from xjax._src.lax.conditionals import cond_p
from xjax._src.lax.loops import scan_p, while_p
from xjax._src import core, dtypes


def _cond_lowering(lowerer, eqn, ins):
    branches = eqn.params["branches"]
    op_avals = [a.aval for a in eqn.invars[1:]]
    graphs = [lowerer.subgraph(op_avals, lambda sub, refs, b=b: sub.lower_jaxpr(b.jaxpr, [], refs)) for b in branches]
    return lowerer.graph.add_subgraph_op("cond", list(ins), {}, graphs)


def _while_lowering(lowerer, eqn, ins):
    p = eqn.params
    cn, bn = p["cond_nconsts"], p["body_nconsts"]
    cond_j, body_j = p["cond_jaxpr"].jaxpr, p["body_jaxpr"].jaxpr
    avals = [a.aval for a in eqn.invars]

    def cond_fn(sub, refs):
        return sub.lower_jaxpr(cond_j, [], refs[:cn] + refs[cn + bn:])

    def body_fn(sub, refs):
        return refs[:cn + bn] + sub.lower_jaxpr(body_j, [], refs[cn:])

    graphs = [lowerer.subgraph(avals, cond_fn), lowerer.subgraph(avals, body_fn)]
    return lowerer.graph.add_subgraph_op("while", list(ins), {}, graphs)[cn + bn:]


def _scan_lowering(lowerer, eqn, ins):
    p = eqn.params
    nc, ncarry, length, reverse = p["num_consts"], p["num_carry"], p["length"], p["reverse"]
    jaxpr = p["jaxpr"].jaxpr
    avals = [a.aval for a in eqn.invars]
    x_avals = avals[nc + ncarry:]
    y_avals = [v.aval for v in jaxpr.outvars[ncarry:]]
    nx, ny = len(x_avals), len(y_avals)
    i32 = dtypes.int32
    counter = core.ShapedArray((), i32)
    ys0 = [lowerer.constant(0, a.dtype, (length, *a.shape)) for a in y_avals]
    if length == 0:
        return list(ins[nc:nc + ncarry]) + ys0
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
        outs = sub.lower_jaxpr(jaxpr, [], [*consts, *carry, *x_t])
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


def _register():
    cond_p.jaxpr_lowering = _cond_lowering
    cond_p.can_lower = lambda params: gl.HAS_SUBGRAPHS and all(jaxpr_is_lowerable(b.jaxpr) for b in params["branches"])
    while_p.jaxpr_lowering = _while_lowering
    while_p.can_lower = lambda params: gl.HAS_SUBGRAPHS and jaxpr_is_lowerable(params["cond_jaxpr"].jaxpr) \
        and jaxpr_is_lowerable(params["body_jaxpr"].jaxpr)
    scan_p.jaxpr_lowering = _scan_lowering
    scan_p.can_lower = lambda params: gl.HAS_SUBGRAPHS and jaxpr_is_lowerable(params["jaxpr"].jaxpr)


_register()
