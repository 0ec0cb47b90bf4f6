"""The rules of jit's partitioner (partition.py): per primitive, how an equation over global values
becomes equations over one device's blocks, and how its results are split.

A value's layout is its `axes`: per dimension, the mesh axes that split it (major first; () for an
unsplit dimension); a dimension split over no axis holds the same data on every device. A rule
takes the mesh, the equation and its operands as (block, axes) pairs, binds primitives on blocks
(inside the trace of the per-device program, with the mesh axes bound as named axes, so
collectives are plain psum / all_gather / axis_index) and returns its results as (block, axes).
A primitive without a rule gathers its operands and runs whole (`gathered`), which is always right.

Over Explicit mesh axes a result's layout is its type, which JAX defines per primitive: the rules
give JAX's types where they keep or drop splits as JAX's do, raise JAX's ShardingTypeError where
JAX refuses (a scan or sort along a split dimension), and raise NotImplementedError
(`_check_explicit`) where they would gather an Explicit axis anywhere else, which makes the driver
run that program on the gathered arguments, as before partitioning.
"""
import math

from xjax._src.errors import ShardingTypeError
from xjax._src.lax import elementwise as ew, reduction
from xjax._src.lax.contraction import dot_general_p
from xjax._src.lax.convolution import conv_general_dilated_p
from xjax._src.lax.indexing import gather_p, scatter_add_p, scatter_max_p, scatter_min_p, scatter_mul_p, scatter_p
from xjax._src.lax.layout import (broadcast_in_dim_p, concatenate_p, dynamic_slice_in_dim, dynamic_slice_p, pad_p,
                                  reshape_p, rev_p, slice_p, squeeze_p, transpose_p)
from xjax._src.lax.sharding_ops import reshard_p, sharding_constraint_p, spec_for
from xjax._src.lax.sorting import sort_p
from xjax._src.lax import linalg, linalg_forms  # noqa: F401 (their primitives' BATCH_RANKS, registered on import)
from xjax._src.lax.sharding_rules_batched import BATCH_RANKS
from xjax._src.sharding import _names_of
from xjax._src.lax.parallel import all_gather, axis_index, pmax, pmin, psum


def whole(ndim):
    return ((),) * ndim


def count(mesh, names):
    """How many blocks the mesh axes `names` split a dimension into."""
    return math.prod(mesh.shape[n] for n in names)


def _own_block(x, dim, names, mesh):
    """This device's block of x along dim, split over the mesh axes `names` (major first)."""
    size = x.shape[dim] // count(mesh, names)
    index = 0
    for n in names:
        index = index * mesh.shape[n] + axis_index(n)
    return dynamic_slice_in_dim(x, index * size, size, dim)


broadcasts = {}  # id(result) -> (result, operand block, equation) of the plan's broadcasts (cleared after it)


def _rebroadcast(x, have, want):
    """x's block under `want` broadcast again from the operand of the broadcast_in_dim that made x,
    where only dimensions it broadcast (whole in x) change: no slice of the whole (no axis_index)."""
    made = broadcasts.get(id(x))
    if made is None or made[0] is not x:
        return None
    _, operand, eqn, mesh = made
    in_shape, shape = eqn.invars[0].aval.shape, eqn.params["shape"]
    mapped = {od for i, od in enumerate(eqn.params["broadcast_dimensions"]) if in_shape[i] == shape[od]}
    if any(h != w and (h or d in mapped) for d, (h, w) in enumerate(zip(have, want))):
        return None
    (out,) = _bind(eqn, [operand], shape=tuple(n // count(mesh, a) for n, a in zip(shape, want)))
    return out


def reshard(x, have, want, mesh):
    """x's block under layout `have` -> its block under `want`: the dimensions whose split changes
    gathered (minor axis first), then sliced to this device's block (a broadcast's block broadcast
    again where it splits only dimensions the broadcast made)."""
    if have != want:
        again = _rebroadcast(x, have, want)
        if again is not None:
            return again
    for dim, (h, w) in enumerate(zip(have, want)):
        if h != w:
            for n in reversed(h):
                x = all_gather(x, n, axis=dim, tiled=True)
    for dim, (h, w) in enumerate(zip(have, want)):
        if h != w and w:
            x = _own_block(x, dim, w, mesh)
    return x


def _check_explicit(mesh, eqn, have, want):
    """NotImplementedError where a layout change would gather an Explicit mesh axis (JAX's type rule
    for it is not implemented: the result's type could differ from JAX's)."""
    explicit = set(mesh.explicit_axes)
    lost = sorted({n for h, w in zip(have, want) if h != w for n in h if n in explicit})
    if lost:
        raise NotImplementedError(
            f"jit of '{eqn.primitive.name}' on operands split over the Explicit mesh axes {lost}: the sharding of its "
            "result is not implemented in xjax yet (issue 29); reshard the operands first (jax.reshard(x, P())) "
            "or use a mesh of Auto axes")


def _to(mesh, eqn, x, have, want):
    """reshard, refusing to gather Explicit axes (_check_explicit)."""
    _check_explicit(mesh, eqn, have, want)
    return reshard(x, have, want, mesh)


def _bind(eqn, blocks, **changes):
    """The equation's primitive bound on blocks; the shardings of its global type (out_sharding) are not
    the blocks' (the rules lay the blocks out)."""
    typed = {k: None for k in ("sharding", "out_sharding") if eqn.params.get(k) is not None}
    params = {**eqn.params, **typed, **changes} if changes or typed else eqn.params
    out = eqn.primitive.bind(*blocks, **params)
    return list(out) if eqn.primitive.multiple_results else [out]


def gathered(mesh, eqn, ins):
    """Any primitive: its operands gathered whole, run whole (the same on every device). One with a sharding
    rule (its types JAX's, checked when traced) gathers Explicit axes too, its results then laid out as
    their types say; without one, gathering an Explicit axis is refused (_check_explicit)."""
    typed = eqn.primitive.sharding is not None
    blocks = [reshard(x, axes, whole(len(axes)), mesh) if typed else _to(mesh, eqn, x, axes, whole(len(axes)))
              for x, axes in ins]
    outs = []
    for o, v in zip(_bind(eqn, blocks), eqn.outvars):
        s = getattr(v.aval, "_sharding", None) if typed else None
        want = whole(v.aval.ndim) if s is None else _layout_of(s, v.aval.ndim)
        outs.append((reshard(o, whole(v.aval.ndim), want, mesh), want))
    return outs


def _elementwise(mesh, eqn, ins):
    """Operands of the result's rank split alike: each dimension as the first operand that splits it
    (an axis splits one dimension only); scalars and size-1 dimensions (broadcast) whole."""
    ndim = eqn.outvars[0].aval.ndim
    target = _merged(ins, ndim)
    out_shape = eqn.outvars[0].aval.shape
    blocks = [x if len(axes) != ndim else _to(mesh, eqn, x, axes, tuple(  # (a size-1 dimension broadcasts: whole)
        () if n != m else t for n, m, t in zip(v.aval.shape, out_shape, target)))
        for (x, axes), v in zip(ins, eqn.invars)]
    return [(o, target) for o in _bind(eqn, blocks)]


_REDUCE_COLLECTIVE = {reduction.reduce_sum_p: psum, reduction.reduce_max_p: pmax, reduction.reduce_min_p: pmin}


def _reduce(mesh, eqn, ins):
    """Reduced dimensions split over axes: reduced locally, then psum/pmax/pmin over those axes; a
    reduction without such a collective (argmax, reduce_prod, ...) gathers them first."""
    (x, axes), = ins
    reduced = set(eqn.params["axes"])
    collective = _REDUCE_COLLECTIVE.get(eqn.primitive)
    if collective is None:
        want = tuple(() if d in reduced else a for d, a in enumerate(axes))
        x, axes = reshard(x, axes, want, mesh), want
    split = tuple(n for d in sorted(reduced) for n in axes[d])
    (out,) = _bind(eqn, [x])
    if split:
        out = collective(out, split)
    return [(out, tuple(a for d, a in enumerate(axes) if d not in reduced))]


def _typed(aval, axes, mesh):
    """`float32[8@X,4]`: a type with its Explicit axes, as JAX prints it."""
    def dim(n, names):
        names = [a for a in names if a in mesh.explicit_axes]
        return f"{n}@{names[0] if len(names) == 1 else '(' + ','.join(names) + ')'}" if names else str(n)
    return f"{aval.dtype.name}[{','.join(dim(n, a) for n, a in zip(aval.shape, axes))}]"


def _merged(ins, ndim, skip=()):
    """The layout the operands of rank ndim share: each dimension (but `skip`) split as the first
    operand splitting it, an axis splitting one dimension."""
    target, used = [()] * ndim, set()
    for _, axes in ins:
        if len(axes) == ndim:
            for d, names in enumerate(axes):
                if d not in skip and names and not target[d] and not used & set(names):
                    target[d] = names
                    used.update(names)
    return tuple(target)


def _keeping_layout(touched, block_params=lambda eqn, block: {}):
    """A rule for a primitive whose results have its operands' rank and which works along some
    dimensions (`touched(eqn)`: sliced, padded, concatenated, reversed, sorted): the operands split
    alike with those dimensions whole, the other splits kept (shape params made the blocks',
    `block_params`); the results then split again along them as the first operand was, where it
    divides them (the layout XLA and JAX's types keep). Other operands (pad values, indices) whole."""
    def rule(mesh, eqn, ins):
        ndim = eqn.outvars[0].aval.ndim
        dims = set(touched(eqn))
        target = _merged(ins, ndim, skip=dims)
        blocks = [reshard(x, axes, target, mesh) if len(axes) == ndim else _to(mesh, eqn, x, axes, whole(len(axes)))
                  for x, axes in ins]
        block = tuple(n // count(mesh, a) for n, a in zip(eqn.outvars[0].aval.shape, target))
        outs = _bind(eqn, blocks, **block_params(eqn, block))
        first, used = ins[0][1], {n for a in target for n in a}
        back = tuple(first[d] if d in dims and first[d] and not used & set(first[d]) and
                     eqn.outvars[0].aval.shape[d] % count(mesh, first[d]) == 0 else target[d] for d in range(ndim))
        for _, axes in ins:  # (over Explicit axes: the operands' types kept, or not implemented)
            if len(axes) == ndim:
                _check_explicit(mesh, eqn, axes, back)
        return [(reshard(o, target, back, mesh), back) for o in outs]
    return rule


def _sliced_dims(eqn):
    p, shape = eqn.params, eqn.invars[0].aval.shape
    strides = p["strides"] or (1,) * len(shape)
    return [d for d, (a, b, s) in enumerate(zip(p["start_indices"], p["limit_indices"], strides))
            if (a, b, s) != (0, shape[d], 1)]


def _slice_block(eqn, block):
    """An unsliced dimension's limit: the block's size."""
    sliced = set(_sliced_dims(eqn))
    return {"limit_indices": tuple(b if d in sliced else n for d, (b, n) in
                                   enumerate(zip(eqn.params["limit_indices"], block)))}


def _dynamic_slice_dims(eqn):
    return [d for d, (n, m) in enumerate(zip(eqn.params["slice_sizes"], eqn.invars[0].aval.shape)) if n != m]


def _dynamic_slice_block(eqn, block):
    sliced = set(_dynamic_slice_dims(eqn))
    return {"slice_sizes": tuple(s if d in sliced else n for d, (s, n) in enumerate(zip(eqn.params["slice_sizes"], block)))}


def _unsplit_along(param, what):
    """A scan or sort along the dimension `param` names: over an Explicit axis splitting it JAX's
    ShardingTypeError, else the layout kept (_keeping_layout)."""
    def rule(mesh, eqn, ins):
        dim = eqn.params[param]
        if any(axes[dim] and set(axes[dim]) & set(mesh.explicit_axes) for _, axes in ins):
            raise ShardingTypeError(what.format(types=", ".join(_typed(v.aval, axes, mesh) for (_, axes), v in
                                                                zip(ins, eqn.invars)), dim=dim))
        return _keeping_layout(lambda e: [dim])(mesh, eqn, ins)
    return rule


def _per_batch_block(ranks):
    """A primitive mapping over leading batch dimensions (linear algebra: operand i's last ranks[i]
    dimensions are one problem's): the batch dimensions split alike in every operand (as the first
    splitting each), the problems' own dimensions whole; each device solves the problems of its batch
    block, and every result is split along its leading batch dimensions as the operands are."""
    def rule(mesh, eqn, ins):
        nb = eqn.invars[0].aval.ndim - ranks[0]
        batch = _merged([(x, axes[:nb]) for x, axes in ins], nb)
        blocks = [reshard(x, axes, batch + whole(len(axes) - nb), mesh) for x, axes in ins]
        return [(o, batch + whole(v.aval.ndim - nb)) for o, v in zip(_bind(eqn, blocks), eqn.outvars)]
    return rule


def _transpose(mesh, eqn, ins):
    (x, axes), = ins
    return [(o, tuple(axes[p] for p in eqn.params["permutation"])) for o in _bind(eqn, [x])]


def _squeeze(mesh, eqn, ins):
    (x, axes), = ins
    gone = set(d % len(axes) for d in eqn.params["dimensions"])
    return [(o, tuple(a for d, a in enumerate(axes) if d not in gone)) for o in _bind(eqn, [x])]


def _broadcast_in_dim(mesh, eqn, ins):
    """Operand dimensions keep their splits in the result (a size-1 dimension is never split)."""
    if len(ins) != 1:
        return gathered(mesh, eqn, ins)
    (x, axes), = ins
    shape, in_shape = eqn.params["shape"], eqn.invars[0].aval.shape
    out = [()] * len(shape)
    for i, od in enumerate(eqn.params["broadcast_dimensions"]):
        if in_shape[i] == shape[od]:
            out[od] = axes[i]
    block = tuple(n // count(mesh, a) for n, a in zip(shape, out))
    (o,) = _bind(eqn, [x], shape=block)
    broadcasts[id(o)] = (o, x, eqn, mesh)
    return [(o, tuple(out))]


def _reshape_groups(a, b):
    """The dimensions of shapes a and b (no zeros) in groups of equal products: [(a dims, b dims)]."""
    groups, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        gi, gj, pa, pb = [i], [j], a[i], b[j]
        i, j = i + 1, j + 1
        while pa != pb:
            if pa < pb:
                gi.append(i)
                pa *= a[i]
                i += 1
            else:
                gj.append(j)
                pb *= b[j]
                j += 1
        groups.append((gi, gj))
    return groups


def _reshape(mesh, eqn, ins):
    """A split kept where exact: on the first dimension of size > 1 of a group of merged or split
    dimensions, moved to the group's first result dimension of size > 1 when the split divides it;
    other splits are gathered first."""
    in_shape, out_shape = eqn.invars[0].aval.shape, eqn.params["new_sizes"]
    if len(ins) != 1 or eqn.params.get("dimensions") is not None or 0 in in_shape:
        return gathered(mesh, eqn, ins)
    (x, axes), = ins
    keep, out = list(axes), [()] * len(out_shape)
    for gi, gj in _reshape_groups(in_shape, out_shape):
        lead_in = next(d for d in gi if in_shape[d] > 1) if any(in_shape[d] > 1 for d in gi) else None
        lead_out = next((d for d in gj if out_shape[d] > 1), None)
        for d in gi:
            if axes[d] and not (d == lead_in and lead_out is not None and out_shape[lead_out] % count(mesh, axes[d]) == 0):
                keep[d] = ()
        if lead_in is not None and keep[lead_in]:
            out[lead_out] = keep[lead_in]
    keep = tuple(keep)
    x = _to(mesh, eqn, x, axes, keep)
    block = tuple(n // count(mesh, a) for n, a in zip(out_shape, out))
    return [(o, tuple(out)) for o in _bind(eqn, [x], new_sizes=block)]


def _dot_general(mesh, eqn, ins):
    """Batch and contracting dimension pairs split as the lhs's (else the rhs's) side; free dimensions
    keep their splits (an axis splits one dimension: later claims are gathered); a product over split
    contracting dimensions is psum'd over their axes. Over Explicit axes JAX refuses such a product
    unless its out_sharding says where the result goes, which JAX's transpose rules set (a gradient's
    sharding is its primal's) and xjax's jaxprs do not carry: the product is psum'd, unsplit there,
    the sharding those rules give (the gradient of a replicated or column-split weight)."""
    (lhs, la), (rhs, ra) = ins
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    lw, rw, used = [()] * len(la), [()] * len(ra), set()

    def claim(names):
        if not names or used & set(names):
            return ()
        used.update(names)
        return names

    for dl, dr in list(zip(lb, rb)) + list(zip(lc, rc)):
        lw[dl] = rw[dr] = claim(la[dl] or ra[dr])
    lfree = [d for d in range(len(la)) if d not in lc and d not in lb]
    rfree = [d for d in range(len(ra)) if d not in rc and d not in rb]
    for d in lfree:
        lw[d] = claim(la[d])
    for d in rfree:
        rw[d] = claim(ra[d])
    (out,) = _bind(eqn, [_to(mesh, eqn, lhs, la, tuple(lw)), _to(mesh, eqn, rhs, ra, tuple(rw))])
    summed = tuple(n for d in lc for n in lw[d])
    if summed:
        out = psum(out, summed)
    return [(out, tuple([lw[d] for d in lb] + [lw[d] for d in lfree] + [rw[d] for d in rfree]))]


def _conv(mesh, eqn, ins):
    """conv_general_dilated without groups: over an lhs split along its batch dimension alone and a whole
    kernel, each device convolves its own examples; over an lhs and a kernel split alike along the
    dimension they contract (lhs features, kernel input features: a kernel's gradient, whose lhs is an
    input split along its batch) and nothing else, each device's partial sums, then a psum. Any other
    layout gathered (a split window dimension would need its neighbours' edges)."""
    (lhs, la), (rhs, ra) = ins
    p = eqn.params
    lhs_spec, rhs_spec, out_spec = p["dimension_numbers"]
    ndim = eqn.outvars[0].aval.ndim
    if p["feature_group_count"] == 1 and p["batch_group_count"] == 1:
        split = {d for d, a in enumerate(la) if a}
        batch, feature = la[lhs_spec[0]], la[lhs_spec[1]]
        if split == {lhs_spec[0]} and not any(ra):
            (out,) = _bind(eqn, [lhs, rhs])
            return [(out, tuple(batch if d == out_spec[0] else () for d in range(ndim)))]
        if split == {lhs_spec[1]} and ra[rhs_spec[1]] == feature and sum(map(bool, ra)) == 1:
            (out,) = _bind(eqn, [lhs, rhs])
            return [(psum(out, feature), whole(ndim))]
    return gathered(mesh, eqn, ins)


def _gather(mesh, eqn, ins):
    """gather with its indexed operand dimensions whole: operand dimensions taken whole into the windows
    keep their splits (each device slices its block of every window), and the indices' batch
    dimensions theirs (each device gathers for its own indices: an embedding lookup over a split
    batch); the result is split as the dimensions it takes them from. Any other layout gathered."""
    (x, xa), (idx, ia) = ins
    dn, sizes = eqn.params["dimension_numbers"], eqn.params["slice_sizes"]
    shape, out_ndim = eqn.invars[0].aval.shape, eqn.outvars[0].aval.ndim
    windows = [d for d in range(len(shape)) if d not in dn.collapsed_slice_dims]
    if dn.operand_batching_dims or ia[-1] or {n for a in xa for n in a} & {n for a in ia for n in a} or any(
            xa[d] and (d in dn.start_index_map or d not in windows or sizes[d] != shape[d]) for d in range(len(shape))):
        return gathered(mesh, eqn, ins)
    out = [()] * out_ndim
    for d, od in zip(windows, dn.offset_dims):
        out[od] = xa[d]
    for od, a in zip([d for d in range(out_ndim) if d not in dn.offset_dims], ia[:-1]):
        out[od] = a
    block = tuple(n // count(mesh, a) if a else s for n, s, a in zip(shape, sizes, xa))
    (o,) = _bind(eqn, [x, idx], slice_sizes=block)
    return [_as_typed(mesh, eqn, o, tuple(out))]


def _scatter(mesh, eqn, ins):
    """scatter (any combiner) with its indexed operand dimensions whole: operand dimensions that every
    update window covers whole keep their splits, or take the updates' splits of the matching window
    dimensions (a gather's gradient: zeros scattered into by a split cotangent); the updates split
    alike, the indices whole, each device updates its block of every window; the result is laid out
    as the operand. Any other layout gathered."""
    (x, xa), (idx, ia), (u, ua) = ins
    dn = eqn.params["dimension_numbers"]
    shape, ushape = eqn.invars[0].aval.shape, eqn.invars[2].aval.shape
    along = {d: ud for d, ud in zip([d for d in range(len(shape)) if d not in dn.inserted_window_dims],
                                    dn.update_window_dims)
             if d not in dn.scatter_dims_to_operand_dims and ushape[ud] == shape[d]}  # (windows whole along d)
    if dn.operand_batching_dims or any(a and d not in along for d, a in enumerate(xa)):
        return gathered(mesh, eqn, ins)
    target = _merged([(x, xa), (u, tuple(ua[along[d]] if d in along else () for d in range(len(shape))))],
                     len(shape))
    uwant = [()] * len(ua)
    for d, a in enumerate(target):
        if a:
            uwant[along[d]] = a
    blocks = [reshard(x, xa, target, mesh), reshard(idx, ia, whole(len(ia)), mesh), reshard(u, ua, tuple(uwant), mesh)]
    (o,) = _bind(eqn, blocks)
    return [_as_typed(mesh, eqn, o, target)]


def _as_typed(mesh, eqn, out, axes):
    """A result laid out as `axes`, moved to its type's layout over Explicit axes (JAX's type: where the
    rule and the type agree, nothing moves)."""
    typed = getattr(eqn.outvars[0].aval, "_sharding", None)
    want = axes if typed is None else _layout_of(typed, len(axes))
    return reshard(out, axes, want, mesh), want


def _layout_of(sharding, ndim):
    return tuple(_names_of(p) for p in spec_for(sharding.spec, ndim))


def _laid_out(param):
    """reshard / sharding_constraint: the value moved to the layout its `param` sharding says."""
    def rule(mesh, eqn, ins):
        (x, axes), = ins
        want = _layout_of(eqn.params[param], len(axes))
        return [(reshard(x, axes, want, mesh), want)]

    return rule


def _with_out_sharding(rule):
    """A rule whose result is then moved to the equation's out_sharding where it has one (JAX's type)."""
    def with_out(mesh, eqn, ins):
        out = rule(mesh, eqn, ins)
        s = eqn.params.get("out_sharding")
        if s is None:
            return out
        (x, axes), = out
        want = _layout_of(s, len(axes))
        return [(reshard(x, axes, want, mesh), want)]

    return with_out


RULES = {p: _elementwise for p in set(ew.PRIMITIVES.values()) | {
    ew.fma_p, ew.select_n_p, ew.clamp_p, ew.convert_element_type_p, ew.add_any_p}}
RULES.update({p: _reduce for p in (reduction.reduce_sum_p, reduction.reduce_max_p, reduction.reduce_min_p,
                                   reduction.reduce_prod_p, reduction.argmax_p, reduction.argmin_p)})
RULES.update({p: _unsplit_along("axis", "Input should be unsharded over the axis being reduced. Got input "
                                         "type={types} and axis={dim}")
              for p in (reduction.cumsum_p, reduction.cumprod_p, reduction.cummax_p, reduction.cummin_p,
                        reduction.cumlogsumexp_p)})
RULES.update({transpose_p: _transpose, squeeze_p: _squeeze, broadcast_in_dim_p: _broadcast_in_dim,
              reshape_p: _reshape, dot_general_p: _with_out_sharding(_dot_general),
              conv_general_dilated_p: _with_out_sharding(_conv), gather_p: _gather,
              **{p: _scatter for p in (scatter_p, scatter_add_p, scatter_mul_p, scatter_min_p, scatter_max_p)},
              reshard_p: _laid_out("dst_sharding"), sharding_constraint_p: _laid_out("sharding"),
              sort_p: _unsplit_along("dimension", "Arguments to sort must be unsharded over the sorting dimension. "
                                                  "Got arg types {types} and dimension={dim}"),
              slice_p: _keeping_layout(_sliced_dims, _slice_block),
              dynamic_slice_p: _keeping_layout(_dynamic_slice_dims, _dynamic_slice_block),
              concatenate_p: _keeping_layout(lambda eqn: [eqn.params["dimension"]]),
              pad_p: _keeping_layout(lambda eqn: [d for d, c in enumerate(eqn.params["padding_config"]) if c != (0, 0, 0)]),
              rev_p: _keeping_layout(lambda eqn: eqn.params["dimensions"])})
RULES.update({p: _per_batch_block(ranks) for p, ranks in BATCH_RANKS.items()})
