"""Sorting primitives: multi-operand sort and top_k."""
import numpy as np

from xjax._src import core, dtypes
from xjax._src.lax.base import asarray, define_core_primitive
from xjax._src.lax.elementwise import broadcasted_iota
from xjax._src.lax.indexing import GatherDimensionNumbers, GatherScatterMode, gather_p
from xjax._src.lax.layout import expand_dims

sort_p = define_core_primitive("sort", multiple_results=True,
                               weak=lambda avals: avals[0].weak_type)
top_k_p = define_core_primitive("top_k", multiple_results=True)


def _sort_eval_wrapper(inner):
    def abstract_eval(*avals, **params):
        out = inner(*avals, **params)
        return [out] if not isinstance(out, list) else out

    return abstract_eval


sort_p.abstract_eval = _sort_eval_wrapper(sort_p.abstract_eval)
top_k_p.abstract_eval = _sort_eval_wrapper(top_k_p.abstract_eval)


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """Sorts one array, or a sequence of arrays by the first num_keys of them."""
    single = not isinstance(operand, (tuple, list))
    ops = [asarray(o) for o in ([operand] if single else operand)]
    nd = core.get_aval(ops[0]).ndim
    if not -nd <= dimension < nd:
        raise ValueError(f"dimension {dimension} is out of bounds for array of dimension {nd}")
    outs = sort_p.bind(*ops, dimension=dimension % nd, is_stable=bool(is_stable), num_keys=int(num_keys))
    return outs[0] if single else tuple(outs)


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """Sorts keys and permutes values the same way."""
    return sort((keys, values), dimension, is_stable, 1)


def top_k(operand, k):
    """The k largest entries along the last axis, and their indices."""
    x = asarray(operand)
    if int(k) < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    if dtypes.is_complex(core.get_aval(x).dtype):
        raise ValueError("top_k is not compatible with complex inputs.")  # JAX's
    return list(top_k_p.bind(x, k=int(k)))  # a list, as JAX returns


# ---- jaxpr printing: the params JAX shows ---------------------------------------------------
from xjax._src.jaxpr import params_printer as _params_printer  # noqa: E402

top_k_p.pp_params = _params_printer(extra=lambda eqn: {"axis": eqn.invars[0].aval.ndim - 1})


# ---- differentiation rules ------------------------------------------------------------------
# sort and top_k move values: an output's tangent is the input tangent read at the position its
# value came from (the sort permutation, found by sorting an iota alongside; top_k's indices).
from xjax._src.interpreters import ad  # noqa: E402


def _take_along(t, idx, axis):
    """t[..., idx, ...] along `axis`, idx having t's shape except (maybe) along axis: a gather whose
    other dims are batch dims, so it transposes to a scatter-add (for reverse mode)."""
    nd = core.get_aval(t).ndim
    batch = tuple(d for d in range(nd) if d != axis)
    dn = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(axis,), start_index_map=(axis,),
                                operand_batching_dims=batch, start_indices_batching_dims=batch)
    return gather_p.bind(t, expand_dims(idx, (nd,)), dimension_numbers=dn, slice_sizes=(1,) * nd,
                         indices_are_sorted=False, unique_indices=True, mode=GatherScatterMode.PROMISE_IN_BOUNDS,
                         fill_value=None)


def _sort_jvp(primals, tangents, *, dimension, is_stable, num_keys):
    """JAX's rule: the operands sorted with an unsigned iota, whose permutation gathers the tangents
    (the other dims batch dims, numbered with NumPy integers as JAX's)."""
    shape = core.get_aval(primals[0]).shape
    index_dtype = dtypes.uint32 if all(d < 2 ** 32 for d in shape) else dtypes.uint64
    *outs, perm = sort_p.bind(*primals, broadcasted_iota(index_dtype, shape, dimension), dimension=dimension,
                              is_stable=is_stable, num_keys=num_keys)
    batch = tuple(np.delete(np.arange(len(shape), dtype=np.int64), dimension))
    dn = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(dimension,), start_index_map=(dimension,),
                                operand_batching_dims=batch, start_indices_batching_dims=batch)
    idx = expand_dims(perm, (len(shape),))

    def gather(t):
        return gather_p.bind(t, idx, dimension_numbers=dn, slice_sizes=(1,) * len(shape), indices_are_sorted=False,
                             unique_indices=False, mode=GatherScatterMode.PROMISE_IN_BOUNDS, fill_value=None)

    return outs, [ad.zero_tangent(o) if type(t) is ad.Zero else gather(t) for o, t in zip(outs, tangents)]


def _top_k_jvp(primals, tangents, *, k):
    (x,), (t,) = primals, tangents
    values, indices = top_k_p.bind(x, k=k)
    return [values, indices], [_take_along(t, indices, core.get_aval(x).ndim - 1), ad.zero_tangent(indices)]


sort_p.def_rules(jvp=_sort_jvp)
top_k_p.def_rules(jvp=_top_k_jvp)


# ---- batching (vmap) ----------------------------------------------------------------------------
from xjax._src.interpreters import batching  # noqa: E402
from xjax._src.lax import layout  # noqa: E402


def _sort_batch(axis, vals, dims, *, dimension, is_stable, num_keys):
    # JAX's rule: every operand is permuted per example; unmapped ones are materialised at the first
    # batch axis (with Python-int broadcast dims), mapped ones moved there.
    proto, d = next((v, d) for v, d in zip(vals, dims) if d is not batching.not_mapped)
    shape = core.get_aval(proto).shape
    kept = tuple(i for i in range(len(shape)) if i != d)
    ops = [layout.broadcast_in_dim(v, shape, kept) if vd is batching.not_mapped else batching.moveaxis(v, vd, d)
           for v, vd in zip(vals, dims)]
    outs = sort_p.bind(*ops, dimension=dimension + (d <= dimension), is_stable=is_stable, num_keys=num_keys)
    return outs, [d] * len(outs)


def _top_k_batch(axis, vals, dims, *, k):
    (x,), (d,) = vals, dims
    if d == core.get_aval(x).ndim - 1:  # top_k works along the last axis: the batch axis must leave it
        x, d = batching.moveaxis(x, d, 0), 0
    return top_k_p.bind(x, k=k), [d, d]


sort_p.def_rules(batch=_sort_batch)
top_k_p.def_rules(batch=_top_k_batch)
