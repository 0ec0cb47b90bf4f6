"""The program of a pmap: a per-shard jaxpr cut at its collectives into compiled segments that every
device runs at once, and cut equations run over the shards stacked (pmap.py), across processes too;
shard_map's over the axes of a mesh (shard_map.py)."""
from xjax import _core
from xjax._src import core, distributed, program_control, vmap as vmap_api
from xjax._src.array import Array
from xjax._src.interpreters import batching, partial_eval as pe
from xjax._src.interpreters.graph_lowering import GraphProgram, as_array, split_segments
from xjax._src.jaxpr import ClosedJaxpr, Jaxpr, Literal, has_effect, jaxprs_in_params, literal_value
from xjax._src.jit_primitive import jit_p
from xjax._src.lax import parallel as P, parallel_core, parallel_mpi, reduction
from xjax._src.lax.layout import concatenate, expand_dims, index_in_dim, reshape
from xjax._src.lax.parallel import COLLECTIVES


def _has_collective(jaxpr):
    return any(e.primitive in COLLECTIVES or any(_has_collective(j) for j in jaxprs_in_params(e.params))
               for e in jaxpr.eqns)


# ---- shards: splitting arguments, stacking results ----------------------------------------------

HAS_RESHAPED = hasattr(_core.Array, "reshaped")
HAS_MPI_CALL = hasattr(_core, "MpiCall")


def _reshaped(x, shape):
    """A concrete x under another shape of as many elements: the same buffer, no op."""
    return Array(x._value.reshaped(shape), x.aval.update(shape=shape))


def unstack_shards(x, axis, n):
    if n == 1 and HAS_RESHAPED and type(x) is Array:  # one shard (one device per process): a view
        return [_reshaped(x, x.shape[:axis] + x.shape[axis + 1:])]
    return [index_in_dim(x, i, axis, keepdims=False) for i in range(n)]


_STACKED_AVALS = {}  # (a shard's aval, axis) -> the aval of one shard stacked along axis


def stack_shards(values, axis):
    """The per-shard values stacked along a new axis (one value for all: broadcast)."""
    if len(values) == 1 and HAS_RESHAPED and type(values[0]) is Array:
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


_ALL_REDUCES = {P.psum_p: reduction.reduce_sum, P.psum_invariant_p: reduction.reduce_sum, P.pmax_p: reduction.reduce_max,
                P.pmin_p: reduction.reduce_min}


def _reduced_over_mesh(eqn, ins, sizes):
    """An all-reduce over every axis of the mesh: the stacked shards reduced as the vmap rules would
    (the last mesh axis first), the result left unmapped: one value that every device shares."""
    x = reshape(ins[0], sizes + ins[0].shape[1:])
    for axis in reversed(range(len(sizes))):
        x = _ALL_REDUCES[eqn.primitive](x, (axis,))
    return [(x, batching.not_mapped)]


def _bind_over_mesh(eqn, ins, mapped, n, mesh_axes):
    """The equation over the shards of a mesh (stacked along axis 0 in its device order): one vmap
    per mesh axis, so that a collective over some of the axes reduces over those alone."""
    sizes = tuple(s for _, s in mesh_axes)
    if eqn.primitive in _ALL_REDUCES and mapped == [True] and \
            set(P._names(eqn.params["axis_name"])) == {name for name, _ in mesh_axes}:
        return _reduced_over_mesh(eqn, ins, sizes)
    fun = lambda *xs: eqn.primitive.bind(*xs, **eqn.params)  # noqa: E731
    in_axes = [0 if m else None for m in mapped]
    for name, size in reversed(mesh_axes):
        fun = vmap_api.vmap(fun, in_axes=in_axes, axis_name=name, axis_size=size)
    out = fun(*[reshape(x, sizes + x.shape[1:]) if m else x for x, m in zip(ins, mapped)])
    return [(reshape(o, (n,) + o.shape[len(sizes):]), 0) for o in (out if eqn.primitive.multiple_results else [out])]


def _run_stacked(eqn, envs, axis_name, mesh_axes=None):
    """One equation over all shards at once: its vmap rule over the shards stacked along axis 0
    (over each axis of a mesh's, for shard_map)."""
    n = len(envs)
    # A value the same in every shard stays unmapped, but not for an equation holding collectives
    # in its jaxprs: the batch trace must see it to interpret them.
    holder = eqn.primitive not in COLLECTIVES
    ins, mapped = [], []
    for a in eqn.invars:
        vals = [_read(env, a) for env in envs]
        same = type(a) is Literal or (not holder and all(v is vals[0] for v in vals))
        ins.append(vals[0] if same else stack_shards(vals, 0))
        mapped.append(not same)
    if mesh_axes is None:
        outs = _bind_stacked(eqn, ins, mapped, n, axis_name)
    else:
        outs = _bind_over_mesh(eqn, ins, mapped, n, mesh_axes)
    for var, (val, dim) in zip(eqn.outvars, outs):
        shards = [val] * n if dim is batching.not_mapped else unstack_shards(val, dim, n)
        for env, s in zip(envs, shards):
            env[var] = s


# ---- across processes: this process holds some of the shards ------------------------------------

def _run_across(eqn, envs, shards):
    """A collective over the devices of every process: lowered to MPI (lax/parallel_mpi.py)."""
    ins = [[as_array(_read(env, a)) for env in envs] for a in eqn.invars]
    outs = parallel_mpi.run(eqn.primitive, shards, ins[0] if ins else [], eqn.params)
    for env, val in zip(envs, outs):
        env[eqn.outvars[0]] = val


def _packable(step):
    return type(step) is tuple and step[0] == "stacked" and step[1].primitive in P.ALL_REDUCES


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
        eqns = self.eqns
        if self.exchange is None:
            self.exchange = parallel_mpi.Allreduce(eqns[0].primitive, eqns[0].params["axis_name"])
        operands = [[as_array(_read(env, eqn.invars[0])) for env in envs] for eqn in eqns]
        outs = self.exchange(shards, operands)
        for eqn, vals in zip(eqns, outs):
            for env, val in zip(envs, vals):
                env[eqn.outvars[0]] = val


def gathered_operands(eqn, envs, gather):
    """eqn's operands with every device's blocks of each variable stacked by gather(blocks), and
    whether each is (a literal is not)."""
    ins, mapped = [], []
    for a in eqn.invars:
        if type(a) is Literal:
            ins.append(literal_value(a))
            mapped.append(False)
        else:
            ins.append(gather([as_array(_read(env, a)) for env in envs]))
            mapped.append(True)
    return ins, mapped


def _run_gathered(eqn, envs, shards):
    """An equation holding collectives in its jaxprs (cond, scan, ...), across processes: every
    process gathers all shards of its inputs and runs the vmap rule over them, keeping its own."""
    ins, mapped = gathered_operands(eqn, envs, lambda blocks: parallel_mpi.allgather_stack(shards, blocks))
    outs = _bind_stacked(eqn, ins, mapped, shards.size, shards.name)
    mine = range(shards.offset, shards.offset + shards.count)
    for var, (val, dim) in zip(eqn.outvars, outs):
        vals = [val] * len(envs) if dim is batching.not_mapped else \
            [_unstack_one(val, dim, i) for i in mine]
        for env, v in zip(envs, vals):
            env[var] = v


def _unstack_one(x, axis, i):
    return index_in_dim(x, i, axis, keepdims=False)


def _run_per_shard(eqn, envs):
    """An equation the core cannot compile (and without collectives): eagerly, shard by shard."""
    for env in envs:
        out = eqn.primitive.impl(*[_read(env, a) for a in eqn.invars], **eqn.params)
        env.update(zip(eqn.outvars, out if eqn.primitive.multiple_results else [out]))


class Program:
    """A per-shard jaxpr as steps: _Segments, and cut equations (stacked or per shard)."""

    def __init__(self, closed, axis_name, mesh_axes=None):
        jaxpr = closed.jaxpr
        self.jaxpr, self.consts, self.axis_name = jaxpr, closed.consts, axis_name
        self.mesh_axes = mesh_axes  # shard_map's: ((name, size), ...) of its mesh; pmap's axis_name is then None
        groups = split_segments(jaxpr)
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
            elif program_control.drivable(g) and any(_has_collective(j) for j in jaxprs_in_params(g.params)):
                self.steps.append(program_control.Driven(
                    g, lambda c: Program(inline_collective_calls(c), axis_name, mesh_axes)))
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

    def whole_across(self, shards, axis_name=None):
        """Across processes, with one device in each: the whole program compiled to one GraphCall
        whose all-reduces run in the core (lax/parallel_core.py), when its only collectives are
        all-reduces over the mapped axis (pmap's, or the one axis of shard_map's mesh: axis_name);
        else None (its collectives run between segments)."""
        if self._whole is None:
            self._whole = False
            axis_name = axis_name or self.axis_name
            if shards.count == 1 and parallel_core.applies(self.jaxpr, axis_name):
                self._whole = parallel_core.compile_whole(ClosedJaxpr(self.jaxpr, self.consts), axis_name) or False
        return self._whole or None

    def whole_runner(self, shards, in_axes, shard_avals, out_axes):
        """Across processes with one device in each, a repeated call's path when the whole program
        is one GraphCall (whole_across): a function of the pmap's argument leaves (their mapped
        axis of size 1, or unmapped) to its output leaves (stacked along out_axes), with no step
        between; None when there is none."""
        whole = self.whole_across(shards) if shards.count == 1 and HAS_RESHAPED else None
        if whole is None or whole.extern is None:
            return None
        in_shapes = [None if a is None else aval.shape for a, aval in zip(in_axes, shard_avals)]
        outs = []  # (shape to view the output under, or None, and its aval) per output
        for aval, axis in zip(whole.out_avals, out_axes):
            if axis is None:
                outs.append((None, aval))
                continue
            if not -aval.ndim - 1 <= axis <= aval.ndim:
                return None  # (the general path raises the error)
            axis %= aval.ndim + 1
            shape = aval.shape[:axis] + (1,) + aval.shape[axis:]
            outs.append((shape, aval.update(shape=shape)))

        if HAS_MPI_CALL and whole.out_pos is None:  # one call into the core: views, run, wait, result Arrays
            return WholeCall(_core.MpiCall(whole.program.exe, whole.extern, in_shapes, [s for s, _ in outs],
                                           [a for _, a in outs]))

        def run(leaves):
            values = [x._value if s is None else x._value.reshaped(s) for x, s in zip(leaves, in_shapes)]
            vals = parallel_core.run(lambda: _waited_values(whole.run_values(values)))
            return [Array(v if s is None else v.reshaped(s), a) for v, (s, a) in zip(vals, outs)]

        return run

    def __call__(self, shard_args, device_ids, shards=None, mesh_place=None):
        """Per-shard outputs for per-shard arguments (lists of xjax Arrays, one list per shard).

        shards (a parallel_mpi.Shards) when the axis spans processes: these are this process's.
        mesh_place (a mesh_across.MeshPlace) when shard_map's mesh does: it runs the collectives.
        """
        jaxpr = self.jaxpr
        if shards is not None:
            whole = self.whole_across(shards)
        else:
            whole = mesh_place.whole(self) if mesh_place is not None else None
        if whole is not None:
            return [parallel_core.run(lambda: _waited(whole(shard_args[0])))]
        envs = []
        for args in shard_args:
            env = dict(zip(jaxpr.constvars, self.consts))
            env.update(zip(jaxpr.invars, args))
            envs.append(env)
        steps = self.steps if shards is None and mesh_place is None else self.packed_steps
        for step in steps:
            if isinstance(step, _Segment):
                step.run(envs, device_ids)
            elif type(step) is program_control.Driven:
                step.run(envs, _read, device_ids, shards, mesh_place)
            elif mesh_place is not None and type(step) is _AllreduceRun:
                mesh_place.allreduce(step.eqns, envs)
            elif mesh_place is not None and step[0] == "stacked":
                mesh_place.run_gathered(step[1], envs)
            elif type(step) is _AllreduceRun:
                step.run(envs, shards)
            elif step[0] == "stacked" and shards is not None:
                if step[1].primitive in COLLECTIVES:
                    _run_across(step[1], envs, shards)
                else:
                    _run_gathered(step[1], envs, shards)
            elif step[0] == "stacked":
                distributed.check_initialized(f"pmap's '{step[1].primitive}'")
                _run_stacked(step[1], envs, self.axis_name, self.mesh_axes)
            else:
                _run_per_shard(step[1], envs)
        return [[_read(env, a) for a in jaxpr.outvars] for env in envs]


class WholeCall:
    """whole_runner's function when the program is one _core.MpiCall (`call`, which pmap's C++
    call path installs)."""

    __slots__ = ("call",)

    def __init__(self, call):
        self.call = call

    def __call__(self, leaves):
        return parallel_core.run_call(self.call, leaves)


def _waited(values):
    for v in values:
        v._value.wait()
    return values


def _waited_values(values):
    for v in values:
        v.wait()
    return values


def inline_collective_calls(closed):
    """The jaxpr with nested jit equations that contain collectives inlined, so that the
    collectives are cut points of the top level."""
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
