"""Jaxprs: the typed IR that tracing builds, jit lowers and make_jaxpr prints, in JAX's text format.

A Jaxpr is a list of equations (primitive, params, input atoms, output variables) over typed
variables; a ClosedJaxpr pairs it with the concrete values of its constvars. The printer follows
JAX's layout rules: names a, b, ..., z, ba, ... given in printing order and shared across nested
jaxprs; unused top-level results printed as `_`; jaxprs used more than once (or long nested ones)
printed once up front as `let name = { ... } in`; params printed sorted unless a primitive's
`pp_params` rule says otherwise.
"""
import collections
import re
import weakref

import numpy as np

from xjax._src import dtypes
from xjax._src.array import scalar
from xjax._src import pretty_printer as pp


class Var:
    """A variable of a jaxpr: only its abstract value; names are given when printing."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"Var(id={id(self)}):{self.aval.str_short()}"


class DropVar(Var):
    """An equation result that is never read (printed `_`)."""

    __slots__ = ()

    def __repr__(self):
        return "_"


class Literal:
    """A constant scalar written inline in the jaxpr (`2.0:f32[]`).

    `val` is a 0-d NumPy array of the aval's dtype; `py` the Python scalar it was made from, if any,
    which prints as JAX prints it. Other weakly typed literals print the shortest decimal that gives
    the same value, as the Python scalar they came from would print.
    """

    __slots__ = ("val", "aval", "py")

    def __init__(self, val, aval, py=None):
        self.val = val
        self.aval = aval
        self.py = py

    def value_str(self):
        if self.py is not None:
            return str(self.py)
        v = self.val.item() if isinstance(self.val, np.ndarray) else self.val
        if isinstance(v, float) and self.aval.weak_type and self.aval.dtype == dtypes.float32:
            return str(float(str(np.float32(v))))
        return str(v)

    def __repr__(self):
        return f"Literal({self.value_str()})"


class JaxprEqn:
    """outvars = primitive[params] invars."""

    __slots__ = ("invars", "outvars", "primitive", "params")

    def __init__(self, invars, outvars, primitive, params):
        self.invars = invars
        self.outvars = outvars
        self.primitive = primitive
        self.params = params

    def __repr__(self):
        return str(pp_eqn(self, _PpContext(), )).strip()


class Jaxpr:
    """{ lambda constvars ; invars . let eqns in outvars }"""

    __slots__ = ("constvars", "invars", "outvars", "eqns", "_key", "__weakref__")

    def __init__(self, constvars, invars, outvars, eqns):
        self.constvars = list(constvars)
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.eqns = list(eqns)
        self._key = None  # jaxpr_key, computed once: a Jaxpr is not changed after it is built

    @property
    def in_avals(self):
        return [v.aval for v in self.invars]

    @property
    def out_avals(self):
        return [v.aval for v in self.outvars]

    def pretty_print(self, width=80):
        return pp_toplevel(self).format(width)

    def __str__(self):
        return self.pretty_print()

    __repr__ = __str__


class ClosedJaxpr:
    """A Jaxpr with the values of its constvars."""

    __slots__ = ("jaxpr", "consts", "compiled", "__weakref__")

    def __init__(self, jaxpr, consts):
        self.jaxpr = jaxpr
        self.consts = list(consts)
        self.compiled = None  # (cache generation, call): graph_lowering's compiled form of this jaxpr

    in_avals = property(lambda self: self.jaxpr.in_avals)
    out_avals = property(lambda self: self.jaxpr.out_avals)
    eqns = property(lambda self: self.jaxpr.eqns)

    def pretty_print(self, width=80):
        return self.jaxpr.pretty_print(width)

    def __str__(self):
        return str(self.jaxpr)

    __repr__ = __str__


def jaxprs_in_params(params):
    """The Jaxprs held by an equation's params (ClosedJaxprs give their Jaxpr)."""
    for v in params.values():
        for x in (v if type(v) is tuple else (v,)):
            if isinstance(x, Jaxpr):
                yield x
            elif isinstance(x, ClosedJaxpr):
                yield x.jaxpr


_effects_memo = weakref.WeakKeyDictionary()


def has_effect(eqn):
    """Whether dead-code elimination must keep the equation though nobody reads its results: its
    primitive has effects (a host callback), or it holds a jaxpr with such an equation (a cond, scan,
    while or jit whose body prints)."""
    if eqn.primitive.has_effect:
        return True
    for j in jaxprs_in_params(eqn.params):
        got = _effects_memo.get(j)
        if got is None:
            got = _effects_memo[j] = any(has_effect(e) for e in j.eqns)
        if got:
            return True
    return False


def live_equations(jaxpr, outvars=None):
    """(the equations whose results `outvars` (default: the jaxpr's outputs) need, or that have
    effects, in order; the vars they and the outputs read): dead-code elimination's one walk, for
    whoever prunes a jaxpr."""
    live = {a for a in (jaxpr.outvars if outvars is None else outvars) if type(a) is Var}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        if has_effect(eqn) or any(v in live for v in eqn.outvars):
            kept.append(eqn)
            live.update(a for a in eqn.invars if type(a) is Var)
    return kept[::-1], live


_axis_names_memo = weakref.WeakKeyDictionary()


def axis_names_in(params):
    """The axis names that equations anywhere in params' jaxprs name (collectives carry `axis_name`):
    a vmap must interpret such an equation even when none of its operands is batched."""
    names = set()
    for j in jaxprs_in_params(params):
        got = _axis_names_memo.get(j)
        if got is None:
            got = set()
            for e in j.eqns:
                n = e.params.get("axis_name", ())
                got.update(n if isinstance(n, tuple) else (n,))
                got.update(axis_names_in(e.params))
            got = _axis_names_memo[j] = frozenset(got)
        names |= got
    return names


def literal_value(lit):
    """A literal as a 0-d array that any trace accepts (a jaxpr trace makes it a literal again)."""
    return scalar(lit.val.item(), lit.aval.dtype, lit.aval.weak_type)


def eval_jaxpr(jaxpr, consts, *args):
    """Evaluates a Jaxpr by binding its primitives in the current trace; returns the outputs."""
    env = {}
    for v, x in zip(jaxpr.constvars, consts):
        env[v] = x
    for v, x in zip(jaxpr.invars, args):
        env[v] = x

    def read(a):
        return env[a] if type(a) is not Literal else literal_value(a)

    for eqn in jaxpr.eqns:
        ins = [read(a) for a in eqn.invars]
        out = eqn.primitive.bind(*ins, **eqn.params)
        if eqn.primitive.multiple_results:
            for v, x in zip(eqn.outvars, out):
                env[v] = x
        else:
            env[eqn.outvars[0]] = out
    return [read(a) for a in jaxpr.outvars]


# ---- structural keys ------------------------------------------------------------------------

def memoize_per_jaxpr(table, closed, key, make):
    """make() memoised in `table` (a WeakKeyDictionary) per ClosedJaxpr and key: transformations of
    a jaxpr (jvp, transpose, batching) are built once per jaxpr and pattern."""
    per = table.get(closed)
    if per is None:
        per = table[closed] = {}
    got = per.get(key)
    if got is None:
        got = per[key] = make()
    return got


class _Ident:
    """Wraps a value compared by identity (held, so its id cannot be reused while a key lives)."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __hash__(self):
        return id(self.obj)

    def __eq__(self, other):
        return type(other) is _Ident and other.obj is self.obj


class StructKey:
    """A jaxpr's structural key: a tuple with its hash computed once (keys nest and are looked up
    often; equal keys of one jaxpr are the same object, so comparing them is one identity check)."""

    __slots__ = ("key", "hash")

    def __init__(self, key):
        self.key = key
        self.hash = hash(key)

    def __hash__(self):
        return self.hash

    def __eq__(self, other):
        return self is other or (type(other) is StructKey and self.hash == other.hash and self.key == other.key)

    def __repr__(self):
        return f"StructKey({self.hash:#x})"


def _value_key(v):
    """A hashable stand-in for a param value, equal only for values that behave the same.

    Types are part of it (1, 1.0 and True are equal in Python, not in a graph), floats go by their
    bits (NaN, -0.0), jaxprs by their structure, arrays by their bytes, the rest by equality when
    hashable and by identity otherwise.
    """
    t = type(v)
    if t is int or t is str or v is None:
        return v
    if t is tuple:
        return tuple([_value_key(e) for e in v])
    if t is bool:
        return (bool, v)
    if t is float:
        return (float, v.hex())
    if t is Jaxpr:
        return jaxpr_key(v)
    if t is ClosedJaxpr:
        return (ClosedJaxpr, jaxpr_key(v.jaxpr), tuple([_Ident(c) for c in v.consts]))
    if isinstance(v, np.ndarray):
        return (np.ndarray, v.dtype.str, v.shape, v.tobytes())
    if isinstance(v, np.generic):
        return (t, v.tobytes())
    if isinstance(v, tuple):  # named tuples
        return (t, tuple([_value_key(e) for e in v]))
    if t is list:
        return (list, tuple([_value_key(e) for e in v]))
    if t is dict:
        try:
            return (dict, tuple(sorted((k, _value_key(e)) for k, e in v.items())))
        except TypeError:  # keys that do not sort
            return _Ident(v)
    try:
        hash(v)
    except TypeError:
        return _Ident(v)
    return (t, v)


def params_key(params):
    """A hashable canonical form of an equation's params (see `_value_key`)."""
    return tuple([(k, _value_key(params[k])) for k in params]) if params else ()


def jaxpr_key(jaxpr):
    """A hashable canonical form of a Jaxpr: equal for jaxprs that compute the same thing.

    Variables are numbered by first appearance, so two traces of the same function give the same
    key. It holds every variable's aval, each equation's primitive, params (nested jaxprs by
    their own keys, their consts by identity) and inputs, and the literals' dtypes, weak types
    and bytes. Top-level constvars count by aval only: their values are the caller's to pass.
    """
    key = jaxpr._key
    if key is None:
        key = jaxpr._key = StructKey(_jaxpr_key(jaxpr))
    return key


def _literal_key(lit):
    """(aval, bytes of the value): bits, so that 0.0 and -0.0 differ and NaN equals itself."""
    val = lit.val
    if type(val) is not np.ndarray:
        val = np.asarray(val, lit.aval.dtype)
    return (lit.aval, val.tobytes())


def _jaxpr_key(jaxpr):
    num = {}
    for v in jaxpr.constvars:
        num[v] = len(num)
    for v in jaxpr.invars:
        num[v] = len(num)
    eqns = []
    for eqn in jaxpr.eqns:
        ins = []
        for a in eqn.invars:
            if type(a) is Literal:
                ins.append(_literal_key(a))
            else:
                ins.append(num[a])
        params = eqn.params
        pkey = tuple([(k, _value_key(params[k])) for k in params]) if params else ()  # params_key, inlined
        outs = []
        for v in eqn.outvars:
            num[v] = len(num)
            outs.append(v.aval)
        eqns.append((eqn.primitive, pkey, tuple(ins), tuple(outs)))
    outvars = tuple([_literal_key(a) if type(a) is Literal else num[a] for a in jaxpr.outvars])
    return (tuple([v.aval for v in jaxpr.constvars]), tuple([v.aval for v in jaxpr.invars]), tuple(eqns), outvars)


# ---- printing -------------------------------------------------------------------------------

def _alphabetic(n):
    s = ""
    while not s or n:
        n, i = divmod(n, 26)
        s = chr(97 + i) + s
    return s


class _PpContext:
    """Variable names shared by a jaxpr and all the jaxprs nested in it."""

    def __init__(self, names=None):
        self.names = dict(names or {})
        self.shared = {}  # Jaxpr -> name, for jaxprs printed once up front
        self.shared_names = set()
        self._next = 0

    def name(self, v):
        n = self.names.get(v)
        if n is None:
            while True:
                n = _alphabetic(self._next)
                self._next += 1
                if n not in self.shared_names:
                    break
            self.names[v] = n
        return n

    def suggest_same_names(self, for_vars, like_vars):
        """Names for_vars (a nested jaxpr's binders) after the outer atoms they stand for."""
        if len(for_vars) != len(like_vars):
            return
        used = set()
        for f, like in zip(for_vars, like_vars):
            if isinstance(like, Var) and like not in used and isinstance(f, Var) and f not in self.names:
                used.add(like)
                self.names[f] = self.name(like)


def pp_atom(a, ctx):
    if type(a) is Literal:
        return f"{a.value_str()}:{a.aval.str_short()}"
    if type(a) is DropVar:
        return "_"
    return ctx.name(a)


def pp_vars(vs, ctx, separator="", print_shapes=False):
    if print_shapes:
        items = [pp.text(pp_atom(v, ctx) + ":" + v.aval.str_short()) for v in vs]
    else:
        items = [pp.text(pp_atom(v, ctx)) for v in vs]
    return pp.nest(2, pp.group(pp.join(pp.text(separator) + pp.group(pp.brk()), items)))


_ADDRESS = re.compile(r" at 0x([0-9a-fA-F]+)")


def pp_param_value(v, ctx):
    if type(v) is tuple and v and all(isinstance(j, (Jaxpr, ClosedJaxpr)) for j in v):
        return pp_jaxprs(v, ctx)
    if isinstance(v, Jaxpr):
        return pp_jaxpr(v, ctx)
    if isinstance(v, ClosedJaxpr):
        return pp_jaxpr(v.jaxpr, ctx)
    if isinstance(v, np.dtype):
        return pp.text(v.name)
    return pp.text(_ADDRESS.sub(lambda m: " at 0x" + "X" * len(m.group(1)), str(v)))


def pp_kv_pairs(pairs, ctx):
    if not pairs:
        return pp.NIL
    items = [pp.text(f"{k}=") + pp_param_value(v, ctx) for k, v in pairs]
    return pp.group(pp.concat([pp.nest(2, pp.concat([pp.text("["), pp.brk(""), pp.join(pp.brk(), items)])),
                               pp.brk(""), pp.text("]")]))


def default_pp_params(eqn, ctx):
    """All params, sorted by name."""
    return sorted(eqn.params.items())


def params_printer(drop=(), drop_if_none=(), drop_if_empty=(), extra=None, formats=None):
    """A `pp_params` rule: hides params JAX does not print and adds or reformats others.

    extra(eqn) -> dict of params to show that the primitive does not carry (JAX's own params);
    formats maps a param name to a function giving the value to print.
    """

    def rule(eqn, ctx):
        params = dict(eqn.params)
        if extra is not None:
            params.update(extra(eqn))
        out = []
        for k, v in sorted(params.items()):
            if k in drop or (k in drop_if_none and v is None) or (k in drop_if_empty and not v):
                continue
            out.append((k, formats[k](v) if formats and k in formats else v))
        return out

    return rule


def pp_eqn(eqn, ctx):
    rule = getattr(eqn.primitive, "pp_params", None) or default_pp_params
    pairs = rule(eqn, ctx)
    lhs = pp_vars(eqn.outvars, ctx, print_shapes=True)
    rhs = [pp.text(eqn.primitive.name), pp_kv_pairs(pairs, ctx), pp.text(" ") + pp_vars(eqn.invars, ctx)]
    if eqn.outvars:
        return pp.concat([lhs, pp.text(" = "), *rhs])
    return pp.concat(rhs)


def _pp_skeleton(jaxpr, ctx):
    constvars = pp_vars(jaxpr.constvars, ctx, print_shapes=True)
    invars = pp_vars(jaxpr.invars, ctx, print_shapes=True)
    eqns = pp.join(pp.brk("; "), [pp_eqn(e, ctx) for e in jaxpr.eqns])
    outvars = pp.concat([pp.text("("), pp_vars(jaxpr.outvars, ctx, separator=","),
                         pp.text(",)" if len(jaxpr.outvars) == 1 else ")")])
    body = pp.concat([pp.text("{ lambda "), constvars, pp.text("; "), invars, pp.text(". let"),
                      pp.nest(2, pp.brk() + eqns), pp.brk(), pp.text("in "), outvars])
    return pp.group(pp.nest(2, body) + pp.text(" }"))


def pp_jaxpr(jaxpr, ctx):
    name = ctx.shared.get(jaxpr)
    if name is not None:
        return pp.text(name)
    return _pp_skeleton(jaxpr, ctx)


def pp_jaxprs(jaxprs, ctx):
    docs = [pp_jaxpr(j.jaxpr if isinstance(j, ClosedJaxpr) else j, ctx) for j in jaxprs]
    return pp.group(pp.concat([pp.nest(2, pp.concat([pp.text("("), pp.brk(""), pp.join(pp.brk(), docs)])),
                               pp.brk(""), pp.text(")")]))


def _unused_results(jaxpr):
    """Top-level equation results nobody reads: they print as `_`."""
    names = {}
    used = {a for a in jaxpr.outvars if type(a) is not Literal}
    for eqn in reversed(jaxpr.eqns):
        for v in eqn.outvars:
            if v not in used:
                names[v] = "_"
        used.update(a for a in eqn.invars if type(a) is not Literal)
    return names


def pp_toplevel(top):
    """The document of a whole jaxpr, with its shared sub-jaxprs printed first."""
    ctx = _PpContext(_unused_results(top))
    names = {}
    counts = collections.Counter()
    todo = collections.deque([top])
    while todo:
        j = todo.popleft()
        counts[j] += 1
        if j is not top and len(j.eqns) > 10:
            counts[j] += 1  # long nested jaxprs are printed apart, to keep the main one readable
        for eqn in j.eqns:
            # JAX's custom_jvp_call/custom_vjp_call print a name but hold none: their jaxprs are "jaxpr"
            name = None if eqn.primitive.name in ("custom_jvp_call", "custom_vjp_call") else eqn.params.get("name")
            subs = list(jaxprs_in_params(eqn.params))
            todo.extend(subs)
            if isinstance(name, str):
                for s in subs:
                    names.setdefault(s, name.strip("<>"))
    name_counts = collections.Counter()
    docs = []
    shared = []
    for j, c in counts.items():
        if c == 1:
            continue
        name = names.get(j, "jaxpr")
        n = name_counts[name]
        name_counts[name] += 1
        if n > 0:
            name += str(n)
            name_counts[name] += 1
        ctx.shared_names.add(name)
        ctx.shared[j] = name
        shared.append((name, j))
    for name, j in shared:
        docs.append(pp.concat([pp.text(f"let {name} = "), _pp_skeleton(j, ctx), pp.text(" in"), pp.brk()]))
    docs.append(pp_jaxpr(top, ctx))
    return pp.concat(docs)
