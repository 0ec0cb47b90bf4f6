"""gather and scatter: XLA's general indexing, as JAX exposes them."""
import enum
from typing import NamedTuple

from xjax._src import core, dtypes
from xjax._src.lax.base import asarray, define_core_primitive, scalars_like


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
    return gather_p.bind(x, idx, dimension_numbers=_tuple_dn(dimension_numbers, GatherDimensionNumbers),
                         slice_sizes=tuple(int(s) for s in slice_sizes), indices_are_sorted=bool(indices_are_sorted),
                         unique_indices=bool(unique_indices), mode=GatherScatterMode.from_any(mode),
                         fill_value=fill_value)


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
from xjax._src.jaxpr import Jaxpr as _Jaxpr, JaxprEqn as _JaxprEqn, Var as _Var, params_printer as _params_printer  # noqa: E402,E501


def _update_jaxpr(combine):
    """The scalar combiner jaxpr JAX shows as a scatter's update_jaxpr."""

    def extra(eqn):
        from xjax._src.lax.elementwise import PRIMITIVES

        aval = eqn.invars[0].aval.update(shape=(), weak_type=False)
        a, b, c = _Var(aval), _Var(aval), _Var(aval)
        return {"update_jaxpr": _Jaxpr([], [a, b], [c], [_JaxprEqn([a, b], [c], PRIMITIVES[combine], {})])}

    return extra


for _p, _combine in ((scatter_add_p, "add"), (scatter_mul_p, "mul"), (scatter_min_p, "min"), (scatter_max_p, "max")):
    _p.name = _p.name.replace("_", "-")  # JAX's names: scatter-add, ...
    _p.pp_params = _params_printer(extra=_update_jaxpr(_combine))
