"""jit's partition rules for control flow: scan, while (fori_loop, while_loop) and cond.

Their bodies are partitioned as any jaxpr is (partition.partition_jaxpr, handed to `rules`), traced
over blocks into the per-device body of the same primitive, so that the collectives the body needs
(a psum after a contraction of a split dimension) are inside the per-device loop.

A loop's carry has one layout for every iteration: a fixed point, found from the init's layouts by
joining them with the layouts the body gives its carry out, until they no longer change (`_join`:
a dimension whole on one side takes the other's split, since slicing a whole value costs nothing;
two different splits gather it, for good). The init is resharded to the fixed point, and the body's
carry out too. A scan's xs are split as their operands along the other dimensions (the scanned one
gathered; JAX's ValueError over an Explicit axis), its ys as the body's, unsplit along the scan.
A cond's branches are partitioned alike, their results joined into one layout that each branch
reshards to. These are the layouts XLA picks for the tested programs (tests/test_jit_partition.py);
over Explicit axes a carry or branch result split over them whose layout would change raises
NotImplementedError (JAX's types refuse such programs), which runs the program on the gathered
arguments; one whole over them may gain splits.
"""
from xjax._src.interpreters import partial_eval as pe
from xjax._src.lax.conditionals import cond_p
from xjax._src.lax.loops import scan_p, while_p
from xjax._src.partition_rules import _to, count, gathered, reshard


def _join(a, b, forced):
    """One value's layout joined with another's; `forced`: dimensions gathered for good (updated)."""
    out, used = [], set()
    for d, (x, y) in enumerate(zip(a, b)):
        names = () if d in forced else x if x == y or not y else y if not x else None
        if names is None or used & set(names):
            forced.add(d)
            names = ()
        used.update(names)
        out.append(names)
    return tuple(out)


def _explicit_differs(mesh, have, want):
    """Whether a layout split over Explicit axes changes them (one whole over them may gain splits,
    as JAX types a loop's zeros carry, or a branch's zeros, with the split the body gives them)."""
    explicit = set(mesh.explicit_axes)
    have_x = [{n for n in h if n in explicit} for h in have]
    return any(have_x) and have_x != [{n for n in w if n in explicit} for w in want]


def _refuse_explicit(mesh, eqn, have, want):
    if any(_explicit_differs(mesh, h, w) for h, w in zip(have, want)):
        raise NotImplementedError(
            f"jit of '{eqn.primitive.name}' whose carry or branch results change their split over Explicit mesh "
            "axes: JAX's types refuse it; xjax runs it unpartitioned")


def _block_aval(aval, axes, mesh):
    return aval.update(shape=tuple(n // count(mesh, a) for n, a in zip(aval.shape, axes)))


def rules(partition_jaxpr, arrange):
    """The control-flow rules, partitioning their bodies with partition_jaxpr and ordering the
    per-device bodies' equations with arrange (partition.py's, collectives late)."""

    def trace_body(mesh, closed, layouts, want=None):
        """closed's body over blocks laid out as `layouts`: (ClosedJaxpr, its results' layouts), the
        results resharded to `want` where given (None entries: kept)."""
        out_axes = []

        def body(*blocks):
            outs = partition_jaxpr(closed.jaxpr, closed.consts, list(zip(blocks, layouts)), mesh)
            wants = want or [None] * len(outs)
            out_axes[:] = [axes if w is None else w for (_, axes), w in zip(outs, wants)]
            return [x if w is None else reshard(x, axes, w, mesh) for (x, axes), w in zip(outs, wants)]

        avals = [_block_aval(a, axes, mesh) for a, axes in zip(closed.in_avals, layouts)]
        return arrange(pe.trace_to_jaxpr(body, avals)), out_axes

    def carry_fixed_point(mesh, closed, before, init, after):
        """The carry layouts: from init's, joined with the body's carry out until stable."""
        carry, forced = list(init), [set() for _ in init]
        while True:
            _, outs = trace_body(mesh, closed, [*before, *carry, *after])
            joined = [_join(c, o, f) for c, o, f in zip(carry, outs[:len(carry)], forced)]
            if joined == carry:
                return carry, outs[:len(carry)]
            carry = joined

    def scan(mesh, eqn, ins):
        p = eqn.params
        nc, nk = p["num_consts"], p["num_carry"]
        consts, init, xs = ins[:nc], ins[nc:nc + nk], ins[nc + nk:]
        for (_, axes), v in zip(xs, eqn.invars[nc + nk:]):
            if axes[0] and set(axes[0]) & set(mesh.explicit_axes):
                spec = ", ".join(repr(a[0]) if len(a) == 1 else repr(a) if a else "None" for a in axes)
                raise ValueError(f"0th dimension of all xs should be replicated. Got P({spec})")
        xs = [(_to(mesh, eqn, x, axes, ((),) + axes[1:]), ((),) + axes[1:]) for x, axes in xs]
        const_axes, x_axes = [a for _, a in consts], [a[1:] for _, a in xs]
        carry, outs = carry_fixed_point(mesh, p["jaxpr"], const_axes, [a for _, a in init], x_axes)
        _refuse_explicit(mesh, eqn, [a for _, a in init] + carry, carry + outs)
        body, out_axes = trace_body(mesh, p["jaxpr"], const_axes + carry + x_axes,
                                    carry + [None] * (len(p["jaxpr"].out_avals) - nk))
        init_blocks = [reshard(x, a, c, mesh) for (x, a), c in zip(init, carry)]
        results = scan_p.bind(*[x for x, _ in consts], *init_blocks, *[x for x, _ in xs], **{**p, "jaxpr": body})
        layouts = carry + [((),) + a for a in out_axes[nk:]]
        return list(zip(results, layouts))

    def while_loop(mesh, eqn, ins):
        p = eqn.params
        cn, bn = p["cond_nconsts"], p["body_nconsts"]
        if p["cond_jaxpr"].out_avals[0].shape:  # (a vmapped loop's predicate per example)
            return gathered(mesh, eqn, ins)
        cconsts, bconsts, init = ins[:cn], ins[cn:cn + bn], ins[cn + bn:]
        b_axes = [a for _, a in bconsts]
        carry, outs = carry_fixed_point(mesh, p["body_jaxpr"], b_axes, [a for _, a in init], [])
        _refuse_explicit(mesh, eqn, [a for _, a in init] + carry, carry + outs)
        body, _ = trace_body(mesh, p["body_jaxpr"], b_axes + carry, carry)
        cond, _ = trace_body(mesh, p["cond_jaxpr"], [a for _, a in cconsts] + carry)
        init_blocks = [reshard(x, a, c, mesh) for (x, a), c in zip(init, carry)]
        results = while_p.bind(*[x for x, _ in cconsts + bconsts], *init_blocks,
                               **{**p, "cond_jaxpr": cond, "body_jaxpr": body})
        return list(zip(results, carry))

    def cond(mesh, eqn, ins):
        (index, _), ops = ins[0], ins[1:]
        branches, layouts = eqn.params["branches"], [a for _, a in ops]
        outs = [trace_body(mesh, b, layouts)[1] for b in branches]
        common, forced = list(outs[0]), [set() for _ in outs[0]]
        for o in outs[1:]:
            common = [_join(c, a, f) for c, a, f in zip(common, o, forced)]
        for o in outs:
            _refuse_explicit(mesh, eqn, o, common)
        traced = tuple(trace_body(mesh, b, layouts, common)[0] for b in branches)
        results = cond_p.bind(index, *[x for x, _ in ops], branches=traced)
        return list(zip(results, common))

    return {scan_p: scan, while_p: while_loop, cond_p: cond}

