"""Loops holding collectives in a per-device program (pmap_program.Program): driven from here, one
iteration at a time, each running its body's own Program on every device at once, its collectives
between compiled segments (and across processes through the same paths as the top level's).

Run as one equation over every device's blocks stacked (the vmap rule), such a loop would compute
on one device and, across processes, move every block at every collective; driven, each device
runs its own body. The semantics are the vmap rule's: a while loop whose predicates differ among
devices runs while any holds, and a device whose predicate fails keeps its carry (it still takes
part in the body's collectives).
"""
from xjax._src.interpreters.graph_lowering import as_array
from xjax._src.lax.layout import index_in_dim
from xjax._src.lax.loops import _stack, scan_p, while_p


def drivable(eqn):
    """Whether eqn is a loop this module drives (a while with a scalar predicate, or a scan)."""
    return eqn.primitive is scan_p or (eqn.primitive is while_p and not eqn.params["cond_jaxpr"].out_avals[0].shape)


class DrivenLoop:
    """A scan or while equation whose body holds collectives; make_program(ClosedJaxpr) builds the
    per-device Program of a body."""

    def __init__(self, eqn, make_program):
        self.eqn = eqn
        p = eqn.params
        if eqn.primitive is scan_p:
            self.body = make_program(p["jaxpr"])
        else:
            self.cond, self.body = make_program(p["cond_jaxpr"]), make_program(p["body_jaxpr"])

    def run(self, envs, read, *where):
        """where: the Program call's (device_ids, shards, mesh_place)."""
        ins = [[read(env, a) for a in self.eqn.invars] for env in envs]
        outs = (self._scan if self.eqn.primitive is scan_p else self._while)(ins, where)
        for env, vals in zip(envs, outs):
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
            if not any(preds):
                return carry
            new = self.body([b + k for b, k in zip(bconsts, carry)], *where)
            carry = [n if run else k for n, k, run in zip(new, carry, preds)]

