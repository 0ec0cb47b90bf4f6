"""lax.custom_linear_solve: x = A^-1 b computed by any solver, differentiated as the linear map it is.

The primitive holds four jaxprs (matvec, its transpose vecmat, solve, transpose_solve) whose
closed-over values are operands, so that derivatives reach them. Its JVP solves again for the
tangent, dx = A^-1 (db - dA x) (dA: the tangent of matvec through what it closes over); that
solve is linear in its right-hand side, and its transpose is a solve with A^T (transpose_solve
with vecmat). The solver itself is never differentiated, so its loops need not be.
"""
from xjax._src import core, tree_util
from xjax._src.autodiff import jvp
from xjax._src.interpreters import ad, batching, partial_eval as pe
from xjax._src.interpreters.graph_lowering import jaxpr_is_lowerable
from xjax._src.jaxpr import ClosedJaxpr, Jaxpr, eval_jaxpr
from xjax._src.linear_transpose import linear_transpose

_FUNS = ("matvec", "vecmat", "solve", "transpose_solve")


def _hoisted(fun, avals, what):
    """fun traced on flat arrays of avals, its closed-over values moved to leading inputs."""
    closed = pe.trace_to_jaxpr(fun, avals, what=what)
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr([], list(j.constvars) + list(j.invars), j.outvars, j.eqns), []), list(closed.consts)


def _split(args, const_lengths):
    out, i = {}, 0
    for name, n in zip(_FUNS, const_lengths):
        out[name], i = list(args[i:i + n]), i + n
    return out, list(args[i:])


def _run(jaxprs, consts, name, xs):
    return eval_jaxpr(_named(jaxprs)[name].jaxpr, [], *consts[name], *xs)


def _impl(*args, const_lengths, jaxprs, n_aux):
    consts, b = _split(args, const_lengths)
    return _run(jaxprs, consts, "solve", b)


def _abstract_eval(*avals, const_lengths, jaxprs, n_aux):
    return list(jaxprs[_FUNS.index("solve")].out_avals)


def _named(jaxprs):
    return dict(zip(_FUNS, jaxprs))


def _jvp(primals, tangents, *, const_lengths, jaxprs, n_aux):
    named = _named(jaxprs)
    params = dict(const_lengths=const_lengths, jaxprs=jaxprs, n_aux=n_aux)
    out = linear_solve_p.bind(*primals, **params)
    x = out[:len(out) - n_aux]
    consts, _ = _split(primals, const_lengths)
    dconsts, db = _split(tangents, const_lengths)
    rhs = [ad.instantiate(t) for t in db]
    if any(type(t) is not ad.Zero for t in dconsts["matvec"]):  # A moves: subtract dA x
        _, dax = jvp(lambda *c: eval_jaxpr(named["matvec"].jaxpr, [], *c, *x), tuple(consts["matvec"]),
                     tuple(ad.instantiate(t) for t in dconsts["matvec"]))
        rhs = [r - d for r, d in zip(rhs, dax)]
    dout = linear_solve_p.bind(*primals[:sum(const_lengths)], *rhs, **params)
    return out, dout[:len(x)] + [ad.Zero(a) for a in (core.get_aval(v) for v in out[len(x):])]


def _transpose(cts, *args, const_lengths, jaxprs, n_aux):
    if n_aux:
        raise NotImplementedError("custom_linear_solve: transposing a solve that has aux outputs")
    named = _named(jaxprs)
    if named["transpose_solve"] is None:
        raise TypeError("transpose_solve required for backwards mode automatic differentiation of "
                        "custom_linear_solve")
    consts, b = _split(args, const_lengths)
    if any(ad.is_undefined(c) for cs in consts.values() for c in cs):
        raise NotImplementedError("custom_linear_solve: the transpose is linear in b only")
    cts = [ad.instantiate(c) for c in cts]
    # A^-T ct: the roles of matvec and vecmat, of solve and transpose_solve, swap.
    swapped = (jaxprs[1], jaxprs[0], jaxprs[3], jaxprs[2])
    lengths = (const_lengths[1], const_lengths[0], const_lengths[3], const_lengths[2])
    flat = consts["vecmat"] + consts["matvec"] + consts["transpose_solve"] + consts["solve"]
    ct_b = linear_solve_p.bind(*flat, *cts, const_lengths=lengths, jaxprs=swapped, n_aux=0)
    return [None] * sum(const_lengths) + list(ct_b)


def _batch(axis, vals, dims, *, const_lengths, jaxprs, n_aux):
    """Every operand and output batched at the front; each jaxpr vmapped over what is batched."""
    vals = [batching.bdim_at_front(v, d, axis.size) if d is not None else v for v, d in zip(vals, dims)]
    batched = [d is not None for d in dims]
    n_consts = sum(const_lengths)
    b = [v if bt else batching.broadcast_batched(v, axis.size) for v, bt in zip(vals[n_consts:], batched[n_consts:])]
    cb, _ = _split(batched, const_lengths)
    new = []
    for name, closed in zip(_FUNS, jaxprs):
        if closed is None:
            new.append(None)
            continue
        flags = cb[name] + [True] * (len(closed.in_avals) - len(cb[name]))
        new.append(batching.batch_jaxpr(closed, axis, flags, instantiate=True)[0])
    outs = linear_solve_p.bind(*vals[:n_consts], *b, const_lengths=const_lengths, jaxprs=tuple(new), n_aux=n_aux)
    return outs, [0] * len(outs)


def _lowering(lowerer, eqn, ins):
    consts, b = _split(ins, eqn.params["const_lengths"])
    return lowerer.lower_closed_jaxpr(_named(eqn.params["jaxprs"])["solve"], consts["solve"] + b)


def _can_lower(params):
    return jaxpr_is_lowerable(_named(params["jaxprs"])["solve"].jaxpr)


linear_solve_p = core.Primitive("custom_linear_solve", multiple_results=True)
linear_solve_p.def_rules(impl=_impl, abstract_eval=_abstract_eval, jvp=_jvp, transpose=_transpose, batch=_batch,
                         jaxpr_lowering=_lowering, can_lower=_can_lower)


def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False, has_aux=False):
    """solve(matvec, b): x with matvec(x) = b, by a solver of your choice, differentiated implicitly
    (the solver is not differentiated). transpose_solve(vecmat, b) solves with the transpose, for
    reverse mode; symmetric=True uses solve for it."""
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    b_flat, tree = tree_util.tree_flatten(b)
    avals = [core.get_aval(x) for x in b_flat]

    def flat(fun, check):
        def f(*leaves):
            out = fun(tree_util.tree_unflatten(tree, list(leaves)))
            if has_aux and check == "solve":
                out, aux = out
                aux_leaves, aux_tree = tree_util.tree_flatten(aux)
                aux_trees.append(aux_tree)
            else:
                aux_leaves = []
            leaves_out, out_tree = tree_util.tree_flatten(out)
            if out_tree != tree:
                raise TypeError(f"custom_linear_solve: {check}() output pytree structure must match b, got "
                                f"{out_tree} and {tree}")
            return leaves_out + aux_leaves

        return f

    aux_trees = []
    matvec_j, matvec_c = _hoisted(flat(matvec, "matvec"), avals, "matvec of custom_linear_solve")
    solve_j, solve_c = _hoisted(flat(lambda x: solve(matvec, x), "solve"), avals, "solve of custom_linear_solve")
    vecmat_j = tsolve_j = None
    vecmat_c = tsolve_c = []
    if transpose_solve is not None:
        if symmetric:
            vecmat = matvec
        else:
            def vecmat(y):
                return linear_transpose(matvec, b)(y)[0]
        vecmat_j, vecmat_c = _hoisted(flat(vecmat, "vecmat"), avals, "vecmat of custom_linear_solve")
        tsolve_j, tsolve_c = _hoisted(flat(lambda x: transpose_solve(vecmat, x), "transpose_solve"), avals,
                                      "transpose_solve of custom_linear_solve")
    n_aux = len(solve_j.out_avals) - len(b_flat)
    out = linear_solve_p.bind(*matvec_c, *vecmat_c, *solve_c, *tsolve_c, *b_flat,
                              const_lengths=(len(matvec_c), len(vecmat_c), len(solve_c), len(tsolve_c)),
                              jaxprs=(matvec_j, vecmat_j, solve_j, tsolve_j), n_aux=n_aux)
    x = tree_util.tree_unflatten(tree, out[:len(b_flat)])
    if has_aux:
        return x, tree_util.tree_unflatten(aux_trees[0], out[len(b_flat):])
    return x
