"""Reduction and cumulative primitives."""
from xjax._src import core, dtypes
from xjax._src.lax.base import asarray, define_core_primitive

_axes_attrs = lambda axes, out_sharding=None: {"axes": axes}  # noqa: E731
reduce_sum_p = define_core_primitive("reduce_sum", attrs=_axes_attrs)
reduce_prod_p = define_core_primitive("reduce_prod", attrs=_axes_attrs)
reduce_max_p = define_core_primitive("reduce_max", attrs=_axes_attrs)
reduce_min_p = define_core_primitive("reduce_min", attrs=_axes_attrs)
reduce_and_p = define_core_primitive("reduce_and", attrs=_axes_attrs)
reduce_or_p = define_core_primitive("reduce_or", attrs=_axes_attrs)
reduce_xor_p = define_core_primitive("reduce_xor", attrs=_axes_attrs)
argmax_p = define_core_primitive("argmax", weak=lambda avals: False)
argmin_p = define_core_primitive("argmin", weak=lambda avals: False)
cumsum_p = define_core_primitive("cumsum")
cumprod_p = define_core_primitive("cumprod")
cummax_p = define_core_primitive("cummax")
cummin_p = define_core_primitive("cummin")
cumlogsumexp_p = define_core_primitive("cumlogsumexp")


def _axes(x, axes):
    nd = core.get_aval(x).ndim
    out = []
    for a in axes:
        a = int(a)
        if not -nd <= a < nd:
            raise ValueError(f"axis {a} is out of bounds for array of dimension {nd}")
        out.append(a % nd)
    if len(set(out)) != len(out):
        raise ValueError(f"duplicate value in 'axis': {tuple(axes)}")
    return tuple(out)


def _reducer(prim):
    def reduce(operand, axes):
        x = asarray(operand)
        return prim.bind(x, axes=_axes(x, axes), out_sharding=None)

    reduce.__name__ = prim.name
    reduce.__doc__ = f"The `{prim.name}` reduction over the given axes."
    return reduce


reduce_sum = _reducer(reduce_sum_p)
reduce_prod = _reducer(reduce_prod_p)
reduce_max = _reducer(reduce_max_p)
reduce_min = _reducer(reduce_min_p)
reduce_and = _reducer(reduce_and_p)
reduce_or = _reducer(reduce_or_p)
reduce_xor = _reducer(reduce_xor_p)


def argmax(operand, axis, index_dtype):
    """Index of the (first) maximum along `axis`."""
    x = asarray(operand)
    return argmax_p.bind(x, axes=_axes(x, (axis,)), index_dtype=dtypes.canonicalize_dtype(index_dtype))


def argmin(operand, axis, index_dtype):
    """Index of the (first) minimum along `axis`."""
    x = asarray(operand)
    return argmin_p.bind(x, axes=_axes(x, (axis,)), index_dtype=dtypes.canonicalize_dtype(index_dtype))


def _cumulative(prim):
    def cumulative(operand, axis=0, reverse=False):
        x = asarray(operand)
        (axis,) = _axes(x, (axis,))
        return prim.bind(x, axis=axis, reverse=bool(reverse))

    cumulative.__name__ = prim.name
    cumulative.__doc__ = f"The `{prim.name}` scan along `axis`."
    return cumulative


cumsum = _cumulative(cumsum_p)
cumprod = _cumulative(cumprod_p)
cummax = _cumulative(cummax_p)
cummin = _cumulative(cummin_p)
cumlogsumexp = _cumulative(cumlogsumexp_p)


# ---- jaxpr printing: the params JAX shows ---------------------------------------------------
from xjax._src.jaxpr import params_printer as _params_printer  # noqa: E402

for _p in (reduce_prod_p, reduce_max_p, reduce_min_p, reduce_and_p, reduce_or_p, reduce_xor_p):
    _p.pp_params = _params_printer(drop=("out_sharding",))


# ---- differentiation rules ------------------------------------------------------------------
from xjax._src.interpreters import ad  # noqa: E402


def _keep_dims_shape(shape, axes):
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def _broadcast_back(y, shape, axes):
    """A reduction's result broadcast back over the reduced axes of an operand of `shape`."""
    from xjax._src.lax.layout import broadcast_in_dim

    kept = tuple(i for i in range(len(shape)) if i not in axes)
    return broadcast_in_dim(y, shape, kept)


def _reduce_sum_transpose(ct, x, *, axes, out_sharding=None):
    return [_broadcast_back(ct, x.aval.shape, axes)]


def _reduce_chooser_jvp(prim):
    """max/min: the tangent at the chosen location; ties share it equally (as JAX)."""

    def jvp(primals, tangents, *, axes, out_sharding=None):
        from xjax._src.lax import elementwise as ew

        (x,), (g,) = primals, tangents
        ans = prim.bind(x, axes=axes, out_sharding=out_sharding)
        shape = core.get_aval(x).shape
        location = ew.convert_element_type(ew.eq(x, _broadcast_back(ans, shape, axes)), core.get_aval(g).dtype)
        counts = reduce_sum_p.bind(location, axes=axes, out_sharding=None)
        return ans, ew.div(reduce_sum_p.bind(ew.mul(g, location), axes=axes, out_sharding=None), counts)

    return jvp


ad.deflinear(reduce_sum_p, _reduce_sum_transpose)
reduce_max_p.def_rules(jvp=_reduce_chooser_jvp(reduce_max_p))
reduce_min_p.def_rules(jvp=_reduce_chooser_jvp(reduce_min_p))
for _p in (reduce_and_p, reduce_or_p, reduce_xor_p, argmax_p, argmin_p):
    ad.defjvp_zero(_p)
ad.deflinear(cumsum_p, lambda ct, x, *, axis, reverse: [cumsum_p.bind(ct, axis=axis, reverse=not reverse)])
