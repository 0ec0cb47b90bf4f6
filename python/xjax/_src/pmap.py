"""pmap: maps a function over CPU devices, one shard per device, with collectives between shards.

`fun` is traced once per signature to a jaxpr over one shard, with `axis_name` bound to the
number of shards. The jaxpr is cut at the equations that need every shard at once (collectives,
and equations holding jaxprs that contain collectives). Each run of equations between cuts is
compiled once to one Executable, which every device runs at the same time on its own shard (on
its host thread and its share of the cores: src/core/devices.h). A cut equation runs once over
the shards stacked along a new axis, by its vmap rule (a collective's rule is one lax op over
that axis); its results are split back into shards. So pmap gives vmap's results, computed in
parallel.

Under a transformation (jit, grad, vmap: the arguments are tracers) pmap runs as vmap does.

Across processes (after xjax.distributed.initialize, in a run of several processes) the mapped
axis covers every process's devices: each process passes and gets back the shards of its own
devices, its segments run on them, and a cut collective runs as one MPI operation over the local
shards (lax/parallel_mpi.py); an equation holding collectives in its jaxprs gathers its operands
from every process and runs its vmap rule over all shards. The program, its segments and cut equations:
pmap_program.py.
"""
import functools

from xjax._src import core, data_leaves, distributed, placement, platforms, tree_util, vmap as vmap_api
from xjax._src.api import device_put
from xjax._src.array import Array
from xjax._src.devices import cpu_devices, global_devices
from xjax._src.interpreters import partial_eval as pe
from xjax._src.interpreters.graph_lowering import as_array
from xjax._src.jit import jit
from xjax._src.jit_cache import insert_bounded
from xjax._src.lax.parallel_mpi import Shards
from xjax._src.pmap_program import HAS_RESHAPED, Program, inline_collective_calls, stack_shards, unstack_shards

# ---- the API ------------------------------------------------------------------------------------

def _devices_for(n, devices):
    """The devices of n shards, or JAX's error."""
    if devices is not None:
        devices = list(devices)
        if len(devices) != n:
            raise ValueError("Leading axis size of input to pmapped function must equal the number of local devices "
                             f"passed to pmap. Got axis_size={n}, num_local_devices={len(devices)}.")
        known = {d.id: d for d in global_devices()}
        for d in devices:
            if known.get(getattr(d, "id", None)) is not d:
                raise ValueError(f"pmap: {d!r} is not one of xjax.devices() ({list(known.values())})")
        return devices
    available = cpu_devices()
    if n > len(available):
        raise ValueError(f"compiling computation that requires {n} logical devices, but only {len(available)} XLA "
                         f"devices are available (num_replicas={n})")
    return available[:n]


def _gpu_of(leaves, devices, n):
    """The GPU the map runs on, or None: the first of its devices when they are GPUs, else (devices=None)
    the GPU a call on these arguments goes to (xjax._src.placement.gpu_for_call). The shards then run as
    one vmapped program there, which holds the results (xjax does not spread a pmap over several GPUs
    yet); n is checked against the GPUs there are, as JAX does."""
    if devices is not None:
        devices = list(devices)
        if {getattr(d, "platform", None) for d in devices} != {"gpu"}:
            return None
        if len(devices) != n:
            raise ValueError("Leading axis size of input to pmapped function must equal the number of local devices "
                             f"passed to pmap. Got axis_size={n}, num_local_devices={len(devices)}.")
        return devices[0]
    gpu = placement.gpu_for_call(leaves)
    if gpu is None:
        return None
    available = platforms.gpu.device_count()
    if n > available:
        raise ValueError(f"compiling computation that requires {n} logical devices, but only {available} XLA "
                         f"devices are available (num_replicas={n})")
    return gpu


def _across_processes(n, devices, axis_name):
    """(this process's devices, their Shards) when the pmap spans processes; None when it is local.

    As in JAX, pmap maps over every process's devices unless `devices` names only local ones, and
    each process passes the shards of its own devices.
    """
    if distributed.process_count() == 1:
        return None
    everywhere = global_devices()
    me = distributed.process_index()
    if devices is not None:
        devices = list(devices)
        if all(getattr(d, "process_index", None) == me for d in devices):
            return None
        if [getattr(d, "id", None) for d in devices] != [d.id for d in everywhere]:
            raise NotImplementedError("pmap across processes maps over all of xjax.devices() (devices=None) or over "
                                      "this process's devices alone; xjax does not map over another subset")
    local = [d for d in everywhere if d.process_index == me]
    if n != len(local):
        raise ValueError(f"pmap across {distributed.process_count()} processes: each process passes the shards of its "
                         f"own devices along the mapped axis, {len(local)} here (xjax.local_device_count()); got "
                         f"axis size {n}")
    return local, Shards(axis_name, len(everywhere), local[0].id, len(local))


_UNDER_TRANSFORM = ("pmap across processes under a transformation (jit, grad or vmap of a pmap) is not supported "
                    "by xjax; apply jit and grad inside the pmapped function")


def _output(shards, axis):
    """One output: the shards stacked along `axis` (None: the first shard's value)."""
    if axis is None:
        return as_array(shards[0])
    ndim = core.get_aval(shards[0]).ndim + 1
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return stack_shards(list(shards), axis % ndim)


def _argnums(x):
    return (x,) if isinstance(x, int) else tuple(x)


class _Call:
    """A pmap call for one signature of arguments: the program, and where the shards go (found by
    pmap's generic path), kept so that a repeated call with xjax Arrays goes straight to work."""

    __slots__ = ("entry", "axes", "shard_avals", "n", "device_ids", "shards", "world", "whole")

    def __init__(self, entry, axes, shard_avals, n, device_ids, shards):
        self.entry, self.axes, self.shard_avals, self.n = entry, axes, shard_avals, n
        self.device_ids, self.shards = device_ids, shards
        self.world = global_devices()  # a distributed initialize or shutdown changes it
        self.whole = None  # across processes: Program.whole_runner's function (False: none), found at the first call

    def __call__(self, leaves):
        n, entry = self.n, self.entry
        if self.shards is not None and platforms._placement is None:
            if self.whole is None:
                self.whole = entry.program.whole_runner(self.shards, self.axes, self.shard_avals, entry.out_axes) or False
            if self.whole and all(type(x) is Array for x in leaves):
                return entry.out_tree.unflatten(self.whole(leaves))
        if n == 1 and HAS_RESHAPED:  # one shard: views of the arguments, no op
            shard_args = [[x if a is None else Array(x._value.reshaped(aval.shape), aval)
                           for x, a, aval in zip(leaves, self.axes, self.shard_avals)]]
        else:
            per_leaf = [[x] * n if a is None else unstack_shards(x, a, n) for x, a in zip(leaves, self.axes)]
            shard_args = [list(s) for s in zip(*per_leaf)] if leaves else [[] for _ in range(n)]
        outs = entry.program(shard_args, self.device_ids, self.shards)
        per_leaf = list(zip(*outs)) if outs and outs[0] else []
        return entry.out_tree.unflatten([_output(vals, ax) for vals, ax in zip(per_leaf, entry.out_axes)])


class _Entry:
    __slots__ = ("program", "out_tree", "out_axes")

    def __init__(self, program, out_tree, out_axes):
        self.program, self.out_tree, self.out_axes = program, out_tree, out_axes


def pmap(fun, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(), devices=None, backend=None,
         axis_size=None, donate_argnums=(), global_arg_shapes=None):
    """Maps `fun` over the axes `in_axes` of its arguments, one shard per CPU device, in parallel.

    As JAX's pmap: `axis_name` names the mapped axis for collectives (lax.psum, ...), arguments
    in static_broadcasted_argnums are hashable Python values passed to every shard, kwargs are
    mapped along axis 0, and the results stack the shards along out_axes. There are
    xjax.devices() devices (jax_num_cpu_devices / XJAX_NUM_CPU_DEVICES); donate_argnums is
    accepted and ignored (host buffers are not donated).

    In a multi-process run (xjax.distributed.initialize) pmap maps over the devices of every
    process unless `devices` lists only this process's: each process passes arrays whose mapped
    axis holds its xjax.local_device_count() shards, and gets its shards of the results back.
    """
    if not callable(fun):
        raise TypeError(f"pmap requires a callable, got {fun!r}")
    if backend not in (None, "cpu"):
        raise ValueError(f"pmap: unknown backend {backend!r}; xjax has 'cpu'")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    vmap_api._check_axis_spec("in_axes", in_axes, "pmap")
    vmap_api._check_axis_spec("out_axes", out_axes, "pmap")
    static = _argnums(static_broadcasted_argnums)
    # Both bounded as jit's cache is (jit_cache.insert_bounded): a pmapped function called with ever
    # new shapes keeps as many programs alive as the compiled-jaxpr cache's limit allows.
    cache = {}
    fast = {}  # (tree, avals, axis env) of xjax Array arguments -> _Call: a repeated call's plan

    @functools.wraps(fun)
    def pmap_f(*args, **kwargs):
        fast_key = None
        if not static:
            leaves, in_tree = tree_util.tree_flatten((args, kwargs))
            if all(type(x) is Array for x in leaves):
                fast_key = (in_tree, tuple([x.aval for x in leaves]), core.axis_env())
                call = fast.get(fast_key)
                if call is not None and call.world is global_devices():
                    return call(leaves)
        n_args = len(args)
        static_pos = sorted({i % n_args for i in static if -n_args <= i < n_args})
        statics = tuple((i, args[i]) for i in static_pos)
        for i, v in statics:
            try:
                hash(v)
            except TypeError:
                raise ValueError(f"Non-hashable static arguments are not supported. An error occurred while trying "
                                 f"to hash an object of type {type(v)}, {v!r}.") from None
        dyn = [i for i in range(n_args) if i not in static_pos]
        dyn_args = tuple(args[i] for i in dyn)
        if isinstance(in_axes, tuple):
            if len(in_axes) != n_args:
                raise ValueError("pmap in_axes must be an int, None, or a tuple of entries corresponding to the "
                                 f"positional arguments passed to the function, but got len(in_axes)={len(in_axes)}, "
                                 f"len(args)={n_args}")
            dyn_in_axes = tuple(in_axes[i] for i in dyn)
        else:
            dyn_in_axes = in_axes

        def with_statics(*dyn_vals, **kw):
            it = iter(dyn_vals)
            given = dict(statics)
            return fun(*[given[i] if i in given else next(it) for i in range(n_args)], **kw)

        leaves = tree_util.tree_leaves((dyn_args, kwargs))  # the axes and sizes are the leaves' (a key's own shape)
        arg_axes = vmap_api.flatten_axes("in_axes", dyn_args, dyn_in_axes, "pmap")
        axes = arg_axes + [0] * (len(leaves) - len(arg_axes))
        axes = [vmap_api._canonical_in_axis(a, x, "pmap") for a, x in zip(axes, leaves)]
        n = vmap_api._axis_size(fun, dyn_args, kwargs, leaves, axes, axis_size, "pmap")
        leaves, in_tree = data_leaves.flatten((dyn_args, kwargs))
        gpu = _gpu_of(leaves, devices, n)
        if gpu is not None:
            key = ("gpu", statics, n_args)
            if key not in cache:
                cache[key] = jit(vmap_api.vmap(with_statics, dyn_in_axes, out_axes, axis_name=axis_name))
            args, kw = device_put((dyn_args, kwargs), gpu)
            return cache[key](*args, **kw)
        across = _across_processes(n, devices, axis_name)
        devs, shards = across if across else (_devices_for(n, devices), None)
        size = shards.size if shards else n  # the mapped axis: every process's devices
        if any(isinstance(x, core.Tracer) for x in leaves):  # under a transformation: as vmap
            if shards:
                raise NotImplementedError(_UNDER_TRANSFORM)
            return vmap_api.vmap(with_statics, dyn_in_axes, out_axes, axis_name=axis_name)(*dyn_args, **kwargs)
        leaves = [as_array(x) for x in leaves]
        avals = [x.aval if a is None else x.aval.update(shape=x.shape[:a] + x.shape[a + 1:])
                 for x, a in zip(leaves, axes)]
        key = (in_tree, statics, tuple(axes), tuple(avals), size, core.axis_env(), tuple(d.id for d in devs))
        entry = cache.get(key)
        if entry is None:
            names_fn = lambda: pe.arg_names_of(fun, args, kwargs, static_pos)  # noqa: E731
            entry = _trace(with_statics, pe.DebugInfo("pmap", fun, names_fn=names_fn), in_tree, avals, size,
                           axis_name, out_axes)
            if entry is None:  # it closes over tracers: under a transformation
                if shards:
                    raise NotImplementedError(_UNDER_TRANSFORM)
                return vmap_api.vmap(with_statics, dyn_in_axes, out_axes, axis_name=axis_name)(*dyn_args, **kwargs)
            insert_bounded(cache, key, entry)
        call = _Call(entry, axes, avals, n, [d.local_hardware_id for d in devs], shards)
        if fast_key is not None:
            insert_bounded(fast, fast_key, call)
        return call(leaves)

    return pmap_f


def _trace(fun, dbg, in_tree, avals, n, axis_name, out_axes):
    """The _Entry of fun (taking the dynamic arguments) traced over one shard; None when it closes
    over tracers of an enclosing transformation."""
    out_trees = []

    def flat_fun(*tracers):
        a, k = in_tree.unflatten(tracers)
        out = fun(*a, **k)
        leaves, tree = data_leaves.flatten(out)
        out_trees.append(tree)
        return leaves

    with core.extend_axis_env(axis_name, n):
        what = f"function {pe.func_src_info(dbg.fun)} traced for pmap"
        closed = pe.trace_to_jaxpr(flat_fun, avals, dbg, what=what)
        closed, lifted = pe.split_tracer_consts(closed)
        if lifted:
            return None
        closed = inline_collective_calls(closed)
        program = Program(closed, axis_name)
    out_tree = out_trees[0]
    flat_out_axes = vmap_api.flatten_axes("out_axes", out_tree.unflatten([0] * out_tree.num_leaves), out_axes, "pmap")
    return _Entry(program, out_tree, flat_out_axes)
