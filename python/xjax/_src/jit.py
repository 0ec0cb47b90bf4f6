"""jit, make_jaxpr and eval_shape: trace once per signature, compile to one C++ graph, call fast.

`jit(f)` keeps one cache per (function, jit options), shared by every wrapper of the same
function object: a new `jit(f)` of a known `f` hits it, a new lambda or partial does not, as in
JAX. The key is (pytree structure, static arguments, abstract values of the array leaves); a
hit on plain positional array arguments goes straight from flattening to the Executable.

Inside a trace (make_jaxpr, an enclosing jit, control flow) a jitted call is one `jit`
equation holding the callee's jaxpr; tracers of the enclosing trace that the callee closes over
become its leading arguments (the jit primitive and its rules: jit_primitive.py; the cache of
signatures: jit_cache.py).
"""
import functools
import inspect
import logging
import operator
import time

import numpy as np

from xjax import _core
from xjax._src import core, data_leaves, dtypes, jit_shardings, partition, placement, platforms, tree_util
from xjax._src.array import Array
from xjax._src.backends import cpu
from xjax._src.config import config
from xjax._src.interpreters import partial_eval as pe
from xjax._src.interpreters.graph_lowering import compile_closed_jaxpr
from xjax._src.jaxpr import eval_jaxpr
from xjax._src.jit_cache import AxisEnv, ContextMesh, Entry, cache_for, explain_miss, fast_parts, insert_bounded, make_fast
from xjax._src.jit_primitive import jit_p
from xjax._src.sharded_array import ShardedArray
from xjax._src.sharding import _state as _mesh_state, get_abstract_mesh, get_mesh
from xjax._src.stages import ShapeDtypeStruct, Traced
from xjax._src import shape_poly

logger = logging.getLogger("xjax._src.jit")

_flatten = data_leaves.flatten  # keys as their data
_state = core._state
_EvalTrace = core.EvalTrace
_PY_SCALARS = (bool, int, float)
_get_aval = operator.attrgetter("aval")


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
        elif t in core.ARRAY_TYPES:  # another kind of xjax Array (a GpuArray; a ShardedArray: its traced type)
            avals.append(getattr(x, "traced_aval", x.aval))
            ops.append(x)
        elif abstract_ok and isinstance(x, (ShapeDtypeStruct, core.ShapedArray)):
            shape_poly.check_concrete(x.shape)
            avals.append(getattr(x, "traced_aval", None) or core.ShapedArray(x.shape, x.dtype, x.weak_type))
            ops.append(None)
        else:
            names = names_fn()
            raise _bad_arg_error(fun, x, names[i] if i < len(names) else "unknown")
    if tracing:  # Python scalars go into the trace as they are (literals)
        ops = [x if type(x) in _PY_SCALARS or o is None else o for x, o in zip(leaves, ops)]
    return avals, ops, tracing


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


class JitWrapped(_core.fast_call.JitFunction):
    """A jitted function: call it like the original; `.lower(*args)` for ahead-of-time compilation.

    A call runs in C++ (the base class) when its arguments match a signature installed there:
    positional arguments only, every leaf an xjax.Array, no trace, named axis or GPU placement in
    play, jax_disable_jit off. Other calls come to `_call_slow`, which installs the signature of a
    hit on a compiled entry. Static and donated arguments (not `_simple`) never install, nor do
    entries whose program does not run on the CPU alone (no `parts`). jax_log_compiles and
    jax_enable_x64 only matter on a miss, which the Python path handles; clearing any jit cache
    (and changing the flags that clear them) drops the installed signatures.
    """

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
        self._cache = cache_for(fun, options)

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

    def __copy__(self):  # (a C base's instance does not copy by itself: the attributes, as a plain class's)
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        return new

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    def _cache_size(self):
        """How many signatures have been compiled."""
        return sum(1 for e in self._cache.values() if e.call is not None)

    def clear_cache(self):
        self._cache.clear()
        _core.fast_call.invalidate()  # (other wrappers of the function share the cache)

    # -- calls --
    def _call_slow(self, args, kwargs):
        if self._simple:
            leaves, treedef = _flatten((args, kwargs)) if kwargs else _flatten(args)
            try:
                key = (treedef, *map(_get_aval, leaves))
                if _mesh_state.meshes and not get_abstract_mesh().empty:  # (as _signature keys it)
                    key += (ContextMesh((get_mesh(),)),)
                entry = self._cache.get(key)
                if entry is not None and entry.fast is not None and type(_state.trace) is _EvalTrace and \
                        ShardedArray not in map(type, leaves):
                    if entry.parts is not None and not kwargs and not _state.axis_env:
                        self._fast_install(args, entry.parts, entry.single_tree)
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
            key += (AxisEnv(_state.axis_env),)
        if not get_abstract_mesh().empty:  # the shardings a trace gives types depend on the mesh set around it
            key += (ContextMesh((get_mesh(),)),)
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
        outs = partition.eager_equations(entry.jaxpr, ops)  # (pmap across processes)
        if outs is None and ShardedArray in map(type, ops):
            mesh = partition.mesh_of(ops)
            outs = None if mesh is None else partition.call(entry.jaxpr, ops, mesh)
        if outs is not None:  # sharded arguments: the program partitioned over their mesh
            return entry.out_tree.unflatten(outs)
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
            # (JAX's ctx_mesh: the mesh set by jax.set_mesh, a param where there is one)
            ctx = {} if get_abstract_mesh().empty else {"ctx_mesh": get_mesh()}
            outs = jit_p.bind(*operands, jaxpr=closed, name=pe.fun_name(self._fun), donated_invars=donated,
                              inline=self._inline, keep_unused=self._keep_unused, **ctx)
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
            explain_miss(self, key, avals, names_fn)
            t0 = time.perf_counter()
        dbg = pe.DebugInfo("jit", fun, names_fn=names_fn)
        closed = pe.trace_to_jaxpr(flat_fun, avals, dbg, what=f"function {pe.func_src_info(fun)} traced for jit")
        closed, lifted = pe.split_tracer_consts(closed)
        if log:
            logger.warning("Finished tracing %s for jit in %.9f sec", pe.fun_name(fun), time.perf_counter() - t0)
        entry = Entry(closed, out_trees[0], lifted)
        if not lifted:
            insert_bounded(self._cache, key, entry)
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
        placed = partition.placed_as_jax(entry.jaxpr, avals, entry.call)  # (a jit of a pmap: split results)
        entry.call = placed or entry.call
        entry.fast = make_fast(entry.call, entry.out_tree)
        # (the C++ path, keyed on the context mesh too, makes whole arrays: not for placed results)
        entry.parts = None if placed else fast_parts(entry.call)
        entry.single_tree = None if entry.out_tree.num_leaves == 1 and entry.out_tree.num_nodes == 1 else entry.out_tree
        if log:
            logger.warning("Finished graph compilation of jit(%s) in %.9f sec", pe.fun_name(self._fun),
                           time.perf_counter() - t0)

    def _parts_for(self, avals):
        """jit_cache.fast_parts of the compiled program for positional arguments of these avals
        (compiling it), or None when it has no such form or more than one result."""
        key, treedef, statics, avals, _, _, names_fn, _ = self._signature(tuple(avals), {}, abstract_ok=True)
        entry = self._cache.get(key)
        if entry is None:
            entry = self._trace(key, treedef, statics, avals, names_fn, False)
        if entry.lifted:
            return None
        if entry.call is None:
            self._compile(entry, avals)
        return entry.parts if entry.single_tree is None else None

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


def jit(fun=None, *, static_argnums=None, static_argnames=None, donate_argnums=None, donate_argnames=None,
        inline=False, keep_unused=False, device=None, backend=None, in_shardings=None, out_shardings=None,
        abstracted_axes=None, compiler_options=None):
    """Compiles `fun` on first call for each new signature of its arguments (in_shardings and
    out_shardings place its arguments and results: jit_shardings.py).

    static_argnums / static_argnames mark arguments that are Python values (hashable) rather than
    arrays: each new value retraces. Arguments and results are pytrees of arrays; Python scalars
    are weakly typed. Usable as `@jit`, `@jit(static_argnames=...)` or `@partial(jit, ...)`.
    """
    kw = dict(static_argnums=static_argnums, static_argnames=static_argnames, donate_argnums=donate_argnums,
              donate_argnames=donate_argnames, inline=inline, keep_unused=keep_unused)
    if in_shardings is not None or out_shardings is not None:  # (where arguments and results go)
        wrap = lambda f: jit_shardings.ShardedJit(JitWrapped(f, **kw), in_shardings, out_shardings)  # noqa: E731
        return wrap if fun is None else wrap(fun)
    if fun is None:
        return lambda f: JitWrapped(f, **kw)
    return JitWrapped(fun, **kw)


