"""The remat primitive behind jax.checkpoint: a call whose linearisation recomputes instead of storing.

`remat2` holds a ClosedJaxpr. Evaluated, it runs the jaxpr; lowered, the jaxpr is inlined. Its JVP is
a remat of the JVP jaxpr. Under partial evaluation (reverse mode) the JVP jaxpr is split by the
checkpoint policy: the known side computes the primal outputs and only the values the policy saves
(plus the known inputs) as residuals; the unknown side, recorded as one `differentiated` remat
equation, recomputes every other primal value it needs from those residuals. Its transpose splits
the recorded jaxpr again (non-linear recomputation, then the linear part transposed), bound as one
remat equation, so the recomputation happens in the backward pass.
"""
import weakref

from xjax._src import core
from xjax._src.interpreters import ad, partial_eval as pe
from xjax._src.interpreters.graph_lowering import HAS_BARRIER, inline_jaxpr_lowering, jaxpr_is_lowerable
from xjax._src.jaxpr import (ClosedJaxpr, Jaxpr, Literal, eval_jaxpr, literal_value, live_equations,
                             memoize_per_jaxpr)


def _remat_abstract_eval(*avals, jaxpr, **_):
    return jaxpr.out_avals


_live_jaxprs = weakref.WeakKeyDictionary()


def _remat_impl(*args, jaxpr, **_):
    # without its dead equations, as JAX's: one that would raise when run (custom_lin, the JVP of a
    # custom_vjp function whose result the checkpointed function drops) does not run
    live = memoize_per_jaxpr(_live_jaxprs, jaxpr, "dce", lambda: dce_jaxpr(jaxpr))
    return eval_jaxpr(live.jaxpr, live.consts, *args)


_inline = inline_jaxpr_lowering("jaxpr")


def _remat_lowering(lowerer, eqn, ins):
    """The jaxpr inline. A recomputation (a differentiated remat) with prevent_cse reads its operands
    through an optimization_barrier, as JAX lowers it: otherwise CSE would merge the recomputed values
    with the forward pass's, which would then stay alive until the backward pass (no remat at all)."""
    p = eqn.params
    flags = p["prevent_cse"]
    flags = [flags] * len(ins) if isinstance(flags, bool) else list(flags)
    picked = [i for i, f in enumerate(flags) if f]
    if p["differentiated"] and picked and HAS_BARRIER:
        ins = list(ins)
        for i, v in zip(picked, lowerer.op("optimization_barrier", *[ins[i] for i in picked])):
            ins[i] = v
    return _inline(lowerer, eqn, ins)


def _remat_pp(eqn, ctx):
    p = eqn.params
    return [("differentiated", p["differentiated"]), ("jaxpr", p["jaxpr"]), ("policy", p["policy"]),
            ("prevent_cse", p["prevent_cse"])]


def _cse_flags(prevent_cse, keep, extra_front=0, extra_back=0):
    """prevent_cse for a derived equation: per-operand flags follow the operands kept (new ones: True)."""
    if isinstance(prevent_cse, bool):
        return prevent_cse
    kept = tuple(p for p, k in zip(prevent_cse, keep) if k)
    return (True,) * extra_front + kept + (True,) * extra_back


def _remat_jvp(primals, tangents, *, jaxpr, prevent_cse, differentiated, policy):
    nonzeros = [type(t) is not ad.Zero for t in tangents]
    jvp_closed, out_nonzeros = ad.jvp_jaxpr(jaxpr, nonzeros)
    nz_tangents = [t for t in tangents if type(t) is not ad.Zero]
    cse = _cse_flags(prevent_cse, [True] * len(primals), extra_back=len(nz_tangents))
    outs = remat_p.bind(*primals, *nz_tangents, jaxpr=jvp_closed, prevent_cse=cse, differentiated=differentiated,
                        policy=policy)
    n = len(jaxpr.out_avals)
    rest = iter(outs[n:])
    return outs[:n], [next(rest) if nz else ad.Zero(ad.tangent_aval(a))
                      for a, nz in zip(jaxpr.out_avals, out_nonzeros)]


def _remat_partial_eval(trace, args, unknown, *, jaxpr, prevent_cse, differentiated, policy):
    """Known outputs and the saved residuals computed now; the rest recorded as one remat equation."""
    known, staged, out_unknowns, res_sources = remat_partial_eval_jaxpr(jaxpr, unknown, policy)
    known_outs = _eval_in_parent(trace, known, [a for a, u in zip(args, unknown) if not u])
    split = len(known_outs) - len(res_sources)
    staged_args = [*known_outs[split:], *(a for a, u in zip(args, unknown) if u)]
    cse = prevent_cse
    if not isinstance(cse, bool):  # a saved input keeps its flag, as JAX keeps it
        cse = tuple(True if i is None else cse[i] for i in res_sources) + _cse_flags(cse, unknown)
    params = dict(jaxpr=staged, prevent_cse=cse, differentiated=True, policy=policy)
    unknown_outs = pe.DynamicJaxprTrace.process_primitive(trace, remat_p, staged_args, params)
    k, u = iter(known_outs[:split]), iter(unknown_outs)
    return [next(u) if unk else next(k) for unk in out_unknowns]


def _eval_in_parent(trace, closed, args):
    """Evaluates a jaxpr by binding each equation in the trace's parent (through `bind_in_parent`, so an
    enclosing remat split sees, and may recompute, each of them)."""
    jaxpr = closed.jaxpr
    env = dict(zip(jaxpr.constvars, closed.consts))
    env.update(zip(jaxpr.invars, args))

    def read(a):
        return _literal(a) if type(a) is Literal else env[a]

    for eqn in jaxpr.eqns:
        out = trace.bind_in_parent(eqn.primitive, [read(a) for a in eqn.invars], eqn.params)
        env.update(zip(eqn.outvars, out if eqn.primitive.multiple_results else [out]))
    return [read(a) for a in jaxpr.outvars]


def _literal(lit):
    return literal_value(lit)


def _remat_transpose(cts, *args, jaxpr, prevent_cse, differentiated, policy):
    linear = [ad.is_undefined(a) for a in args]
    ct_nonzeros = [type(c) is not ad.Zero for c in cts]
    t_closed = transpose_with_recompute(jaxpr, linear, ct_nonzeros)
    ins = [a for a, lin in zip(args, linear) if not lin] + [c for c in cts if type(c) is not ad.Zero]
    cse = _cse_flags(prevent_cse, [not lin for lin in linear], extra_back=sum(ct_nonzeros))
    outs = iter(remat_p.bind(*ins, jaxpr=t_closed, prevent_cse=cse, differentiated=True, policy=policy))
    return [next(outs) if lin else None for lin in linear]


remat_p = core.Primitive("remat2", multiple_results=True)
remat_p.def_rules(abstract_eval=_remat_abstract_eval, impl=_remat_impl, jaxpr_lowering=_remat_lowering,
                  can_lower=lambda params: jaxpr_is_lowerable(params["jaxpr"].jaxpr), pp_params=_remat_pp,
                  jvp=_remat_jvp, partial_eval=_remat_partial_eval, transpose=_remat_transpose)


# ---- splitting a jaxpr by a policy ----------------------------------------------------------------

class RematTrace(pe.LinearizeTrace):
    """A LinearizeTrace that remembers how its parent computed each known value, so that the unknown
    side recomputes the values the policy does not save instead of reading them as residuals.

    A policy is called as policy(primitive, *input avals, **params) -> whether the outputs may be
    saved. A policy may also have `unsaved_inputs(primitive, params)`: True where an equation's inputs
    must not be saved either (naming a value not to save names what computes it).
    """

    def __init__(self, policy, parent):
        super().__init__(None, parent)
        self.policy = policy
        self.recipes = {}  # id(known value) -> (position, primitive, args, params, outputs); outputs keep ids alive
        self.saved = set()  # ids of known values the unknown side reads as residuals
        self.recomputed = {}  # id(known value) -> its tracer on the unknown side
        self.positions = []  # of the recorded equations in the program: recomputations keep their place
        self.known_count = 0

    def _place_new_equations(self, position):
        self.positions.extend([position] * (len(self.eqns) - len(self.positions)))

    def bind_in_parent(self, primitive, args, params):
        self._place_new_equations(self.known_count)
        self.known_count += 1
        out = super().bind_in_parent(primitive, args, params)
        outs = out if primitive.multiple_results else [out]
        recipe = (self.known_count - 1, primitive, list(args), params, outs)
        save = primitive.has_effect or bool(self.policy(primitive, *[core.get_aval(a) for a in args], **params))
        for o in outs:
            self.recipes[id(o)] = recipe
            if save:
                self.saved.add(id(o))
        unsaved_inputs = getattr(self.policy, "unsaved_inputs", None)
        if unsaved_inputs is not None and unsaved_inputs(primitive, params):
            for a in args:
                self.saved.discard(id(a))
        return out

    def to_atom(self, x):
        if not self.is_unknown(x) and id(x) in self.recipes and id(x) not in self.saved:
            return self._recompute(x).var
        return super().to_atom(x)

    def _recompute(self, x):
        got = self.recomputed.get(id(x))
        if got is not None:
            return got
        position, primitive, args, params, outs = self.recipes[id(x)]
        if "fun" in params:  # a custom derivative call bound lazily: record its staged form
            args, params = primitive.stage(args, params)
        self._place_new_equations(self.known_count)
        new = pe.DynamicJaxprTrace.process_primitive(self, primitive, args, params)
        self._place_new_equations(position)
        for o, n in zip(outs, new if primitive.multiple_results else [new]):
            self.recomputed[id(o)] = n
        return self.recomputed[id(x)]

    def in_program_order(self):
        """Puts the recorded equations in the order of the program (a valid order: known values never
        depend on unknown ones), so recomputations read as the forward pass did."""
        self._place_new_equations(self.known_count)
        order = sorted(range(len(self.eqns)), key=lambda i: (self.positions[i], i))
        self.eqns = [self.eqns[i] for i in order]
        self.positions = [self.positions[i] for i in order]


_remat_splits = weakref.WeakKeyDictionary()


def remat_partial_eval_jaxpr(closed, unknowns, policy):
    """(known: known ins -> known outs + residuals, staged: residuals + unknown ins -> unknown outs,
    which outputs are unknown, for each residual the position of the input it is or None), split by
    `policy` (None: save nothing). Memoised."""
    per = _remat_splits.get(closed)
    if per is None:
        per = _remat_splits[closed] = {}
    key = (tuple(unknowns), policy)
    try:
        got = per.get(key)
    except TypeError:  # an unhashable policy: split every time
        key, got = None, None
    if got is not None:
        return got
    known_trace = pe.DynamicJaxprTrace(None, core.current_trace())
    rt = RematTrace(policy if policy is not None else _nothing_saveable, known_trace)
    ins = [rt.new_arg(a) if u else known_trace.new_arg(a) for a, u in zip(closed.in_avals, unknowns)]
    with core.new_trace(known_trace), core.new_trace(rt):
        outs = eval_jaxpr(closed.jaxpr, closed.consts, *ins)
        out_unknowns = [rt.is_unknown(o) for o in outs]
        rt.in_program_order()
        staged, residuals = pe.split_tracer_consts(rt.to_closed_jaxpr([o for o, u in zip(outs, out_unknowns) if u]))
        staged, residuals = _residuals_in_order(staged, residuals, known_trace)
        known = known_trace.to_closed_jaxpr([o for o, u in zip(outs, out_unknowns) if not u] + residuals)
    positions = [i for i, u in enumerate(unknowns) if not u]
    inputs = {v: positions[i] for i, v in enumerate(known_trace.invars)}
    sources = tuple(inputs.get(getattr(r, "var", None)) for r in residuals)
    got = (dce_jaxpr(known), staged, out_unknowns, sources)
    if key is not None:
        per[key] = got
    return got


def _residuals_in_order(staged, residuals, known_trace):
    """Residuals ordered as JAX orders them: saved intermediates in program order, then saved inputs."""
    made_by = {v: i for i, e in enumerate(known_trace.eqns) for v in e.outvars}
    inputs = {v: i for i, v in enumerate(known_trace.invars)}

    def key(i):
        v = getattr(residuals[i], "var", None)
        return (1, inputs[v]) if v in inputs else (0, made_by.get(v, -1))

    order = sorted(range(len(residuals)), key=key)
    if order == list(range(len(residuals))):
        return staged, residuals
    j = staged.jaxpr
    n = len(residuals)
    invars = [j.invars[i] for i in order] + j.invars[n:]
    return ClosedJaxpr(Jaxpr(j.constvars, invars, j.outvars, j.eqns), staged.consts), [residuals[i] for i in order]


def _nothing_saveable(*_, **__):
    return False


def dce_jaxpr(closed):
    """The jaxpr without equations whose results nobody reads (effects are kept)."""
    jaxpr = closed.jaxpr
    kept, live = live_equations(jaxpr)
    if len(kept) == len(jaxpr.eqns):
        return closed
    consts = [(v, c) for v, c in zip(jaxpr.constvars, closed.consts) if v in live]
    new = Jaxpr([v for v, _ in consts], jaxpr.invars, jaxpr.outvars, kept)
    return ClosedJaxpr(new, [c for _, c in consts])


# ---- transposing a jaxpr that recomputes its non-linear part --------------------------------------

_transposes = weakref.WeakKeyDictionary()


def transpose_with_recompute(closed, linear, ct_nonzeros):
    """ClosedJaxpr of (non-linear args, nonzero output cotangents) -> cotangents of the linear args, for a
    jaxpr that also computes non-linear values (a remat's recomputation): those are computed first,
    then the linear part is transposed. Memoised per jaxpr and pattern."""
    per = _transposes.get(closed)
    if per is None:
        per = _transposes[closed] = {}
    key = (tuple(linear), tuple(ct_nonzeros))
    got = per.get(key)
    if got is not None:
        return got
    known, unknown, out_unknowns, num_res = pe.partial_eval_jaxpr(closed, linear)
    n = sum(1 for lin in linear if not lin)
    u = unknown.jaxpr
    view = Jaxpr(u.constvars + u.invars[:num_res], u.invars[num_res:], u.outvars, u.eqns)

    def fun(*args):
        outs = eval_jaxpr(known.jaxpr, known.consts, *args[:n])
        residuals = outs[len(outs) - num_res:]
        given = iter(args[n:])
        cts = [next(given) if nz else ad.Zero(a) for a, nz in zip(closed.out_avals, ct_nonzeros)]
        cts = [c for c, unk in zip(cts, out_unknowns) if unk]
        return [ad.instantiate(c) for c in ad.backward_pass(view, list(unknown.consts) + residuals, cts)]

    avals = ([a for a, lin in zip(closed.in_avals, linear) if not lin]
             + [a for a, nz in zip(closed.out_avals, ct_nonzeros) if nz])
    per[key] = got = pe.trace_to_jaxpr(fun, avals)
    return got


# ---- batching (vmap) ------------------------------------------------------------------------------
from xjax._src.interpreters import batching  # noqa: E402


def _remat_batch(axis, vals, dims, *, jaxpr, prevent_cse, differentiated, policy):
    """One remat of the batched jaxpr (memoised per jaxpr and pattern)."""
    in_batched = [d is not batching.not_mapped for d in dims]
    vals = [batching.moveaxis(v, d, 0) if b else v for v, d, b in zip(vals, dims, in_batched)]
    batched, out_batched = batching.batch_jaxpr(jaxpr, axis, in_batched)
    outs = remat_p.bind(*vals, jaxpr=batched, prevent_cse=prevent_cse, differentiated=differentiated, policy=policy)
    return outs, [0 if b else batching.not_mapped for b in out_batched]


remat_p.def_rules(batch=_remat_batch)
