"""Control flow holding collectives in a per-device program (pmap_program.Program): scan, while and
cond driven from here, each body a Program of its own run on every device at once, its collectives
between compiled segments (across processes, through the same paths as the top level's).

Run as one equation over every device's blocks stacked (its vmap rule), such an equation would
compute on one device and, across processes, move every block at every collective; driven, each
device runs its own body, where the body does enough work to pay for it (MIN_WORK). The semantics
are the vmap rule's: a while loop whose predicates differ among devices runs while any holds, a
device whose predicate fails keeping its carry (it still takes part in the body's collectives); a
cond whose index differs among devices runs each branch some device takes on every device, each
keeping its own branch's results. Across processes, they agree on that (whether any device runs,
which branches some device takes) by one small all-reduce, so that every process runs the same
collectives.
"""
import math

import numpy as np

from xjax._src import distributed
from xjax._src.interpreters.graph_lowering import as_array
from xjax._src.lax import parallel as P, parallel_mpi
from xjax._src.lax.base import asarray
from xjax._src.jaxpr import jaxprs_in_params
from xjax._src.lax.conditionals import cond_p
from xjax._src.lax.contraction import dot_general_p
from xjax._src.lax.layout import index_in_dim
from xjax._src.lax.loops import _stack, scan_p, while_p


MIN_WORK = 1 << 20  # an iteration's operations below which driving costs more than it saves


def _work(jaxpr):
    """About how many scalar operations one run of jaxpr does: its results' elements, products'
    times their contraction, nested scans' times their length."""
    total = 0
    for e in jaxpr.eqns:
        n = sum(math.prod(v.aval.shape) for v in e.outvars if hasattr(v.aval, "shape"))
        if e.primitive is dot_general_p:
            (lc, _), _ = e.params["dimension_numbers"]
            n *= 2 * math.prod(e.invars[0].aval.shape[d] for d in lc)
        inner = sum(_work(j) for j in jaxprs_in_params(e.params))
        total += n + inner * (e.params["length"] if e.primitive is scan_p else 1)
    return total


def drivable(eqn):
    """Whether Driven runs eqn: a scan, a cond, or a while with a scalar predicate, whose bodies do
    at least MIN_WORK operations a run (about 100 us of a thread: what driving one iteration costs
    in Python, where the stacked equation's compiled loop costs nothing; below it, that wins)."""
    return (eqn.primitive in (scan_p, cond_p) or (
        eqn.primitive is while_p and not eqn.params["cond_jaxpr"].out_avals[0].shape)) and \
        sum(_work(j) for j in jaxprs_in_params(eqn.params)) >= MIN_WORK


class Driven:
    """A scan, while or cond equation whose bodies hold collectives; make_program(ClosedJaxpr) builds
    the per-device Program of a body."""

    def __init__(self, eqn, make_program):
        self.eqn = eqn
        p = eqn.params
        if eqn.primitive is scan_p:
            self.run_all, self.body = self._scan, make_program(p["jaxpr"])
        elif eqn.primitive is while_p:
            self.run_all = self._while
            self.cond, self.body = make_program(p["cond_jaxpr"]), make_program(p["body_jaxpr"])
        else:
            self.run_all, self.branches = self._cond, [make_program(b) for b in p["branches"]]

    def run(self, envs, read, *where):
        """where: the Program call's (device_ids, shards, mesh_place)."""
        ins = [[read(env, a) for a in self.eqn.invars] for env in envs]
        for env, vals in zip(envs, self.run_all(ins, where)):
            env.update(zip(self.eqn.outvars, vals))

    def _scan(self, ins, where):
        p = self.eqn.params
        nc, nk, length = p["num_consts"], p["num_carry"], p["length"]
        consts = [a[:nc] for a in ins]
        carry = [a[nc:nc + nk] for a in ins]
        xs = [[as_array(x) for x in a[nc + nk:]] for a in ins]
        steps = []
        for t in (reversed(range(length)) if p["reverse"] else range(length)):
            outs = self.body([c + k + [index_in_dim(x, t, 0, keepdims=False) for x in xd]
                              for c, k, xd in zip(consts, carry, xs)], *where)
            carry = [o[:nk] for o in outs]
            steps.append([o[nk:] for o in outs])
        if p["reverse"]:
            steps.reverse()
        y_avals = p["jaxpr"].out_avals[nk:]
        return [k + [_stack([as_array(s[d][j]) for s in steps], a, length) for j, a in enumerate(y_avals)]
                for d, k in enumerate(carry)]

    def _while(self, ins, where):
        p = self.eqn.params
        cn, bn = p["cond_nconsts"], p["body_nconsts"]
        cconsts, bconsts = [a[:cn] for a in ins], [a[cn:cn + bn] for a in ins]
        carry = [a[cn + bn:] for a in ins]
        while True:
            preds = [bool(o[0]) for o in self.cond([c + k for c, k in zip(cconsts, carry)], *where)]
            if not _agreed([any(preds)], where)[0]:
                return carry
            new = self.body([b + k for b, k in zip(bconsts, carry)], *where)
            carry = [n if running else k for n, k, running in zip(new, carry, preds)]

    def _cond(self, ins, where):
        last = len(self.branches) - 1
        chosen = [min(max(int(a[0]), 0), last) for a in ins]  # (clamped, as the primitive's index)
        taken = _agreed([i in chosen for i in range(last + 1)], where)
        outs = {}
        for i in map(int, np.flatnonzero(taken)):
            outs[i] = self.branches[i]([a[1:] for a in ins], *where)
        return [outs[i][d] for d, i in enumerate(chosen)]


def _agreed(flags, where):
    """flags (booleans), or'd over every process where the program spans processes (where: the
    Program call's device_ids, shards, mesh_place): one all-reduce, in which every process takes part."""
    if where[1] is None and where[2] is None:
        return flags
    shards = parallel_mpi.Shards("control flow", distributed.process_count(), distributed.process_index(), 1)
    ((out,),) = parallel_mpi.allreduce_many(P.pmax_p, shards, [[asarray(np.array(flags, np.int32))]],
                                            "control flow")
    return [bool(f) for f in np.asarray(out)]
