"""cond and switch: the `cond` primitive, whose branches are jaxprs taking the same operands."""
import builtins
import collections
import enum
import functools

import numpy as np

from xjax._src import core, data_leaves, dtypes, errors
from xjax._src.backends import cpu
from xjax._src.interpreters import graph_lowering as gl, partial_eval as pe
from xjax._src.interpreters.graph_lowering import jaxpr_is_lowerable, run_closed_jaxpr
from xjax._src.jaxpr import ClosedJaxpr, Jaxpr, Var
from xjax._src.lax import elementwise as ew, parallel
from xjax._src.lax.base import asarray
from xjax._src.lax.control_flow_common import (concrete_scalar, is_tracing, jit_disabled, mismatch_extra, operand,
                                               pvary_advice, run_as_jit, scalar_i32, trace_fun, tree_mismatch,
                                               typematch)
from xjax._src.lax.layout import broadcast

_flatten = data_leaves.flatten  # keys as their data

cond_p = core.Primitive("cond", multiple_results=True)


def _cond_abstract_eval(index, *ops, branches):
    outs = [list(b.out_avals) for b in branches]
    return [a.update(weak_type=all(o[i].weak_type for o in outs)) for i, a in enumerate(outs[0])]


def _cond_impl(index, *ops, branches):
    index = asarray(index)
    ops = [asarray(o) for o in ops]
    if index.is_ready():
        # The branch is known now: run its graph alone (a small graph runs at once, in this thread,
        # while a graph holding a cond op always goes through the executor's queue).
        i = builtins.min(builtins.max(int(index), 0), len(branches) - 1)
        return run_closed_jaxpr(branches[i], ops)

    def fallback(args):
        i = builtins.min(builtins.max(int(args[0]), 0), len(branches) - 1)
        return run_closed_jaxpr(branches[i], args[1:])

    return run_as_jit(cond_p, [index, *ops], {"branches": branches}, fallback)


def _cond_lowering(lowerer, eqn, ins):
    """The core's `cond` op, each branch a subgraph (the core clamps the index)."""
    branches = eqn.params["branches"]
    op_avals = [a.aval for a in eqn.invars[1:]]
    graphs = [lowerer.subgraph(op_avals, lambda sub, refs, b=b: sub.lower_closed_jaxpr(b, refs)) for b in branches]
    return lowerer.graph.add_subgraph_op("cond", list(ins), {}, graphs)


def _cond_can_lower(params):
    return gl.HAS_SUBGRAPHS and builtins.all(jaxpr_is_lowerable(b.jaxpr) for b in params["branches"])


cond_p.def_rules(abstract_eval=_cond_abstract_eval, vma=core.vma_of_body(_cond_abstract_eval), impl=_cond_impl,
                 jaxpr_lowering=_cond_lowering, can_lower=_cond_can_lower)


def _common_consts(traced):
    """All branches' consts once each (by identity, in order), and each branch taking all of them."""
    if not any(cs for _, cs in traced):  # nothing to pad: the traced (maybe cached) jaxprs as they are
        return [], [closed for closed, _ in traced]
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
        a, b, why = tree_mismatch(trees[0], trees[k])
        lines = "\n".join(f"{n} is {pe.func_src_info(f)}" for n, f in zip(names, funs))
        raise TypeError(f"{what} branch outputs must have the same pytree structure, but they differ:\n\n{lines}\n\n"
                        f"{names[0]} output is {a} but {names[k]} output is {b}, so {why}.\n\n"
                        f"Revise {' and/or '.join(names) if len(names) == 2 else 'the branches'} so that they have "
                        "the same pytree structure.")
    for k, avals in enumerate(avals_list[1:], 1):
        for a, b in zip(avals_list[0], avals):
            if not typematch(a, b):
                lines = "\n".join(f"{n} is {pe.func_src_info(f)}" for n, f in zip(names, funs))
                # (JAX's hint, in its own wording: each side named with the other's axes left out of its own)
                advice = pvary_advice([(tuple(n for n in a1.vma if n not in a2.vma), f" to the output of {n}")
                                       for n, a1, a2 in ((names[0], b, a), (names[k], a, b))
                                       if a1.vma != a2.vma and set(a2.vma) - set(a1.vma)])
                raise TypeError(
                    f"{what} branches must have equal output types but they differ.\n\n{lines}\n\nThe output of "
                    f"{names[0]} has type {errors.long_str(a)} but the corresponding output of {names[k]} has type "
                    f"{errors.long_str(b)}"
                    f"{mismatch_extra(a, b)}.\n\n{advice}Revise "
                    f"{' and/or '.join(names) if len(names) == 2 else 'the branches'} so that all output types match.")


def _branches_call(index, branches, names, operands, what, traced_for):
    leaves, in_tree = _flatten(operands)
    ops = [operand(o) for o in leaves]
    in_avals = [core.get_aval(o) for o in ops]
    traced, trees = [], []
    index_vma = getattr(core.get_aval(index), "vma", ())
    for fun in branches:
        if index_vma:  # a varying index: every output varies with it too (JAX's cond pvaries them)
            fun = _varying_with(fun, index_vma)
        closed, consts, tree = trace_fun(fun, operands, in_avals, traced_for, in_tree=in_tree)
        traced.append((closed, consts))
        trees.append(tree)
    _check_branches(what, names, branches, trees, [c.out_avals for c, _ in traced])
    return traced, ops, trees[0]


def _varying_with(fun, axes):
    def varying(*args, **kwargs):
        return parallel.vary_over(fun(*args, **kwargs), axes)

    return varying


_NO_OPERAND = object()  # `operand=None` is an operand: the branches take one argument, None


def cond(pred, true_fun, false_fun, *operands, operand=_NO_OPERAND, linear=None):
    """true_fun(*operands) if pred else false_fun(*operands), with both traced and compiled."""
    if not (callable(true_fun) and callable(false_fun)):
        if callable(false_fun) and len(operands) == 2 and callable(operands[1]):
            # The old form, cond(pred, true_operand, true_fun, false_operand, false_fun), still accepted
            x_true, f_true, x_false, f_false = true_fun, false_fun, *operands
            return cond(pred, lambda x, _: f_true(x), lambda _, x: f_false(x), x_true, x_false)
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    if operand is not _NO_OPERAND:
        if operands:
            raise TypeError("if `operand` is passed, positional `operands` should not be passed")
        operands = (operand,)
    shape = np.shape(pred) if not hasattr(pred, "aval") else pred.aval.shape
    if shape:
        raise TypeError(f"Pred must be a scalar, got {pred} of shape {shape}.")
    dtype = core.get_aval(pred).dtype if hasattr(pred, "aval") else np.result_type(pred)
    if dtype != dtypes.bool_ and not (dtypes.is_int(dtype) or dtypes.is_float(dtype)):
        raise TypeError(f"Pred type must be either boolean or number, got {dtype}.")
    concrete = concrete_scalar(pred)
    if jit_disabled() and concrete is not None and not is_tracing():
        return true_fun(*operands) if concrete else false_fun(*operands)
    if concrete is not None:
        index = scalar_i32(bool(concrete))
    elif dtype == dtypes.bool_:
        index = ew.convert_element_type(pred, dtypes.int32)
    else:
        index = ew.convert_element_type(ew.ne(pred, 0), dtypes.int32)
    traced, ops, out_tree = _branches_call(index, (true_fun, false_fun), ("true_fun", "false_fun"), operands,
                                           "cond", "cond")
    consts, (true_j, false_j) = _common_consts(traced)
    if concrete is not None and not is_tracing():  # what cond's impl would do, without the detour
        return out_tree.unflatten(run_closed_jaxpr(true_j if concrete else false_j, [*consts, *ops]))
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
    concrete = concrete_scalar(index)
    eager = concrete is not None and not is_tracing()
    if eager:  # the branch is known here (int32 wrap-around and clamping as the ops would do them)
        i = builtins.min(builtins.max((int(concrete) + 2 ** 31) % 2 ** 32 - 2 ** 31, 0), len(branches) - 1)
        if jit_disabled():
            return branches[i](*operands)
    elif concrete is not None and type(index) not in core.ARRAY_TYPES:
        index = ew.clamp(scalar_i32(0), scalar_i32(concrete), scalar_i32(len(branches) - 1))
    else:
        index = ew.convert_element_type(index, dtypes.int32)
        index = ew.clamp(scalar_i32(0), index, scalar_i32(len(branches) - 1))
    names = [f"branch {k}" for k in range(len(branches))]
    traced, ops, out_tree = _branches_call(index, branches, names, operands, "switch", "switch")
    consts, jaxprs = _common_consts(traced)
    if eager:  # what cond's impl would do, without the detour
        return out_tree.unflatten(run_closed_jaxpr(jaxprs[i], [*consts, *ops]))
    outs = cond_p.bind(index, *consts, *ops, branches=tuple(jaxprs))
    return out_tree.unflatten(outs)


# ---- differentiation rules ------------------------------------------------------------------
from xjax._src.interpreters import ad  # noqa: E402
from xjax._src.jaxpr import eval_jaxpr  # noqa: E402


def _cond_jvp(primals, tangents, *, branches):
    index, *ops = primals
    nonzeros = [type(t) is not ad.Zero for t in tangents[1:]]
    out_nz = [builtins.any(nz) for nz in zip(*(ad.jvp_jaxpr(b, nonzeros)[1] for b in branches))]
    jvps = [ad.jvp_jaxpr(b, nonzeros, instantiate=out_nz)[0] for b in branches]
    outs = cond_p.bind(index, *ops, *[t for t in tangents[1:] if type(t) is not ad.Zero], branches=tuple(jvps))
    n = len(branches[0].out_avals)
    rest = iter(outs[n:])
    return outs[:n], [next(rest) if nz else ad.Zero(ad.tangent_aval(a))
                      for a, nz in zip(branches[0].out_avals, out_nz)]


# empty2: JAX's placeholder for a residual slot a branch does not fill (a 0-d zero, broadcast).
class MemorySpace(enum.Enum):
    Device = "device"


empty2_p = core.Primitive("empty2")
empty2_p.def_rules(
    abstract_eval=lambda *, dtype, memory_space: core.ShapedArray((), dtype),
    lowering=lambda ctx, *, dtype, memory_space: ctx.op("constant", **gl._constant_attrs(0, dtype)))
empty2_p.def_rules(impl=functools.partial(cpu.apply_primitive, empty2_p))
ad.defjvp_zero(empty2_p)


def _empty_like(aval):
    return broadcast(empty2_p.bind(dtype=aval.dtype, memory_space=MemorySpace.Device), aval.shape)


def _merge_branch_residuals(branch_res_avals):
    """JAX's merge: the k-th residual of a type in any branch shares one slot with the k-th of that type
    in every other branch; (all slots' avals, each branch's slot for each of its residuals)."""
    tagged = []
    for avals in branch_res_avals:
        seen = collections.Counter()
        tags = []
        for a in avals:
            tags.append((a, seen[a]))
            seen[a] += 1
        tagged.append(tags)
    slots = list(dict.fromkeys(t for tags in tagged for t in tags))
    where = {t: i for i, t in enumerate(slots)}
    return [a for a, _ in slots], [[where[t] for t in tags] for tags in tagged]


def _cond_partial_eval(trace, args, unknown, *, branches):
    """The known cond computes known outputs and the residuals, in slots merged across branches (a
    slot a branch does not fill holds an empty2); the unknown cond, recorded, reads its branch's."""
    if unknown[0]:
        raise ValueError("cond: the branch index cannot depend on the differentiated values")
    splits = [pe.partial_eval_jaxpr(b, unknown[1:]) for b in branches]
    out_unknown = [builtins.any(u) for u in zip(*(s[2] for s in splits))]
    if builtins.any(s[2] != out_unknown for s in splits):
        splits = [pe.partial_eval_jaxpr(b, unknown[1:], instantiate=out_unknown) for b in branches]
    res_avals, slots = _merge_branch_residuals([list(s[1].in_avals[:s[3]]) for s in splits])
    known_branches, unknown_branches = [], []
    for (known, unk, _, nres), mine in zip(splits, slots):
        known_branches.append(_with_all_residuals(known, nres, res_avals, mine))
        unknown_branches.append(_taking_all_residuals(unk, nres, res_avals, mine))
    known_args = [a for a, u in zip(args, unknown) if not u]
    known_outs = trace.bind_in_parent(cond_p, known_args, dict(branches=tuple(known_branches)))
    split = len(known_outs) - len(res_avals)
    unknown_args = [args[0], *known_outs[split:], *(a for a, u in zip(args[1:], unknown[1:]) if u)]
    unknown_outs = pe.DynamicJaxprTrace.process_primitive(trace, cond_p, unknown_args,
                                                          dict(branches=tuple(unknown_branches)))
    k, u = iter(known_outs[:split]), iter(unknown_outs)
    return [next(u) if unk else next(k) for unk in out_unknown]


def _with_all_residuals(known, nres, res_avals, mine):
    """A known branch returning every residual slot: its own residuals in its slots, empties elsewhere
    (made for every slot first, as JAX's _join_cond_outputs)."""
    def fun(*args):
        outs = eval_jaxpr(known.jaxpr, known.consts, *args)
        n = len(outs) - nres
        slots = [_empty_like(a) for a in res_avals]
        for i, r in zip(mine, outs[n:]):
            slots[i] = r
        return outs[:n] + slots

    return pe.trace_to_jaxpr(fun, list(known.in_avals))


def _taking_all_residuals(unknown, nres, res_avals, mine):
    def fun(*args):
        res, rest = args[:len(res_avals)], args[len(res_avals):]
        return eval_jaxpr(unknown.jaxpr, unknown.consts, *[res[i] for i in mine], *rest)

    return pe.trace_to_jaxpr(fun, res_avals + list(unknown.in_avals[nres:]))


def _cond_transpose(cts, index, *ops, branches):
    linear = [ad.is_undefined(o) for o in ops]
    ct_nonzeros = [type(c) is not ad.Zero for c in cts]
    transposed = tuple(ad.transpose_jaxpr(b, linear, ct_nonzeros) for b in branches)
    ins = [o for o, lin in zip(ops, linear) if not lin] + [c for c in cts if type(c) is not ad.Zero]
    outs = iter(cond_p.bind(index, *ins, branches=transposed))
    return [None] + [next(outs) if lin else None for lin in linear]


cond_p.def_rules(jvp=_cond_jvp, partial_eval=_cond_partial_eval, transpose=_cond_transpose)


# ---- batching (vmap) ------------------------------------------------------------------------
from xjax._src.interpreters import batching  # noqa: E402
from xjax._src.lax.control_flow_common import per_example  # noqa: E402
from xjax._src.lax.stop_gradient import stop_gradient as _stop_gradient  # noqa: E402


def _cond_batch(axis, vals, dims, *, branches):
    (index, *ops), (index_dim, *op_dims) = vals, dims
    if index_dim is batching.not_mapped:
        return _cond_batch_unbatched_index(axis, index, ops, op_dims, branches)
    return _cond_batch_batched_index(axis, index, index_dim, ops, op_dims, branches)


def _cond_batch_unbatched_index(axis, index, ops, op_dims, branches):
    """One cond of the batched branches; an output is batched where any branch batches it."""
    in_batched = [d is not batching.not_mapped for d in op_dims]
    ops = [batching.moveaxis(x, d, 0) if b else x for x, d, b in zip(ops, op_dims, in_batched)]
    out_batched = [builtins.any(bs) for bs in zip(*(batching.batch_jaxpr(b, axis, in_batched)[1] for b in branches))]
    batched = tuple(batching.batch_jaxpr(b, axis, in_batched, out_batched)[0] for b in branches)
    outs = cond_p.bind(index, *ops, branches=batched)
    return outs, [0 if b else batching.not_mapped for b in out_batched]


def _cond_batch_batched_index(axis, index, index_dim, ops, op_dims, branches):
    """Every branch runs on the whole batch and select_n picks each example's result (JAX's semantics:
    effects of every branch happen). A branch sees its operands through stop_gradient where it is not
    taken, so that the derivative of a branch not taken (inf or nan at those values) cannot leak."""
    index = batching.moveaxis(index, index_dim, 0)
    ops = [batching.bdim_at_front(x, d, axis.size) for x, d in zip(ops, op_dims)]
    in_batched = [True] * len(ops)
    branch_outs = []
    for i, branch in enumerate(branches):
        batched, _ = batching.batch_jaxpr(branch, axis, in_batched, True)
        taken = ew.eq(index, scalar_i32(i))
        guarded = [ew.select(per_example(taken, x), x, _stop_gradient(x)) for x in ops]  # per branch, as JAX
        branch_outs.append(eval_jaxpr(batched.jaxpr, batched.consts, *guarded))
    outs = [ew.select_n(per_example(index, cases[0]), *cases) for cases in zip(*branch_outs)]
    return outs, [0] * len(outs)


cond_p.def_rules(batch=_cond_batch)
