"""Collectives over named axes (psum, all_gather, ppermute, ...): JAX's lax.parallel primitives.

A collective names the axes it works over in its `axis_name` param (always a tuple here); vmap
and pmap bind those names (core.extend_axis_env), and abstract evaluation reads their sizes
there, so an unbound name is a NameError. Under vmap a collective runs its batching rule even
when its operand is unmapped (BatchTrace asks batching.named_axes): the rule of the trace whose
axis is named computes the collective over its batch axis with ordinary lax ops, and binds the
collective over the remaining names in the parent trace. pmap evaluates collectives with the
same rules, over the shards stacked along one axis (xjax/_src/pmap.py).
"""
import numpy as np

from xjax._src import core, tree_util
from xjax._src.interpreters import ad, batching
from xjax._src.interpreters.batching import not_mapped
from xjax._src.lax import elementwise, layout, reduction
from xjax._src.lax.base import asarray
from xjax._src.lax.indexing import GatherDimensionNumbers, gather

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "all_to_all", "ppermute", "axis_index", "axis_size",
           "psum_scatter", "psum_p", "pmax_p", "pmin_p", "all_gather_p", "all_to_all_p", "ppermute_p",
           "axis_index_p", "reduce_scatter_p", "pcast", "pvary_p", "psum_invariant_p"]


def _names(axis_name):
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _no_groups(api, axis_index_groups):
    if axis_index_groups is not None:
        raise NotImplementedError(f"{api}: axis_index_groups is not supported by xjax")


def _unbound_impl(prim):
    """Eager evaluation: reached only when no vmap/pmap binds the names (the NameError)."""

    def impl(*args, axis_name, **params):
        core.axis_size(axis_name)
        raise NotImplementedError(f"'{prim}' over axes {axis_name} ran outside the vmap or pmap that binds them")

    return impl


def _collective(name, abstract_eval):
    prim = core.Primitive(name)
    prim.def_rules(abstract_eval=abstract_eval, impl=_unbound_impl(name))
    return prim


def _moved_to_front(x, d, size):
    """x with its batch axis at 0 (materialised when unmapped)."""
    return batching.bdim_at_front(x, d, size)


def _shape(x):
    return core.get_aval(x).shape


def _const_like(x, value):
    aval = core.get_aval(x)
    return asarray(value, aval.dtype, True)


# ---- psum, pmax, pmin ---------------------------------------------------------------------------

def _same_aval(x, *, axis_name):
    core.axis_size(axis_name)
    return x


psum_p = _collective("psum", _same_aval)
pmax_p = _collective("pmax", _same_aval)
pmin_p = _collective("pmin", _same_aval)
for _p in (psum_p, pmax_p, pmin_p):  # printed with JAX's names of the params
    _p.def_rules(pp_params=lambda eqn, ctx: [("axes", eqn.params["axis_name"]), ("axis_index_groups", None)])


def _reduction_rule(prim, reduce, unmapped):
    """vmap rule of an all-reduce: reduce over the batch axis (result unmapped), then over the rest."""

    def rule(axis, vals, dims, *, axis_name):
        (x,), (d,) = vals, dims
        if axis.name not in axis_name:
            return prim.bind(x, axis_name=axis_name), d
        out = unmapped(x, axis.size) if d is not_mapped else reduce(x, (d,))
        rest = tuple(n for n in axis_name if n != axis.name)
        if rest:
            out = prim.bind(out, axis_name=rest)
        return out, not_mapped

    prim.def_rules(batch=rule)


def _scaled(x, n):
    return elementwise.mul(x, _const_like(x, n))


_reduction_rule(psum_p, reduction.reduce_sum, _scaled)
_reduction_rule(pmax_p, reduction.reduce_max, lambda x, n: x)
_reduction_rule(pmin_p, reduction.reduce_min, lambda x, n: x)


def _zero_or(ct, x, make):
    return [ad.Zero(x.aval) if type(ct) is ad.Zero else make(ct)]


ad.deflinear(psum_p, lambda ct, x, *, axis_name: _zero_or(ct, x, lambda c: psum_p.bind(c, axis_name=axis_name)))


# ---- varying manual axes (shard_map with check_vma=True; core.shard_map_body) -----------------------

def _invariant_over_axes(x, *, axis_name):
    """A reduction's result is the same on every device of the axes it reduces over."""
    return tuple(n for n in x.vma if n not in axis_name)


for _p in (pmax_p, pmin_p):
    _p.def_rules(vma=_invariant_over_axes)

# psum over manual axes in a check_vma body: JAX's psum_invariant (a varying value in, one the
# same on every device of the axes out), computed as psum. It and pvary are each other's
# transpose: the cotangent of a value the same on every device is the sum of the devices' own.
psum_invariant_p = _collective("psum_invariant", _same_aval)
psum_invariant_p.def_rules(vma=_invariant_over_axes,
                           pp_params=lambda eqn, ctx: [("axes", eqn.params["axis_name"])])
_reduction_rule(psum_invariant_p, reduction.reduce_sum, _scaled)
ad.deflinear(psum_invariant_p, lambda ct, x, *, axis_name: _zero_or(ct, x, lambda c: _pvary_ct(c, axis_name)))


def _pvary_eval(x, *, axes):
    core.axis_size(axes)
    return x.with_vma(core.mesh_ordered(set(x.vma) | set(axes))) if core.vma_axes() else x


# pvary: a value the same on every device of `axes` typed as varying over them (JAX's invariant ->
# varying cast); the identity on values. A jaxpr trace inserts it (partial_eval).
pvary_p = core.Primitive("pvary")
pvary_p.def_rules(abstract_eval=_pvary_eval, impl=lambda x, *, axes: x, lowering=lambda ctx, x, *, axes: [x],
                  batch=lambda axis, vals, dims, *, axes: (vals[0], dims[0]),
                  vma=lambda x, *, axes: core.mesh_ordered(set(x.vma) | set(axes)))
ad.deflinear(pvary_p, lambda ct, x, *, axes: _zero_or(ct, x, lambda c: psum_invariant_p.bind(c, axis_name=axes)))


def _pvary_ct(ct, axes):
    missing = core.mesh_ordered(set(axes) - set(core.get_aval(ct).vma))
    return pvary_p.bind(ct, axes=missing) if missing else ct


def _vary(leaf, names):
    """leaf typed as varying over the manual axes `names` before a collective over them (JAX's
    auto-pvary); unchanged outside check_vma bodies."""
    axes = core.vma_axes()
    if not axes or not all(n in axes for n in names):
        return leaf
    missing = core.mesh_ordered(set(names) - set(core.get_aval(leaf).vma))
    return pvary_p.bind(leaf, axes=missing) if missing else leaf


def vary_over(x, axes):
    """x (a pytree) typed as varying over the manual axes `axes` too, inside a check_vma body."""
    return tree_util.tree_map(lambda leaf: _vary(asarray(leaf), tuple(axes)), x)


_PCAST_TO = ("unreduced", "reduced", "varying")


def pcast(x, axis_name, *, to):
    """JAX's lax.pcast: to='varying' types x (a pytree) as varying over the named manual axes, which
    it must not vary over yet. xjax's types have no reduced or unreduced axes."""
    if isinstance(axis_name, (set, frozenset)):
        raise TypeError(f"axis_name={axis_name!r} must be a tuple or a str. Got {axis_name}")
    names = _names(axis_name)
    if not names:
        return x
    if to not in _PCAST_TO:
        raise ValueError(f"Got unexpected `to` value. Allowed `to` values are: {set(_PCAST_TO)}")
    if to != "varying":
        raise NotImplementedError(f"pcast to={to!r}: xjax's types have no reduced or unreduced mesh axes")

    if not all(n in core.manual_axes() for n in names):
        raise ValueError("pvary should be called under jax.shard_map.")

    def cast(leaf):
        leaf = asarray(leaf)
        vma = core.get_aval(leaf).vma
        if any(n in vma for n in names):
            raise ValueError(f"Unsupported pcast from=varying, to={to!r}")
        return pvary_p.bind(leaf, axes=core.mesh_ordered(names)) if core.vma_axes() else leaf  # (else: no types)

    return tree_util.tree_map(cast, x)


def _is_tracer_leaf(x):
    return isinstance(x, core.Tracer)


def psum(x, axis_name, *, axis_index_groups=None):
    """All-reduce sum of x (a pytree) over the named axis or axes `axis_name`.

    Values that no transformation maps (Python scalars, concrete arrays) give size * x, Python
    scalars staying Python scalars, as in JAX. Booleans are summed as int32.
    """
    _no_groups("psum", axis_index_groups)
    names = _names(axis_name)
    if not names:
        return x
    leaves, tree = tree_util.tree_flatten(x)
    leaves = [_as_int_if_bool(leaf) for leaf in leaves]
    if not any(_is_tracer_leaf(leaf) for leaf in leaves):
        size = core.axis_size(names)
        out = [_constant_psum(leaf, size) for leaf in leaves]
    else:
        prim = psum_invariant_p if core.vma_axes() and all(n in core.vma_axes() for n in names) else psum_p
        out = [prim.bind(_vary(asarray(leaf), names), axis_name=names) for leaf in leaves]
    return tree_util.tree_unflatten(tree, out)


def _as_int_if_bool(leaf):
    if isinstance(leaf, bool) or (not isinstance(leaf, (int, float, complex)) and
                                  core.get_aval(leaf).dtype == np.bool_):
        return elementwise.convert_element_type(asarray(leaf), np.int32)
    return leaf


def _constant_psum(leaf, size):
    if type(leaf) in (int, float, complex):
        return type(leaf)(size) * leaf
    return _scaled(asarray(leaf), size)


def pmean(x, axis_name, *, axis_index_groups=None):
    """All-reduce mean of x (a pytree) over the named axis or axes."""
    _no_groups("pmean", axis_index_groups)
    n = core.axis_size(_names(axis_name))
    return tree_util.tree_map(lambda v: v / n, psum(x, axis_name))


def _allreduce_fn(prim, api):
    def reduce(x, axis_name, *, axis_index_groups=None):
        _no_groups(api, axis_index_groups)
        names = _names(axis_name)
        return tree_util.tree_map(lambda leaf: prim.bind(_vary(asarray(leaf), names), axis_name=names), x)

    reduce.__name__ = api
    reduce.__doc__ = f"All-reduce {api[1:]} of x (a pytree) over the named axis or axes `axis_name`."
    return reduce


pmax = _allreduce_fn(pmax_p, "pmax")
pmin = _allreduce_fn(pmin_p, "pmin")


# ---- axis_index ---------------------------------------------------------------------------------

def _axis_index_eval(*, axis_name):
    core.axis_size(axis_name)
    return core.ShapedArray((), np.dtype(np.int32))


axis_index_p = _collective("axis_index", _axis_index_eval)


def _strides(names):
    """The row-major stride of each name's index in the combined index over `names`."""
    out, s = [], 1
    for n in reversed(names):
        out.append(s)
        s *= core.axis_size(n)
    return out[::-1]


def _axis_index_rule(axis, vals, dims, *, axis_name):
    add, mul = elementwise.add, elementwise.mul
    strides = dict(zip(axis_name, _strides(axis_name)))
    out = elementwise.iota(np.int32, axis.size)
    if strides[axis.name] != 1:
        out = mul(out, asarray(strides[axis.name], np.int32))
    for n in axis_name:
        if n != axis.name:
            other = axis_index_p.bind(axis_name=(n,))
            out = add(out, mul(other, asarray(strides[n], np.int32)) if strides[n] != 1 else other)
    return out, 0


axis_index_p.def_rules(batch=_axis_index_rule, vma=lambda *, axis_name: core.mesh_ordered(axis_name), pp_params=lambda eqn, ctx: [  # one name printed bare, as JAX's
    ("axis_name", eqn.params["axis_name"][0] if len(eqn.params["axis_name"]) == 1 else eqn.params["axis_name"])])
ad.defjvp_zero(axis_index_p)


def axis_index(axis_name):
    """The index along the named axis (a tuple of names: the row-major combined index), as int32."""
    return axis_index_p.bind(axis_name=_names(axis_name))


def axis_size(axis_name):
    """The size of the named axis (a tuple of names: the product of their sizes), a Python int."""
    return core.axis_size(_names(axis_name))


# ---- all_gather ---------------------------------------------------------------------------------

def _all_gather_eval(x, *, axis_name, all_gather_dimension, axis_size, tiled):
    core.axis_size(axis_name)
    shape = list(x.shape)
    if tiled:
        shape[all_gather_dimension] *= axis_size
    else:
        shape.insert(all_gather_dimension, axis_size)
    return x.update(shape=tuple(shape))


all_gather_p = _collective("all_gather", _all_gather_eval)


def _merge(x, start, count):
    """x with its axes start .. start+count-1 merged into one (row-major)."""
    shape = _shape(x)
    merged = int(np.prod(shape[start:start + count], dtype=np.int64))
    return layout.reshape(x, shape[:start] + (merged,) + shape[start + count:])


def _all_gather_rule(axis, vals, dims, *, axis_name, all_gather_dimension, axis_size, tiled):
    (x,), (d,) = vals, dims
    dim = all_gather_dimension
    params = dict(all_gather_dimension=dim, axis_size=axis_size, tiled=tiled)
    if axis.name not in axis_name:
        x = _moved_to_front(x, d, axis.size)
        return all_gather_p.bind(x, axis_name=axis_name, **{**params, "all_gather_dimension": dim + 1}), 0
    # The gather over our own axis is the batch axis moved to `dim` (every example gets all of it).
    out = batching.moveaxis(_moved_to_front(x, d, axis.size), 0, dim)
    rest = tuple(n for n in axis_name if n != axis.name)
    if rest:
        sizes = [core.axis_size(n) for n in rest]
        out = all_gather_p.bind(out, axis_name=rest, all_gather_dimension=dim, axis_size=int(np.prod(sizes)),
                                tiled=False)
        shape = _shape(out)
        out = layout.reshape(out, shape[:dim] + tuple(sizes) + shape[dim + 1:])
        order = list(rest) + [axis.name]  # the gathered axes now, at dim ..; put them in name order
        block = [dim + order.index(n) for n in axis_name]
        perm = list(range(dim)) + block + list(range(dim + len(order), len(_shape(out))))
        out = _merge(layout.transpose(out, perm), dim, len(order))
    if tiled:
        out = _merge(out, dim, 2)
    return out, not_mapped


def _all_gather_transpose(ct, x, *, axis_name, all_gather_dimension, axis_size, tiled):
    return _zero_or(ct, x, lambda c: reduce_scatter_p.bind(c, axis_name=axis_name,
                                                           scatter_dimension=all_gather_dimension,
                                                           axis_size=axis_size, tiled=tiled))


def _pp_with_groups(eqn, ctx):
    """The params sorted, with JAX's axis_index_groups=None among them."""
    return sorted([*eqn.params.items(), ("axis_index_groups", None)])


all_gather_p.def_rules(batch=_all_gather_rule, pp_params=_pp_with_groups)
ad.deflinear(all_gather_p, _all_gather_transpose)


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    """Gathers x (a pytree) from every index of the named axis: stacked along a new axis `axis`,
    or concatenated along `axis` when tiled."""
    _no_groups("all_gather", axis_index_groups)
    names = _names(axis_name)
    size = core.axis_size(names)

    def bind(leaf):
        leaf = asarray(leaf)
        ndim = core.get_aval(leaf).ndim
        rank = ndim if tiled else ndim + 1
        if not -rank <= axis < rank:
            raise ValueError(f"all_gather: axis {axis} is out of bounds for an operand of shape {_shape(leaf)} "
                             f"(tiled={tiled})")
        return all_gather_p.bind(_vary(leaf, names), axis_name=names, all_gather_dimension=axis % rank, axis_size=int(size),
                                 tiled=bool(tiled))

    return tree_util.tree_map(bind, x)


# ---- psum_scatter (reduce_scatter) --------------------------------------------------------------

def _scatter_shape(shape, scatter_dimension, axis_size, tiled, axis_name):
    """The result shape of psum_scatter, or JAX's ValueError."""
    shape = list(shape)
    n = shape[scatter_dimension]
    if tiled:
        if n % axis_size:
            raise ValueError(f"psum_scatter: operand scatter dimension size {n} must be divisible by the size of "
                             f"the named axis {axis_name} ({axis_size})")
        shape[scatter_dimension] = n // axis_size
    else:
        if n != axis_size:
            raise ValueError(f"psum_scatter: operand scatter dimension size {n} must match the size of the named "
                             f"axis {axis_name} ({axis_size})")
        del shape[scatter_dimension]
    return tuple(shape)


def _reduce_scatter_eval(x, *, axis_name, scatter_dimension, axis_size, tiled):
    core.axis_size(axis_name)
    return x.update(shape=_scatter_shape(x.shape, scatter_dimension, axis_size, tiled, axis_name))


reduce_scatter_p = _collective("reduce_scatter", _reduce_scatter_eval)


def _only_own_axis(api, axis, axis_name):
    if len(axis_name) > 1:
        raise NotImplementedError(f"{api} over several axis names {axis_name} under vmap is not supported by xjax")


def _reduce_scatter_rule(axis, vals, dims, *, axis_name, scatter_dimension, axis_size, tiled):
    (x,), (d,) = vals, dims
    sd = scatter_dimension
    if axis.name not in axis_name:
        x = _moved_to_front(x, d, axis.size)
        return reduce_scatter_p.bind(x, axis_name=axis_name, scatter_dimension=sd + 1, axis_size=axis_size,
                                     tiled=tiled), 0
    _only_own_axis("psum_scatter", axis, axis_name)
    # Sum over the batch axis; example k keeps block k of the scatter dimension, so that dimension
    # (split into (size, block) when tiled) becomes the batch axis.
    total = _scaled(x, axis.size) if d is not_mapped else reduction.reduce_sum(x, (d,))
    if tiled:
        shape = _shape(total)
        total = layout.reshape(total, shape[:sd] + (axis.size, shape[sd] // axis.size) + shape[sd + 1:])
    return total, sd


def _reduce_scatter_transpose(ct, x, *, axis_name, scatter_dimension, axis_size, tiled):
    return _zero_or(ct, x, lambda c: all_gather_p.bind(c, axis_name=axis_name, all_gather_dimension=scatter_dimension,
                                                       axis_size=axis_size, tiled=tiled))


reduce_scatter_p.def_rules(batch=_reduce_scatter_rule, pp_params=_pp_with_groups)
ad.deflinear(reduce_scatter_p, _reduce_scatter_transpose)


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """Sums x (a pytree) over the named axis and leaves index i of the axis with block i of
    `scatter_dimension` (that dimension removed, or divided by the axis size when tiled)."""
    _no_groups("psum_scatter", axis_index_groups)
    names = _names(axis_name)
    size = core.axis_size(names)

    def bind(leaf):
        leaf = _as_int_if_bool(asarray(leaf))
        ndim = core.get_aval(leaf).ndim
        if not -ndim <= scatter_dimension < ndim:
            raise ValueError(f"psum_scatter: scatter_dimension {scatter_dimension} is out of bounds for an operand "
                             f"of shape {_shape(leaf)}")
        _scatter_shape(_shape(leaf), scatter_dimension % ndim, size, tiled, names)
        return reduce_scatter_p.bind(_vary(leaf, names), axis_name=names, scatter_dimension=scatter_dimension % ndim,
                                     axis_size=int(size), tiled=bool(tiled))

    return tree_util.tree_map(bind, x)


# ---- all_to_all ---------------------------------------------------------------------------------

def _all_to_all_eval(x, *, axis_name, split_axis, concat_axis, axis_size, tiled):
    core.axis_size(axis_name)
    shape = list(x.shape)
    if tiled:
        shape[split_axis] //= axis_size
        shape[concat_axis] *= axis_size
    else:
        del shape[split_axis]
        shape.insert(concat_axis, axis_size)
    return x.update(shape=tuple(shape))


all_to_all_p = _collective("all_to_all", _all_to_all_eval)


def _all_to_all_rule(axis, vals, dims, *, axis_name, split_axis, concat_axis, axis_size, tiled):
    (x,), (d,) = vals, dims
    if axis.name not in axis_name:
        x = _moved_to_front(x, d, axis.size)
        return all_to_all_p.bind(x, axis_name=axis_name, split_axis=split_axis + 1, concat_axis=concat_axis + 1,
                                 axis_size=axis_size, tiled=tiled), 0
    _only_own_axis("all_to_all", axis, axis_name)
    # Example i sends chunk j of its split axis to example j, which has the chunks in order of i
    # along the concat axis: make j the batch axis and move the old batch axis i to the concat axis.
    n = axis.size
    x = _moved_to_front(x, d, n)
    ex = _shape(x)[1:]
    if not tiled:  # the split axis is j itself; i becomes a new axis at concat_axis
        others = [1 + k for k in range(len(ex)) if k != split_axis]
        others.insert(concat_axis, 0)
        return layout.transpose(x, [1 + split_axis] + others), 0
    x = layout.reshape(x, (n,) + ex[:split_axis] + (n, ex[split_axis] // n) + ex[split_axis + 1:])
    pos = [1 + k + (k >= split_axis) for k in range(len(ex))]  # example axis k in x (k = split: the chunk)
    perm = [1 + split_axis]
    for k in range(len(ex)):
        perm += [0, pos[k]] if k == concat_axis else [pos[k]]
    return _merge(layout.transpose(x, perm), 1 + concat_axis, 2), 0


def _all_to_all_transpose(ct, x, *, axis_name, split_axis, concat_axis, axis_size, tiled):
    return _zero_or(ct, x, lambda c: all_to_all_p.bind(c, axis_name=axis_name, split_axis=concat_axis,
                                                       concat_axis=split_axis, axis_size=axis_size, tiled=tiled))


all_to_all_p.def_rules(batch=_all_to_all_rule)
ad.deflinear(all_to_all_p, _all_to_all_transpose)


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None, tiled=False):
    """Index i of the named axis sends chunk j of x's `split_axis` to index j, which concatenates
    what it receives along `concat_axis`. Not tiled: x.shape[split_axis] is the axis size, that
    axis is removed and a new one (indexed by sender) inserted at `concat_axis`."""
    _no_groups("all_to_all", axis_index_groups)
    names = _names(axis_name)
    size = core.axis_size(names)

    def bind(leaf):
        leaf = asarray(leaf)
        shape = _shape(leaf)
        ndim = len(shape)
        for what, a in (("split_axis", split_axis), ("concat_axis", concat_axis)):
            if not -ndim <= a < ndim:
                raise ValueError(f"all_to_all: {what} {a} is out of bounds for an operand of shape {shape}")
        split, concat = split_axis % ndim, concat_axis % ndim
        if tiled and shape[split] % size:
            raise ValueError(f"The size of all_to_all split_axis ({shape[split]}) has to be divisible by the size of "
                             f"the named axis {axis_name} ({size})")
        if not tiled and shape[split] != size:
            raise ValueError("all_to_all requires the size of the mapped axis axis_name to equal x.shape[split_axis], "
                             f"but they are {size} and {shape[split]} respectively.")
        return all_to_all_p.bind(_vary(leaf, names), axis_name=names, split_axis=split, concat_axis=concat,
                                 axis_size=int(size), tiled=bool(tiled))

    return tree_util.tree_map(bind, x)


# ---- ppermute -----------------------------------------------------------------------------------

def _check_perm(perm, axis_name):
    size = core.axis_size(axis_name)
    srcs, dsts = [s for s, _ in perm], [t for _, t in perm]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError(f"ppermute sources and destinations must be unique, got {perm}.")
    if not all(0 <= i < size for i in srcs + dsts):
        raise ValueError(f"ppermute permutation {perm} has an index outside the named axis {axis_name} of size "
                         f"{size}")


def _ppermute_eval(x, *, axis_name, perm):
    _check_perm(perm, axis_name)
    return x


ppermute_p = _collective("ppermute", _ppermute_eval)


def _ppermute_rule(axis, vals, dims, *, axis_name, perm):
    (x,), (d,) = vals, dims
    if axis.name not in axis_name:
        return ppermute_p.bind(x, axis_name=axis_name, perm=perm), d
    _only_own_axis("ppermute", axis, axis_name)
    n = axis.size
    src_of = dict((t, s) for s, t in perm)
    if d is not_mapped and len(src_of) == n:
        return x, not_mapped  # every index receives the same value
    x = _moved_to_front(x, d, n)
    # One gather along the batch axis; a destination nobody sends to reads out of bounds: zero.
    idx = asarray(np.array([src_of.get(j, n) for j in range(n)], np.int32).reshape(n, 1))  # (n, 1) for n = 0 too
    shape = _shape(x)
    dn = GatherDimensionNumbers(offset_dims=tuple(range(1, len(shape))), collapsed_slice_dims=(0,),
                                start_index_map=(0,))
    out = gather(x, idx, dn, (1,) + shape[1:], mode="fill", fill_value=0)
    return out, 0


def _ppermute_transpose(ct, x, *, axis_name, perm):
    inverse = tuple((t, s) for s, t in perm)
    return _zero_or(ct, x, lambda c: ppermute_p.bind(c, axis_name=axis_name, perm=inverse))


ppermute_p.def_rules(batch=_ppermute_rule)
ad.deflinear(ppermute_p, _ppermute_transpose)


def ppermute(x, axis_name, perm):
    """Sends x (a pytree) from index src to index dst of the named axis for each (src, dst) in
    perm; indices that receive nothing get zeros."""
    names = _names(axis_name)
    perm = tuple((int(s), int(t)) for s, t in perm)
    _check_perm(perm, names)
    return tree_util.tree_map(lambda leaf: ppermute_p.bind(_vary(asarray(leaf), names), axis_name=names, perm=perm), x)


COLLECTIVES = frozenset([psum_p, pmax_p, pmin_p, axis_index_p, all_gather_p, reduce_scatter_p, all_to_all_p,
                         ppermute_p, psum_invariant_p])
