"""pmap: maps a function over CPU devices, one shard per device, with collectives between shards.

`fun` is traced once per signature to a jaxpr over one shard, with `axis_name` bound to the
number of shards. The jaxpr is cut at the equations that need every shard at once (collectives,
and equations holding jaxprs that contain collectives). Each run of equations between cuts is
compiled once to one Executable, which every device runs at the same time on its own shard (on
its host thread and its share of the cores: src/core/devices.h). A cut equation runs once over
the shards stacked along a new axis, by its vmap rule (a collective's rule is one lax op over
that axis); its results are split back into shards. So pmap gives vmap's results, computed in
parallel.

The results are arrays split over the one-axis mesh of the devices (ShardedArrays, P(axis_name) along
out_axes, P() for out_axes=None), as JAX 0.10.2's are; such a result passed to the next pmap gives its
blocks as they are.

Under a transformation (jit, grad, vmap, make_jaxpr: the arguments are tracers) pmap is what JAX 0.10.2
makes it: jit(shard_map(_fun)) over that mesh with check_vma=False, `_fun` squeezing the mapped axis of
each block and expanding each result along its out_axis, so that its jaxprs, derivatives and batching
are shard_map's. Inside another pmap or shard_map's body (JAX 0.10.2 refuses that nesting), with a
named axis bound, and with negative out_axes (their specs need the results' ranks) it runs as vmap does.

Across processes (after xjax.distributed.initialize, in a run of several processes) the mapped
axis covers every process's devices: each process passes and gets back the shards of its own
devices, its segments run on them, and a cut collective runs as one MPI operation over the local
shards (lax/parallel_mpi.py); an equation holding collectives in its jaxprs gathers its operands
from every process and runs its vmap rule over all shards. The program, its segments and cut equations:
pmap_program.py. Under a transformation across processes, the jit(shard_map) is over the mesh of every
process's devices, its operands and results moved between this process's slices and global arrays by
pmap_across.py's primitives.
"""
import functools

from xjax import _core
from xjax._src import core, data_leaves, distributed, placement, platforms, tree_util, vmap as vmap_api
from xjax._src.api import device_put
from xjax._src.array import Array
from xjax._src.devices import cpu_devices, global_devices
from xjax._src.interpreters import partial_eval as pe
from xjax._src.interpreters.graph_lowering import as_array
from xjax._src.jit import jit
from xjax._src.jit_cache import insert_bounded
from xjax._src.lax.layout import expand_dims, reshape, squeeze
from xjax._src.lax.parallel_mpi import Shards
from xjax._src.pmap_across import to_global, to_local
from xjax._src.mpi_channel import raise_failure
from xjax._src.pmap_program import HAS_RESHAPED, Program, WholeCall, inline_collective_calls, unstack_shards
from xjax._src.shard_map import shard_map
from xjax._src.sharded_array import ShardedArray, install_dispatch
from xjax._src.sharding import Mesh, NamedSharding, PartitionSpec

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


_UNDER_TRANSFORM = ("pmap across processes inside another pmap or shard_map's body, under a named vmap or with "
                    "negative out_axes is not supported by xjax")


def _argnums(x):
    return (x,) if isinstance(x, int) else tuple(x)


def _view(x, aval):
    """x (a concrete Array) under aval's shape of as many elements: the same buffer where the core can."""
    if HAS_RESHAPED:
        return Array(x._value.reshaped(aval.shape), aval)
    return reshape(x, aval.shape)


def _split_as(x, sharding):
    return x._sharding is sharding or x._sharding == sharding


def _shards_of(x, axis, sharding, aval, n):
    """One argument's per-device values: the blocks of an array already split as pmap splits it (a
    previous pmap's result), else x split along axis (None: x on every device)."""
    if type(x) is ShardedArray:
        if _split_as(x, sharding):
            return list(x._shards) if axis is None else [_view(b, aval) for b in x._shards]
        x = Array(x._value, x.aval)
    if axis is None:
        return [x] * n
    return unstack_shards(x, axis, n)  # (one shard: a view)


def _out_layout(aval, axis, devices, axis_name, n):
    """(sharding, block aval, global aval) of an output of type `aval` on each device: as JAX's pmap
    gives it, stacked along `axis` over the mesh of the devices (None: replicated)."""
    if axis is None:
        return _sharding_of(devices, axis_name, None), aval, aval
    ndim = aval.ndim + 1
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    axis %= ndim
    shape = aval.shape
    return (_sharding_of(devices, axis_name, axis), aval.update(shape=shape[:axis] + (1,) + shape[axis:]),
            aval.update(shape=shape[:axis] + (n,) + shape[axis:]))


_MESHES = {}  # (device ids, axis name) -> the one-axis Mesh of a pmap's devices
_SHARDINGS = {}  # (device ids, axis name, mapped axis) -> its NamedSharding: one object per layout, so that a
# result passed to the next pmap is recognised by identity


def _mesh_of(devices, axis_name):
    """The one-axis mesh of the devices a pmap runs on (this process's, across processes: JAX's local mesh)."""
    name = AXIS_NAME if axis_name is None else axis_name
    key = (tuple(d.id for d in devices), name)
    mesh = _MESHES.get(key)
    if mesh is None:
        mesh = _MESHES[key] = Mesh(list(devices), (name,))
    return mesh


def _sharding_of(devices, axis_name, axis):
    """The sharding of a value mapped along `axis` (None: replicated) over _mesh_of(devices, axis_name)."""
    key = (tuple(d.id for d in devices), axis_name, axis)
    sharding = _SHARDINGS.get(key)
    if sharding is None:
        mesh = _mesh_of(devices, axis_name)
        sharding = _SHARDINGS[key] = NamedSharding(mesh, _spec(mesh.axis_names[0], axis))
    return sharding


class _Call:
    """A pmap call for one signature of arguments: the program, where the shards go and how results are
    laid out (found by pmap's generic path), kept so that a repeated call goes straight to work.

    Arguments are xjax Arrays (split per device) or ShardedArrays (their blocks, when split as pmap
    splits); results are ShardedArrays over the mesh of the devices, as JAX 0.10.2's pmap gives them."""

    __slots__ = ("entry", "axes", "shard_avals", "n", "device_ids", "shards", "world", "whole", "devices", "axis_name",
                 "in_shardings", "outs")

    def __init__(self, entry, axes, shard_avals, devices, shards, axis_name):
        self.entry, self.axes, self.shard_avals, self.n = entry, axes, shard_avals, len(devices)
        self.device_ids, self.shards = [d.local_hardware_id for d in devices], shards
        self.world = global_devices()  # a distributed initialize or shutdown changes it
        self.whole = None  # across processes: Program.whole_runner's function (False: none), found at the first call
        self.devices, self.axis_name = devices, axis_name
        self.in_shardings = [_sharding_of(devices, axis_name, a) for a in axes]
        self.outs = None  # per output, _out_layout's triple (_layouts)
        install_dispatch()  # (eager primitives on the results see their blocks)

    def __call__(self, leaves):
        n, entry = self.n, self.entry
        if self.shards is not None and platforms._placement is None:
            if self.whole is None:
                self.whole = entry.program.whole_runner(self.shards, self.axes, self.shard_avals, entry.out_axes) or False
                self._layouts()
            if self.whole:
                local = leaves
                for x in leaves:
                    if type(x) is not Array:
                        local = [x._shards[0] if type(x) is ShardedArray and _split_as(x, s) else x
                                 for x, s in zip(leaves, self.in_shardings)]
                        break
                if local is leaves or all(type(x) is Array for x in local):  # one device here: a value is its block
                    return entry.out_tree.unflatten([ShardedArray((v,), s, g)
                                                     for v, (s, _, g) in zip(self.whole(local), self.outs)])
        per_leaf = [_shards_of(x, a, s, aval, n) for x, a, s, aval in zip(leaves, self.axes, self.in_shardings,
                                                                          self.shard_avals)]
        shard_args = [list(s) for s in zip(*per_leaf)] if leaves else [[] for _ in range(n)]
        outs = entry.program(shard_args, self.device_ids, self.shards)
        return entry.out_tree.unflatten(self._results(list(zip(*outs)) if outs and outs[0] else []))

    def run_installing(self, calls, args, kwargs, leaves):
        """The call of these arguments (`leaves` their leaves), whose signature is then installed in
        pmap's C++ call path (`calls`, the pmapped function: a _core.fast_call.PmapCalls) if it ran
        whole as one MpiCall."""
        out = self(leaves)
        if type(self.whole) is WholeCall and not kwargs:
            calls.install(args, self.whole.call, self.in_shardings, [s for s, _, _ in self.outs],
                          [g for _, _, g in self.outs], self.entry.out_tree)
        return out

    def _layouts(self):
        """Per output, _out_layout's (sharding, block aval, global aval), found at the first call."""
        if self.outs is None:
            self.outs = [_out_layout(v.aval, a, self.devices, self.axis_name, self.n)
                         for v, a in zip(self.entry.program.jaxpr.outvars, self.entry.out_axes)]
        return self.outs

    def _results(self, per_leaf):
        """ShardedArrays of each output's per-device values, viewed as blocks."""
        return [ShardedArray([_view(as_array(v), b) for v in vals], s, g)
                for vals, (s, b, g) in zip(per_leaf, self._layouts())]


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
    # Across processes, a repeated call of a program that runs whole in the core runs in C++ (the
    # wrapper's base); the rest come to call_python (_Call.run_installing installs their signatures).
    pmap_f = _Pmapped(distributed.state, raise_failure, ShardedArray)

    def call_python(args, kwargs):
        fast_key = None
        if not static:
            leaves, in_tree = tree_util.tree_flatten((args, kwargs))
            avals = []
            for x in leaves:  # (a loop, not all(): a generator costs as much as the rest of this)
                if type(x) is not Array and type(x) is not ShardedArray:
                    break
                avals.append(x.aval)
            else:
                fast_key = (in_tree, tuple(avals), core.axis_env())
                call = fast.get(fast_key)
                if call is not None and call.world is global_devices():
                    return call.run_installing(pmap_f, args, kwargs, leaves)
        return call_slow(args, kwargs, fast_key)

    def call_slow(args, kwargs, fast_key):  # (its own function: call_python's frame makes no cells for its closures)
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

        def under_transformation():  # jit of a shard_map (JAX's), or in the corners _as_vmap names, vmap
            if shards:
                if _as_vmap(out_axes):
                    raise NotImplementedError(_UNDER_TRANSFORM)
                return _across(with_statics, leaves, in_tree, axes, out_axes, devs, axis_name, cache,
                               ("across", in_tree, statics, tuple(axes)))
            if _as_vmap(out_axes):
                return vmap_api.vmap(with_statics, dyn_in_axes, out_axes, axis_name=axis_name)(*dyn_args, **kwargs)
            key = ("shard_map", in_tree, statics, tuple(axes), tuple(d.id for d in devs))
            if key not in cache:  # (one jit per layout: its traces and compiled programs are kept)
                insert_bounded(cache, key, _as_shard_map(with_statics, in_tree, axes, out_axes, devs, axis_name))
            return cache[key](*leaves)

        if any(isinstance(x, core.Tracer) for x in leaves):
            return under_transformation()
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
                return under_transformation()
            insert_bounded(cache, key, entry)
        call = _Call(entry, axes, avals, devs, shards, axis_name)
        if fast_key is None:
            return call(leaves)
        insert_bounded(fast, fast_key, call)
        return call.run_installing(pmap_f, args, kwargs, leaves)

    functools.update_wrapper(pmap_f, fun)
    pmap_f._call_slow = call_python  # (after: a pmapped `fun`'s own would come with its __dict__)
    return pmap_f


class _Pmapped(_core.fast_call.PmapCalls):
    """A pmapped function. Its base runs in C++ the calls whose signature the Python path installed
    (across processes, a program run whole as one MpiCall); every other call goes to `_call_slow`,
    the instance's own (pmap's Python path). functools.update_wrapper gives it the wrapped function's
    name, docs and `__wrapped__`, as a function wrapper has them."""

    _fast_calls = property(lambda self: self)  # (its `hits` and `size`: the calls C++ answered, the signatures)

    def __get__(self, obj, objtype=None):  # (a method's first argument, as a function wrapper binds it)
        return self if obj is None else functools.partial(self, obj)


# ---- under a transformation: pmap as JAX writes it, jit of a shard_map over a mesh of its devices --

AXIS_NAME = "_internal_pmap_axis_name"  # JAX's name for the axis of a pmap without axis_name


def _spec(name, axis):
    """The PartitionSpec of a value mapped along `axis` (None: replicated)."""
    return PartitionSpec() if axis is None else PartitionSpec(*[None] * axis, name)


def _as_vmap(out_axes):
    """Whether a traced pmap runs as vmap: inside another pmap or shard_map's body (JAX 0.10.2 refuses
    its nested shard_map; xjax's pmap nested as before), or with negative out_axes, whose specs
    need the results' ranks."""
    return core.axis_env() or any(a is not None and a < 0 for a in tree_util.tree_leaves(
        out_axes, is_leaf=lambda x: x is None))


def _as_shard_map(fun, in_tree, in_axes, out_axes, devices, axis_name):
    """jit(shard_map(_fun)) over a one-axis mesh of `devices`, as JAX 0.10.2's pmap: `_fun` takes the
    flat arguments' blocks (the mapped axis of size 1), squeezes it, calls fun and expands each
    result along its out_axis."""
    mesh = _mesh_of(devices, axis_name)
    name = mesh.axis_names[0]

    def _fun(*blocks):
        a, k = in_tree.unflatten([x if ax is None else squeeze(x, (ax,)) for x, ax in zip(blocks, in_axes)])
        out = fun(*a, **k)
        flat_axes = vmap_api.flatten_axes("out_axes", out, out_axes, "pmap")
        leaves, tree = data_leaves.flatten(out)  # (a key's data: its axes first)
        return tree.unflatten([x if ax is None else expand_dims(x, (ax,)) for x, ax in zip(leaves, flat_axes)])

    out_specs = tree_util.tree_map(lambda a: _spec(name, a), out_axes, is_leaf=lambda x: x is None)
    return jit(shard_map(_fun, mesh=mesh, in_specs=tuple(_spec(name, a) for a in in_axes), out_specs=out_specs,
                         check_vma=False, axis_names={name}))


def _across(fun, leaves, in_tree, axes, out_axes, local_devices, axis_name, cache, key):
    """pmap across processes under a transformation: this process's slices made global arrays over the
    mesh of every process's devices (pmap_across.to_global), the jit of a shard_map over that mesh
    applied, and its results made this process's slices again (to_local), as an eager call gives them."""
    mesh = _mesh_of(global_devices(), axis_name)
    if key not in cache:
        insert_bounded(cache, key, _as_shard_map(fun, in_tree, axes, out_axes, list(mesh.devices.flat), axis_name))
    local_mesh = _mesh_of(local_devices, axis_name)
    out = cache[key](*[to_global(x, mesh, a, local_mesh) for x, a in zip(leaves, axes)])
    flat_axes = vmap_api.flatten_axes("out_axes", out, out_axes, "pmap")
    flat, tree = data_leaves.flatten(out)
    return tree.unflatten([to_local(y, mesh, a, local_mesh) for y, a in zip(flat, flat_axes)])


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
