"""Sorting primitives: multi-operand sort and top_k."""
from xjax._src import core
from xjax._src.lax.base import asarray, define_core_primitive

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
    return tuple(top_k_p.bind(x, k=int(k)))


# ---- jaxpr printing: the params JAX shows ---------------------------------------------------
from xjax._src.jaxpr import params_printer as _params_printer  # noqa: E402

top_k_p.pp_params = _params_printer(extra=lambda eqn: {"axis": eqn.invars[0].aval.ndim - 1})
