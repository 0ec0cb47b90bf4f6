"""gather and scatter: XLA's general indexing, as JAX exposes them."""
import enum
from typing import NamedTuple

import numpy as np

from xjax._src import core, dtypes
from xjax._src.lax.base import asarray, define_core_primitive, scalars_like
from xjax._src.lax.elementwise import PRIMITIVES


class GatherDimensionNumbers(NamedTuple):
    """How gather maps indices to operand slices (XLA semantics)."""
    offset_dims: tuple
    collapsed_slice_dims: tuple
    start_index_map: tuple
    operand_batching_dims: tuple = ()
    start_indices_batching_dims: tuple = ()


class ScatterDimensionNumbers(NamedTuple):
    """How scatter maps indices and updates to operand windows (XLA semantics)."""
    update_window_dims: tuple
    inserted_window_dims: tuple
    scatter_dims_to_operand_dims: tuple
    operand_batching_dims: tuple = ()
    scatter_indices_batching_dims: tuple = ()


class GatherScatterMode(enum.Enum):
    """Out-of-bounds behaviour: clamp, fill (gather) / drop (scatter), or trust the caller."""
    CLIP = 0
    FILL_OR_DROP = 1
    PROMISE_IN_BOUNDS = 2
    ONE_HOT = 3

    @staticmethod
    def from_any(s):
        if isinstance(s, GatherScatterMode):
            return s
        if s is None or s == "fill" or s == "drop":
            return GatherScatterMode.FILL_OR_DROP
        if s == "clip":
            return GatherScatterMode.CLIP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        raise ValueError(f'Unknown gather mode "{s}"')


_MODE_ATTR = {GatherScatterMode.CLIP: "clip", GatherScatterMode.FILL_OR_DROP: "fill",
              GatherScatterMode.PROMISE_IN_BOUNDS: "promise_in_bounds", GatherScatterMode.ONE_HOT: "fill"}


def _gather_attrs(dimension_numbers, slice_sizes, indices_are_sorted=False, unique_indices=False, mode=None,
                  fill_value=None):
    dn = dimension_numbers
    return dict(offset_dims=dn.offset_dims, collapsed_slice_dims=dn.collapsed_slice_dims,
                start_index_map=dn.start_index_map, operand_batching_dims=dn.operand_batching_dims,
                start_indices_batching_dims=dn.start_indices_batching_dims, slice_sizes=slice_sizes,
                mode=_MODE_ATTR[mode], fill_value=None if fill_value is None else float(fill_value))


def _scatter_attrs(dimension_numbers, indices_are_sorted=False, unique_indices=False, mode=None,
                   update_jaxpr=None, update_consts=()):
    dn = dimension_numbers
    return dict(update_window_dims=dn.update_window_dims, inserted_window_dims=dn.inserted_window_dims,
                scatter_dims_to_operand_dims=dn.scatter_dims_to_operand_dims,
                operand_batching_dims=dn.operand_batching_dims,
                scatter_indices_batching_dims=dn.scatter_indices_batching_dims, mode=_MODE_ATTR[mode])


gather_p = define_core_primitive("gather", attrs=_gather_attrs)
scatter_p = define_core_primitive("scatter", attrs=_scatter_attrs)
scatter_add_p = define_core_primitive("scatter_add", attrs=_scatter_attrs)
scatter_mul_p = define_core_primitive("scatter_mul", attrs=_scatter_attrs)
scatter_min_p = define_core_primitive("scatter_min", attrs=_scatter_attrs)
scatter_max_p = define_core_primitive("scatter_max", attrs=_scatter_attrs)


def _tuple_dn(dn, cls):
    return cls(*(tuple(int(d) for d in field) for field in dn))


def gather(operand, start_indices, dimension_numbers, slice_sizes, *, unique_indices=False,
           indices_are_sorted=False, mode=None, fill_value=None):
    """XLA gather; the index vector is the last dimension of start_indices."""
    x = asarray(operand)
    idx = asarray(start_indices)
    if not dtypes.is_int(core.get_aval(idx).dtype):
        raise TypeError(f"gather indices must be an integer type, got {core.get_aval(idx).dtype.name}")
    mode = GatherScatterMode.from_any(mode)
    if mode != GatherScatterMode.FILL_OR_DROP:
        fill_value = None
    elif fill_value is None:  # JAX's default, as a param (uint64's largest is no float: the core's default)
        fill_value = default_fill_value(core.get_aval(x).dtype)
        if type(fill_value) is int and float(fill_value) != fill_value:
            fill_value = None
    return gather_p.bind(x, idx, dimension_numbers=_tuple_dn(dimension_numbers, GatherDimensionNumbers),
                         slice_sizes=tuple(int(s) for s in slice_sizes), indices_are_sorted=bool(indices_are_sorted),
                         unique_indices=bool(unique_indices), mode=mode, fill_value=fill_value)


def default_fill_value(dtype):
    """JAX's fill for out-of-bounds gathers: NaN, the most negative int, the largest uint, True."""
    if dtype in dtypes.FLOATING or np.issubdtype(dtype, np.inexact):
        return float("nan")
    if dtype == dtypes.bool_:
        return True
    info = np.iinfo(dtype)
    return int(info.min) if dtype.kind == "i" else int(info.max)


def _scatter_fn(prim):
    def scatter(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
                unique_indices=False, mode=None):
        x, u = scalars_like((operand, updates))
        idx = asarray(scatter_indices)
        if not dtypes.is_int(core.get_aval(idx).dtype):
            raise TypeError(f"scatter indices must be an integer type, got {core.get_aval(idx).dtype.name}")
        return prim.bind(x, idx, u, dimension_numbers=_tuple_dn(dimension_numbers, ScatterDimensionNumbers),
                         indices_are_sorted=bool(indices_are_sorted), unique_indices=bool(unique_indices),
                         mode=GatherScatterMode.from_any(mode), update_jaxpr=None, update_consts=())

    scatter.__name__ = prim.name
    scatter.__doc__ = f"XLA {prim.name}: combines updates into operand windows chosen by the indices."
    return scatter


scatter = _scatter_fn(scatter_p)
scatter_add = _scatter_fn(scatter_add_p)
scatter_mul = _scatter_fn(scatter_mul_p)
scatter_min = _scatter_fn(scatter_min_p)
scatter_max = _scatter_fn(scatter_max_p)


# ---- jaxpr printing: JAX's names and params -------------------------------------------------
from xjax._src.jaxpr import (Jaxpr as _Jaxpr, JaxprEqn as _JaxprEqn, Var as _Var,  # noqa: E402,E501
                             params_printer as _params_printer)


def _update_jaxpr(combine):
    """The scalar combiner jaxpr JAX shows as a scatter's update_jaxpr."""

    def extra(eqn):
        aval = eqn.invars[0].aval.update(shape=(), weak_type=False)
        a, b, c = _Var(aval), _Var(aval), _Var(aval)
        return {"update_jaxpr": _Jaxpr([], [a, b], [c], [_JaxprEqn([a, b], [c], PRIMITIVES[combine], {})])}

    return extra


for _p, _combine in ((scatter_add_p, "add"), (scatter_mul_p, "mul"), (scatter_min_p, "min"), (scatter_max_p, "max")):
    _p.name = _p.name.replace("_", "-")  # JAX's names: scatter-add, ...
    _p.pp_params = _params_printer(extra=_update_jaxpr(_combine))


# ---- differentiation rules ------------------------------------------------------------------
# gather and scatter-add are linear in their array operands and transpose into each other (same
# mode, so clamped or dropped windows line up); scatter, scatter-mul and scatter-min/max have
# JVPs in terms of those two. Indices are never differentiated.
from xjax._src.interpreters import ad  # noqa: E402
from xjax._src.lax import elementwise as ew  # noqa: E402
from xjax._src.lax.layout import broadcast_in_dim, reshape  # noqa: E402


def _inverse_gather(dn, updates_shape, operand_ndim):
    """The gather reading back, for each update element, the operand element a scatter writes.

    Returns (gather dimension numbers, slice sizes) for the scatter dimension numbers `dn`.
    """
    gdn = GatherDimensionNumbers(offset_dims=dn.update_window_dims, collapsed_slice_dims=dn.inserted_window_dims,
                                 start_index_map=dn.scatter_dims_to_operand_dims,
                                 operand_batching_dims=dn.operand_batching_dims,
                                 start_indices_batching_dims=dn.scatter_indices_batching_dims)
    window = iter(dn.update_window_dims)
    sizes = tuple(1 if d in dn.inserted_window_dims or d in dn.operand_batching_dims else updates_shape[next(window)]
                  for d in range(operand_ndim))
    return gdn, sizes


def _gather_back(x, indices, params, updates_shape):
    """`x` (of the operand's shape) read at every update element's destination (0 where dropped);
    JAX's transposes gather without the scatter's sortedness and uniqueness promises."""
    gdn, sizes = _inverse_gather(params["dimension_numbers"], updates_shape, core.get_aval(x).ndim)
    return gather_p.bind(x, indices, dimension_numbers=gdn, slice_sizes=sizes, indices_are_sorted=False,
                         unique_indices=False, mode=params["mode"], fill_value=0)


def _gather_jvp(g, x, indices, *, fill_value=None, **params):
    return gather_p.bind(g, indices, fill_value=0, **params)


def _gather_transpose(ct, x, indices, *, dimension_numbers, slice_sizes, indices_are_sorted, unique_indices, mode,
                      fill_value=None):
    if not ad.is_undefined(x) or ad.is_undefined(indices):
        raise ValueError("gather is linear in its operand only")
    if type(ct) is ad.Zero:
        return [None, None]
    dn = dimension_numbers
    sdn = ScatterDimensionNumbers(update_window_dims=dn.offset_dims, inserted_window_dims=dn.collapsed_slice_dims,
                                  scatter_dims_to_operand_dims=dn.start_index_map,
                                  operand_batching_dims=dn.operand_batching_dims,
                                  scatter_indices_batching_dims=dn.start_indices_batching_dims)
    aval = x.aval.update(weak_type=core.get_aval(ct).weak_type)
    if getattr(x.aval, "_sharding", None) is not None:  # (the zeros typed as the operand, as JAX's)
        aval = aval.with_sharding(x.aval._sharding)
    zeros = ad.zeros_like_aval(aval)
    return [scatter_add_p.bind(zeros, indices, ct, dimension_numbers=sdn, indices_are_sorted=indices_are_sorted,
                               unique_indices=unique_indices, mode=mode, update_jaxpr=None, update_consts=()),
            None]


ad.defjvp(gather_p, _gather_jvp, None)
gather_p.def_rules(transpose=_gather_transpose)


def _both_tangents(primals, tangents):
    """The operand and updates tangents as arrays, or None when both are symbolic zeros."""
    (x, _, u), (tx, _, tu) = primals, tangents
    if type(tx) is ad.Zero and type(tu) is ad.Zero:
        return None
    return ad.instantiate(tx), ad.instantiate(tu)


def _scatter_add_jvp(primals, tangents, **params):
    x, indices, u = primals
    ans = scatter_add_p.bind(x, indices, u, **params)
    ts = _both_tangents(primals, tangents)
    if ts is None:
        return ans, ad.zero_tangent(ans)
    return ans, scatter_add_p.bind(ts[0], indices, ts[1], **params)


def _scatter_add_transpose(ct, x, indices, u, **params):
    if ad.is_undefined(indices):
        raise ValueError("scatter-add is not linear in its indices")
    if type(ct) is ad.Zero:
        return [None, None, None]
    ct_x = ct if ad.is_undefined(x) else None
    ct_u = _gather_back(ct, indices, params, u.aval.shape) if ad.is_undefined(u) else None
    return [ct_x, None, ct_u]


scatter_add_p.def_rules(jvp=_scatter_add_jvp, transpose=_scatter_add_transpose)


def _update_ids(u_aval, dn):
    """1, 2, ...: one id per update window (0 stands for 'the operand'), broadcast to the updates' shape."""

    shape = u_aval.shape
    scatter_dims = [d for d in range(len(shape)) if d not in dn.update_window_dims]
    ids_shape = tuple(shape[d] for d in scatter_dims)
    n = 1
    for d in ids_shape:
        n *= d
    ids = reshape(ew.add(ew.iota(dtypes.int32, n), 1), ids_shape)
    return broadcast_in_dim(ids, shape, scatter_dims)


def _scatter_winners(x_aval, indices, u_aval, params):
    """(operand elements no update overwrote, update elements that won their destination): bools.

    Which of several updates to one element wins is up to the backend; scattering ids and reading
    them back (as JAX does) asks it, so primal and tangent agree whatever it chose.
    """
    dn = params["dimension_numbers"]
    ids = _update_ids(u_aval, dn)
    written = scatter_p.bind(ad.zeros_like_aval(x_aval.update(dtype=dtypes.int32, weak_type=False)), indices, ids,
                             **params)
    return ew.eq(written, 0), ew.eq(ids, _gather_back(written, indices, params, u_aval.shape))


def _masked(pred, v):
    return ew.select(pred, v, ad.zeros_like_aval(core.get_aval(v)))


def _scatter_jvp(primals, tangents, **params):
    x, indices, u = primals
    ts = _both_tangents(primals, tangents)
    if ts is None:
        ans = scatter_p.bind(x, indices, u, **params)
        return ans, ad.zero_tangent(ans)
    tx, tu = ts
    if params["unique_indices"]:  # no collisions: scatter is linear in (operand, updates)
        return scatter_p.bind(x, indices, u, **params), scatter_p.bind(tx, indices, tu, **params)
    keep, won = _scatter_winners(core.get_aval(x), indices, core.get_aval(u), params)
    ans = scatter_add_p.bind(_masked(keep, x), indices, _masked(won, u), **params)
    return ans, scatter_add_p.bind(_masked(keep, tx), indices, _masked(won, tu), **params)


def _scatter_transpose(ct, x, indices, u, **params):
    if not params["unique_indices"]:
        raise NotImplementedError("scatter transpose is only implemented where unique_indices=True")
    if ad.is_undefined(indices):
        raise ValueError("scatter is not linear in its indices")
    if type(ct) is ad.Zero:
        return [None, None, None]
    u_aval = u.aval if ad.is_undefined(u) else core.get_aval(u)
    ct_x = ct_u = None
    if ad.is_undefined(x):  # what the updates overwrote gets no cotangent
        ct_x = scatter_p.bind(ct, indices, ad.zeros_like_aval(u_aval.update(weak_type=False)), **params)
    if ad.is_undefined(u):
        ct_u = _gather_back(ct, indices, params, u_aval.shape)
    return [ct_x, None, ct_u]


scatter_p.def_rules(jvp=_scatter_jvp, transpose=_scatter_transpose)


def _scatter_mul_jvp(primals, tangents, **params):
    x, indices, u = primals
    tx, _, tu = tangents
    ans = scatter_mul_p.bind(x, indices, u, **params)
    t = None
    if type(tx) is not ad.Zero:
        t = scatter_mul_p.bind(tx, indices, u, **params)
    if type(tu) is not ad.Zero:
        if not params["unique_indices"]:
            raise NotImplementedError("scatter_mul gradients are only implemented if `unique_indices=True`")
        zeros = ad.zeros_like_aval(core.get_aval(x).update(weak_type=False))
        t = ad.add_tangents(t, ew.mul(x, scatter_add_p.bind(zeros, indices, tu, **params)))
    return ans, t


def _scatter_mul_transpose(ct, x, indices, u, **params):
    if ad.is_undefined(indices) or (ad.is_undefined(x) and ad.is_undefined(u)):
        raise ValueError("scatter-mul is linear in one of operand and updates only")
    if type(ct) is ad.Zero:
        return [None, None, None]
    if ad.is_undefined(x):
        return [scatter_mul_p.bind(ct, indices, u, **params), None, None]
    if not params["unique_indices"]:
        raise NotImplementedError("scatter_mul gradients are only implemented if `unique_indices=True`")
    return [None, None, _gather_back(ew.mul(ct, x), indices, params, u.aval.shape)]


scatter_mul_p.def_rules(jvp=_scatter_mul_jvp, transpose=_scatter_mul_transpose)


def _scatter_extremal_jvp(prim):
    """scatter-min/max: each result element takes the tangent of the value that won it; when the
    operand and several updates tie, their tangents are averaged (as JAX)."""

    def jvp(primals, tangents, **params):
        x, indices, u = primals
        ans = prim.bind(x, indices, u, **params)
        ts = _both_tangents(primals, tangents)
        if ts is None:
            return ans, ad.zero_tangent(ans)
        tx, tu = ts
        dtype = core.get_aval(ans).dtype
        u_shape = core.get_aval(u).shape
        x_won = ew.convert_element_type(ew.eq(x, ans), dtype)
        u_won = ew.convert_element_type(ew.eq(u, _gather_back(ans, indices, params, u_shape)), dtype)
        zeros = ad.zeros_like_aval(core.get_aval(ans).update(weak_type=False))
        count = ew.add(x_won, scatter_add_p.bind(zeros, indices, u_won, **params))
        t = scatter_add_p.bind(ew.mul(tx, x_won), indices, ew.mul(tu, u_won), **params)
        return ans, ew.div(t, count)

    return jvp


scatter_min_p.def_rules(jvp=_scatter_extremal_jvp(scatter_min_p))
scatter_max_p.def_rules(jvp=_scatter_extremal_jvp(scatter_max_p))


# ---- batching (vmap) ------------------------------------------------------------------------
# JAX's rules: the batch axis goes to the front. Operand mapped alone, it is one more window
# (offset) dim of the full batch size; indices mapped, it is one more batch dim of the indices,
# paired with the operand's batch axis through operand_batching_dims (the operand is broadcast when
# unmapped, for scatter only). Neither kind of dim is indexed, so each mode (clip, fill/drop,
# promise_in_bounds) keeps its meaning per example.
from xjax._src.interpreters import batching  # noqa: E402

_mapped = batching.not_mapped


def _gather_batch(axis, vals, dims, *, dimension_numbers, slice_sizes, **params):
    """JAX's rule: batch axes moved to the front; a batched operand alone makes the batch a window
    (offset) dim, batched indices alone a batch dim of the indices, both a pair of batching dims (with
    JAX's NumPy arithmetic on the dims, which its jaxprs print as np.int64)."""
    (x, idx), (xd, id_) = vals, dims
    dn = dimension_numbers
    if id_ is _mapped:
        x = batching.moveaxis(x, xd, 0)
        sizes = (core.get_aval(x).shape[0],) + tuple(slice_sizes)
        gdn = GatherDimensionNumbers(
            offset_dims=(0,) + tuple(np.add(1, dn.offset_dims)),
            collapsed_slice_dims=tuple(np.add(1, dn.collapsed_slice_dims)),
            start_index_map=tuple(np.add(1, dn.start_index_map)),
            operand_batching_dims=tuple(np.add(1, dn.operand_batching_dims)),
            start_indices_batching_dims=dn.start_indices_batching_dims)
        return gather_p.bind(x, idx, dimension_numbers=gdn, slice_sizes=sizes, **params), 0
    idx = batching.moveaxis(idx, id_, 0)
    if xd is _mapped:  # the same array indexed per example: indices may repeat or be unsorted
        gdn = GatherDimensionNumbers(
            offset_dims=tuple(1 + d for d in dn.offset_dims),
            collapsed_slice_dims=dn.collapsed_slice_dims,
            start_index_map=dn.start_index_map,
            operand_batching_dims=dn.operand_batching_dims,
            start_indices_batching_dims=tuple(np.add(1, dn.start_indices_batching_dims)))
        params = dict(params, unique_indices=False, indices_are_sorted=False)
        return gather_p.bind(x, idx, dimension_numbers=gdn, slice_sizes=tuple(slice_sizes), **params), 0
    x = batching.moveaxis(x, xd, 0)
    sizes = (0 if core.get_aval(x).shape[0] == 0 else 1,) + tuple(slice_sizes)
    gdn = GatherDimensionNumbers(
        offset_dims=tuple(np.add(1, dn.offset_dims)),
        collapsed_slice_dims=tuple(np.add(1, dn.collapsed_slice_dims)),
        start_index_map=tuple(np.add(1, dn.start_index_map)),
        operand_batching_dims=(0,) + tuple(np.add(1, dn.operand_batching_dims)),
        start_indices_batching_dims=(0,) + tuple(np.add(1, dn.start_indices_batching_dims)))
    return gather_p.bind(x, idx, dimension_numbers=gdn, slice_sizes=sizes, **params), 0


gather_p.def_rules(batch=_gather_batch)


def _scatter_batch(prim):
    """JAX's rule: operand and updates get the batch axis in front (made for unbatched ones); unbatched
    indices make it a window dim, batched ones a pair of batching dims."""

    def rule(axis, vals, dims, *, dimension_numbers, **params):
        (x, idx, u), (xd, id_, ud) = vals, dims
        x, u = batching.bdim_at_front(x, xd, axis.size), batching.bdim_at_front(u, ud, axis.size)
        dn = dimension_numbers
        if id_ is _mapped:
            sdn = ScatterDimensionNumbers(
                update_window_dims=(0,) + tuple(np.add(1, dn.update_window_dims)),
                inserted_window_dims=tuple(np.add(1, dn.inserted_window_dims)),
                scatter_dims_to_operand_dims=tuple(np.add(1, dn.scatter_dims_to_operand_dims)),
                operand_batching_dims=tuple(np.add(1, dn.operand_batching_dims)),
                scatter_indices_batching_dims=dn.scatter_indices_batching_dims)
        else:
            idx = batching.bdim_at_front(idx, id_, axis.size)
            sdn = ScatterDimensionNumbers(
                update_window_dims=tuple(np.add(1, dn.update_window_dims)),
                inserted_window_dims=tuple(np.add(1, dn.inserted_window_dims)),
                scatter_dims_to_operand_dims=tuple(np.add(1, dn.scatter_dims_to_operand_dims)),
                operand_batching_dims=(0,) + tuple(np.add(1, dn.operand_batching_dims)),
                scatter_indices_batching_dims=(0,) + tuple(np.add(1, dn.scatter_indices_batching_dims)))
        return prim.bind(x, idx, u, dimension_numbers=sdn, **params), 0

    return rule


for _p in (scatter_p, scatter_add_p, scatter_mul_p, scatter_min_p, scatter_max_p):
    _p.def_rules(batch=_scatter_batch(_p))
