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
from every process and runs its vmap rule over all shards.
"""
import functools

from xjax import _core
from xjax._src import core, placement, tree_util
from xjax._src import vmap as vmap_api
from xjax._src.array import Array
from xjax._src import distributed
from xjax._src.devices import cpu_devices, global_devices
from xjax._src.interpreters import batching
from xjax._src.interpreters import partial_eval as pe
from xjax._src.interpreters.graph_lowering import GraphProgram, as_array, is_lowerable
from xjax._src.jaxpr import ClosedJaxpr, Jaxpr, Literal, has_effect, jaxprs_in_params, literal_value
from xjax._src.lax.parallel import COLLECTIVES


def _has_collective(jaxpr):
    return any(e.primitive in COLLECTIVES or any(_has_collective(j) for j in jaxprs_in_params(e.params))
               for e in jaxpr.eqns)


# ---- shards: splitting arguments, stacking results ----------------------------------------------

_HAS_RESHAPED = hasattr(_core.Array, "reshaped")


def _reshaped(x, shape):
    """A concrete x under another shape of as many elements: the same buffer, no op."""
    return Array(x._value.reshaped(shape), x.aval.update(shape=shape))


def _unstack(x, axis, n):
    from xjax._src.lax.layout import index_in_dim

    if n == 1 and _HAS_RESHAPED and type(x) is Array:  # one shard (one device per process): a view
        return [_reshaped(x, x.shape[:axis] + x.shape[axis + 1:])]
    return [index_in_dim(x, i, axis, keepdims=False) for i in range(n)]


_STACKED_AVALS = {}  # (a shard's aval, axis) -> the aval of one shard stacked along axis


def _stack(values, axis):
    """The per-shard values stacked along a new axis (one value for all: broadcast)."""
    from xjax._src.lax.layout import concatenate, expand_dims

    if len(values) == 1 and _HAS_RESHAPED and type(values[0]) is Array:
        x = values[0]
        aval = _STACKED_AVALS.get((x.aval, axis))
        if aval is None:
            if len(_STACKED_AVALS) > 1024:
                _STACKED_AVALS.clear()
            aval = _STACKED_AVALS[x.aval, axis] = x.aval.update(shape=x.shape[:axis] + (1,) + x.shape[axis:])
        return Array(x._value.reshaped(aval.shape), aval)
    if all(v is values[0] for v in values):
        return batching.broadcast_batched(as_array(values[0]), len(values), axis)
    return concatenate([expand_dims(as_array(v), (axis,)) for v in values], axis)


# ---- the program: compiled runs of equations, and cut equations between them --------------------

class _Segment:
    """A run of lowerable equations compiled to one Executable, run on every device at once."""

    def __init__(self, eqns, inputs, outputs):
        self.inputs, self.outputs = inputs, outputs
        self.program = GraphProgram(ClosedJaxpr(Jaxpr([], inputs, outputs, eqns), []))

    def run(self, envs, device_ids):
        prog = self.program
        if prog.exe is None:  # no single graph (only effects): run shard by shard
            for env in envs:
                env.update(zip(self.outputs, prog.call([as_array(env[v]) for v in self.inputs])))
            return
        args = [[as_array(env[v])._value for v in self.inputs] + prog.nested_extern for env in envs]
        results = prog.exe.run_on_devices(args, device_ids)
        for env, vals in zip(envs, results):
            if prog.out_pos is not None:
                vals = [vals[i] for i in prog.out_pos]
            env.update((v, Array(x, v.aval)) for v, x in zip(self.outputs, vals))


def _read(env, a):
    return literal_value(a) if type(a) is Literal else env[a]


def _bind_stacked(eqn, ins, mapped, n, axis_name):
    """The equation's vmap rule over inputs stacked along axis 0 (those `mapped`): (value, dim) per output."""
    trace = batching.BatchTrace(core.current_trace(), batching.AxisData(axis_name, n))
    with core.extend_axis_env(axis_name, n), core.new_trace(trace):
        tracers = [batching.BatchTracer(trace, x, 0) if m else x for x, m in zip(ins, mapped)]
        out = eqn.primitive.bind(*tracers, **eqn.params)
        return [trace.lift(o) for o in (out if eqn.primitive.multiple_results else [out])]


def _run_stacked(eqn, envs, axis_name):
    """One equation over all shards at once: its vmap rule over the shards stacked along axis 0."""
    n = len(envs)
    # A value the same in every shard stays unmapped, but not for an equation holding collectives
    # in its jaxprs: the batch trace must see it to interpret them.
    holder = eqn.primitive not in COLLECTIVES
    ins, mapped = [], []
    for a in eqn.invars:
        vals = [_read(env, a) for env in envs]
        same = type(a) is Literal or (not holder and all(v is vals[0] for v in vals))
        ins.append(vals[0] if same else _stack(vals, 0))
        mapped.append(not same)
    outs = _bind_stacked(eqn, ins, mapped, n, axis_name)
    for var, (val, dim) in zip(eqn.outvars, outs):
        shards = [val] * n if dim is batching.not_mapped else _unstack(val, dim, n)
        for env, s in zip(envs, shards):
            env[var] = s


# ---- across processes: this process holds some of the shards ------------------------------------

def _run_across(eqn, envs, shards):
    """A collective over the devices of every process: lowered to MPI (lax/parallel_mpi.py)."""
    from xjax._src.lax import parallel_mpi

    ins = [[as_array(_read(env, a)) for env in envs] for a in eqn.invars]
    outs = parallel_mpi.run(eqn.primitive, shards, ins[0] if ins else [], eqn.params)
    for env, val in zip(envs, outs):
        env[eqn.outvars[0]] = val


def _packable(step):
    from xjax._src.lax import parallel as P

    return type(step) is tuple and step[0] == "stacked" and step[1].primitive in (P.psum_p, P.pmax_p, P.pmin_p)


def _joins(eqns, eqn):
    """Whether eqn may run in one exchange with eqns: same collective and axis, reading none of
    their results."""
    first = eqns[0]
    produced = {v for e in eqns for v in e.outvars}
    return (eqn.primitive is first.primitive and eqn.params == first.params and
            not any(a in produced for a in eqn.invars if type(a) is not Literal))


class _AllreduceRun:
    """Independent psum (pmax, pmin) equations across processes, run as one exchange."""

    def __init__(self, eqn):
        self.eqns = [eqn]
        self.exchange = None  # a parallel_mpi.Allreduce, made at the first run

    def run(self, envs, shards):
        from xjax._src.lax import parallel_mpi

        eqns = self.eqns
        if self.exchange is None:
            self.exchange = parallel_mpi.Allreduce(eqns[0].primitive, eqns[0].params["axis_name"])
        operands = [[as_array(_read(env, eqn.invars[0])) for env in envs] for eqn in eqns]
        outs = self.exchange(shards, operands)
        for eqn, vals in zip(eqns, outs):
            for env, val in zip(envs, vals):
                env[eqn.outvars[0]] = val


def _run_gathered(eqn, envs, shards):
    """An equation holding collectives in its jaxprs (cond, scan, ...), across processes: every
    process gathers all shards of its inputs and runs the vmap rule over them, keeping its own."""
    from xjax._src.lax import parallel_mpi

    ins, mapped = [], []
    for a in eqn.invars:
        if type(a) is Literal:
            ins.append(literal_value(a))
            mapped.append(False)
        else:
            ins.append(parallel_mpi.allgather_stack(shards, [as_array(_read(env, a)) for env in envs]))
            mapped.append(True)
    outs = _bind_stacked(eqn, ins, mapped, shards.size, shards.name)
    mine = range(shards.offset, shards.offset + shards.count)
    for var, (val, dim) in zip(eqn.outvars, outs):
        vals = [val] * len(envs) if dim is batching.not_mapped else \
            [_unstack_one(val, dim, i) for i in mine]
        for env, v in zip(envs, vals):
            env[var] = v


def _unstack_one(x, axis, i):
    from xjax._src.lax.layout import index_in_dim

    return index_in_dim(x, i, axis, keepdims=False)


def _run_per_shard(eqn, envs):
    """An equation the core cannot compile (and without collectives): eagerly, shard by shard."""
    for env in envs:
        out = eqn.primitive.impl(*[_read(env, a) for a in eqn.invars], **eqn.params)
        env.update(zip(eqn.outvars, out if eqn.primitive.multiple_results else [out]))


class _Program:
    """A per-shard jaxpr as steps: _Segments, and cut equations (stacked or per shard)."""

    def __init__(self, closed, axis_name):
        jaxpr = closed.jaxpr
        self.jaxpr, self.consts, self.axis_name = jaxpr, closed.consts, axis_name
        groups, seg = [], []
        for eqn in jaxpr.eqns:
            if is_lowerable(eqn):
                seg.append(eqn)
                continue
            if seg:
                groups.append(seg)
                seg = []
            groups.append(eqn)
        if seg:
            groups.append(seg)
        # What each step hands on: variables read by later steps or returned.
        live = {a for a in jaxpr.outvars if type(a) is not Literal}
        live_after = []
        for g in reversed(groups):
            live_after.append(set(live))
            for eqn in (g if isinstance(g, list) else [g]):
                live.update(a for a in eqn.invars if type(a) is not Literal)
        self.steps = []
        self._packed = None
        self._whole = None  # across processes with one device each: the program as one GraphCall
        for g, after in zip(groups, reversed(live_after)):
            if isinstance(g, list):
                defined, inputs = set(), []
                for eqn in g:
                    inputs += [a for a in eqn.invars if type(a) is not Literal and a not in defined and a not in inputs]
                    defined.update(eqn.outvars)
                outputs = [v for eqn in g for v in eqn.outvars if v in after]
                if outputs or any(has_effect(e) for e in g):
                    self.steps.append(_Segment(g, inputs, outputs))
            elif g.primitive in COLLECTIVES or any(_has_collective(j) for j in jaxprs_in_params(g.params)):
                self.steps.append(("stacked", g))
            else:
                self.steps.append(("per_shard", g))

    @property
    def packed_steps(self):
        """The steps across processes: runs of independent all-reduces of one kind (the psums of a
        gradient's leaves) become one step, so they cross processes as one message exchange."""
        if self._packed is None:
            self._packed = []
            for step in self.steps:
                prev = self._packed[-1] if self._packed else None
                if _packable(step) and type(prev) is _AllreduceRun and _joins(prev.eqns, step[1]):
                    prev.eqns.append(step[1])
                elif _packable(step):
                    self._packed.append(_AllreduceRun(step[1]))
                else:
                    self._packed.append(step)
        return self._packed

    def whole_across(self, shards):
        """Across processes, with one device in each: the whole program compiled to one GraphCall
        whose all-reduces run in the core (lax/parallel_core.py), when its only collectives are
        all-reduces over the pmapped axis; else None (its collectives run between segments)."""
        if self._whole is None:
            from xjax._src.lax import parallel_core

            self._whole = False
            if shards.count == 1 and parallel_core.applies(self.jaxpr, self.axis_name):
                self._whole = parallel_core.compile_whole(ClosedJaxpr(self.jaxpr, self.consts), self.axis_name) or False
        return self._whole or None

    def __call__(self, shard_args, device_ids, shards=None):
        """Per-shard outputs for per-shard arguments (lists of xjax Arrays, one list per shard).

        shards (a parallel_mpi.Shards) when the axis spans processes: these are this process's.
        """
        jaxpr = self.jaxpr
        whole = self.whole_across(shards) if shards is not None else None
        if whole is not None:
            from xjax._src.lax import parallel_core

            return [parallel_core.run(lambda: _waited(whole(shard_args[0])))]
        envs = []
        for args in shard_args:
            env = dict(zip(jaxpr.constvars, self.consts))
            env.update(zip(jaxpr.invars, args))
            envs.append(env)
        steps = self.steps if shards is None else self.packed_steps
        for step in steps:
            if isinstance(step, _Segment):
                step.run(envs, device_ids)
            elif type(step) is _AllreduceRun:
                step.run(envs, shards)
            elif step[0] == "stacked" and shards is not None:
                if step[1].primitive in COLLECTIVES:
                    _run_across(step[1], envs, shards)
                else:
                    _run_gathered(step[1], envs, shards)
            elif step[0] == "stacked":
                distributed.check_initialized(f"pmap's '{step[1].primitive}'")
                _run_stacked(step[1], envs, self.axis_name)
            else:
                _run_per_shard(step[1], envs)
        return [[_read(env, a) for a in jaxpr.outvars] for env in envs]


def _waited(values):
    for v in values:
        v._value.wait()
    return values


def _inline_collective_calls(closed):
    """The jaxpr with nested jit equations that contain collectives inlined, so that the
    collectives are cut points of the top level."""
    from xjax._src.jit_primitive import jit_p

    if not any(e.primitive is jit_p and _has_collective(e.params["jaxpr"].jaxpr) for e in closed.jaxpr.eqns):
        return closed

    def run(jaxpr, consts, *args):
        env = dict(zip(jaxpr.constvars, consts))
        env.update(zip(jaxpr.invars, args))
        for eqn in jaxpr.eqns:
            ins = [_read(env, a) for a in eqn.invars]
            if eqn.primitive is jit_p and _has_collective(eqn.params["jaxpr"].jaxpr):
                inner = eqn.params["jaxpr"]
                out = run(inner.jaxpr, inner.consts, *ins)
            else:
                out = eqn.primitive.bind(*ins, **eqn.params)
            env.update(zip(eqn.outvars, out if eqn.primitive.multiple_results else [out]))
        return [_read(env, a) for a in jaxpr.outvars]

    return pe.trace_to_jaxpr(lambda *args: run(closed.jaxpr, closed.consts, *args), closed.in_avals)


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
    from xjax._src.backends import gpu_devices

    available = gpu_devices.cupy().cuda.runtime.getDeviceCount()
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
    from xjax._src.lax.parallel_mpi import Shards

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
    return _stack(list(shards), axis % ndim)


def _argnums(x):
    return (x,) if isinstance(x, int) else tuple(x)


class _Call:
    """A pmap call for one signature of arguments: the program, and where the shards go (found by
    pmap's generic path), kept so that a repeated call with xjax Arrays goes straight to work."""

    __slots__ = ("entry", "axes", "shard_avals", "n", "device_ids", "shards", "world")

    def __init__(self, entry, axes, shard_avals, n, device_ids, shards):
        self.entry, self.axes, self.shard_avals, self.n = entry, axes, shard_avals, n
        self.device_ids, self.shards = device_ids, shards
        self.world = global_devices()  # a distributed initialize or shutdown changes it

    def __call__(self, leaves):
        n, entry = self.n, self.entry
        if n == 1 and _HAS_RESHAPED:  # one shard: views of the arguments, no op
            shard_args = [[x if a is None else Array(x._value.reshaped(aval.shape), aval)
                           for x, a, aval in zip(leaves, self.axes, self.shard_avals)]]
        else:
            per_leaf = [[x] * n if a is None else _unstack(x, a, n) for x, a in zip(leaves, self.axes)]
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

        leaves, in_tree = tree_util.tree_flatten((dyn_args, kwargs))
        arg_axes = vmap_api.flatten_axes("in_axes", dyn_args, dyn_in_axes, "pmap")
        axes = arg_axes + [0] * (len(leaves) - len(arg_axes))
        axes = [vmap_api._canonical_in_axis(a, x, "pmap") for a, x in zip(axes, leaves)]
        n = vmap_api._axis_size(fun, dyn_args, kwargs, leaves, axes, axis_size, "pmap")
        gpu = _gpu_of(leaves, devices, n)
        if gpu is not None:
            key = ("gpu", statics, n_args)
            if key not in cache:
                from xjax._src.jit import jit

                cache[key] = jit(vmap_api.vmap(with_statics, dyn_in_axes, out_axes, axis_name=axis_name))
            from xjax._src.api import device_put

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
            cache[key] = entry
        call = _Call(entry, axes, avals, n, [d.local_hardware_id for d in devs], shards)
        if fast_key is not None:
            if len(fast) > 256:
                fast.clear()
            fast[fast_key] = call
        return call(leaves)

    return pmap_f


def _trace(fun, dbg, in_tree, avals, n, axis_name, out_axes):
    """The _Entry of fun (taking the dynamic arguments) traced over one shard; None when it closes
    over tracers of an enclosing transformation."""
    out_trees = []

    def flat_fun(*tracers):
        a, k = in_tree.unflatten(tracers)
        out = fun(*a, **k)
        leaves, tree = tree_util.tree_flatten(out)
        out_trees.append(tree)
        return leaves

    with core.extend_axis_env(axis_name, n):
        what = f"function {pe.func_src_info(dbg.fun)} traced for pmap"
        closed = pe.trace_to_jaxpr(flat_fun, avals, dbg, what=what)
        closed, lifted = pe.split_tracer_consts(closed)
        if lifted:
            return None
        closed = _inline_collective_calls(closed)
        program = _Program(closed, axis_name)
    out_tree = out_trees[0]
    flat_out_axes = vmap_api.flatten_axes("out_axes", out_tree.unflatten([0] * out_tree.num_leaves), out_axes, "pmap")
    return _Entry(program, out_tree, flat_out_axes)


def shard_map(f=None, /, *, out_specs=None, in_specs=None, mesh=None, axis_names=frozenset(), check_vma=True):
    """JAX's SPMD map over a mesh: not implemented in xjax yet (pmap maps over devices)."""
    raise NotImplementedError("jax.shard_map is not implemented in xjax yet; use xjax.pmap")
