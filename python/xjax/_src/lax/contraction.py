"""dot_general: batched tensor contraction (matmul goes to BLAS in the core)."""
from xjax._src import core, dtypes
from xjax._src.lax.base import define_core_primitive, scalars_like


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
    return dot_general_p.bind(x, y, dimension_numbers=dn, precision=None, preferred_element_type=pet,
                              out_sharding=None)


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    """Vector/matrix product of rank-1 or rank-2 operands."""
    x, y = scalars_like((lhs, rhs))
    nx, ny = core.get_aval(x).ndim, core.get_aval(y).ndim
    if nx not in (1, 2) or ny not in (1, 2):
        raise TypeError(f"dot requires rank-1 or rank-2 arguments, got shapes {core.get_aval(x).shape} "
                        f"and {core.get_aval(y).shape}")
    return dot_general(x, y, (((nx - 1,), (0,)), ((), ())), precision, preferred_element_type)


# ---- jaxpr printing: the params JAX shows ---------------------------------------------------
from xjax._src.jaxpr import params_printer as _params_printer  # noqa: E402


def _dn_lists(dn):
    (lc, rc), (lb, rb) = dn
    return (list(lc), list(rc)), (list(lb), list(rb))


dot_general_p.pp_params = _params_printer(drop=("out_sharding",), drop_if_none=("precision", "preferred_element_type"),
                                          formats={"dimension_numbers": _dn_lists})
