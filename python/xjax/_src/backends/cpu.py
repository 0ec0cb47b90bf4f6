"""The CPU backend: moving data in and out of the C++ runtime, and eager primitive dispatch.

Eager dispatch compiles each (primitive, params, input types) once into a one-op Executable
through the same lowering that jit uses, and caches it; later calls go straight to run().
"""
import functools

from xjax import _core
from xjax._src import core, dtypes, placement, platforms, tree_util
from xjax._src.array import Array, device_put, scalar, to_numpy  # noqa: F401 - the backend's data in and out
from xjax._src.backends.lowering import lower_single_primitive
from xjax._src.lru_cache import LRUCache

_NP_DTYPE = {d.name: d for d in dtypes.SUPPORTED}


# (primitive, params, input avals) -> (Executable, output avals); bounded: a program sweeping
# over many shapes must not keep every one-op executable alive.
_executables = LRUCache(4096)
_entries, _clock = _executables.data, _executables.clock  # the hot path reads these itself (hits not counted)


# Eager primitives on arrays split over devices (sharded_array._apply; None until one is made):
# returns the result, or None when no operand is sharded.
sharded_apply = None


def apply_primitive(prim, *args, **params):
    """Runs one primitive eagerly on xjax.Arrays (host values -- Python scalars, NumPy arrays, which
    libraries bind directly as JAX allows -- are placed first)."""
    if sharded_apply is not None:
        out = sharded_apply(prim, args, params)
        if out is not None:
            return out
    try:
        avals = tuple([a.aval for a in args])
    except AttributeError:
        args = [placement.asarray(a) for a in args]
        avals = tuple([a.aval for a in args])
    key = (prim, _params_key(params) if params else (), avals)
    entry = _entries.get(key)
    if entry is None:
        exe, avals_out = _compile(key, prim, avals, params)
    else:
        entry[1] = _clock()
        exe, avals_out = entry[0]
    try:
        if platforms._placement is not None:  # (None: new data stays on the CPU)
            _check_placement(args)
        values = [a._value for a in args]
    except NotImplementedError as err:  # a GPU array's (GpuComputeError): the CUDA executor runs it
        return platforms.gpu.apply_primitive(prim, args, params, key[1], err)
    outs = exe.run(values)
    if prim.multiple_results:
        return [Array(v, aval) for v, aval in zip(outs, avals_out)]
    return Array(outs[0], avals_out[0])


def _compile(key, prim, avals, params):
    exe, avals_out = lower_single_primitive(prim, avals, params)
    _executables.misses += 1
    _executables.put(key, (exe, avals_out))
    return exe, avals_out


def executable_for(prim, avals, params):
    """(Executable, output avals) of `prim` on operands of these avals, from the cache or compiled
    (what the C++ operator path runs: xjax._core.fast_call.BinaryOp)."""
    key = (prim, _params_key(params) if params else (), tuple(avals))
    entry = _entries.get(key)
    if entry is None:
        return _compile(key, prim, key[2], params)
    entry[1] = _clock()
    return entry[0]


def runs_here(prim):
    """Whether prim's eager impl is this module's dispatch (an impl of its own runs in Python)."""
    impl = prim.impl
    return (isinstance(impl, functools.partial) and impl.func is apply_primitive and impl.args == (prim,)
            and not impl.keywords)


def bind_program(prim, avals, params):
    """((exe, extern, out_pos, out avals, owner), out_tree or None) of `prim` bound eagerly on Arrays
    of these avals (what Primitive.bind runs in C++, xjax._core.fast_call.PrimitiveBind), or None
    for a primitive whose impl is not this module's dispatch."""
    if not runs_here(prim):
        return None
    exe, avals_out = executable_for(prim, avals, params)
    out_tree = tree_util.tree_structure([0] * len(avals_out)) if prim.multiple_results else None
    return (exe, [], None, list(avals_out), None), out_tree


# Every eager bind of a primitive without a bind of its own meets the C++ path first, which runs
# the executable of a known (primitive, params, avals) and calls the Python bind otherwise.
core.Primitive.bind = _core.fast_call.PrimitiveBind(core.Primitive.bind, bind_program)


def clear_cache():
    _executables.clear()
    _core.fast_call.invalidate()  # (the operators' tables hold executables of this cache)


def _check_placement(operands):
    """Raises GpuComputeError when a computation on these operands belongs on the default GPU (see
    xjax._src.placement.gpu_for): the caller's GPU route then runs it there."""
    gpu = placement.gpu_for(operands)
    if gpu is not None:
        raise platforms.GpuComputeError(f"host operands placed on the default device {gpu}", device=gpu)


def _params_key(params):
    items = tuple(params.items())
    # NaN != NaN would make a key that never hits, and 0.0 == -0.0 one that hits wrongly: spell floats out.
    if any(isinstance(v, float) for _, v in items):
        items = tuple((k, ("float", float(v).hex()) if isinstance(v, float) else v) for k, v in items)
    return items


def cache_size():
    """How many one-primitive executables are cached."""
    return len(_executables)


def cache_info():
    """The eager executable cache: {size, maxsize, misses, evictions} (hits are not counted)."""
    info = _executables.info()
    del info["hits"]
    return info
