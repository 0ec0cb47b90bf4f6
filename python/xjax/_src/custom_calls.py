"""The primitives behind custom_jvp and custom_vjp: custom_jvp_call, custom_vjp_call and custom_lin.

A call primitive is bound in one of two forms:
  - lazy (params hold the Python function `fun` on flat leaves): where values are concrete -- eager
    evaluation, jvp/grad of concrete values -- the function runs, or only its rule runs, without
    being traced, so Python control flow on values works in them as in JAX;
  - staged: where a jaxpr is being built (jit, make_jaxpr, ...) the function is traced to
    `call_jaxpr`, and the values it closes over become leading operands (`num_consts`). Evaluating
    the equation runs the jaxpr; lowering inlines it, as jit's does.
Each trace decides what a lazy call does (`Trace.process_custom_call`, as JAX's process_custom_jvp_call):
under a JVPTrace the custom rule runs instead of the function; under a BatchTrace the function and
its rules are wrapped to run batched (lazily too). custom_vjp's rule runs `fwd` on the primals and
binds custom_lin on the residuals and tangents: reverse mode records custom_lin into the linear
jaxpr and its transpose calls `bwd`; evaluating it (forward mode) is JAX's TypeError.
"""
from xjax._src import core, errors
from xjax._src.interpreters import ad, batching
from xjax._src.interpreters import partial_eval as pe
from xjax._src.interpreters.graph_lowering import inline_jaxpr_lowering, jaxpr_is_lowerable
from xjax._src.jaxpr import eval_jaxpr
from xjax._src.lax import reduction
from xjax._src.remat import transpose_with_recompute

_JVP_OF_VJP = "can't apply forward-mode autodiff (jvp) to a custom_vjp function."


class CustomCallPrimitive(core.Primitive):
    """A primitive bound lazily with a Python function, staged to a jaxpr only where one is built."""

    __slots__ = ()

    def __init__(self, name):
        super().__init__(name, multiple_results=True)

    def bind(self, *args, **params):
        if "fun" not in params:
            return core.Primitive.bind(self, *args, **params)
        return core.current_trace().process_custom_call(self, args, params)  # each trace decides

    def stage(self, args, params):
        return stage(args, params)

    def process_batched(self, trace, args, params):
        """Under a BatchTrace: the batching rule wraps the function and its rules to run batched, lazily."""
        vals, dims = zip(*[trace.lift(a) for a in args]) if args else ((), ())
        if self is not custom_jvp_call_p and all(d is batching.not_mapped for d in dims):
            # Nothing batched: custom_vjp runs unbatched unless it closes over values of this vmap.
            if trace.parent.runs_custom_calls_lazily:
                try:
                    return trace.bind_in_parent(self, list(vals), params)
                except errors.UnexpectedTracerError:
                    pass  # it does (it ran with one of them as a constant): batch it (below)
            else:
                ops, staged = stage(list(vals), params)
                if not any(type(c) is batching.BatchTracer and c._trace.tag is trace.tag
                           for c in ops[:staged["num_consts"]]):
                    return trace.bind_in_parent(self, ops, staged)
        # custom_jvp always runs its batching rule (as JAX's process_custom_jvp_call), which leaves
        # unbatched the outputs that do not depend on the batch.
        _batch_traces.append(trace)
        try:
            with core.set_current_trace(trace.parent):
                outs, out_dims = self.batch(trace.axis_data, list(vals), list(dims), **params)
        finally:
            _batch_traces.pop()
        return [trace.pack(v, d) for v, d in zip(outs, out_dims)]


def stage(args, params):
    """(operands, params) of the staged form: the function traced on the args' abstract values."""
    fun = params["fun"]
    closed = pe.trace_to_jaxpr(fun, [core.get_aval(a) for a in args], pe.DebugInfo(fun.traced_for, fun.fn),
                               what=f"function {pe.func_src_info(fun.fn)} traced for {fun.traced_for}")
    closed, consts = pe.convert_constvars(closed)  # as JAX: every value it closes over is an operand
    staged = {k: v for k, v in params.items() if k != "fun"}
    return [*consts, *args], dict(staged, call_jaxpr=closed, num_consts=len(consts))


class SymbolicZero:
    """A zero tangent or cotangent that is known statically, passed to rules defined with symbolic_zeros=True.

    It has the shape and dtype of the value it stands for; it is not an array (jnp functions reject it).
    """

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return "SymbolicZero"

    def __getattr__(self, name):
        if name == "aval":
            raise AttributeError(name)
        return getattr(self.aval, name)

    @staticmethod
    def from_primal_value(val):
        return SymbolicZero(ad.tangent_aval(core.get_aval(val)))


class FlatFun:
    """A function on flat leaves standing for a user function; prints as the user function's name."""

    __slots__ = ("call", "fn", "traced_for")

    def __init__(self, call, fn, traced_for=None):
        self.call = call
        self.fn = fn  # the user function (names and source positions in messages)
        self.traced_for = traced_for

    @property
    def name(self):
        return pe.fun_name(self.fn)

    def __call__(self, *args):
        return self.call(*args)

    def __repr__(self):
        return self.name


def closure_error(kind):
    """JAX's error for differentiating a custom rule with respect to a value its function closes over."""
    rule = "JVP rule" if kind == "custom_jvp" else "VJP rule"
    return TypeError(
        f"Detected differentiation of a {kind} function with respect to a closed-over value. That isn't "
        f"supported because the custom {rule} only specifies how to differentiate the {kind} function with "
        f"respect to explicit input parameters. Try passing the closed-over value into the {kind} function as "
        f"an argument, and adapting the {kind} rule.")


# ---- shared by both call primitives (staged form) ---------------------------------------------

def _call_abstract_eval(*avals, call_jaxpr, **_):
    return call_jaxpr.out_avals


def _call_impl(*args, call_jaxpr, **_):
    return eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *args)


_call_lowering = inline_jaxpr_lowering("call_jaxpr")


def _call_can_lower(params):
    return jaxpr_is_lowerable(params["call_jaxpr"].jaxpr)


def _call_transpose(cts, *args, call_jaxpr, **_):
    """Where a call is applied to tangents (a rule calling a custom function linearly): transpose its jaxpr."""
    linear = [ad.is_undefined(a) for a in args]
    t_closed = transpose_with_recompute(call_jaxpr, linear, [type(c) is not ad.Zero for c in cts])
    ins = [a for a, lin in zip(args, linear) if not lin] + [c for c in cts if type(c) is not ad.Zero]
    outs = iter(eval_jaxpr(t_closed.jaxpr, t_closed.consts, *ins))
    return [next(outs) if lin else None for lin in linear]


def _pp(rule_params):
    def pp_params(eqn, ctx):
        p = eqn.params
        pairs = [("name", p["name"])]
        for k in sorted([*rule_params, "call_jaxpr", "num_consts", "symbolic_zeros"]):
            if k == "num_consts" and not p[k]:
                continue
            v = p[k]
            pairs.append((k, v.name if isinstance(v, FlatFun) else v))
        return pairs

    return pp_params


# ---- custom_jvp_call ----------------------------------------------------------------------------

def _custom_jvp_call_jvp(primals, tangents, *, jvp, num_consts=0, **_):
    if any(type(t) is not ad.Zero for t in tangents[:num_consts]):
        raise closure_error("custom_jvp")
    return jvp(primals[num_consts:], tangents[num_consts:])


custom_jvp_call_p = CustomCallPrimitive("custom_jvp_call")
custom_jvp_call_p.def_rules(abstract_eval=_call_abstract_eval, impl=_call_impl, jaxpr_lowering=_call_lowering,
                            can_lower=_call_can_lower, pp_params=_pp(("jvp",)), jvp=_custom_jvp_call_jvp,
                            transpose=_call_transpose)


# ---- custom_vjp_call ----------------------------------------------------------------------------

def _custom_vjp_call_jvp(primals, tangents, *, fwd, bwd, symbolic_zeros, num_consts=0, **_):
    if any(type(t) is not ad.Zero for t in tangents[:num_consts]):
        raise closure_error("custom_vjp")
    primals, tangents = primals[num_consts:], tangents[num_consts:]
    nonzeros = tuple(type(t) is not ad.Zero for t in tangents)
    outs, res, res_tree = fwd(primals, nonzeros)
    out_avals = tuple(ad.tangent_aval(core.get_aval(o)) for o in outs)
    lin_outs = []
    if any(a.dtype != ad.float0 for a in out_avals):
        lin_outs = custom_lin_p.bind(*res, *(t for t in tangents if type(t) is not ad.Zero), num_res=len(res),
                                     res_tree=res_tree, bwd=bwd, out_avals=out_avals, in_nonzeros=nonzeros,
                                     symbolic_zeros=symbolic_zeros)
    lin = iter(lin_outs)
    return outs, [ad.Zero(a) if a.dtype == ad.float0 else next(lin) for a in out_avals]


custom_vjp_call_p = CustomCallPrimitive("custom_vjp_call")
custom_vjp_call_p.def_rules(abstract_eval=_call_abstract_eval, impl=_call_impl, jaxpr_lowering=_call_lowering,
                            can_lower=_call_can_lower, pp_params=_pp(("fwd", "bwd")), jvp=_custom_vjp_call_jvp)


# ---- custom_lin: the tangent map of a custom_vjp, defined only through its transpose (bwd) --------

def _custom_lin_abstract_eval(*avals, out_avals, **_):
    return [a for a in out_avals if a.dtype != ad.float0]


def _custom_lin_impl(*args, **params):
    raise TypeError(_JVP_OF_VJP)


def _custom_lin_lowering(ctx, *args, **params):
    # As JAX's: a program that would run a custom_vjp function in forward mode is refused when it is
    # compiled, whether or not the call runs (an untaken cond branch too).
    raise TypeError(_JVP_OF_VJP)


def _custom_lin_transpose(cts, *args, num_res, res_tree, bwd, out_avals, in_nonzeros, symbolic_zeros):
    given = iter(cts)
    full = [ad.Zero(a) if a.dtype == ad.float0 else next(given) for a in out_avals]
    if symbolic_zeros:
        full = [SymbolicZero(c.aval) if type(c) is ad.Zero else c for c in full]
    else:
        full = [ad.instantiate(c) for c in full]
    cts_in = bwd(res_tree, list(args[:num_res]), full)
    return [None] * num_res + [c for c, nz in zip(cts_in, in_nonzeros) if nz]


def _custom_lin_pp(eqn, ctx):
    p = eqn.params
    return [("bwd", p["bwd"].name), ("in_zeros", [not nz for nz in p["in_nonzeros"]]), ("num_res", p["num_res"]),
            ("symbolic_zeros", p["symbolic_zeros"])]


class CustomLinPrimitive(core.Primitive):
    """custom_lin: where partial evaluation knows all its tangents already, they do not depend on the
    linearisation's inputs, so the linear map sends them to zero (evaluating it would be forward mode)."""

    __slots__ = ()

    def bind(self, *args, **params):
        trace = core.current_trace()
        if isinstance(trace, pe.LinearizeTrace) and not any(trace.is_unknown(a) for a in args):
            with core.set_current_trace(trace.parent):
                return [ad.zeros_like_aval(a) for a in _custom_lin_abstract_eval(**params)]
        return core.Primitive.bind(self, *args, **params)


custom_lin_p = CustomLinPrimitive("custom_lin", multiple_results=True)
custom_lin_p.def_rules(abstract_eval=_custom_lin_abstract_eval, impl=_custom_lin_impl, pp_params=_custom_lin_pp,
                       transpose=_custom_lin_transpose, lowering=_custom_lin_lowering)


# ---- batching (vmap) ----------------------------------------------------------------------------
# The function and each rule are wrapped to run under a BatchTrace of the same axis when they are
# called; every output, tangent and residual they produce is batched along axis 0 (instantiated
# where it was not), so the function and its rules agree on where the batch axis is.

def _batched_aval(aval, size):
    return aval.update(shape=(size, *aval.shape))


def _example_aval(aval):
    return aval.update(shape=aval.shape[1:])


def _at_front(axis, pairs):
    """Lifted (value, dim) pairs as values batched along axis 0 (bound in the current trace)."""
    return [batching.bdim_at_front(v, d, axis.size) for v, d in pairs]


# The BatchTraces whose batching rule for a lazy custom call is running. The function and rules run
# later under a new BatchTrace with the tag of the vmap's own (as JAX's batch_subtrace does): the
# values of that vmap they close over are then batched values of theirs, not escaped tracers.
_batch_traces = []


def _vmap_tag(axis):
    return _batch_traces[-1].tag if _batch_traces and _batch_traces[-1].axis_data is axis else None


def _batch_context(axis, tag=None):
    trace = batching.BatchTrace(core.current_trace(), axis, tag)

    def wrap(x, batched):
        return batching.BatchTracer(trace, x, 0) if batched else x

    def zero(z, batched):
        """A symbolic zero (ad.Zero or SymbolicZero) of a batched value, for one example."""
        return type(z)(_example_aval(z.aval)) if batched else z

    return trace, wrap, zero


def _run(axis, trace, fn):
    with core.extend_axis_env(axis.name, axis.size), core.new_trace(trace):
        return fn()


class _OutDims:
    """Where a lazy custom call's outputs are batched: fixed by whichever of the function and its
    JVP rule (custom_vjp: its fwd) runs first (not_mapped for an output that depends on no batched
    value, as JAX's batch_subtrace), later runs conforming to it. None in `dims` until then."""

    __slots__ = ("dims",)

    def __init__(self, dims=None):
        self.dims = dims

    def fix(self, dims):
        if self.dims is None:
            self.dims = list(dims)
        return self.dims

    @staticmethod
    def conform(axis, v, d, want):
        if want is batching.not_mapped:
            if d is not batching.not_mapped:
                raise NotImplementedError("a custom_jvp/custom_vjp function under vmap gave an unbatched output "
                                          "where its JVP rule (or fwd) gives a batched one")
            return v
        return batching.bdim_at_front(v, d, axis.size)


def _batched_fun(axis, fun, in_batched, tag=None, out_dims=None):
    def call(*args):
        trace, wrap, _ = _batch_context(axis, tag)
        outs = _run(axis, trace, lambda: fun(*[wrap(a, b) for a, b in zip(args, in_batched)]))
        pairs = [trace.lift(o) for o in outs]
        if out_dims is None:
            return _at_front(axis, pairs)
        want = out_dims.fix([batching.not_mapped if d is batching.not_mapped else 0 for _, d in pairs])
        return [out_dims.conform(axis, v, d, w) for (v, d), w in zip(pairs, want)]

    return FlatFun(call, fun.fn, fun.traced_for)


def _batched_jvp(axis, jvp, in_batched, tag=None, out_dims=None):
    def call(primals, tangents):
        trace, wrap, zero = _batch_context(axis, tag)

        def run():
            ps = [wrap(p, b) for p, b in zip(primals, in_batched)]
            ts = [zero(t, b) if type(t) is ad.Zero else wrap(t, b) for t, b in zip(tangents, in_batched)]
            p_out, t_out = jvp(ps, ts)
            return [trace.lift(p) for p in p_out], [t if type(t) is ad.Zero else trace.lift(t) for t in t_out]

        p_out, t_out = _run(axis, trace, run)
        unmapped = batching.not_mapped
        # an output is batched where its primal or its tangent is
        want = out_dims.fix([unmapped if pd is unmapped and (type(t) is ad.Zero or t[1] is unmapped) else 0
                             for (_, pd), t in zip(p_out, t_out)])
        p_out = [out_dims.conform(axis, v, d, w) for (v, d), w in zip(p_out, want)]
        t_out = [(t if w is unmapped else ad.Zero(_batched_aval(t.aval, axis.size))) if type(t) is ad.Zero
                 else out_dims.conform(axis, t[0], t[1], w) for t, w in zip(t_out, want)]
        return p_out, t_out

    return FlatFun(call, jvp.fn, jvp.traced_for)


def _batched_fwd(axis, fwd, in_batched, tag, out_dims):
    def call(primals, nonzeros):
        trace, wrap, _ = _batch_context(axis, tag)

        def run():
            outs, res, res_tree = fwd([wrap(p, b) for p, b in zip(primals, in_batched)], nonzeros)
            return [trace.lift(o) for o in outs], [trace.lift(r) for r in res], res_tree

        outs, res, res_tree = _run(axis, trace, run)
        want = out_dims.fix([batching.not_mapped if d is batching.not_mapped else 0 for _, d in outs])
        return [out_dims.conform(axis, v, d, w) for (v, d), w in zip(outs, want)], _at_front(axis, res), res_tree

    return FlatFun(call, fwd.fn, fwd.traced_for)


def _batched_bwd(axis, bwd, res_batched, in_batched, tag=None, out_dims=None):
    """bwd on residuals batched where res_batched says and output cotangents batched along 0 where
    the outputs are (out_dims; None: all are, as every residual is for res_batched None); an input
    that is not batched gets the sum over the batch of its per-example cotangents. As JAX's: an
    output that depends on no batched value has one cotangent for the whole batch."""
    def call(res_tree, res, cts):
        trace, wrap, zero = _batch_context(axis, tag)

        def run():
            rs = [wrap(r, b) for r, b in zip(res, [True] * len(res) if res_batched is None else res_batched)]
            cts_batched = [True] * len(cts) if out_dims is None else [d is not batching.not_mapped
                                                                         for d in out_dims.fix([0] * len(cts))]
            cs = [zero(c, b) if type(c) in (ad.Zero, SymbolicZero) else wrap(c, b) for c, b in zip(cts, cts_batched)]
            return [c if type(c) is ad.Zero else trace.lift(c) for c in bwd(res_tree, rs, cs)]

        out = []
        for c, b in zip(_run(axis, trace, run), in_batched):
            if type(c) is ad.Zero:
                out.append(ad.Zero(_batched_aval(c.aval, axis.size)) if b else c)
            elif b:
                out.append(_at_front(axis, [c])[0])
            else:
                v, d = c
                out.append(v if d is batching.not_mapped else reduction.reduce_sum(v, (d,)))
        return out

    return FlatFun(call, bwd.fn, bwd.traced_for)


def _moved_to_front(vals, dims):
    return [v if d is batching.not_mapped else batching.moveaxis(v, d, 0) for v, d in zip(vals, dims)]


def _custom_call_batch(prim):
    """The batching rule of custom_jvp_call or custom_vjp_call, lazy or staged."""

    def rule(axis, vals, dims, **params):
        in_batched = [d is not batching.not_mapped for d in dims]
        n_consts = params.get("num_consts", 0)
        new = dict(params)
        tag = _vmap_tag(axis)
        if "fun" in params:
            out_dims = _OutDims()
            new["fun"] = _batched_fun(axis, params["fun"], in_batched, tag, out_dims)
        else:
            new["call_jaxpr"], _ = batching.batch_jaxpr(params["call_jaxpr"], axis, in_batched, True)
            out_dims = _OutDims([0] * len(params["call_jaxpr"].out_avals))
        primal_batched = in_batched[n_consts:]
        if prim is custom_jvp_call_p:
            new["jvp"] = _batched_jvp(axis, params["jvp"], primal_batched, tag, out_dims)
        else:
            new["fwd"] = _batched_fwd(axis, params["fwd"], primal_batched, tag, out_dims)
            new["bwd"] = _batched_bwd(axis, params["bwd"], None, primal_batched, tag, out_dims)
        outs = prim.bind(*_moved_to_front(vals, dims), **new)
        return outs, out_dims.fix([0] * len(outs))

    return rule


def _custom_lin_batch(axis, vals, dims, *, num_res, res_tree, bwd, out_avals, in_nonzeros, symbolic_zeros):
    res_batched = [d is not batching.not_mapped for d in dims[:num_res]]
    t_batched = iter(d is not batching.not_mapped for d in dims[num_res:])
    in_batched = [next(t_batched) if nz else False for nz in in_nonzeros]
    outs = custom_lin_p.bind(*_moved_to_front(vals, dims), num_res=num_res, res_tree=res_tree,
                             bwd=_batched_bwd(axis, bwd, res_batched, in_batched),
                             out_avals=tuple(_batched_aval(a, axis.size) for a in out_avals), in_nonzeros=in_nonzeros,
                             symbolic_zeros=symbolic_zeros)
    return outs, [0] * len(outs)


custom_jvp_call_p.def_rules(batch=_custom_call_batch(custom_jvp_call_p))
custom_vjp_call_p.def_rules(batch=_custom_call_batch(custom_vjp_call_p))
custom_lin_p.def_rules(batch=_custom_lin_batch)
