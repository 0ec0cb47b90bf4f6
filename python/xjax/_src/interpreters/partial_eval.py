"""Tracing Python functions to jaxprs: DynamicJaxprTrace records each primitive as an equation.

A trace hands out tracers (abstract values standing for arrays) for the function's arguments;
every primitive bound on them appends an equation. Values that are not tracers of this trace
become inputs of the equations as they are:
  - Python scalars and 0-d arrays become literals (`2.0:f32[]`),
  - other concrete arrays become constvars (their values travel with the ClosedJaxpr),
  - tracers of an enclosing, still running trace (closures inside cond, jit, ...) become
    constvars too; the caller turns those into explicit operands,
  - tracers of a trace that has ended raise UnexpectedTracerError (a leaked tracer).
Python needs concrete values for `if`, `int()`, `np.asarray()`: the tracer's conversions raise
JAX's errors, naming the function being traced and the arguments the value depends on.
"""
import contextlib
import inspect
import weakref

import numpy as np

from xjax._src import core, dtypes, errors, tree_util
from xjax._src.array import device_put
from xjax._src.interpreters.array_ops import ops
from xjax._src.sharding import NamedSharding, PartitionSpec
from xjax._src.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, _PpContext, eval_jaxpr, jaxprs_in_params, pp_eqn

_PY_SCALARS = (bool, int, float)


class DebugInfo:
    """What error messages say about a traced function: its name and place, and its arguments' names."""

    __slots__ = ("traced_for", "fun", "_arg_names", "_names_fn")

    def __init__(self, traced_for, fun, arg_names=None, names_fn=None):
        self.traced_for = traced_for
        self.fun = fun
        self._arg_names = arg_names
        self._names_fn = names_fn  # computes arg_names lazily (binding a signature is slow)

    @property
    def func_src_info(self):
        return func_src_info(self.fun)

    @property
    def arg_names(self):
        if self._arg_names is None and self._names_fn is not None:
            try:
                self._arg_names = self._names_fn()
            except Exception:  # noqa: BLE001 - names are only for messages
                self._arg_names = None
            self._names_fn = None
        return self._arg_names


def unwrap_fun(fun):
    while True:
        inner = getattr(fun, "func", None) if hasattr(fun, "args") and hasattr(fun, "keywords") else None
        if inner is None:
            return fun
        fun = inner


def fun_name(fun):
    """The name JAX gives a function: partials give their function's, callables their type's."""
    f = unwrap_fun(fun)
    name = getattr(f, "__name__", None)
    return name if isinstance(name, str) else type(f).__name__


def func_src_info(fun):
    """`f at /path/file.py:12`."""
    f = unwrap_fun(fun)
    name = fun_name(f)
    code = getattr(inspect.unwrap(f) if callable(f) else f, "__code__", None)
    if code is None:
        return name
    return f"{name} at {code.co_filename}:{code.co_firstlineno}"


def arg_names_of(fun, args, kwargs, static_argnums=(), static_argnames=()):
    """The names of the array leaves of (args, kwargs) in flattening order: x, d['a'][1], args[0]."""
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        params = []
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    var_pos = next((p.name for p in params if p.kind == p.VAR_POSITIONAL), None)
    var_kw = next((p.name for p in params if p.kind == p.VAR_KEYWORD), None)
    named = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    names = []

    def add(prefix, value):
        for path, _ in tree_util.tree_flatten_with_path(value)[0]:
            names.append(prefix + tree_util.keystr(path))

    for i, a in enumerate(args):
        if i in static_argnums:
            continue
        if i < len(positional):
            add(positional[i], a)
        elif var_pos is not None:
            add(f"{var_pos}[{i - len(positional)}]", a)
        else:
            add(f"args[{i}]", a)
    for k in sorted(kwargs):
        if k in static_argnames:
            continue
        add(k if k in named or var_kw is None else f"{var_kw}['{k}']", kwargs[k])
    return names


class DynamicJaxprTracer(core.Tracer):
    """A traced array: an abstract value and the jaxpr variable that holds it."""

    __slots__ = ("aval", "var")

    def __init__(self, trace, aval, var):
        self._trace = trace
        self.aval = aval
        self.var = var

    def __repr__(self):
        weak = "~" if self.aval.weak_type else ""
        return f"JitTracer({weak}{errors.long_str(self.aval)})"

    __str__ = __repr__

    # Python needs the value: a jit tracer has none, so each conversion raises JAX's error.
    def _no_concrete_value(self, conversion, *args):
        if conversion == "__bool__":
            if self.aval.size > 1:
                raise ValueError("The truth value of an array with more than one element is ambiguous. "
                                 "Use a.any() or a.all()")
            raise errors.TracerBoolConversionError(self)
        if conversion in ("__int__", "__float__", "__complex__"):
            raise errors.concretization_error(self, conversion.strip("_"), True)
        if conversion == "__index__":
            raise errors.TracerIntegerConversionError(self)
        if conversion == "__array__":
            raise errors.TracerArrayConversionError(self)
        if conversion == "item":
            raise errors.ConcretizationTypeError(self, "This occurred in the item() method of jax.Array")
        raise errors.ConcretizationTypeError(self, f"The tolist() method was called on {errors._error_repr(self)}.")

    def _escaped_error(self):
        return errors.escaped_tracer_error(self)

    def _origin_msg(self):
        trace = self._trace
        dbg = trace.debug_info
        if dbg is None:
            return ""
        origin = f"The error occurred while tracing the function {dbg.func_src_info} for {dbg.traced_for}. "
        invar_pos, sources = trace.progenitors(self.var)
        if invar_pos:
            arg_names = dbg.arg_names
            names = [arg_names[i] if arg_names is not None and i < len(arg_names) else "unknown" for i in invar_pos]
            if len(names) == 1:
                which = f"the argument {names[0]}"
            elif len(names) == 2:
                which = f"the arguments {names[0]} and {names[1]}"
            else:
                which = f"the arguments {', '.join(names[:-1])}, and {names[-1]}"
            origin += ("This concrete value was not available in Python because it depends on the "
                       f"value{'s' if len(names) > 1 else ''} of {which}.")
        elif sources:
            ops = [f"  operation {pp_eqn(e, _PpContext()).format()}" for e in sources[:5]]
            origin += "This value became a tracer due to JAX operations on these lines:\n\n" + "\n\n".join(ops)
            if len(sources) > 5:
                origin += "\n\n(Additional originating lines are not shown.)"
        return "\n" + origin


def _literal(value, dtype, weak):
    py = value if type(value) is float and weak else None  # printed as given, as JAX prints it
    return Literal(np.asarray(value, dtype), core.ShapedArray((), dtype, weak), py)


class DynamicJaxprTrace(core.Trace):
    """Records the primitives bound on its tracers as the equations of a jaxpr."""

    def __init__(self, debug_info=None, parent=None):
        super().__init__(parent)
        self.debug_info = debug_info
        self.eqns = []
        self.invars = []
        self.consts = {}  # id(value) -> (value, constvar), in order of first use

    def new_arg(self, aval):
        v = Var(aval)
        self.invars.append(v)
        return DynamicJaxprTracer(self, aval, v)

    def to_atom(self, x):
        """The jaxpr atom (Var or Literal) standing for x in this trace."""
        if type(x) is DynamicJaxprTracer and x._trace is self:
            return x.var
        if isinstance(x, core.Tracer):
            return self._capture(x)
        if type(x) in core.ARRAY_TYPES:
            aval = x.aval
            if not aval.shape:
                return Literal(np.asarray(x), aval)
            return self._capture(x)
        if type(x) in _PY_SCALARS:
            dtype, weak = dtypes.dtype_and_weak(x)
            return _literal(x, dtype, weak)
        if isinstance(x, (np.ndarray, np.generic)):
            dtype = dtypes.canonicalize_dtype(x.dtype)
            if not np.shape(x):
                return _literal(x, dtype, False)
            return self._capture(device_put(x, dtype))
        raise TypeError(f"Value {x!r} of type {type(x)} is not a valid JAX type")

    def _capture(self, x):
        """A constvar for a concrete array or a tracer of an enclosing trace."""
        if isinstance(x, core.Tracer) and not x._trace.alive:
            raise x._escaped_error()
        entry = self.consts.get(id(x))
        if entry is None:  # (an array split over Explicit mesh axes: its type carries the sharding)
            entry = self.consts[id(x)] = (x, Var(getattr(x, "traced_aval", x.aval)))
        return entry[1]

    def process_primitive(self, primitive, args, params):
        if core.eager_constant_folding() and not any(isinstance(a, core.Tracer) for a in args):
            with core.set_current_trace(core.EVAL_TRACE):  # ensure_compile_time_eval: computed now
                return primitive.bind(*args, **params)
        fold = primitive.const_fold
        if fold is not None and not any(isinstance(a, core.Tracer) for a in args):
            out = fold(*args, **params)
            if out is not None:
                return out
        atoms = [self.to_atom(a) for a in args]
        rule = primitive.abstract_eval
        if rule is None:
            primitive.rule("abstract_eval")
        out = rule(*[a.aval for a in atoms], **params)
        if primitive.name != "jit":  # a jit's arguments are not promoted: its literals stay as given
            _strengthen_literals(atoms)
        if core.vma_axes():
            out = self._typed_vma(primitive, atoms, out, params)
        if any(getattr(a.aval, "_sharding", None) is not None for a in atoms) or _sharding_param(params):
            out = _typed_sharding(primitive, [a.aval for a in atoms], out, params)
        if primitive.multiple_results:
            outvars = [Var(a) for a in out]
            self.eqns.append(JaxprEqn(atoms, outvars, primitive, params))
            return [DynamicJaxprTracer(self, v.aval, v) for v in outvars]
        v = Var(out)
        self.eqns.append(JaxprEqn(atoms, [v], primitive, params))
        return DynamicJaxprTracer(self, out, v)

    def _typed_vma(self, primitive, atoms, out, params):
        """out typed with the manual axes each result varies over (in a check_vma body): the
        primitive's vma rule, or else the union of its operands' axes. An operand of a first-order
        primitive that varies over fewer of them is first made to vary over all of them by a pvary
        equation, as JAX's tracing inserts them (atoms updated in place); a primitive holding jaxprs
        takes its operands as they are (its body does that)."""
        if primitive.vma is not None:
            vma = primitive.vma(*[a.aval for a in atoms], **params)
            vmas = vma if primitive.multiple_results else [vma]
        else:
            union = core.mesh_ordered({n for a in atoms for n in getattr(a.aval, "vma", ())})
            if union and not any(jaxprs_in_params(params)):
                for i, a in enumerate(atoms):
                    if getattr(a.aval, "vma", union) != union:
                        atoms[i] = self._pvaried(a, union)
            vmas = [union] * (len(out) if primitive.multiple_results else 1)
        typed = [o.with_vma(v) if getattr(o, "vma", v) != v else o for o, v in zip(out if primitive.multiple_results
                                                                                   else [out], vmas)]
        return typed if primitive.multiple_results else typed[0]

    def _pvaried(self, atom, union):
        axes = tuple(n for n in union if n not in atom.aval.vma)
        v = Var(atom.aval.with_vma(union))
        self.eqns.append(JaxprEqn([atom], [v], ops.pvary_p, {"axes": axes}))
        return v

    def progenitors(self, var):
        """(positions of the invars var depends on, source equations it depends on)."""
        needed = {var}
        sources = []
        for eqn in reversed(self.eqns):
            if any(v in needed for v in eqn.outvars):
                ins = [a for a in eqn.invars if type(a) is Var]
                needed.update(ins)
                if not ins:
                    sources.append(eqn)
        return [i for i, v in enumerate(self.invars) if v in needed], sources[::-1]

    def to_closed_jaxpr(self, outs, what=None):
        """The ClosedJaxpr of everything recorded, with outputs `outs` (tracers or values)."""
        outvars = []
        for x in outs:
            try:
                outvars.append(self.to_atom(x))
            except TypeError:
                if what is None:
                    raise
                raise TypeError(f"{what} returned a value of type {type(x)}, which is not a valid JAX type") from None
        consts = list(self.consts.values())
        jaxpr = Jaxpr([v for _, v in consts], self.invars, outvars, self.eqns)
        return ClosedJaxpr(jaxpr, [c for c, _ in consts])


class LinearizeTrace(DynamicJaxprTrace):
    """Partial evaluation: records only the equations that depend on its own tracers (the unknown
    values, e.g. tangents) and binds every other one in the parent trace, where it runs now.

    The known values an unknown equation reads become constvars of the recorded jaxpr: the
    residuals. A primitive holding jaxprs splits itself by its `partial_eval` rule, so that its known
    part runs now and only its unknown part is recorded.
    """

    _record_known = False
    runs_custom_calls_lazily = True

    def process_custom_call(self, primitive, args, params):
        if not any(self.is_unknown(a) for a in args):
            return self.bind_in_parent(primitive, args, params)  # known values: the parent decides
        return super().process_custom_call(primitive, args, params)

    @contextlib.contextmanager
    def tangent_side(self):
        """Within it, equations on known values only are recorded too (tangent values made from
        constants: they belong to the linear jaxpr)."""
        before, self._record_known = self._record_known, True
        try:
            yield
        finally:
            self._record_known = before

    def process_primitive(self, primitive, args, params):
        unknown = [type(a) is DynamicJaxprTracer and a._trace is self for a in args]
        if not any(unknown):
            if self._record_known and not any(isinstance(a, core.Tracer) for a in args):
                return super().process_primitive(primitive, args, params)
            return self.bind_in_parent(primitive, args, params)
        rule = primitive.partial_eval
        if rule is not None and not all(unknown):
            return rule(self, args, unknown, **params)
        return super().process_primitive(primitive, args, params)

    def is_unknown(self, x):
        return type(x) is DynamicJaxprTracer and x._trace is self


def _sharding_param(params):
    s = params.get("sharding", params.get("out_sharding"))
    return s is not None and hasattr(s, "spec")


def _typed_sharding(primitive, avals, out, params):
    """out typed with the sharding of each result (operands traced from arrays split over Explicit mesh
    axes): the primitive's sharding rule (lax/sharding_rules.py); without one, the types its abstract
    eval gave where they carry shardings (a jit's body's), else unsplit over the operands' mesh."""
    outs = list(out) if primitive.multiple_results else [out]
    if primitive.sharding is not None:
        got = primitive.sharding(*avals, **params)
        shardings = list(got) if primitive.multiple_results else [got]
    else:
        mesh = next((a._sharding.mesh for a in avals if getattr(a, "_sharding", None) is not None), None)
        shardings = [getattr(o, "_sharding", None) or (None if mesh is None or not hasattr(o, "_sharding") else
                     NamedSharding(mesh, PartitionSpec(*([None] * len(o.shape))))) for o in outs]
    typed = [o.with_sharding(s) if s is not None else o for o, s in zip(outs, shardings)]
    return typed if primitive.multiple_results else typed[0]


def _strengthen_literals(atoms):
    """A weak literal next to a strong operand of its dtype prints as strong, as jnp's promotion in JAX makes it."""
    lits = [i for i, a in enumerate(atoms) if type(a) is Literal and a.aval.weak_type]
    if not lits:
        return
    strong = {a.aval.dtype for a in atoms if not a.aval.weak_type}
    for i in lits:
        a = atoms[i]
        if a.aval.dtype in strong:
            atoms[i] = Literal(a.val, a.aval.update(weak_type=False))


def trace_to_jaxpr(fun, in_avals, debug_info=None, what=None):
    """Traces fun(*tracers) to a ClosedJaxpr; fun takes and returns flat lists of arrays.

    `what` names the function in the TypeError raised when it returns something that is not an array.
    """
    trace = DynamicJaxprTrace(debug_info, core.current_trace())
    args = [trace.new_arg(a) for a in in_avals]
    with core.new_trace(trace):
        outs = fun(*args)
        return trace.to_closed_jaxpr(outs, what)


def split_tracer_consts(closed):
    """(jaxpr taking its tracer consts as leading invars, those tracers): for jit's nested calls."""
    jaxpr = closed.jaxpr
    if not any(isinstance(c, core.Tracer) for c in closed.consts):
        return closed, []
    keep_vars, keep_vals, lift_vars, lift_vals = [], [], [], []
    for v, c in zip(jaxpr.constvars, closed.consts):
        if isinstance(c, core.Tracer):
            lift_vars.append(v)
            lift_vals.append(c)
        else:
            keep_vars.append(v)
            keep_vals.append(c)
    new = Jaxpr(keep_vars, lift_vars + jaxpr.invars, jaxpr.outvars, jaxpr.eqns)
    return ClosedJaxpr(new, keep_vals), lift_vals


def convert_constvars(closed):
    """(jaxpr taking all its consts as leading invars, the consts): for control flow operands."""
    jaxpr = closed.jaxpr
    if not jaxpr.constvars:
        return closed, []
    new = Jaxpr([], jaxpr.constvars + jaxpr.invars, jaxpr.outvars, jaxpr.eqns)
    return ClosedJaxpr(new, []), list(closed.consts)


_partial_evals = weakref.WeakKeyDictionary()


def partial_eval_jaxpr(closed, unknowns, instantiate=None):
    """Splits a ClosedJaxpr by which inputs are unknown, for primitives that hold jaxprs.

    Returns (known: known ins -> known outs + residuals, unknown: residuals + unknown ins -> unknown
    outs, which outputs are unknown, number of residuals). The split re-evaluates the jaxpr under a
    LinearizeTrace over a recording trace, so nested primitives split by their own rules. Memoised.
    """
    per = _partial_evals.get(closed)
    if per is None:
        per = _partial_evals[closed] = {}
    instantiate = tuple(instantiate or (False,) * len(closed.out_avals))
    key = (tuple(unknowns), instantiate)
    if key in per:
        return per[key]
    known_trace = DynamicJaxprTrace(None, core.current_trace())
    lin = LinearizeTrace(None, known_trace)
    ins = [lin.new_arg(a) if u else known_trace.new_arg(a) for a, u in zip(closed.in_avals, unknowns)]
    with core.new_trace(known_trace), core.new_trace(lin):
        outs = eval_jaxpr(closed.jaxpr, closed.consts, *ins)
        out_unknowns = [lin.is_unknown(o) or inst for o, inst in zip(outs, instantiate)]
        unknown, residuals = split_tracer_consts(lin.to_closed_jaxpr([o for o, u in zip(outs, out_unknowns) if u]))
        known = known_trace.to_closed_jaxpr([o for o, u in zip(outs, out_unknowns) if not u] + residuals)
    per[key] = result = (known, unknown, out_unknowns, len(residuals))
    return result
