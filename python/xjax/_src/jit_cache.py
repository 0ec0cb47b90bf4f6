"""jit's cache of traced signatures: one per (function, jit options), bounded by the compiled-jaxpr
cache's limit, with the fast call of a hit and the explanation of a miss (jax_log_compiles)."""
import itertools
import logging
import operator
import weakref

from xjax import _core
from xjax._src import core
from xjax._src.array import Array
from xjax._src.config import config
from xjax._src.interpreters import graph_lowering
from xjax._src.interpreters import partial_eval as pe
from xjax._src.interpreters.graph_lowering import GraphCall

logger = logging.getLogger("xjax._src.jit")


# ---- the cache ------------------------------------------------------------------------------

class AxisEnv(tuple):
    """The named axes bound when a signature was traced: the last item of its cache key."""


class ContextMesh(tuple):
    """The mesh jax.set_mesh set when a signature was traced (its types and P's refer to it)."""


class Entry:
    """One traced signature: its jaxpr, output structure and (once run eagerly) compiled form."""

    __slots__ = ("jaxpr", "out_tree", "lifted", "call", "fast", "parts", "single_tree")

    def __init__(self, jaxpr, out_tree, lifted):
        self.jaxpr = jaxpr
        self.out_tree = out_tree
        self.lifted = lifted  # tracers of an enclosing trace the function closes over
        self.call = None
        self.fast = None
        self.parts = None  # what the C++ call path runs (fast_parts)
        self.single_tree = None  # out_tree, or None when the result is one array


_get_value = operator.attrgetter("_value")


def make_fast(call, out_tree):
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


def fast_parts(call):
    """(Executable, external values, out_pos, out avals, the call) of a call that one Executable
    computes on the CPU, for the C++ call path (xjax._core.fast_call.JitFunction), which keeps the
    call alive (its host callbacks stay registered); None for other calls (GPU consts, no outputs,
    a plan of segments)."""
    if not isinstance(call, GraphCall) or call.extern is None or call.program.exe is None:
        return None
    return call.program.exe, list(call.extern), call.out_pos, list(call.out_avals), call


_caches = weakref.WeakKeyDictionary()  # function -> {jit options: {signature: Entry}}
_strong_caches = {}  # for functions that cannot be weakly referenced


def insert_bounded(cache, key, entry):
    """Adds a traced signature to a function's cache. Past the compiled-jaxpr cache's limit the
    oldest signatures go first (an eighth at once), and the programs they hold with them: a function
    called with ever new shapes keeps as many programs alive as that limit allows, no more."""
    limit = graph_lowering._programs.maxsize
    if len(cache) >= limit:
        for k in list(itertools.islice(cache, len(cache) - limit + max(1, limit // 8))):
            del cache[k]
    cache[key] = entry


def cache_for(fun, options):
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


def clear_all_caches(name=None, value=None):
    # Flags that change what tracing produces (JAX keys its jit cache on them).
    if name in (None, "jax_enable_x64", "jax_disable_jit", "jax_threefry_partitionable"):
        for per_fun in list(_caches.values()) + list(_strong_caches.values()):
            for cache in per_fun.values():
                cache.clear()
        _core.fast_call.invalidate()


config.on_change(clear_all_caches)


def explain_miss(wrapped, key, avals, names_fn):
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
    if key_part and isinstance(key_part[-1], ContextMesh):
        key_part = key_part[:-1]
    if key_part and isinstance(key_part[-1], AxisEnv):
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
