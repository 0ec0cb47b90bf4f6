"""Loop-invariant matrices laid out for the products that read them in a scan body.

A matrix product reads each operand in place with BLAS's transpose flags, but the small-matrix
kernels are not equally fast for every flag: an RNN's backward step `dz @ wh.T` (16x64 by a
transposed 64x64) took about 1.6x as long as the same product over `wh.T` stored as it is read.
When such an operand is a const of the scan, `pretransposed_consts` gives the body a transposed
copy of it, made once before the loop, and its products read that copy untransposed.
"""
from xjax._src.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var


def _transposed_operands(eqn, consts):
    """The operand positions at which eqn, a matrix product, reads a 2-d const of the loop transposed
    (the lhs contracted along its rows, the rhs along its columns)."""
    if eqn.primitive.name != "dot_general":
        return []
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    if lb or rb or len(lc) != 1:
        return []
    return [pos for pos, (dims, transposed) in enumerate(((lc, (0,)), (rc, (1,))))
            if type(eqn.invars[pos]) is Var and eqn.invars[pos] in consts and eqn.invars[pos].aval.ndim == 2
            and tuple(dims) == transposed]


def pretransposed_consts(closed, num_consts):
    """(body, indices of the consts to transpose) where the body takes those consts' transposes as
    extra consts after its own; None when no product reads a const transposed. A body's own
    transpose of a const (`h @ w.T`) is read from that copy too."""
    jaxpr = closed.jaxpr
    consts = set(jaxpr.invars[:num_consts])
    new_of, rename = {}, {}  # const var -> the var of its transpose; body value -> the var replacing it

    def transposed(v):
        if v not in new_of:
            new_of[v] = Var(v.aval.update(shape=v.aval.shape[::-1]))
        return new_of[v]

    eqns = []
    for eqn in jaxpr.eqns:
        if rename:
            eqn = JaxprEqn([rename.get(a, a) if type(a) is Var else a for a in eqn.invars], eqn.outvars,
                           eqn.primitive, eqn.params)
        x = eqn.invars[0] if eqn.invars else None
        if (eqn.primitive.name == "transpose" and x in consts and x.aval.ndim == 2
                and tuple(eqn.params["permutation"]) == (1, 0)):
            rename[eqn.outvars[0]] = transposed(x)
            continue
        positions = _transposed_operands(eqn, consts)
        if not positions:
            eqns.append(eqn)
            continue
        invars = list(eqn.invars)
        (lc, rc), batch = eqn.params["dimension_numbers"]
        for pos in positions:
            invars[pos] = transposed(invars[pos])
            lc, rc = ((1,), rc) if pos == 0 else (lc, (0,))
        eqns.append(JaxprEqn(invars, eqn.outvars, eqn.primitive, dict(eqn.params, dimension_numbers=((lc, rc), batch))))
    if not new_of:
        return None
    index = {v: i for i, v in enumerate(jaxpr.invars[:num_consts])}
    order = sorted(new_of, key=index.get)
    invars = jaxpr.invars[:num_consts] + [new_of[v] for v in order] + jaxpr.invars[num_consts:]
    outvars = [rename.get(a, a) if type(a) is Var else a for a in jaxpr.outvars]
    body = ClosedJaxpr(Jaxpr(jaxpr.constvars, invars, outvars, eqns), closed.consts)
    return body, [index[v] for v in order]
