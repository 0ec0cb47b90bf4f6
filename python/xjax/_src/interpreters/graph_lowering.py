"""Lowering a ClosedJaxpr to one C++ graph, and running compiled jaxprs.

Every equation goes through its primitive's `lowering` rule into a single `_core.Graph`;
primitives holding jaxprs (jit, control flow) have a `jaxpr_lowering` rule that lowers those
jaxprs inline or as subgraphs. Literals and constants enter the graph as extra parameters
after the jaxpr's own inputs (their values are passed on every run), so a compiled jaxpr is
one Executable and a call is one `run`.

When an equation cannot be lowered (a primitive whose C++ op is not available yet), the jaxpr
is split into segments: runs of lowerable equations compile to graphs, and the others run
through their primitive's eager `impl` in between.
"""
import weakref

from xjax import _core
from xjax._src import core
from xjax._src.backends import cpu
from xjax._src.backends.lowering import LoweringContext
from xjax._src.jaxpr import ClosedJaxpr, Jaxpr, Literal, jaxprs_in_params


def _literal_key(lit):
    return ("lit", lit.aval.dtype.name, lit.val.tobytes())


def _const_key(value):
    return ("const", id(value))


def literal_array(lit):
    """The literal's value as a 0-d xjax Array (of its weak type)."""
    return cpu.scalar(lit.val.item(), lit.aval.dtype, lit.aval.weak_type)


def collect_externals(jaxpr, acc):
    """Adds to acc (key -> xjax Array) every literal and nested constant the jaxpr tree needs."""
    for eqn in jaxpr.eqns:
        for a in eqn.invars:
            if type(a) is Literal:
                key = _literal_key(a)
                if key not in acc:
                    acc[key] = literal_array(a)
        for v in eqn.params.values():
            for x in (v if type(v) is tuple else (v,)):
                if isinstance(x, ClosedJaxpr):
                    for c in x.consts:
                        acc.setdefault(_const_key(c), c)
                    collect_externals(x.jaxpr, acc)
                elif isinstance(x, Jaxpr):
                    collect_externals(x, acc)
    for a in jaxpr.outvars:
        if type(a) is Literal:
            key = _literal_key(a)
            if key not in acc:
                acc[key] = literal_array(a)
    return acc


def is_lowerable(eqn):
    """Whether the equation can go into a graph (its primitive has a rule the core supports)."""
    prim = eqn.primitive
    check = getattr(prim, "can_lower", None)
    if check is not None:
        return check(eqn.params)
    return prim.lowering is not None


def jaxpr_is_lowerable(jaxpr):
    return all(is_lowerable(e) for e in jaxpr.eqns)


class GraphLowerer:
    """Lowers jaxprs into one graph; externals (literals, nested consts) map to given graph values."""

    def __init__(self, graph, externals):
        self.graph = graph
        self.externals = externals  # key -> graph value

    def read(self, env, a):
        if type(a) is Literal:
            return self.externals[_literal_key(a)]
        return env[a]

    def const_ref(self, value):
        return self.externals[_const_key(value)]

    def lower_jaxpr(self, jaxpr, const_refs, in_refs):
        """Adds the jaxpr's equations; returns the graph values of its outputs."""
        env = dict(zip(jaxpr.constvars, const_refs))
        env.update(zip(jaxpr.invars, in_refs))
        graph = self.graph
        for eqn in jaxpr.eqns:
            ins = [self.read(env, a) for a in eqn.invars]
            prim = eqn.primitive
            rule = getattr(prim, "jaxpr_lowering", None)
            if rule is not None:
                outs = rule(self, eqn, ins)
            else:
                ctx = LoweringContext(graph, [a.aval for a in eqn.invars], [v.aval for v in eqn.outvars])
                outs = prim.rule("lowering")(ctx, *ins, **eqn.params)
            for v, r in zip(eqn.outvars, outs):
                env[v] = r
        return [self.read(env, a) for a in jaxpr.outvars]

    def subgraph(self, jaxpr, in_avals=None):
        """A new graph for a nested jaxpr (no consts): (graph, external keys it takes after its inputs).

        Its parameters are the jaxpr's inputs followed by the externals of its tree, in the order of
        the returned keys; the caller passes its own values for those.
        """
        keys = list(collect_externals(jaxpr, {}))
        graph = type(self.graph)()
        ins = [graph.parameter(a.shape, a.dtype.name) for a in (in_avals or jaxpr.in_avals)]
        ext = {}
        for k in keys:
            t = self.graph.type(self.externals[k])
            ext[k] = graph.parameter(t[0], t[1])
        sub = GraphLowerer(graph, ext)
        graph.set_outputs(sub.lower_jaxpr(jaxpr, [], ins))
        return graph, keys


def _type_check(exe, avals_out, unique):
    got = [(tuple(s), d) for s, d in exe.output_types]
    want = [(avals_out[i].shape, avals_out[i].dtype.name) for i in unique]
    if got != want:
        raise AssertionError(f"internal error: lowered graph produced {got}, the jaxpr says {want}")


class GraphCall:
    """A ClosedJaxpr compiled to one Executable: call(list of xjax Arrays) -> list of xjax Arrays."""

    __slots__ = ("run", "extern", "out_avals", "out_pos", "graph_text")

    def __init__(self, closed):
        jaxpr = closed.jaxpr
        acc = {}
        for c in closed.consts:
            acc.setdefault(_const_key(c), c)
        collect_externals(jaxpr, acc)
        self.out_avals = out_avals = jaxpr.out_avals
        graph = _core.Graph()
        in_refs = [graph.parameter(v.aval.shape, v.aval.dtype.name) for v in jaxpr.invars]
        ext = {k: graph.parameter(v.aval.shape, v.aval.dtype.name) for k, v in acc.items()}
        self.extern = [v._value for v in acc.values()]
        lowerer = GraphLowerer(graph, ext)
        outs = lowerer.lower_jaxpr(jaxpr, [lowerer.const_ref(c) for c in closed.consts], in_refs)
        unique = list(dict.fromkeys(outs))
        self.out_pos = None if len(unique) == len(outs) else [unique.index(r) for r in outs]
        if not outs:
            self.run = lambda values: []
            return
        graph.set_outputs(unique)
        exe = _core.compile(graph)
        first = [outs.index(r) for r in unique]
        _type_check(exe, out_avals, first)
        self.run = exe.run

    def run_values(self, values):
        """Runs on `_core.Array`s; returns the `_core.Array`s of the outputs."""
        vals = self.run(values + self.extern if self.extern else values)
        if self.out_pos is not None:
            vals = [vals[i] for i in self.out_pos]
        return vals

    def __call__(self, args):
        vals = self.run_values([a._value for a in args])
        wrap = cpu._array_type
        return [wrap(v, a) for v, a in zip(vals, self.out_avals)]


class PlanCall:
    """A ClosedJaxpr run as compiled segments with eager equations between them."""

    def __init__(self, closed):
        jaxpr = closed.jaxpr
        self.jaxpr = jaxpr
        self.consts = closed.consts
        groups, seg = [], []
        for eqn in jaxpr.eqns:
            if is_lowerable(eqn):
                seg.append(eqn)
            else:
                if seg:
                    groups.append(seg)
                    seg = []
                groups.append(eqn)
        if seg:
            groups.append(seg)
        # What each step must hand on: variables read by later steps or returned.
        live_after = []
        live = {a for a in jaxpr.outvars if type(a) is not Literal}
        for g in reversed(groups):
            live_after.append(set(live))
            for eqn in (g if isinstance(g, list) else [g]):
                live.update(a for a in eqn.invars if type(a) is not Literal)
        live_after.reverse()
        self.steps = []
        for g, after in zip(groups, live_after):
            if not isinstance(g, list):
                self.steps.append(g)
                continue
            defined, inputs = set(), []
            for eqn in g:
                for a in eqn.invars:
                    if type(a) is not Literal and a not in defined and a not in inputs:
                        inputs.append(a)
                defined.update(eqn.outvars)
            outputs = [v for eqn in g for v in eqn.outvars if v in after]
            sub = ClosedJaxpr(Jaxpr([], inputs, outputs, g), [])
            self.steps.append((inputs, outputs, GraphCall(sub)))
        self._literals = {}

    def _read(self, env, a):
        if type(a) is Literal:
            arr = self._literals.get(id(a))
            if arr is None:
                arr = self._literals[id(a)] = (literal_array(a), a)
            return arr[0]
        return env[a]

    def __call__(self, args):
        jaxpr = self.jaxpr
        env = dict(zip(jaxpr.constvars, self.consts))
        env.update(zip(jaxpr.invars, args))
        for step in self.steps:
            if type(step) is tuple:
                inputs, outputs, call = step
                env.update(zip(outputs, call([env[v] for v in inputs])))
                continue
            ins = [self._read(env, a) for a in step.invars]
            out = step.primitive.impl(*ins, **step.params)
            if step.primitive.multiple_results:
                env.update(zip(step.outvars, out))
            else:
                env[step.outvars[0]] = out
        return [self._read(env, a) for a in jaxpr.outvars]


_compiled = weakref.WeakKeyDictionary()


def compile_closed_jaxpr(closed):
    """The cached compiled form of a ClosedJaxpr: one graph when possible, else a plan."""
    call = _compiled.get(closed)
    if call is None:
        call = GraphCall(closed) if jaxpr_is_lowerable(closed.jaxpr) else PlanCall(closed)
        _compiled[closed] = call
    return call


def run_closed_jaxpr(closed, args):
    """Runs a ClosedJaxpr eagerly on xjax Arrays (compiling it on first use)."""
    return compile_closed_jaxpr(closed)(list(args))


def as_array(x):
    """An xjax Array for an eager operand (Python scalars and NumPy values are placed)."""
    if type(x) in core.ARRAY_TYPES:
        return x
    from xjax._src.lax.base import asarray

    return asarray(x)

