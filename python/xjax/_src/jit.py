"""jit, make_jaxpr and eval_shape: trace once per signature, compile to one C++ graph, call fast.

`jit(f)` keeps one cache per (function, jit options), shared by every wrapper of the same
function object: a new `jit(f)` of a known `f` hits it, a new lambda or partial does not, as in
JAX. The key is (pytree structure, static arguments, abstract values of the array leaves); a
hit on plain positional array arguments goes straight from flattening to the Executable.

Inside a trace (make_jaxpr, an enclosing jit, control flow) a jitted call is one `jit`
equation holding the callee's jaxpr; tracers of the enclosing trace that the callee closes over
become its leading arguments.
"""
import functools
import inspect
import itertools
import logging
import operator
import time
import weakref

import numpy as np

from xjax._src import core, dtypes, placement, platforms, tree_util
from xjax._src.array import Array
from xjax._src.backends import cpu
from xjax._src.config import config
from xjax._src.interpreters import ad
from xjax._src.interpreters import graph_lowering
from xjax._src.interpreters import partial_eval as pe
from xjax._src.interpreters.graph_lowering import (GraphCall, compile_closed_jaxpr, inline_jaxpr_lowering,
                                                   jaxpr_is_lowerable)
from xjax._src.jaxpr import ClosedJaxpr, Jaxpr, Literal, eval_jaxpr, live_equations, memoize_per_jaxpr
from xjax._src.stages import ShapeDtypeStruct, Traced
from xjax._src import shape_poly

logger = logging.getLogger("xjax._src.jit")

_flatten = tree_util.tree_flatten
_state = core._state
_EvalTrace = core.EvalTrace
_PY_SCALARS = (bool, int, float)

# ---- the jit primitive ----------------------------------------------------------------------

jit_p = core.Primitive("jit", multiple_results=True)


def _jit_abstract_eval(*avals, jaxpr, **_):
    return jaxpr.out_avals


def _jit_impl(*args, jaxpr, **_):
    from xjax._src.interpreters.graph_lowering import as_array

    return compile_closed_jaxpr(jaxpr)([as_array(a) for a in args])


_jit_lowering = inline_jaxpr_lowering("jaxpr")


def _jit_pp_params(eqn, ctx):
    p = eqn.params
    inner = p["jaxpr"].jaxpr
    if inner not in ctx.shared:
        ctx.suggest_same_names(inner.invars, eqn.invars)
        ctx.suggest_same_names(inner.outvars, eqn.outvars)
    pairs = [("name", p["name"])]
    if any(p["donated_invars"]):
        pairs.append(("donated_invars", p["donated_invars"]))
    pairs.append(("jaxpr", p["jaxpr"]))
    return pairs


def _jit_jvp(primals, tangents, *, jaxpr, name, **params):
    """A nested jit stays one equation: jit of the JVP of its jaxpr."""
    nonzeros = [type(t) is not ad.Zero for t in tangents]
    jvp_closed, out_nonzeros = ad.jvp_jaxpr(jaxpr, nonzeros)
    ts = [t for t in tangents if type(t) is not ad.Zero]
    n_in = len(primals) + len(ts)
    outs = jit_p.bind(*primals, *ts, jaxpr=jvp_closed, name=name, **_fresh(params, n_in))
    n = len(jaxpr.out_avals)
    rest = iter(outs[n:])
    return outs[:n], [next(rest) if nz else ad.Zero(ad.tangent_aval(a)) for a, nz in zip(jaxpr.out_avals, out_nonzeros)]


def _jit_partial_eval(trace, args, unknown, *, jaxpr, name, **params):
    """Known part runs now (one jit equation in the parent); the unknown part is recorded (another).
    As JAX's jit linearisation: both parts keep the jit's name, dead equations are dropped, and a
    residual that is an operand or a primal output of the known part is not output again."""
    known, unknown_closed, out_unknowns, num_res = pe.partial_eval_jaxpr(jaxpr, unknown)
    known, unknown_closed, res_src = _pruned_split(known, unknown_closed, num_res)
    known_args = [a for a, u in zip(args, unknown) if not u]
    known_outs = trace.bind_in_parent(jit_p, known_args,
                                      dict(jaxpr=known, name=name, **_fresh(params, len(known_args))))
    n_primal = len(out_unknowns) - sum(out_unknowns)
    residuals = [known_args[i] if kind == "in" else known_outs[i] if kind == "out" else known_outs[n_primal + i]
                 for kind, i in res_src]
    unknown_args = [*residuals, *(a for a, u in zip(args, unknown) if u)]
    unknown_outs = pe.DynamicJaxprTrace.process_primitive(
        trace, jit_p, unknown_args, dict(jaxpr=unknown_closed, name=name, **_fresh(params, len(unknown_args))))
    k, u = iter(known_outs[:n_primal]), iter(unknown_outs)
    return [next(u) if unk else next(k) for unk in out_unknowns]


_pruned = weakref.WeakKeyDictionary()


def _closed(closed, constvars, invars, outvars, eqns):
    consts = dict(zip(closed.jaxpr.constvars, closed.consts))
    return ClosedJaxpr(Jaxpr(constvars, invars, outvars, eqns), [consts[v] for v in constvars])


def _pruned_split(known, unknown, num_res):
    """(known, unknown, where each residual the unknown part reads comes from: ("in", i) the i-th known
    operand, ("out", i) the i-th primal output of the known part, ("res", k) its k-th residual output).
    Unknown equations nobody reads are dropped, then the residuals they alone read, then the known
    equations only those needed."""
    def make():
        u = unknown.jaxpr
        u_eqns, u_live = live_equations(u, u.outvars)
        used = [v in u_live for v in u.invars[:num_res]]
        unknown_ = _closed(unknown, [v for v in u.constvars if v in u_live],
                           [v for v, k in zip(u.invars[:num_res], used) if k] + u.invars[num_res:], u.outvars, u_eqns)
        k = known.jaxpr
        n_primal = len(k.outvars) - num_res
        primal_outs = k.outvars[:n_primal]
        in_pos = {v: i for i, v in enumerate(k.invars)}
        out_pos = {v: i for i, v in enumerate(primal_outs) if type(v) is not Literal}
        res_src, res_outs = [], []
        for v, keep in zip(k.outvars[n_primal:], used):
            if not keep:
                continue
            if type(v) is not Literal and v in in_pos:
                res_src.append(("in", in_pos[v]))
            elif type(v) is not Literal and v in out_pos:
                res_src.append(("out", out_pos[v]))
            else:
                res_src.append(("res", len(res_outs)))
                res_outs.append(v)
        outvars = primal_outs + res_outs
        k_eqns, k_live = live_equations(k, outvars)
        known_ = _closed(known, [v for v in k.constvars if v in k_live], k.invars, outvars, k_eqns)
        return known_, unknown_, res_src

    return memoize_per_jaxpr(_pruned, known, (unknown, num_res), make)


def _jit_transpose(cts, *args, jaxpr, name, **params):
    linear = [ad.is_undefined(a) for a in args]
    ct_nonzeros = [type(c) is not ad.Zero for c in cts]
    t_closed = ad.transpose_jaxpr(jaxpr, linear, ct_nonzeros)
    ins = [a for a, lin in zip(args, linear) if not lin] + [c for c in cts if type(c) is not ad.Zero]
    outs = iter(jit_p.bind(*ins, jaxpr=t_closed, name=name, **_fresh(params, len(ins))))
    return [next(outs) if lin else None for lin in linear]


def _fresh(params, n):
    """The options of a derived jit equation: nothing donated."""
    return dict(donated_invars=(False,) * n, inline=params.get("inline", False),
                keep_unused=params.get("keep_unused", False))


jit_p.def_rules(abstract_eval=_jit_abstract_eval, impl=_jit_impl, jaxpr_lowering=_jit_lowering,
                can_lower=lambda params: jaxpr_is_lowerable(params["jaxpr"].jaxpr), pp_params=_jit_pp_params,
                jvp=_jit_jvp, partial_eval=_jit_partial_eval, transpose=_jit_transpose)


# ---- abstract values of arguments -----------------------------------------------------------


def _bad_arg_error(fun, x, name):
    return TypeError(
        f"Error interpreting argument to {fun} as an abstract array. The problematic value is of type {type(x)} "
        f"and was passed to the function at path {name}.\nThis typically means that a jit-wrapped function was "
        "called with a non-array argument, and this argument was not marked as static using the static_argnums "
        "or static_argnames parameters of jax.jit.")


def _abstractify(leaves, fun, names_fn, abstract_ok=False):
    """(avals, eager operands, whether tracing) of the array leaves; Python scalars are weakly typed."""
    avals, ops = [], []
    tracing = type(_state.trace) is not _EvalTrace
    for i, x in enumerate(leaves):
        t = type(x)
        if t is Array:
            avals.append(x.aval)
            ops.append(x)
        elif isinstance(x, core.Tracer):
            avals.append(x.aval)
            ops.append(x)
            tracing = True
        elif t in _PY_SCALARS:
            dt, weak = dtypes.dtype_and_weak(x)
            avals.append(core.ShapedArray((), dt, weak))
            ops.append(x if tracing else cpu.scalar(x, dt, weak))
        elif isinstance(x, (np.ndarray, np.generic)):
            a = placement.host_array(x)
            avals.append(a.aval)
            ops.append(a)
        elif t in core.ARRAY_TYPES:  # another kind of xjax Array (a GpuArray)
            avals.append(x.aval)
            ops.append(x)
        elif abstract_ok and isinstance(x, (ShapeDtypeStruct, core.ShapedArray)):
            shape_poly.check_concrete(x.shape)
            avals.append(core.ShapedArray(x.shape, x.dtype, x.weak_type))
            ops.append(None)
        else:
            names = names_fn()
            raise _bad_arg_error(fun, x, names[i] if i < len(names) else "unknown")
    if tracing:  # Python scalars go into the trace as they are (literals)
        ops = [x if type(x) in _PY_SCALARS or o is None else o for x, o in zip(leaves, ops)]
    return avals, ops, tracing


# ---- the cache ------------------------------------------------------------------------------

class _AxisEnv(tuple):
    """The named axes bound when a signature was traced: the last item of its cache key."""


class _Entry:
    """One traced signature: its jaxpr, output structure and (once run eagerly) compiled form."""

    __slots__ = ("jaxpr", "out_tree", "lifted", "call", "fast")

    def __init__(self, jaxpr, out_tree, lifted):
        self.jaxpr = jaxpr
        self.out_tree = out_tree
        self.lifted = lifted  # tracers of an enclosing trace the function closes over
        self.call = None
        self.fast = None


_get_aval = operator.attrgetter("aval")
_get_value = operator.attrgetter("_value")


def _make_fast(call, out_tree):
    """The call of a cached entry from flat xjax Array leaves, with as little Python as possible."""
    if not isinstance(call, GraphCall) or call.extern is None:  # (None: GPU consts, see GraphCall)
        return lambda leaves: out_tree.unflatten(call(leaves))
    run, extern, out_avals, out_pos = call.run, call.extern, call.out_avals, call.out_pos
    wrap, get = Array, _get_value
    single = out_tree.num_leaves == 1 and out_tree.num_nodes == 1
    if out_pos is None and single:
        (aval,) = out_avals

        def fast(leaves):
            return wrap(run([*map(get, leaves), *extern])[0], aval)

        return fast
    if out_pos is None:
        unflatten = out_tree.unflatten

        def fast(leaves):
            return unflatten([wrap(v, a) for v, a in zip(run([*map(get, leaves), *extern]), out_avals)])

        return fast
    run_values, unflatten = call.run_values, out_tree.unflatten

    def fast(leaves):
        return unflatten([wrap(v, a) for v, a in zip(run_values(list(map(get, leaves))), out_avals)])

    return fast


_caches = weakref.WeakKeyDictionary()  # function -> {jit options: {signature: _Entry}}
_strong_caches = {}  # for functions that cannot be weakly referenced


def _insert_bounded(cache, key, entry):
    """Adds a traced signature to a function's cache. Past the compiled-jaxpr cache's limit the
    oldest signatures go first (an eighth at once), and the programs they hold with them: a function
    called with ever new shapes keeps as many programs alive as that limit allows, no more."""
    limit = graph_lowering._programs.maxsize
    if len(cache) >= limit:
        for k in list(itertools.islice(cache, len(cache) - limit + max(1, limit // 8))):
            del cache[k]
    cache[key] = entry


def _cache_for(fun, options):
    try:
        per_fun = _caches.get(fun)
        if per_fun is None:
            per_fun = _caches[fun] = {}
    except TypeError:
        try:
            per_fun = _strong_caches.setdefault(fun, {})
        except TypeError:  # unhashable callable: a cache of this wrapper's own
            return {}
    cache = per_fun.get(options)
    if cache is None:
        cache = per_fun[options] = {}
    return cache


def _clear_all_caches(name=None, value=None):
    # Flags that change what tracing produces (JAX keys its jit cache on them).
    if name in (None, "jax_enable_x64", "jax_disable_jit", "jax_threefry_partitionable"):
        for per_fun in list(_caches.values()) + list(_strong_caches.values()):
            for cache in per_fun.values():
                cache.clear()


config.on_change(_clear_all_caches)


# ---- jit ------------------------------------------------------------------------------------

def _normalize_argnums(x):
    if x is None:
        return ()
    if isinstance(x, int):
        return (x,)
    return tuple(int(i) for i in x)


def _normalize_argnames(x):
    if x is None:
        return ()
    if isinstance(x, str):
        return (x,)
    return tuple(x)


def _infer_static(fun, argnums, argnames):
    """JAX's rule: static_argnums given alone name their parameters too, and the other way round."""
    try:
        params = inspect.signature(fun).parameters
    except (TypeError, ValueError):
        return argnums, argnames
    names = list(params)
    kinds = [p.kind for p in params.values()]
    positional = [n for n, k in zip(names, kinds) if k in (inspect.Parameter.POSITIONAL_ONLY,
                                                           inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    if argnums and not argnames:
        argnames = tuple(positional[i] for i in argnums if -len(positional) <= i < len(positional)
                         and params[positional[i]].kind != inspect.Parameter.POSITIONAL_ONLY)
    elif argnames and not argnums:
        argnums = tuple(positional.index(n) for n in argnames if n in positional)
    return argnums, argnames


class NonHashableStaticArgumentError(TypeError, ValueError):
    """A static argument that cannot be hashed (JAX raises ValueError; it is a TypeError too)."""


def _unhashable_error(value, err, where):
    return NonHashableStaticArgumentError(
        f"Non-hashable static arguments are not supported. An error occurred while trying to hash an object of "
        f"type {type(value)}, {value!r}. The error was:\n{type(err).__name__}: {err}\n{where}")


class JitWrapped:
    """A jitted function: call it like the original; `.lower(*args)` for ahead-of-time compilation."""

    def __init__(self, fun, static_argnums=None, static_argnames=None, donate_argnums=None, donate_argnames=None,
                 inline=False, keep_unused=False):
        if not callable(fun):
            raise TypeError(f"Expected a callable value, got {fun}")
        self._fun = fun
        self.__doc__ = getattr(fun, "__doc__", None)
        argnums, argnames = _normalize_argnums(static_argnums), _normalize_argnames(static_argnames)
        if argnums or argnames:
            argnums, argnames = _infer_static(fun, argnums, argnames)
        self._static_argnums = frozenset(argnums)
        self._static_argnames = frozenset(argnames)
        self._donate_argnums = frozenset(_normalize_argnums(donate_argnums))
        self._donate_argnames = frozenset(_normalize_argnames(donate_argnames))
        self._inline = bool(inline)
        self._keep_unused = bool(keep_unused)
        options = (argnums, argnames, tuple(sorted(self._donate_argnums)), tuple(sorted(self._donate_argnames)),
                   self._inline)
        self._simple = not (argnums or argnames or self._donate_argnums or self._donate_argnames)
        self._cache = _cache_for(fun, options)

    # -- attributes of the wrapped function --
    __wrapped__ = property(lambda self: self._fun)

    def __getattr__(self, name):
        if name.startswith("_") and name not in ("__name__", "__qualname__", "__annotations__", "__defaults__"):
            raise AttributeError(name)
        if name == "__name__":
            return pe.fun_name(self._fun)
        return getattr(self._fun, name)

    def __repr__(self):
        return f"<PjitFunction of {self._fun!r}>"

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    def _cache_size(self):
        """How many signatures have been compiled."""
        return sum(1 for e in self._cache.values() if e.call is not None)

    def clear_cache(self):
        self._cache.clear()

    # -- calls --
    def __call__(self, *args, **kwargs):
        if self._simple:
            leaves, treedef = _flatten((args, kwargs)) if kwargs else _flatten(args)
            try:
                entry = self._cache.get((treedef, *map(_get_aval, leaves)))
                if entry is not None and entry.fast is not None and type(_state.trace) is _EvalTrace:
                    return entry.fast(leaves)
            except AttributeError:  # a leaf that is not an Array: the general path sorts it out
                pass
            except NotImplementedError as err:  # a GPU array's refusal of the CPU path: its call goes to the GPU
                if not isinstance(err, platforms.GpuComputeError):
                    raise
                return entry.out_tree.unflatten(entry.call(leaves))
        return self._call(args, kwargs)

    def _split(self, args, kwargs):
        """(dynamic args, dynamic kwargs, static key) with hashability checked."""
        if self._simple:
            return args, kwargs, None
        nums, names = self._static_argnums, self._static_argnames
        statics = []
        dyn_args = []
        n = len(args)
        norm = {i % n if n else i for i in nums if -n <= i < n}
        for i, a in enumerate(args):
            if i in norm:
                statics.append((i, a))
            else:
                dyn_args.append(a)
        dyn_kwargs = {}
        for k, v in kwargs.items():
            if k in names:
                statics.append((k, v))
            else:
                dyn_kwargs[k] = v
        for where, v in statics:
            try:
                hash(v)
            except TypeError as e:
                what = f"argument {where}" if isinstance(where, int) else f"argument '{where}'"
                raise _unhashable_error(v, e, f"(static {what} of {pe.func_src_info(self._fun)})") from None
        statics.sort(key=lambda p: (isinstance(p[0], str), p[0]))
        return tuple(dyn_args), dyn_kwargs, tuple(statics)

    def _signature(self, args, kwargs, abstract_ok=False):
        dyn_args, dyn_kwargs, statics = self._split(args, kwargs)
        leaves, treedef = _flatten((dyn_args, dyn_kwargs) if dyn_kwargs else dyn_args)

        def names_fn():
            return pe.arg_names_of(self._fun, args, kwargs, self._static_argnums, self._static_argnames)

        avals, ops, tracing = _abstractify(leaves, self._fun, names_fn, abstract_ok)
        key = (treedef, *avals) if statics is None else (treedef, statics, *avals)
        if _state.axis_env:  # collectives' shapes depend on the named axes bound around the call
            key += (_AxisEnv(_state.axis_env),)
        return key, treedef, statics, avals, ops, tracing, names_fn, bool(dyn_kwargs)

    def _call(self, args, kwargs):
        if config._values["jax_disable_jit"]:
            return self._fun(*args, **kwargs)
        key, treedef, statics, avals, ops, tracing, names_fn, has_kwargs = self._signature(args, kwargs)
        entry = self._cache.get(key)
        if entry is None:
            entry = self._trace(key, treedef, statics, avals, names_fn, has_kwargs)
        if tracing or entry.lifted:
            return self._bind(entry, ops, args, kwargs)
        if entry.call is None:
            self._compile(entry, avals)
        return entry.out_tree.unflatten(entry.call(ops))

    def _bind(self, entry, ops, args, kwargs):
        operands = [*entry.lifted, *ops]
        closed = entry.jaxpr
        if self._inline:
            outs = eval_jaxpr(closed.jaxpr, closed.consts, *operands)
        else:
            donated = (False,) * len(entry.lifted) + self._donated(args, kwargs, len(ops))
            outs = jit_p.bind(*operands, jaxpr=closed, name=pe.fun_name(self._fun), donated_invars=donated,
                              inline=self._inline, keep_unused=self._keep_unused)
        return entry.out_tree.unflatten(outs)

    def _donated(self, args, kwargs, n):
        if not (self._donate_argnums or self._donate_argnames):
            return (False,) * n
        out = []
        for i, a in enumerate(args):
            if i not in self._static_argnums:
                out += [i in self._donate_argnums] * len(tree_util.tree_leaves(a))
        for k in sorted(kwargs):
            if k not in self._static_argnames:
                out += [k in self._donate_argnames] * len(tree_util.tree_leaves(kwargs[k]))
        return tuple(out)

    def _trace(self, key, treedef, statics, avals, names_fn, has_kwargs):
        fun = self._fun
        out_trees = []
        pos_statics = {i: v for i, v in statics if isinstance(i, int)} if statics else {}
        kw_statics = {k: v for k, v in statics if isinstance(k, str)} if statics else {}

        def flat_fun(*tracers):
            if has_kwargs:
                dyn_args, dyn_kwargs = treedef.unflatten(tracers)
            else:
                dyn_args, dyn_kwargs = treedef.unflatten(tracers), {}
            if pos_statics:
                it = iter(dyn_args)
                n = len(dyn_args) + len(pos_statics)
                dyn_args = [pos_statics[i] if i in pos_statics else next(it) for i in range(n)]
            if kw_statics:
                dyn_kwargs = {**dyn_kwargs, **kw_statics}
            out = fun(*dyn_args, **dyn_kwargs)
            leaves, tree = _flatten(out)
            out_trees.append(tree)
            return leaves

        log = config._values["jax_log_compiles"]
        if log:
            _explain_miss(self, key, avals, names_fn)
            t0 = time.perf_counter()
        dbg = pe.DebugInfo("jit", fun, names_fn=names_fn)
        closed = pe.trace_to_jaxpr(flat_fun, avals, dbg, what=f"function {pe.func_src_info(fun)} traced for jit")
        closed, lifted = pe.split_tracer_consts(closed)
        if log:
            logger.warning("Finished tracing %s for jit in %.9f sec", pe.fun_name(fun), time.perf_counter() - t0)
        entry = _Entry(closed, out_trees[0], lifted)
        if not lifted:
            _insert_bounded(self._cache, key, entry)
        return entry

    def _compile(self, entry, avals):
        log = config._values["jax_log_compiles"]
        if log:
            shapes = ", ".join(_aval_repr(a) for a in avals)
            logger.warning("Compiling jit(%s) with global shapes and types (%s%s). Argument mapping: (%s).",
                           pe.fun_name(self._fun), shapes, "," if len(avals) == 1 else "",
                           ", ".join(["UnspecifiedValue"] * len(avals)) + ("," if len(avals) == 1 else ""))
            t0 = time.perf_counter()
        entry.call = compile_closed_jaxpr(entry.jaxpr)
        entry.fast = _make_fast(entry.call, entry.out_tree)
        if log:
            logger.warning("Finished graph compilation of jit(%s) in %.9f sec", pe.fun_name(self._fun),
                           time.perf_counter() - t0)

    # -- ahead of time --
    def trace(self, *args, **kwargs):
        """Traces for these arguments (arrays or ShapeDtypeStructs): `.jaxpr`, `.lower()`."""
        key, treedef, statics, avals, ops, tracing, names_fn, has_kwargs = self._signature(args, kwargs, True)
        entry = self._cache.get(key)
        if entry is None:
            entry = self._trace(key, treedef, statics, avals, names_fn, has_kwargs)
        return Traced(self, entry, avals)

    def lower(self, *args, **kwargs):
        """Lowers for these arguments (arrays or ShapeDtypeStructs); `.compile()`, `.as_text()`."""
        return self.trace(*args, **kwargs).lower()

    def eval_shape(self, *args, **kwargs):
        return self.trace(*args, **kwargs).out_info


def _aval_repr(a):
    weak = ", weak_type=True" if a.weak_type else ""
    return f"ShapedArray({a.dtype.name}[{','.join(str(d) for d in a.shape)}]{weak})"


def _explain_miss(wrapped, key, avals, names_fn):
    """Logs why a call missed the cache (jax_log_compiles)."""
    fun = wrapped._fun
    src = pe.func_src_info(fun)
    lines = ["TRACING CACHE MISS:"]
    old = list(wrapped._cache)
    if not old:
        lines.append(f"  never seen function:\n    {src}")
    else:
        lines.append(f"  for {src}\n  all previously seen cache keys differ. For the closest previous key:")
        lines.append("  " + _diff_keys(key, old, names_fn))
    logger.warning("\n".join(lines))


def _split_env(key_part):
    """(the key without its named axes, the named axes as a plain tuple)."""
    if key_part and isinstance(key_part[-1], _AxisEnv):
        return key_part[:-1], tuple(key_part[-1])
    return key_part, ()


def _diff_keys(key, old_keys, names_fn):
    has_static = not isinstance(key[1], core.ShapedArray) if len(key) > 1 else False
    tree, rest = key[0], key[1:]
    same_tree = [k for k in old_keys if k[0] == tree]
    if not same_tree:
        return f"different input pytree: now {tree} and before {old_keys[-1][0]}"
    if has_static:
        same_static = [k for k in same_tree if k[1] == rest[0]]
        if not same_static:
            now, before = dict(rest[0]), dict(same_tree[-1][1])
            diffs = [f"  * at static argument {k if isinstance(k, str) else k}, now {now.get(k)!r} and before "
                     f"{before.get(k)!r}" for k in list(now) + [k for k in before if k not in now]
                     if now.get(k) != before.get(k)]
            return "different static arguments:\n" + "\n".join(diffs)
        rest, prev = rest[1:], same_static[-1][2:]
    else:
        prev = same_tree[-1][1:]
    names = names_fn()
    diffs = []
    (rest, now_env), (prev, was_env) = _split_env(rest), _split_env(prev)
    if now_env != was_env:
        return f"different named axes (vmap/pmap axis_name): now {now_env} and before {was_env}"
    for i, (new, was) in enumerate(zip(rest, prev)):
        if new != was:
            name = names[i] if i < len(names) else f"argument {i}"
            ns, ws = new.str_short(), was.str_short()
            if new.weak_type != was.weak_type:
                ns += f"{{weak_type={new.weak_type}}}"
                ws += f"{{weak_type={was.weak_type}}}"
            diffs.append(f"  * at {name}, now {ns} and before {ws}")
    return "different input types:\n" + "\n".join(diffs)


def jit(fun=None, *, static_argnums=None, static_argnames=None, donate_argnums=None, donate_argnames=None,
        inline=False, keep_unused=False, device=None, backend=None, in_shardings=None, out_shardings=None,
        abstracted_axes=None, compiler_options=None):
    """Compiles `fun` on first call for each new signature of its arguments.

    static_argnums / static_argnames mark arguments that are Python values (hashable) rather than
    arrays: each new value retraces. Arguments and results are pytrees of arrays; Python scalars
    are weakly typed. Usable as `@jit`, `@jit(static_argnames=...)` or `@partial(jit, ...)`.
    """
    kw = dict(static_argnums=static_argnums, static_argnames=static_argnames, donate_argnums=donate_argnums,
              donate_argnames=donate_argnames, inline=inline, keep_unused=keep_unused)
    if fun is None:
        return lambda f: JitWrapped(f, **kw)
    return JitWrapped(fun, **kw)


# ---- batching (vmap) ------------------------------------------------------------------------
from xjax._src.interpreters import batching  # noqa: E402


def _jit_batch(axis, vals, dims, *, jaxpr, name, **params):
    """A vmapped jit call stays one jit equation, holding the batched jaxpr (memoised, so the compiled
    graph cached on it is found again on the next call)."""
    in_batched = [d is not batching.not_mapped for d in dims]
    vals = [batching.moveaxis(v, d, 0) if b else v for v, d, b in zip(vals, dims, in_batched)]
    batched, out_batched = batching.batch_jaxpr(jaxpr, axis, in_batched)
    outs = jit_p.bind(*vals, jaxpr=batched, name=name, **params)
    return outs, [0 if b else batching.not_mapped for b in out_batched]


jit_p.def_rules(batch=_jit_batch)
