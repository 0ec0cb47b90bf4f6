"""xjax.interpreters.partial_eval (jax.interpreters.partial_eval): tracing Python functions to
jaxprs, whole (`trace_to_jaxpr_dynamic`) or split into what is known now and what is not
(`trace_to_jaxpr_nounits`), on xjax's jaxpr traces."""
from typing import Any as _Any

from xjax._src import core as _core
from xjax._src.interpreters import partial_eval as _pe
from xjax._src.interpreters.partial_eval import DynamicJaxprTracer  # noqa: F401
from xjax._src.jaxpr import Jaxpr as _Jaxpr, Var as _Var, live_equations as _live_equations

JaxprTracer = DynamicJaxprTracer  # xjax's partial evaluation records with the same tracers
Val = _Any  # a known value


class PartialVal(tuple):
    """(None, value) for a value known now, or (aval, None) for one known only by its type."""

    def __new__(cls, xs):
        aval, const = xs
        if (aval is None) == (const is None):
            raise ValueError("PartialVal: exactly one of (aval, const) must be None")
        return tuple.__new__(cls, xs)

    @classmethod
    def known(cls, const):
        return PartialVal((None, const))

    @classmethod
    def unknown(cls, aval):
        return PartialVal((aval, None))

    def is_known(self):
        return self[0] is None

    def get_known(self):
        return self[1] if self[0] is None else None

    def get_aval(self):
        return _core.get_aval(self[1]) if self[0] is None else self[0]


def trace_to_jaxpr_dynamic(fun, in_avals, *, keep_inputs=None, lower=False, auto_dce=False):
    """(jaxpr, out avals, consts) of the WrappedFun `fun` traced at in_avals."""
    if keep_inputs is not None and not all(keep_inputs):
        raise NotImplementedError("trace_to_jaxpr_dynamic: keep_inputs dropping inputs is not supported by xjax")
    closed = _pe.trace_to_jaxpr(fun.call_wrapped, list(in_avals), debug_info=None)
    return closed.jaxpr, list(closed.out_avals), list(closed.consts)


def trace_to_jaxpr_nounits(fun, pvals, instantiate=False):
    """Runs the WrappedFun `fun` on the known values now and records what depends on the unknown
    ones: (jaxpr of the unknown inputs -> unknown outputs, out PartialVals, the jaxpr's consts).
    instantiate (a bool or one per output) makes a known output unknown (an output of the jaxpr)."""
    trace = _pe.LinearizeTrace(None, _core.current_trace())
    args = [pv.get_known() if pv.is_known() else trace.new_arg(pv.get_aval()) for pv in pvals]
    with _core.new_trace(trace):
        outs = fun.call_wrapped(*args)
        inst = instantiate if isinstance(instantiate, (list, tuple)) else [instantiate] * len(outs)
        unknown = [trace.is_unknown(o) or bool(i) for o, i in zip(outs, inst)]
        closed = trace.to_closed_jaxpr([o for o, u in zip(outs, unknown) if u])
    out_pvals = [PartialVal.unknown(_core.get_aval(o)) if u else PartialVal.known(o) for o, u in zip(outs, unknown)]
    return closed.jaxpr, out_pvals, list(closed.consts)


def dce_jaxpr(jaxpr, used_outputs, instantiate=False):
    """(jaxpr computing only the used outputs from only the inputs they need, which inputs it kept)."""
    n_in, n_out = len(jaxpr.invars), len(jaxpr.outvars)
    used_outputs = [used_outputs] * n_out if isinstance(used_outputs, bool) else list(used_outputs)
    instantiate = [instantiate] * n_in if isinstance(instantiate, bool) else list(instantiate)
    outvars = [v for v, u in zip(jaxpr.outvars, used_outputs) if u]
    eqns, live = _live_equations(_Jaxpr(jaxpr.constvars, jaxpr.invars, outvars, jaxpr.eqns))
    used_inputs = [(type(v) is _Var and v in live) or i for v, i in zip(jaxpr.invars, instantiate)]
    invars = [v for v, u in zip(jaxpr.invars, used_inputs) if u]
    return _Jaxpr(jaxpr.constvars, invars, outvars, eqns), used_inputs


class _NoSuchRules(dict):
    """A JAX rule table for a mechanism xjax does not have: registering a rule there is an error,
    since it would be silently ignored."""

    def __init__(self, name):
        super().__init__()
        self.name = name

    def __setitem__(self, primitive, rule):
        raise NotImplementedError(f"partial_eval.{self.name}: xjax splits primitives by their own partial_eval "
                                  f"rule field; JAX's {self.name} are not supported")


custom_partial_eval_rules = _NoSuchRules("custom_partial_eval_rules")
partial_eval_jaxpr_custom_rules = _NoSuchRules("partial_eval_jaxpr_custom_rules")
dce_rules = _NoSuchRules("dce_rules")
