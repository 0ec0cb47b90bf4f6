"""Automatic differentiation: forward mode (JVPTrace), linearisation and transposition.

Forward mode carries (primal, tangent) pairs through a JVPTrace whose rules run with the parent
trace current. Reverse mode is JVP + partial evaluation + transposition, as in JAX:
  - `linearize` runs the JVP with its tangents living in a LinearizeTrace (partial_eval.py): the
    primal computation runs in the parent trace (eagerly, or into an enclosing jaxpr) and only the
    tangent equations are recorded, into a linear jaxpr whose constvars are the residuals;
  - `backward_pass` transposes that linear jaxpr equation by equation, in reverse.
Tangents and cotangents may be symbolic zeros (`Zero`), so no zeros are materialised for inputs
that do not influence an output. Integer and bool values have float0 tangents, always zero.
"""
import weakref

import numpy as np

from xjax._src import core, dtypes
from xjax._src.interpreters import partial_eval as pe
from xjax._src.interpreters.array_ops import ops
from xjax._src.jaxpr import Jaxpr, Literal, eval_jaxpr, literal_value, memoize_per_jaxpr
from xjax._src.placement import asarray

float0 = np.dtype([("float0", np.void, 0)])


class Zero:
    """A symbolic zero tangent or cotangent of abstract value `aval`."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"Zero({self.aval.str_short() if self.aval.dtype != float0 else 'float0'})"


class UndefinedPrimal:
    """In a transpose rule, the linear input whose cotangent is asked for."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"UndefinedPrimal({self.aval})"


def is_undefined(x):
    return type(x) is UndefinedPrimal


def is_differentiable(dtype):
    return dtypes.is_float(dtype) or dtypes.is_complex(dtype)


def tangent_aval(aval):
    """The aval of a tangent of a value of `aval`: itself for floats, float0 for integers and bools."""
    if is_differentiable(aval.dtype):
        return aval
    return core.ShapedArray(aval.shape, float0, False)


def zero_tangent(x):
    return Zero(tangent_aval(core.get_aval(x)))


def full_like_aval(aval, value):
    """An array of `aval` filled with Python scalar `value`, bound in the current trace (varying over
    the manual axes aval varies over, as JAX's full_like makes it)."""
    v = asarray(value, aval.dtype, aval.weak_type)
    sharding = getattr(aval, "_sharding", None)  # (a type split over Explicit mesh axes: JAX's out_sharding)
    v = ops.broadcast_in_dim(v, aval.shape, (), out_sharding=sharding) if aval.shape or sharding is not None else v
    vma = getattr(aval, "vma", ())
    return ops.pvary_p.bind(v, axes=vma) if vma and core.vma_axes() else v


def zeros_like_aval(aval):
    return full_like_aval(aval, 0)


def instantiate(t):
    """A tangent as an array (symbolic zeros become zeros); float0 zeros become NumPy float0 arrays."""
    if type(t) is not Zero:
        return t
    if t.aval.dtype == float0:
        return np.zeros(t.aval.shape, float0)
    return zeros_like_aval(t.aval)


def instantiate_zero(t):
    """A symbolic zero as zeros (float0 ones stay symbolic: they have no array form in the core)."""
    return zeros_like_aval(t.aval) if type(t) is Zero and t.aval.dtype != float0 else t


def instantiate_zero_tangent(t):
    """instantiate_zero for a tangent a rule passes on as a tangent (a loop's carried tangent): while
    linearising, the zeros are made in the linear jaxpr (as JAX's loop linearisation makes them), so
    they are computed when it is evaluated or transposed, not with the primal computation."""
    if type(t) is not Zero or t.aval.dtype == float0:
        return t
    trace = core.current_trace()
    tangent_side = getattr(trace, "tangent_side", None)
    if tangent_side is None:
        return zeros_like_aval(t.aval)
    with tangent_side():
        return zeros_like_aval(t.aval)


def add_tangents(a, b):
    """a + b for tangents or cotangents, either of which may be None or a symbolic zero."""
    if a is None or type(a) is Zero:
        return b
    if b is None or type(b) is Zero:
        return a
    return ops.add_any(a, b)


# ---- forward mode -------------------------------------------------------------------------------

class JVPTracer(core.Tracer):
    """A primal value and its tangent, inside one jvp."""

    __slots__ = ("primal", "tangent")

    def __init__(self, trace, primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    @property
    def aval(self):
        return getattr(self.primal, "traced_aval", None) or core.get_aval(self.primal)  # (a split array: its type)

    def to_concrete_value(self):
        return core.to_concrete_value(self.primal)

    def _no_concrete_value(self, conversion, *args):
        return getattr(self.primal, conversion)(*args)  # the primal's trace words the error

    def __repr__(self):
        return f"JVPTracer(primal={self.primal!r}, tangent={self.tangent!r})"


class JVPTrace(core.Trace):
    """Interprets primitives on (primal, tangent) pairs by their jvp rules."""

    runs_custom_calls_lazily = True

    def process_custom_call(self, primitive, args, params):
        return self.process_primitive(primitive, args, params)  # its jvp rule runs the custom rule

    def lift(self, x):
        """(primal, tangent) of x: values that are not this trace's tracers have zero tangents."""
        if type(x) is JVPTracer and x._trace.tag is self.tag:
            return x.primal, x.tangent
        return x, zero_tangent(x)

    def process_primitive(self, primitive, args, params):
        primals, tangents = [], []
        for a in args:
            p, t = self.lift(a)
            primals.append(p)
            tangents.append(t)
        if all(type(t) is Zero for t in tangents):
            return self.bind_in_parent(primitive, primals, params)
        rule = primitive.jvp
        if rule is None:
            raise NotImplementedError(f"Differentiation rule for '{primitive.name}' not implemented")
        with core.set_current_trace(self.parent):
            primal_out, tangent_out = rule(primals, tangents, **params)
        if primitive.multiple_results:
            return [self.pack(p, t) for p, t in zip(primal_out, tangent_out)]
        return self.pack(primal_out, tangent_out)

    def pack(self, primal, tangent):
        if tangent is None:
            tangent = zero_tangent(primal)
        return JVPTracer(self, primal, tangent)


# ---- rule helpers: each primitive's definition site calls one of these ---------------------------

def _rule_tangents(primitive, rules, ans, primals, tangents, params, with_ans):
    """Each operand's contribution (all computed first, as JAX does), then their sum."""
    parts = [rule(t, ans, *primals, **params) if with_ans else rule(t, *primals, **params)
             for rule, t in zip(rules, tangents) if rule is not None and type(t) is not Zero]
    out = None
    for c in parts:
        out = add_tangents(out, broadcast_to_aval(c, core.get_aval(ans)))
    return out


def defjvp(primitive, *rules):
    """JVP by per-operand rules rule_i(tangent_i, *primals, **params) (None: not differentiable)."""

    def jvp(primals, tangents, **params):
        ans = primitive.bind(*primals, **params)
        return ans, _rule_tangents(primitive, rules, ans, primals, tangents, params, False)

    primitive.def_rules(jvp=jvp)


def defjvp2(primitive, *rules):
    """As defjvp, with the primal output too: rule_i(tangent_i, ans, *primals, **params)."""

    def jvp(primals, tangents, **params):
        ans = primitive.bind(*primals, **params)
        return ans, _rule_tangents(primitive, rules, ans, primals, tangents, params, True)

    primitive.def_rules(jvp=jvp)


def defjvp_zero(primitive):
    """Outputs with zero tangents (comparisons, integer results, index computations)."""

    def jvp(primals, tangents, **params):
        ans = primitive.bind(*primals, **params)
        if primitive.multiple_results:
            return ans, [zero_tangent(a) for a in ans]
        return ans, zero_tangent(ans)

    primitive.def_rules(jvp=jvp)


def deflinear(primitive, transpose):
    """A primitive linear in all its operands: its JVP applies it to the tangents."""

    def jvp(primals, tangents, **params):
        ans = primitive.bind(*primals, **params)
        t = primitive.bind(*[instantiate(t) for t in tangents], **params)
        return ans, t

    primitive.def_rules(jvp=jvp, transpose=transpose)


def defbilinear(primitive, transpose):
    """A primitive linear in each of its two operands separately (dot_general, convolution):
    d(x*y) = dx*y + x*dy, each term the primitive itself."""

    def jvp(primals, tangents, **params):
        (x, y), (gx, gy) = primals, tangents
        ans = primitive.bind(x, y, **params)
        t = None
        if type(gx) is not Zero:
            t = primitive.bind(gx, y, **params)
        if type(gy) is not Zero:
            t = add_tangents(t, primitive.bind(x, gy, **params))
        return ans, t

    primitive.def_rules(jvp=jvp, transpose=transpose)


def broadcast_to_aval(t, aval):
    """A tangent contribution broadcast to the output (lax's implicit rank-0 and size-1 broadcasting)."""
    if type(t) is Zero:
        return t
    shape = core.get_aval(t).shape
    if shape == aval.shape:
        return t
    if not shape:
        return ops.broadcast_in_dim(t, aval.shape, ())
    dims = tuple(i for i, (a, b) in enumerate(zip(shape, aval.shape)) if a == 1 and b != 1)
    return ops.broadcast_in_dim(ops.squeeze(t, dims), aval.shape,
                                tuple(i for i in range(len(shape)) if i not in dims))


def unbroadcast(ct, aval):
    """A cotangent summed back to an operand's shape (the transpose of implicit broadcasting)."""
    if type(ct) is Zero:
        return Zero(aval)
    shape = core.get_aval(ct).shape
    if shape == aval.shape:
        return ct
    if not aval.shape:
        return ops.reduce_sum(ct, tuple(range(len(shape))))
    dims = tuple(i for i, (a, b) in enumerate(zip(aval.shape, shape)) if a == 1 and b != 1)
    return ops.reshape(ops.reduce_sum(ct, dims), aval.shape)


def jvp_flat(fun, primals, tangents):
    """(output primals, output tangents, possibly symbolic zeros) of fun(*primals), flat lists."""
    trace = JVPTrace(core.current_trace())
    ins = [JVPTracer(trace, p, t) for p, t in zip(primals, tangents)]
    with core.new_trace(trace):
        outs = fun(*ins)
        pairs = [trace.lift(o) for o in outs]
    return [p for p, _ in pairs], [t for _, t in pairs]


# ---- reverse mode --------------------------------------------------------------------------------

def backward_pass(jaxpr, consts, cts_out, init_cts=None, undefined_avals=None):
    """Cotangents of a linear jaxpr's invars given its outputs' cotangents (Zero where none).

    Every equation of a linear jaxpr (what LinearizeTrace records) is linear in at least one input;
    constvars (residuals) and literals are the non-linear inputs. init_cts (one per invar, None for
    none) are accumulators the invars' cotangents are added to as they come (JAX's accumulators: a
    loop's running cotangent of a constant). undefined_avals (one per invar, None to keep its own)
    is the type the transpose rules see for an invar (a loop carry's: its cotangent's, as in JAX).
    """
    env = {v: c for v, c in zip(jaxpr.constvars, consts)}
    cts = {}
    for v, c in zip(jaxpr.invars, init_cts or ()):
        if c is not None:
            cts[v] = c
    und = {v: a for v, a in zip(jaxpr.invars, undefined_avals or ()) if a is not None}

    def add_ct(v, ct):
        if ct is None or type(ct) is Zero or _is_literal(v) or v in env:
            return
        prev = cts.get(v)
        cts[v] = ct if prev is None else add_tangents(prev, ct)

    # Equations that read no linear value (constants a tangent computation made, e.g. instantiated
    # zeros) are evaluated first, in order, as JAX's backward pass does; the rest are transposed.
    linear = set(v for v in jaxpr.invars)
    lin_eqns = []
    for eqn in jaxpr.eqns:
        if any(not _is_literal(a) and a in linear for a in eqn.invars) or not all(
                _is_literal(a) or a in env for a in eqn.invars):
            linear.update(eqn.outvars)
            lin_eqns.append(eqn)
            continue
        out = eqn.primitive.bind(*[literal_value(a) if _is_literal(a) else env[a] for a in eqn.invars], **eqn.params)
        for v, x in zip(eqn.outvars, out if eqn.primitive.multiple_results else [out]):
            env[v] = x
    for v, ct in zip(jaxpr.outvars, cts_out):
        add_ct(v, ct)
    for eqn in reversed(lin_eqns):
        outs = [cts.pop(v, None) for v in eqn.outvars]
        if all(c is None for c in outs):
            continue
        outs = [Zero(v.aval) if c is None else c for v, c in zip(eqn.outvars, outs)]
        args = [literal_value(a) if _is_literal(a) else env[a] if a in env else UndefinedPrimal(und.get(a, a.aval))
                for a in eqn.invars]
        rule = eqn.primitive.transpose
        if rule is None:
            raise NotImplementedError(f"Transpose rule (for reverse-mode differentiation) for "
                                      f"'{eqn.primitive.name}' not implemented")
        cts_in = rule(outs if eqn.primitive.multiple_results else outs[0], *args, **eqn.params)
        for a, ct in zip(eqn.invars, cts_in):
            if not _is_literal(a) and a not in env:
                add_ct(a, ct)
    return [cts.get(v, Zero(v.aval)) for v in jaxpr.invars]


def _is_literal(a):
    return type(a) is Literal


# ---- transformed jaxprs (for primitives that hold jaxprs), memoised per jaxpr and pattern ----------

_jvp_jaxprs = weakref.WeakKeyDictionary()
_transposed_jaxprs = weakref.WeakKeyDictionary()


def jvp_jaxpr(closed, nonzeros, instantiate=None):
    """(ClosedJaxpr of (primals, nonzero tangents) -> (primal outs, nonzero tangent outs), out nonzeros).

    instantiate[i] makes output i's tangent an array even where it is a symbolic zero.
    """
    instantiate = tuple(instantiate or (False,) * len(closed.out_avals))
    def make():
        n = len(closed.jaxpr.invars)
        out_nonzeros = []

        def fun(*args):
            primals, rest = args[:n], iter(args[n:])
            tangents = [next(rest) if nz else Zero(tangent_aval(core.get_aval(p))) for p, nz in zip(primals, nonzeros)]
            trace = JVPTrace(core.current_trace())
            ins = [JVPTracer(trace, p, t) for p, t in zip(primals, tangents)]
            with core.new_trace(trace):
                outs = [trace.lift(o) for o in eval_jaxpr(closed.jaxpr, closed.consts, *ins)]
            outs = [(p, instantiate_zero(t) if inst else t) for (p, t), inst in zip(outs, instantiate)]
            out_nonzeros.extend(type(t) is not Zero for _, t in outs)
            return [p for p, _ in outs] + [t for _, t in outs if type(t) is not Zero]

        t_avals = [tangent_aval(a) for a, nz in zip(closed.in_avals, nonzeros) if nz]
        jvp_closed = pe.trace_to_jaxpr(fun, list(closed.in_avals) + t_avals)
        return jvp_closed, tuple(out_nonzeros)

    return memoize_per_jaxpr(_jvp_jaxprs, closed, (tuple(nonzeros), instantiate), make)


def transpose_jaxpr(closed, linear, ct_nonzeros, accumulate=None, undefined_avals=None):
    """ClosedJaxpr of (non-linear args, accumulators, nonzero output cotangents) -> cotangents of the
    linear args. accumulate[i] (for invar i, linear) gives it an accumulator input its cotangents
    are added to (its output is then the accumulated sum)."""
    accumulate = tuple(accumulate or (False,) * len(linear))
    undefined_avals = tuple(undefined_avals or (None,) * len(linear))

    def make():
        j = closed.jaxpr
        nonlin_vars = [v for v, lin in zip(j.invars, linear) if not lin]
        lin_vars = [v for v, lin in zip(j.invars, linear) if lin]
        acc = [a for a, lin in zip(accumulate, linear) if lin]
        und = [a for a, lin in zip(undefined_avals, linear) if lin]
        view = Jaxpr(j.constvars + nonlin_vars, lin_vars, j.outvars, j.eqns)
        n, n_acc = len(nonlin_vars), sum(acc)

        def fun(*args):
            res, accs, rest = list(args[:n]), iter(args[n:n + n_acc]), iter(args[n + n_acc:])
            init = [next(accs) if a else None for a in acc]
            cts = [next(rest) if nz else Zero(a) for a, nz in zip(closed.out_avals, ct_nonzeros)]
            return [instantiate(c) for c in backward_pass(view, list(closed.consts) + res, cts, init, und)]

        avals = ([v.aval for v in nonlin_vars] + [v.aval for v, a in zip(lin_vars, acc) if a]
                 + [a for a, nz in zip(closed.out_avals, ct_nonzeros) if nz])
        return pe.trace_to_jaxpr(fun, avals)

    return memoize_per_jaxpr(_transposed_jaxprs, closed, (tuple(linear), tuple(ct_nonzeros), accumulate,
                                                         undefined_avals), make)
