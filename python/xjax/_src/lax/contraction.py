"""dot_general: batched tensor contraction (matmul goes to BLAS in the core)."""
import numpy as np

from xjax._src import core, dtypes
from xjax._src.lax.base import define_core_primitive, scalars_like
from xjax._src.lax.elementwise import _convert
from xjax._src.lax.layout import transpose
# (underscored: lax star-exports this module)
from xjax._src.lax.sharding_ops import bind_with_out_sharding as _bind_with_out_sharding
from xjax._src.lax.sharding_ops import out_sharding_of as _out_sharding_of
from xjax._src.lax.sharding_ops import with_batch_dim as _with_batch_dim
from xjax._src.sharding import NamedSharding as _NamedSharding, PartitionSpec as _P


def _dot_attrs(dimension_numbers, precision=None, preferred_element_type=None, out_sharding=None):
    (lc, rc), (lb, rb) = dimension_numbers
    return dict(lhs_contracting_dimensions=lc, rhs_contracting_dimensions=rc, lhs_batch_dimensions=lb,
                rhs_batch_dimensions=rb, preferred_element_type=preferred_element_type)


dot_general_p = define_core_primitive("dot_general", attrs=_dot_attrs,
                                      weak=lambda avals: all(a.weak_type for a in avals))


class Precision:
    """Accepted for compatibility; the CPU core always computes at full precision."""
    DEFAULT = None
    HIGH = "high"
    HIGHEST = "highest"


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None, out_sharding=None):
    """Contracts lhs and rhs over ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))."""
    x, y = scalars_like((lhs, rhs))
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((tuple(int(d) for d in lc), tuple(int(d) for d in rc)), (tuple(int(d) for d in lb), tuple(int(d) for d in rb)))
    pet = None if preferred_element_type is None else dtypes.canonicalize_dtype(preferred_element_type)
    ndim = core.get_aval(x).ndim + core.get_aval(y).ndim - 2 * len(dn[0][0]) - len(dn[1][0])
    typed = _out_sharding_of(out_sharding, ndim, "dot_general", (x, y))  # (the sharding of the result's type)
    return _bind_with_out_sharding(dot_general_p, (x, y), out_sharding, typed, dimension_numbers=dn, precision=None,
                                   preferred_element_type=pet)


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    """Vector/matrix product of rank-1 or rank-2 operands."""
    x, y = scalars_like((lhs, rhs))
    nx, ny = core.get_aval(x).ndim, core.get_aval(y).ndim
    if nx not in (1, 2) or ny not in (1, 2):
        raise TypeError(f"dot requires rank-1 or rank-2 arguments, got shapes {core.get_aval(x).shape} "
                        f"and {core.get_aval(y).shape}")
    return dot_general(x, y, (((nx - 1,), (0,)), ((), ())), precision, preferred_element_type)


# ---- differentiation rules: dot_general is bilinear -----------------------------------------
from xjax._src.interpreters import ad  # noqa: E402


def _ranges_like(*xs):
    start = 0
    for x in xs:
        yield tuple(range(start, start + len(x)))
        start += len(x)


def _transpose_lhs(ct, x_aval, y, dimension_numbers, preferred_element_type=None, swap_ans=False):
    """The cotangent of lhs x in ct = dot_general(x, y) (JAX's rule): ct contracted with y over y's free
    dims, then transposed back to x's axis order (and converted to x's dtype)."""
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    y_ndim = core.get_aval(y).ndim
    x_kept = [d for d in range(x_aval.ndim) if d not in x_contract and d not in x_batch]
    y_kept = tuple(d for d in range(y_ndim) if d not in y_contract and d not in y_batch)
    if swap_ans:
        ans_batch, ans_y, _ = _ranges_like(x_batch, y_kept, x_kept)
    else:
        ans_batch, _, ans_y = _ranges_like(x_batch, x_kept, y_kept)
    dims = ((ans_y, y_kept), (ans_batch, tuple(y_batch)))
    if core.get_aval(y).dtype != core.get_aval(ct).dtype:  # the core contracts operands of one dtype
        y = _convert(y, core.get_aval(ct).dtype)
    x_contract_by_y = [x_contract[i] for i in np.argsort(y_contract)]
    out_axes = tuple(int(i) for i in np.argsort(list(x_batch) + x_kept + x_contract_by_y))
    out = transpose(_dot_typed(ct, y, dims, preferred_element_type, x_aval, out_axes), out_axes)
    if core.get_aval(out).dtype != x_aval.dtype:
        out = _convert(out, x_aval.dtype, x_aval.weak_type)
    return out


def _dot_typed(ct, y, dims, preferred_element_type, x_aval, out_axes):
    """The cotangent product, typed (as JAX's rule does) with x's sharding in its axis order, where x's
    type carries one: its contracted dimensions may be split alike, which JAX's rule would refuse."""
    typed = getattr(x_aval, "_sharding", None)
    other = getattr(core.get_aval(ct), "_sharding", None) or getattr(core.get_aval(y), "_sharding", None)
    if typed is None and other is not None:  # (x's type unsplit: its cotangent is too)
        typed = _NamedSharding(other.mesh, _P(*([None] * x_aval.ndim)))
    if typed is not None:
        spec = [None] * len(out_axes)
        for j, a in enumerate(out_axes):
            spec[a] = typed.spec[j]
        typed = _NamedSharding(typed.mesh, _P(*spec))
    return dot_general(ct, y, dims, preferred_element_type=preferred_element_type, out_sharding=typed)


def _dot_general_transpose(ct, x, y, *, dimension_numbers, precision=None, preferred_element_type=None,
                           out_sharding=None):
    if type(ct) is ad.Zero:
        return [None, None]
    (lc, rc), (lb, rb) = dimension_numbers
    if ad.is_undefined(x):
        return [_transpose_lhs(ct, x.aval, y, dimension_numbers, preferred_element_type), None]
    return [None, _transpose_lhs(ct, y.aval, x, ((rc, lc), (rb, lb)), preferred_element_type, swap_ans=True)]


ad.defbilinear(dot_general_p, _dot_general_transpose)


# ---- batching (vmap) ------------------------------------------------------------------------
# No operand is moved or copied: both mapped, the two batch axes pair up as a new leading batch
# dimension of the contraction; one mapped, its batch axis is one more free dimension.
from xjax._src.interpreters import batching  # noqa: E402


def _shift(dims, bdim):
    """Per-example dim numbers as dims of the operand batched along `bdim`."""
    return tuple(d + (d >= bdim) for d in dims)


def _free_before(ndim, bdim, contract, batch):
    """How many free dims of an operand of rank `ndim` come before its dim `bdim`."""
    return sum(1 for d in range(bdim) if d not in contract and d not in batch)


def _dot_general_batch(axis, vals, dims, *, dimension_numbers, out_sharding=None, **params):
    (x, y), (xd, yd) = vals, dims
    (lc, rc), (lb, rb) = dimension_numbers
    if xd is not batching.not_mapped and yd is not batching.not_mapped:
        lc, lb = _shift(lc, xd), (xd,) + _shift(lb, xd)
        rc, rb = _shift(rc, yd), (yd,) + _shift(rb, yd)
        return dot_general_p.bind(x, y, dimension_numbers=((lc, rc), (lb, rb)),
                                  out_sharding=_with_batch_dim(out_sharding, x, xd, 0), **params), 0
    if xd is not batching.not_mapped:
        lc, lb = _shift(lc, xd), _shift(lb, xd)
        out_dim = len(lb) + _free_before(core.get_aval(x).ndim, xd, lc, lb)
        mapped, d = x, xd
    else:
        rc, rb = _shift(rc, yd), _shift(rb, yd)
        x_free = core.get_aval(x).ndim - len(lc) - len(lb)
        out_dim = len(rb) + x_free + _free_before(core.get_aval(y).ndim, yd, rc, rb)
        mapped, d = y, yd
    return dot_general_p.bind(x, y, dimension_numbers=((lc, rc), (lb, rb)),
                              out_sharding=_with_batch_dim(out_sharding, mapped, d, out_dim), **params), out_dim


dot_general_p.def_rules(batch=_dot_general_batch)


# ---- jaxpr printing: the params JAX shows ---------------------------------------------------
from xjax._src.jaxpr import params_printer as _params_printer  # noqa: E402


def _dn_lists(dn):
    (lc, rc), (lb, rb) = dn
    return (list(lc), list(rc)), (list(lb), list(rb))


dot_general_p.pp_params = _params_printer(drop=("out_sharding",), drop_if_none=("precision", "preferred_element_type"),
                                          formats={"dimension_numbers": _dn_lists})
