"""psum, pmax and pmin across processes as the core's all_reduce op, inside compiled programs.

pmap over the devices of several processes, with one device in each process, compiles the whole
per-shard program -- collectives included, in loops and branches too -- into one Executable
when its only collectives are all-reduces over the pmapped axis (pmap.py). Each all-reduce then
runs in the core (src/core/distributed/mpi.h) with no Python between it and the work around it: the
core calls the MPI library that mpi4py loaded through xjax's MPI shim (mpi_shim.py: compiled
against that library's mpi.h, bound in mpi_channel.ensure_installed), with the checks of the
Python collectives (mpi_channel.py) -- the same check, which the Python collectives run in the
core too, the same collective counter, the timeout, the roll call and the notices of failed
processes -- so the two kinds mix in one program order.

Independent all-reduces of one kind next to each other in the program (a gradient's leaves) are
one all_reduce op: one exchange. 16-bit floats are reduced as float32.
"""
import contextlib
import threading

import numpy as np

from xjax import _core
from xjax._src import core
from xjax._src.distributed import state
from xjax._src.interpreters.graph_lowering import GraphProgram, is_lowerable
from xjax._src.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, jaxprs_in_params
from xjax._src.lax import parallel as P
from xjax._src.mpi_channel import CORE_MPI, bracketed, ensure_installed, signature

_REDUCTIONS = {prim: name[1:] for prim, name in P.ALL_REDUCES.items()}  # (psum: "sum", ...)
_WIDENED = {np.dtype(np.float16), np.dtype("bfloat16")}


# ---- the op -------------------------------------------------------------------------------------

def _desc(prim, axis_name, avals):
    shown = ", ".join(f"{(np.dtype(np.float32) if a.dtype in _WIDENED else a.dtype).name}{list(a.shape)}"
                      for a in avals)
    return f"{P.ALL_REDUCES[prim]}(axis_name={axis_name!r}) of {shown}"  # as parallel_mpi describes it


def _lower(lowerer, prim, axis_name, ins, avals):
    """The graph values of the all-reduce of ins (one exchange)."""
    xs = [lowerer.op("convert_element_type", x, new_dtype="float32")[0] if a.dtype in _WIDENED else x
          for x, a in zip(ins, avals)]
    sig = signature(_desc(prim, axis_name, avals))
    outs = lowerer.graph.add("all_reduce", xs, {"reduction": _REDUCTIONS[prim], "signature": sig.encoded})
    return [lowerer.op("convert_element_type", y, new_dtype=a.dtype.name)[0] if a.dtype in _WIDENED else y
            for y, a in zip(outs, avals)]


all_reduce_p = core.Primitive("all_reduce_across", multiple_results=True)


def _all_reduce_impl(*xs, reduction, axis_name):
    raise NotImplementedError("all_reduce_across runs only inside pmap's compiled programs")


all_reduce_p.def_rules(
    abstract_eval=lambda *avals, reduction, axis_name: list(avals), impl=_all_reduce_impl,
    can_lower=lambda params: True,
    jaxpr_lowering=lambda lowerer, eqn, ins: _lower(lowerer, eqn.params["reduction"], eqn.params["axis_name"], ins,
                                                    [a.aval for a in eqn.invars]))


# The pmapped axis (a tuple of one name) while this thread lowers a program across processes: the
# state of one lowering in progress, so per thread (another thread's psum under jit is not lowered
# to the core's all_reduce meanwhile).
_lowering = threading.local()


def can_lower(params):
    """Whether an all-reduce (psum_p, pmax_p, pmin_p) lowers into a graph: only across processes."""
    axis = getattr(_lowering, "axis", None)
    return axis is not None and params["axis_name"] == axis


def lowering(prim):
    """psum's (pmax's, pmin's) jaxpr_lowering, used where can_lower allows it."""
    return lambda lowerer, eqn, ins: _lower(lowerer, prim, eqn.params["axis_name"], ins, [eqn.invars[0].aval])


# Across processes an all-reduce lowers into the graph (as the core's all_reduce over MPI) while
# pmap compiles a whole program (lowering_across); elsewhere pmap runs it between graphs.
for _prim in _REDUCTIONS:
    _prim.def_rules(can_lower=can_lower, jaxpr_lowering=lowering(_prim))


@contextlib.contextmanager
def lowering_across(axis_name):
    """While this thread lowers a program across processes over the pmapped axis axis_name."""
    previous, _lowering.axis = getattr(_lowering, "axis", None), (axis_name,)
    try:
        yield
    finally:
        _lowering.axis = previous


# ---- which programs, and the grouping of independent all-reduces --------------------------------

# Primitives whose jaxprs may run on some processes and not others (a predicate computed from each
# process's data): pmap gives them vmap's meaning (every branch, every shard), so a collective in
# them runs from Python over all shards gathered, never in the core.
_DIVERGENT = ("cond", "while")


def _collectives(jaxpr, divergent=False):
    """(equation, whether it sits in a divergent primitive's jaxpr) for every collective."""
    for e in jaxpr.eqns:
        if e.primitive in P.COLLECTIVES:
            yield e, divergent
        for j in jaxprs_in_params(e.params):
            yield from _collectives(j, divergent or e.primitive.name in _DIVERGENT)


def applies(jaxpr, axis_name):
    """Whether every collective in jaxpr is an all-reduce over the pmapped axis alone, at the top
    level or in scans (which run the same steps on every process), none in a cond or while_loop."""
    return CORE_MPI and all(e.primitive in _REDUCTIONS and e.params["axis_name"] == (axis_name,) and not divergent
                             for e, divergent in _collectives(jaxpr))


def compile_whole(closed, axis_name):
    """The GraphCall of the whole per-shard program, its all-reduces grouped and lowered to the
    core's all_reduce op; None when some equation cannot be compiled, or no output would run it."""
    if not ensure_installed():
        return None
    with lowering_across(axis_name):
        whole = grouped(closed)
        if not all(is_lowerable(e) for e in whole.jaxpr.eqns):
            return None
        program = GraphProgram(whole)
    return program.bind(closed.consts) if program.exe is not None else None


def grouped(closed):
    """closed with each run of independent all-reduces of one kind (adjacent equations, none
    reading another's result) made one all_reduce_across equation: one exchange."""
    eqns, run = [], []

    def flush():
        if run:
            first = run[0]
            eqns.append(JaxprEqn([e.invars[0] for e in run], [e.outvars[0] for e in run], all_reduce_p,
                                 {"reduction": first.primitive, "axis_name": first.params["axis_name"]}))
            run.clear()

    for e in closed.jaxpr.eqns:
        if e.primitive in _REDUCTIONS:
            produced = {v for r in run for v in r.outvars}
            joins = run and e.primitive is run[0].primitive and e.params == run[0].params and \
                not any(a in produced for a in e.invars if type(a) is not Literal)
            if not joins:
                flush()
            run.append(e)
            continue
        flush()
        eqns.append(e)
    flush()
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr(j.constvars, j.invars, j.outvars, eqns), closed.consts)


# ---- running a program ---------------------------------------------------------------------------

def run(fn):
    """fn() runs a program holding all_reduce ops (and waits for it): the collective counter and the
    timeout go into the core and the counter comes back; a failed collective raises the
    DistributedError that the Python collectives raise."""

    def begun(exited):
        _core.mpi_begin(state.seq, state.timeout, exited)
        return fn()

    return bracketed(begun)


def run_call(call, leaves):
    """A _core.MpiCall of the argument leaves (a list of xjax Arrays; a whole program as pmap calls
    it; mpi_begin is in the call), as run: the result Arrays."""
    return bracketed(lambda exited: call(leaves, state.seq, state.timeout, exited))
