"""Lowering a ClosedJaxpr to one C++ graph, and running compiled jaxprs.

Every equation goes through its primitive's `lowering` rule into a single `_core.Graph`;
primitives holding jaxprs (jit, control flow) have a `jaxpr_lowering` rule that lowers those
jaxprs inline or as subgraphs. Literals and constants enter the graph as extra parameters
after the jaxpr's own inputs (their values are passed on every run), so a compiled jaxpr is
one Executable and a call is one `run`.

When an equation cannot be lowered (a primitive whose C++ op is not available yet), the jaxpr
is split into segments: runs of lowerable equations compile to graphs, and the others run
through their primitive's eager `impl` in between.

Compiled programs are cached by the jaxpr's structure (`jaxpr.jaxpr_key`) in a bounded LRU
cache, so that the new jaxprs of repeated eager control flow (and of any transformation that
traces on every call) compile once. Top-level consts are graph inputs, not part of the key.
"""
import weakref

import numpy as np

from xjax import _core
from xjax._src import core, dtypes, placement, platforms
from xjax._src.array import Array, scalar
from xjax._src.backends import cpu
from xjax._src.backends.lowering import LoweringContext
from xjax._src.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, jaxpr_key, live_equations, params_key
from xjax._src.lru_cache import LRUCache


def _core_has(op, attrs):
    try:
        _core.infer(op, [], attrs)
        return True
    except Exception:  # noqa: BLE001 - an op the core does not know yet
        return False


# What the core supports (the compiler work lands progressively): constants in the graph, control
# flow ops over subgraphs.
HAS_CONSTANT = _core_has("constant", {"dtype": "float32", "value": 0.0})
HAS_SUBGRAPHS = HAS_CONSTANT and hasattr(_core.Graph, "add_subgraph_op")
HAS_BARRIER = _core_has("optimization_barrier", {})
HAS_EMPTY = _core_has("empty", {"dtype": "float32", "shape": []})


def _literal_key(lit):
    return ("lit", lit.aval.dtype.name, lit.val.tobytes())


def _const_key(value):
    return ("const", id(value))


def literal_array(lit):
    """The literal's value as a 0-d xjax Array (of its weak type)."""
    return scalar(lit.val.item(), lit.aval.dtype, lit.aval.weak_type)


def _constant_attrs(value, dtype, shape=()):
    """Attributes of a splat `constant` op."""
    v = value.item() if hasattr(value, "item") else value
    if isinstance(v, complex) or np.dtype(dtype).kind == "c":  # (the core's attributes hold no complex numbers:
        # the elements' bytes, also for a real value of a complex type, e.g. the zeros control flow adds)
        return {"dtype": dtype.name, "shape": list(shape), "data": np.full(shape, v, dtype).tobytes()}
    if isinstance(v, bool):
        v = int(v)
    elif isinstance(v, int) and v >= 2 ** 63:
        v -= 2 ** 64  # uint64 bit pattern
    return {"dtype": dtype.name, "shape": list(shape), "value": v}


def collect_externals(jaxpr, acc, literals=True):
    """Adds to acc (key -> xjax Array) the literals (if `literals`) and nested constants the jaxpr tree needs."""
    for eqn in jaxpr.eqns:
        if literals:
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
                    collect_externals(x.jaxpr, acc, literals)
                elif isinstance(x, Jaxpr):
                    collect_externals(x, acc, literals)
    if literals:
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


def inline_jaxpr_lowering(param):
    """The lowering of a primitive that calls the ClosedJaxpr in params[param]: its equations inline."""

    def lower(lowerer, eqn, ins):
        return lowerer.lower_closed_jaxpr(eqn.params[param], ins)

    return lower


class GraphLowerer:
    """Lowers jaxprs into one graph.

    Literals become `constant` ops when the core has them; otherwise they, like the constants of
    nested jaxprs, are graph inputs given in `externals` (key -> graph value).
    """

    def __init__(self, graph, externals, callbacks=None):
        self.graph = graph
        self.externals = externals
        self.callbacks = [] if callbacks is None else callbacks  # host callbacks registered, shared with subgraphs
        self._made = {}  # constants added to this graph, by key

    def read(self, env, a):
        if type(a) is Literal:
            return self.literal(a)
        return env[a]

    def literal(self, lit):
        key = _literal_key(lit)
        ref = self.externals.get(key) or self._made.get(key)
        if ref is None:
            (ref,) = self.graph.add("constant", [], _constant_attrs(lit.val, lit.aval.dtype))
            self._made[key] = ref
        return ref

    def constant(self, value, dtype, shape=()):
        """A splat constant of the given type (control-flow lowerings use it)."""
        key = ("splat", dtype.name, tuple(shape), repr(value))
        ref = self._made.get(key)
        if ref is None:
            (ref,) = self.graph.add("constant", [], _constant_attrs(value, dtype, shape))
            self._made[key] = ref
        return ref

    def const_ref(self, value):
        key = _const_key(value)
        ref = self.externals.get(key) or self._made.get(key)
        if ref is None:  # inside a subgraph: the array's bytes go into the graph
            data = np.ascontiguousarray(np.asarray(value)).tobytes()
            (ref,) = self.graph.add("constant", [], {"dtype": value.aval.dtype.name, "shape": list(value.aval.shape),
                                                     "data": data})
            self._made[key] = ref
        return ref

    def lower_jaxpr(self, jaxpr, const_refs, in_refs):
        """Adds the jaxpr's live equations (as JAX, which prunes a jaxpr before lowering it: a dead
        equation may have no lowering, e.g. custom_lin); returns the graph values of its outputs."""
        env = dict(zip(jaxpr.constvars, const_refs))
        env.update(zip(jaxpr.invars, in_refs))
        graph = self.graph
        for eqn in live_equations(jaxpr)[0]:
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

    def lower_closed_jaxpr(self, closed, in_refs):
        """lower_jaxpr of a ClosedJaxpr: its consts become constants (or the externals holding them)."""
        return self.lower_jaxpr(closed.jaxpr, [self.const_ref(c) for c in closed.consts], in_refs)

    def op(self, name, *inputs, **attrs):
        """Adds a C++ op (attributes converted as lowering rules' are)."""
        return LoweringContext(self.graph).op(name, *inputs, **attrs)

    def subgraph(self, in_avals, build):
        """A new graph taking values of in_avals; build(lowerer, parameter values) gives its outputs."""
        graph = type(self.graph)()
        params = [graph.parameter(a.shape, a.dtype.name) for a in in_avals]
        graph.set_outputs(list(build(GraphLowerer(graph, {}, self.callbacks), params)))
        return graph


def unregister_callbacks(ids):
    unregister = getattr(_core, "unregister_callback", None)
    if unregister is not None:
        for cid in ids:
            unregister(cid)


def _with_outputs(graph, outs):
    graph.set_outputs(outs)
    return graph


def _type_check(exe, avals_out, unique):
    got = [(tuple(s), d) for s, d in exe.output_types]
    want = [(avals_out[i].shape, avals_out[i].dtype.name) for i in unique]
    if got != want:
        raise AssertionError(f"internal error: lowered graph produced {got}, the jaxpr says {want}")


def graph_inputs(graph, closed):
    """The parameters of the graph of a ClosedJaxpr, in order: its invars, its constvars, then the
    externals (consts of nested jaxprs, and literals while the core lacks constants).

    Returns (invar refs, constvar refs, {external key: ref}, external values).
    """
    jaxpr = closed.jaxpr
    acc = collect_externals(jaxpr, {}, literals=not HAS_CONSTANT)
    in_refs = [graph.parameter(v.aval.shape, v.aval.dtype.name) for v in jaxpr.invars]
    const_refs = [graph.parameter(v.aval.shape, v.aval.dtype.name) for v in jaxpr.constvars]
    ext = {k: graph.parameter(v.aval.shape, v.aval.dtype.name) for k, v in acc.items()}
    return in_refs, const_refs, ext, list(acc.values())


def lower_closed_jaxpr(closed):
    """The graph of a ClosedJaxpr before compilation (what jit compiles and export stores).

    Returns (graph, output refs, external values, lowerer): the graph's parameters are the
    jaxpr's invars, its constvars, then the externals (xjax Arrays); its outputs are not set yet
    (the refs may repeat); `lowerer.callbacks` lists the host callbacks it registered.
    """
    graph = _core.Graph()
    in_refs, const_refs, ext, extern = graph_inputs(graph, closed)
    lowerer = GraphLowerer(graph, ext)
    outs = lowerer.lower_jaxpr(closed.jaxpr, const_refs, in_refs)
    return graph, outs, extern, lowerer


class GraphProgram:
    """The compiled graph of a ClosedJaxpr, shared by every jaxpr of the same structure.

    The constvars' values are graph inputs, so one program serves jaxprs that differ only in
    their consts; `bind(consts)` gives the callable for one set of them.
    """

    __slots__ = ("run", "exe", "nested_extern", "out_avals", "out_pos", "callbacks", "call", "graph", "gpu")

    def __init__(self, closed):
        self.out_avals = out_avals = closed.jaxpr.out_avals
        graph, outs, extern, lowerer = lower_closed_jaxpr(closed)
        self.nested_extern = [v._value for v in extern]
        unique = list(dict.fromkeys(outs))
        self.out_pos = None if len(unique) == len(outs) else [unique.index(r) for r in outs]
        self.callbacks = _Callbacks(lowerer.callbacks) if lowerer.callbacks else None
        self.exe = None  # the Executable, when it computes the outputs (pmap runs it per device)
        self.graph = graph  # what the CUDA executor compiles (None: nothing to run)
        self.gpu = {}  # GPU device -> its compiled program (backends.cuda)
        if not outs and not lowerer.callbacks:
            self.run = lambda values: []
            self.graph = None
        elif not outs:
            # Only effects: the graph still runs, with a throwaway result.
            run = _core.compile(_with_outputs(graph, [lowerer.constant(0, dtypes.int32)])).run
            self.run = lambda values: (run(values), [])[1]
        else:
            graph.set_outputs(unique)
            exe = _core.compile(graph)
            _type_check(exe, out_avals, [outs.index(r) for r in unique])
            self.run = exe.run
            self.exe = exe
        self.call = GraphCall(self, self.nested_extern)  # the call when there are no consts

    def bind(self, consts):
        """The call of this program with these values of the constvars."""
        if not consts:
            return self.call
        return GraphCall(self, self.nested_extern, consts)

    def gpu_program(self, device, compile_graph):
        """The program compile_graph(graph, device) makes of this graph for a GPU, once per device; None
        when there is nothing to run."""
        if self.graph is None:
            return None
        program = self.gpu.get(device)
        if program is None:
            program = self.gpu[device] = compile_graph(self.graph, device)
        return program


class _Callbacks:
    """The host callbacks a graph registered, unregistered when no program or call holds them."""

    __slots__ = ("ids", "__weakref__")

    def __init__(self, ids):
        self.ids = list(ids)
        weakref.finalize(self, unregister_callbacks, self.ids)


class GraphCall:
    """A ClosedJaxpr compiled to one Executable: call(list of xjax Arrays) -> list of xjax Arrays."""

    __slots__ = ("run", "extern", "out_avals", "out_pos", "callbacks", "program", "consts", "gpu_extern_cache")

    def __init__(self, program, nested_extern, consts=()):
        self.program = program
        self.consts = consts  # xjax Arrays: the values of the jaxpr's constvars
        self.gpu_extern_cache = None  # GPU device -> the externals copied there
        try:
            extern = [c._value for c in consts] + nested_extern
        except NotImplementedError:  # a const on a GPU: only the CUDA executor runs this call
            extern = None
        self.callbacks = program.callbacks  # keeps them registered while this call lives
        self.run = program.run
        self.extern = extern
        self.out_avals = program.out_avals
        self.out_pos = program.out_pos

    def run_values(self, values):
        """Runs on `_core.Array`s; returns the `_core.Array`s of the outputs."""
        vals = self.run(values + self.extern if self.extern else values)
        if self.out_pos is not None:
            vals = [vals[i] for i in self.out_pos]
        return vals

    def gpu_program(self, device, compile_graph):
        return self.program.gpu_program(device, compile_graph)

    def gpu_extern(self, device, upload):
        """The consts and nested externals as upload(xjax Arrays, _core.Arrays, device) placed them on a GPU,
        once per device."""
        if self.gpu_extern_cache is None:
            self.gpu_extern_cache = {}
        bufs = self.gpu_extern_cache.get(device)
        if bufs is None:
            bufs = self.gpu_extern_cache[device] = upload(self.consts, self.program.nested_extern, device)
        return bufs

    def __call__(self, args):
        try:
            if platforms._placement is not None:  # (None: new data stays on the CPU)
                cpu._check_placement(list(args) + list(self.consts))
            values = [a._value for a in args]
            if self.extern is None:
                [c._value for c in self.consts]  # (raises the GPU const's refusal)
        except NotImplementedError as err:  # a GPU array's (GpuComputeError): the CUDA executor runs it
            return platforms.gpu.run_graph_call(self, args, err)
        vals = self.run_values(values)
        return [Array(v, a) for v, a in zip(vals, self.out_avals)]


def split_segments(jaxpr):
    """The equations in order, runs of lowerable ones grouped in lists."""
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
    return groups


class PlanProgram:
    """A ClosedJaxpr run as compiled segments with eager equations between them."""

    def __init__(self, closed):
        jaxpr = closed.jaxpr
        self.jaxpr = jaxpr
        groups = split_segments(jaxpr)
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
            self.steps.append((inputs, outputs, GraphProgram(sub).call))
        self.literals = {}
        self.call = PlanCall(self, [])

    def bind(self, consts):
        """The call of this program with these values of the constvars."""
        return PlanCall(self, consts) if consts else self.call

    def read(self, env, a):
        if type(a) is Literal:
            arr = self.literals.get(id(a))
            if arr is None:
                arr = self.literals[id(a)] = (literal_array(a), a)
            return arr[0]
        return env[a]


class PlanCall:
    """A PlanProgram with the values of its consts: call(list of xjax Arrays) -> list of xjax Arrays."""

    __slots__ = ("program", "consts")

    def __init__(self, program, consts):
        self.program = program
        self.consts = consts

    def __call__(self, args):
        program = self.program
        jaxpr = program.jaxpr
        env = dict(zip(jaxpr.constvars, self.consts))
        env.update(zip(jaxpr.invars, args))
        for step in program.steps:
            if type(step) is tuple:
                inputs, outputs, call = step
                env.update(zip(outputs, call([env[v] for v in inputs])))
                continue
            ins = [program.read(env, a) for a in step.invars]
            out = step.primitive.impl(*ins, **step.params)
            if step.primitive.multiple_results:
                env.update(zip(step.outvars, out))
            else:
                env[step.outvars[0]] = out
        return [program.read(env, a) for a in jaxpr.outvars]


# ---- the caches -----------------------------------------------------------------------------
# A jaxpr made by a trace is a new object on every trace (eager control flow traces its functions
# on every call; grad and vmap make new jaxprs each call), so compiled programs are cached by the
# jaxpr's structure (`jaxpr_key`), bounded. A ClosedJaxpr that is compiled again (a jit entry,
# a loop body, a cached trace) keeps its bound call itself (`ClosedJaxpr.compiled`), stamped with
# the cache's generation so that clearing the cache reaches those too.

_programs = LRUCache(512)  # structural key -> GraphProgram / PlanProgram
_stats = {"compiles": 0, "generation": 0}


def _without_dead_equations(closed):
    """The jaxpr without the equations whose results nobody reads (effects kept; constants kept, so
    that the program binds the same ones). As JAX's lowering: an equation that would raise when run
    (custom_lin, the JVP of a custom_vjp function) raises only where its result is used."""
    jaxpr = closed.jaxpr
    kept, _ = live_equations(jaxpr)
    if len(kept) == len(jaxpr.eqns):
        return closed
    return ClosedJaxpr(Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, kept), closed.consts)


def _program(key, closed):
    program = _programs.get(key)
    if program is None:
        _stats["compiles"] += 1
        closed = _without_dead_equations(closed)
        program = GraphProgram(closed) if jaxpr_is_lowerable(closed.jaxpr) else PlanProgram(closed)
        _programs.put(key, program)
    return program


def compile_closed_jaxpr(closed):
    """The cached compiled form of a ClosedJaxpr: one graph when possible, else a plan."""
    mine = closed.compiled
    generation = _stats["generation"]
    if mine is not None and mine[0] == generation:
        return mine[1]
    call = _program(jaxpr_key(closed.jaxpr), closed).bind(closed.consts)
    closed.compiled = (generation, call)
    return call


def run_closed_jaxpr(closed, args):
    """Runs a ClosedJaxpr eagerly on xjax Arrays (compiling it on first use)."""
    return compile_closed_jaxpr(closed)(list(args))


def equation_call(prim, avals, params):
    """The compiled graph of the one equation prim[params](avals), as a call on xjax Arrays; None
    when it cannot be lowered (the caller runs it its own way).

    For primitives holding jaxprs (eager control flow): their params are new objects on every
    call, so the structural key of the equation finds the compiled graph.
    """
    key = ("eqn", prim, params_key(params), avals)
    program = _programs.get(key)
    if program is None:
        check = getattr(prim, "can_lower", None)
        if check is None or not check(params):
            return None
        invars = [Var(a) for a in avals]
        outvars = [Var(a) for a in prim.abstract_eval(*avals, **params)]
        closed = ClosedJaxpr(Jaxpr([], invars, outvars, [JaxprEqn(invars, outvars, prim, params)]), [])
        program = _program(key, closed)
    return program.call


def cache_info():
    """The compiled-jaxpr cache: {size, maxsize, hits, misses, evictions, compiles}."""
    return {**_programs.info(), "compiles": _stats["compiles"]}


def clear_cache():
    """Drops every compiled program (calls already bound elsewhere, as jit's, keep theirs)."""
    _programs.clear()
    _stats["generation"] += 1


def as_array(x):
    """An xjax Array for an eager operand (Python scalars and NumPy values are placed)."""
    if type(x) in core.ARRAY_TYPES:
        return x
    return placement.asarray(x)

