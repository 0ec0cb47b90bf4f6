"""The differentiation (jvp, transpose) and batching rules of the layout primitives (layout.py)."""
import numpy as np

from xjax._src import core
from xjax._src.interpreters import ad, batching
from xjax._src.lax import indexing
from xjax._src.lax.elementwise import _const, select, sub
from xjax._src.lax.layout import slice  # noqa: A004 - lax's slice
from xjax._src.lax import sharding_ops
from xjax._src.lax.layout import (asarray, broadcast, broadcast_in_dim, broadcast_in_dim_p, concatenate, concatenate_p,
                                  convert_int32, dynamic_slice_p, dynamic_update_slice_p, expand_dims, pad, pad_p,
                                  reshape, reshape_p, rev, rev_p, slice_p, split, split_p, squeeze, squeeze_p, stack_p,
                                  transpose, transpose_p, unstack_p)
from xjax._src.lax.reduction import reduce_sum
from xjax._src.sharding import NamedSharding, PartitionSpec

# ---- differentiation rules: every layout op is linear in its array operands ------------------

def _reshape_transpose(ct, x, *, new_sizes, dimensions, sharding=None):
    typed = getattr(x.aval, "_sharding", None)  # (the cotangent typed as the operand, as JAX's)
    if dimensions is None:
        return [reshape(ct, x.aval.shape, out_sharding=typed)]
    if typed is not None:
        spec = sharding_ops.spec_for(typed.spec, x.aval.ndim)
        typed = NamedSharding(typed.mesh, PartitionSpec(*[spec[d] for d in dimensions]))
    return [transpose(reshape(ct, np.take(x.aval.shape, dimensions), out_sharding=typed), np.argsort(dimensions))]


def _broadcast_in_dim_transpose(ct, x, *, shape, broadcast_dimensions, sharding=None):
    """JAX's rule: sum over the new dims and the operand's size-1 dims, then put the size-1 dims back."""
    if not ad.is_undefined(x):
        return [None]
    unit_dims = [i for i, d in enumerate(x.aval.shape) if d == 1]
    bdims = tuple(d for i, d in enumerate(broadcast_dimensions) if i not in unit_dims)
    axes = tuple(i for i in range(len(shape)) if i not in bdims)
    return [expand_dims(reduce_sum(ct, axes), unit_dims)]


def _transpose_transpose(ct, x, *, permutation):
    return [transpose(ct, tuple(np.argsort(permutation)))]


def _slice_transpose(ct, x, *, start_indices, limit_indices, strides):
    """JAX's rule: the cotangent padded back into place (pads computed with NumPy, as JAX's, so they
    print as NumPy integers)."""
    shape = x.aval.shape
    out_shape = core.get_aval(ct).shape
    if not all(out_shape):
        return [ad.zeros_like_aval(x.aval)]
    if strides is None or np.all(np.equal(strides, 1)):
        pads = zip(start_indices, np.subtract(shape, limit_indices), (0,) * len(start_indices))
    else:
        real_limits = np.add(start_indices, np.add(1, np.multiply(np.subtract(out_shape, 1), strides)))
        pads = zip(start_indices, np.subtract(shape, real_limits), np.subtract(strides, 1))
    return [pad(ct, _const(ct, 0), pads)]


def _dynamic_slice_transpose(ct, x, *idx, slice_sizes):
    zeros = ad.zeros_like_aval(x.aval)
    return [dynamic_update_slice_p.bind(zeros, ct, *idx)] + [None] * len(idx)


def _dynamic_slice_jvp(primals, tangents, *, slice_sizes):
    x, *idx = primals
    ans = dynamic_slice_p.bind(x, *idx, slice_sizes=slice_sizes)
    return ans, dynamic_slice_p.bind(tangents[0], *idx, slice_sizes=slice_sizes)


def _dynamic_update_slice_jvp(primals, tangents):
    x, u, *idx = primals
    ans = dynamic_update_slice_p.bind(x, u, *idx)
    if type(tangents[0]) is ad.Zero and type(tangents[1]) is ad.Zero:
        return ans, ad.zero_tangent(ans)
    tx, tu = ad.instantiate(tangents[0]), ad.instantiate(tangents[1])
    return ans, dynamic_update_slice_p.bind(tx, tu, *idx)


def _dynamic_update_slice_transpose(ct, x, u, *idx):
    ct_x = ct_u = None
    if ad.is_undefined(x):
        ct_x = dynamic_update_slice_p.bind(ct, ad.zeros_like_aval(u.aval if ad.is_undefined(u) else core.get_aval(u)),
                                           *idx)
    if ad.is_undefined(u):
        ct_u = dynamic_slice_p.bind(ct, *idx, slice_sizes=u.aval.shape)
    return [ct_x, ct_u] + [None] * len(idx)


def _concatenate_transpose(ct, *xs, dimension):
    """JAX's rule: the cotangent split back into the operands' pieces."""
    sizes = tuple((x.aval if ad.is_undefined(x) else core.get_aval(x)).shape[dimension] for x in xs)
    parts = split(ct, sizes, dimension)
    return [p if ad.is_undefined(x) else None for p, x in zip(parts, xs)]


def _pad_transpose(ct, x, v, *, padding_config):
    ct_x = ct_v = None
    lo, hi, interior = zip(*padding_config) if padding_config else ((), (), ())
    if ad.is_undefined(x):  # with JAX's NumPy arithmetic on the config (its jaxprs print np.int64s)
        unpad_config = list(zip(np.negative(lo), np.negative(hi), np.zeros_like(interior)))
        unpadded = pad(ct, np.array(0, core.get_aval(ct).dtype), unpad_config)
        ct_x = slice(unpadded, np.zeros_like(lo), core.get_aval(unpadded).shape, np.add(interior, 1))
    if ad.is_undefined(v):
        total = reduce_sum(ct, tuple(range(len(lo))))
        ct_v = total if ct_x is None else sub(total, reduce_sum(ct_x, tuple(range(len(lo)))))
    return [ct_x, ct_v]


def _pad_jvp(primals, tangents, *, padding_config):
    ans = pad_p.bind(*primals, padding_config=padding_config)
    return ans, pad_p.bind(*[ad.instantiate(t) for t in tangents], padding_config=padding_config)


def _unstack_transpose(cts, x, *, axis):
    if all(type(ct) is ad.Zero for ct in cts):
        return [None]
    return [stack_p.bind(*[ad.instantiate_zero(ct) for ct in cts], axis=axis)]


def _stack_transpose(ct, *xs, axis):
    return unstack_p.bind(ct, axis=axis)


def _stack_batch(axis_data, vals, dims, *, axis):
    d = dims[0]
    if d is not batching.not_mapped and all(e == d for e in dims):
        return (stack_p.bind(*vals, axis=axis), d + 1) if axis <= d else (stack_p.bind(*vals, axis=axis + 1), d)
    vals = [broadcast(v, (axis_data.size,)) if e is batching.not_mapped else batching.moveaxis(v, e, 0)
            for v, e in zip(vals, dims)]
    return stack_p.bind(*vals, axis=axis + 1), 0


def _unstack_batch(axis_data, vals, dims, *, axis):
    (x,), (d,) = vals, dims
    out_axis, out_d = (axis, d - 1) if axis < d else (axis + 1, d)
    outs = unstack_p.bind(x, axis=out_axis)
    return outs, [out_d] * len(outs)


def _split_transpose(cts, x, *, sizes, axis):
    if all(type(c) is ad.Zero for c in cts):
        return [None]
    return [concatenate([ad.instantiate_zero(c) for c in cts], axis)]


def _split_batch(axis_data, vals, dims, *, sizes, axis):
    (x,), (d,) = vals, dims
    outs = split_p.bind(x, sizes=sizes, axis=axis + 1 if axis >= d else axis)
    return outs, [d] * len(outs)


ad.deflinear(split_p, _split_transpose)
split_p.def_rules(batch=_split_batch)
ad.deflinear(unstack_p, _unstack_transpose)
ad.deflinear(stack_p, _stack_transpose)
stack_p.def_rules(batch=_stack_batch)
unstack_p.def_rules(batch=_unstack_batch)
ad.deflinear(reshape_p, _reshape_transpose)
ad.deflinear(squeeze_p, lambda ct, x, *, dimensions: [expand_dims(ct, dimensions)])
ad.deflinear(broadcast_in_dim_p, _broadcast_in_dim_transpose)
ad.deflinear(transpose_p, _transpose_transpose)
ad.deflinear(slice_p, _slice_transpose)
ad.deflinear(concatenate_p, _concatenate_transpose)
ad.deflinear(rev_p, lambda ct, x, *, dimensions: [rev(ct, dimensions)])
pad_p.def_rules(jvp=_pad_jvp, transpose=_pad_transpose)
dynamic_slice_p.def_rules(jvp=_dynamic_slice_jvp, transpose=_dynamic_slice_transpose)
dynamic_update_slice_p.def_rules(jvp=_dynamic_update_slice_jvp, transpose=_dynamic_update_slice_transpose)


# ---- batching (vmap): the batch axis stays where it is wherever the op allows (no transposes) ------
def _batched_perm(perm, d):
    """A per-example permutation extended to a value mapped along d, keeping the batch axis at d."""
    out = [p + (p >= d) for p in perm]
    out.insert(d, d)
    return tuple(out)


def _reshape_batch(axis, vals, dims, *, new_sizes, dimensions, sharding):
    (x,), (d,) = vals, dims
    x = batching.moveaxis(x, d, 0)
    if dimensions is not None:
        dimensions = (0,) + tuple(np.add(1, dimensions))
    typed = sharding_ops.with_batch_dim(sharding, x, 0, 0)
    return reshape(x, (axis.size,) + tuple(new_sizes), dimensions, out_sharding=typed), 0


def _squeeze_batch(axis, vals, dims, *, dimensions):
    (x,), (d,) = vals, dims
    return squeeze(batching.moveaxis(x, d, 0), tuple(np.add(1, dimensions))), 0


def _broadcast_in_dim_batch(axis, vals, dims, *, shape, broadcast_dimensions, sharding):
    (x,), (d,) = vals, dims
    x = batching.moveaxis(x, d, 0)
    bdims = (0,) + tuple(np.add(1, broadcast_dimensions))
    return broadcast_in_dim(x, (axis.size,) + tuple(shape), bdims,
                            out_sharding=sharding_ops.with_batch_dim(sharding, x, 0, 0)), 0


def _transpose_batch(axis, vals, dims, *, permutation):
    (x,), (d,) = vals, dims
    return transpose(x, (d,) + tuple(i if i < d else i + 1 for i in permutation)), 0


def _slice_batch(axis, vals, dims, *, start_indices, limit_indices, strides):
    (x,), (d,) = vals, dims

    def with_batch(seq, v):
        return tuple(seq[:d]) + (v,) + tuple(seq[d:])

    strides = None if strides is None else with_batch(strides, 1)
    start, limit = with_batch(start_indices, 0), with_batch(limit_indices, axis.size)
    return slice_p.bind(x, start_indices=start, limit_indices=limit, strides=strides), d


def _rev_batch(axis, vals, dims, *, dimensions):
    (x,), (d,) = vals, dims
    return rev_p.bind(x, dimensions=batching.shift_axes(dimensions, d)), d


def _concatenate_batch(axis, vals, dims, *, dimension):
    # Unmapped operands are materialised along the first mapped operand's batch axis.
    d = next(d for d in dims if d is not batching.not_mapped)
    ops = [batching.matchaxis(v, vd, d, axis.size) for v, vd in zip(vals, dims)]
    return concatenate_p.bind(*ops, dimension=dimension + (dimension >= d)), d


def _pad_batch(axis, vals, dims, *, padding_config):
    (x, v), (xd, vd) = vals, dims
    if xd is batching.not_mapped:
        x, xd = batching.broadcast_batched(x, axis.size, 0), 0
    config = tuple(padding_config[:xd]) + ((0, 0, 0),) + tuple(padding_config[xd:])
    if vd is batching.not_mapped:
        return pad_p.bind(x, v, padding_config=config), xd
    # A padding value per example: pad with zeros, then select each example's value where a padded
    # mask of ones is zero (interior and edge padding alike; negative padding crops both the same).
    aval = core.get_aval(x)
    padded = pad_p.bind(x, asarray(0, aval.dtype, False), padding_config=config)
    ones = broadcast_in_dim(asarray(True), aval.shape, ())
    mask = pad_p.bind(ones, asarray(False), padding_config=config)
    out_shape = core.get_aval(padded).shape
    fill = broadcast_in_dim(v, out_shape, (xd,))
    return select(mask, padded, fill), xd


reshape_p.def_rules(batch=_reshape_batch)
squeeze_p.def_rules(batch=_squeeze_batch)
broadcast_in_dim_p.def_rules(batch=_broadcast_in_dim_batch)
transpose_p.def_rules(batch=_transpose_batch)
slice_p.def_rules(batch=_slice_batch)
rev_p.def_rules(batch=_rev_batch)
concatenate_p.def_rules(batch=_concatenate_batch)
pad_p.def_rules(batch=_pad_batch)


# ---- batching (vmap): dynamic slicing -------------------------------------------------------
# As JAX: the op becomes a gather (dynamic_slice) or a scatter (dynamic_update_slice) in clip mode,
# whose clamping is dynamic slicing's, batched by their rules; the start indices become one index
# vector, batched along axis 0 when any of them is.
def _batch_index_vector(idx, dims, size):
    """(index vector, its batch dim) of the start indices, as JAX's _batch_dynamic_slice_indices."""
    if not idx:
        return asarray(np.zeros((0,), np.int32)), batching.not_mapped
    if len({core.get_aval(i).dtype for i in idx}) > 1:
        idx = [convert_int32(i) for i in idx]
    if all(d is batching.not_mapped for d in dims):
        return concatenate([broadcast(i, (1,)) for i in idx], 0), batching.not_mapped
    cols = [broadcast_in_dim(i, (size, 1), (0,) if d is not batching.not_mapped else ()) for i, d in zip(idx, dims)]
    return concatenate(cols, 1), 0


def _dynamic_slice_batch(axis, vals, dims, *, slice_sizes):
    (x, *idx), (xd, *idims) = vals, dims
    n = tuple(range(len(slice_sizes)))
    dn = indexing.GatherDimensionNumbers(offset_dims=n, collapsed_slice_dims=(), start_index_map=n)
    index, index_d = _batch_index_vector(idx, idims, axis.size)
    return indexing.gather_p.batch(axis, (x, index), (xd, index_d), dimension_numbers=dn,
                                   slice_sizes=tuple(slice_sizes), indices_are_sorted=True, unique_indices=True,
                                   mode=indexing.GatherScatterMode.CLIP, fill_value=None)


def _dynamic_update_slice_batch(axis, vals, dims):
    (x, u, *idx), (xd, ud, *idims) = vals, dims
    n = tuple(range(len(idx)))
    dn = indexing.ScatterDimensionNumbers(update_window_dims=n, inserted_window_dims=(), scatter_dims_to_operand_dims=n)
    index, index_d = _batch_index_vector(idx, idims, axis.size)
    out, d = indexing.scatter_p.batch(axis, (x, index, u), (xd, index_d, ud), dimension_numbers=dn,
                                      indices_are_sorted=True, unique_indices=True,
                                      mode=indexing.GatherScatterMode.CLIP, update_jaxpr=None, update_consts=())
    return batching.moveaxis(out, d, 0), 0


dynamic_slice_p.def_rules(batch=_dynamic_slice_batch)
dynamic_update_slice_p.def_rules(batch=_dynamic_update_slice_batch)
