"""Reduction and cumulative primitives."""
import numpy as np

from xjax._src import core, dtypes
from xjax._src.lax import elementwise as ew
from xjax._src.lax.base import asarray, define_core_primitive
from xjax._src.lax.layout import broadcast_in_dim, concatenate, pad, reshape, rev, slice_in_dim, squeeze

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
    x = _ordered_operand("argmax", operand)
    return argmax_p.bind(x, axes=_axes(x, (axis,)), index_dtype=dtypes.canonicalize_dtype(index_dtype))


def _ordered_operand(name, operand):
    """operand as an array; JAX's argmax and argmin refuse complex ones (their comparisons do)."""
    x = asarray(operand)
    if dtypes.is_complex(core.get_aval(x).dtype):
        raise TypeError(f"{name} does not accept dtype {core.get_aval(x).dtype}: complex numbers are not ordered")
    return x


def argmin(operand, axis, index_dtype):
    """Index of the (first) minimum along `axis`."""
    x = _ordered_operand("argmin", operand)
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
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    return broadcast_in_dim(y, shape, kept)


def _reduce_sum_transpose(ct, x, *, axes, out_sharding=None):
    shape = x.aval.shape
    return [broadcast_in_dim(ct, shape, tuple(np.delete(np.arange(len(shape)), axes)),
                             out_sharding=getattr(x.aval, "_sharding", None))]


def _reduce_chooser_jvp(prim):
    """max/min: the tangent at the chosen location; ties share it equally (as JAX)."""

    def jvp(primals, tangents, *, axes, out_sharding=None):
        (x,), (g,) = primals, tangents
        ans = prim.bind(x, axes=axes, out_sharding=out_sharding)
        shape = core.get_aval(x).shape
        location = ew.convert_element_type(ew._eq_meet(x, reshape(ans, _keep_dims_shape(shape, axes))),
                                           core.get_aval(g).dtype)
        counts = reduce_sum(location, axes)
        return ans, ew.div(reduce_sum(ew.mul(g, location), axes), counts)

    return jvp


ad.deflinear(reduce_sum_p, _reduce_sum_transpose)
reduce_max_p.def_rules(jvp=_reduce_chooser_jvp(reduce_max_p))
reduce_min_p.def_rules(jvp=_reduce_chooser_jvp(reduce_min_p))
for _p in (reduce_and_p, reduce_or_p, reduce_xor_p, argmax_p, argmin_p):
    ad.defjvp_zero(_p)
ad.deflinear(cumsum_p, lambda ct, x, *, axis, reverse: [cumsum_p.bind(ct, axis=axis, reverse=not reverse)])


# reduce_prod and the cumulative ops other than cumsum differentiate a log-depth combination of
# (value, tangent) pairs: a halving tree for the product, the parallel prefix scan for the scans
# (the same combination order as JAX's associative_scan, so ties in cummax/cummin split tangents
# as JAX's do). Each step only uses primitives with their own rules, so higher orders work and
# zeros in a product need no division.


def _mul_pairs(a, b):
    (x, tx), (y, ty) = a, b
    return ew.mul(x, y), ew.add(ew.mul(tx, y), ew.mul(x, ty))


def _chooser_pairs(name):
    """max/min of pairs: the tangent of the chosen value; a tie takes half of each (JAX's max rule)."""

    def combine(a, b):
        (x, tx), (y, ty) = a, b
        c = ew.PRIMITIVES[name].bind(x, y)
        aval = core.get_aval(c)
        x_in, y_in = ew.eq(x, c), ew.eq(y, c)
        half, one, zero = ad.full_like_aval(aval, 0.5), ad.full_like_aval(aval, 1.0), ad.zeros_like_aval(aval)
        wx = ew.select(x_in, ew.select(y_in, half, one), zero)
        wy = ew.select(y_in, ew.select(x_in, half, one), zero)
        return c, ew.add(ew.mul(tx, wx), ew.mul(ty, wy))

    return combine


def _logaddexp_pairs(a, b):
    """log(exp(x) + exp(y)) of pairs; its tangent weighs each side by exp(side - result), so -inf
    sides (empty prefixes) get weight 0 and two equal infinite sides share evenly."""
    (x, tx), (y, ty) = a, b
    aval = core.get_aval(x)
    if dtypes.is_complex(aval.dtype):
        raise NotImplementedError("the derivative of cumlogsumexp of complex operands is not implemented yet")
    m = ew.max(x, y)
    m = ew.select(ew.is_finite(m), m, ad.zeros_like_aval(aval))  # -inf - -inf would be NaN
    c = ew.add(m, ew.log(ew.add(ew.exp(ew.sub(x, m)), ew.exp(ew.sub(y, m)))))

    def weight(v):
        d = ew.sub(v, c)
        return ew.exp(ew.select(ew.ne(d, d), ad.zeros_like_aval(aval), d))  # inf - inf: an equal side

    wx, wy = weight(x), weight(y)
    return c, ew.div(ew.add(ew.mul(tx, wx), ew.mul(ty, wy)), ew.add(wx, wy))


def _interleave(even, odd, axis):
    """[even0, odd0, even1, odd1, ...] along axis (len(even) is len(odd) or one more)."""
    nd = core.get_aval(even).ndim
    longer = core.get_aval(even).shape[axis] > core.get_aval(odd).shape[axis]
    cfg_even = [(0, 0, 0)] * nd
    cfg_odd = [(0, 0, 0)] * nd
    cfg_even[axis] = (0, 0 if longer else 1, 1)
    cfg_odd[axis] = (1, 1 if longer else 0, 1)
    return ew.add(pad(even, 0, cfg_even), pad(odd, 0, cfg_odd))


def _prefix_scan(combine, pairs, axis):
    """The inclusive scan of (value, tangent) pairs along axis, combined pairwise in log depth."""
    n = core.get_aval(pairs[0]).shape[axis]
    if n < 2:
        return pairs

    def cut(arrays, start, stop=None, stride=1):
        return tuple(slice_in_dim(a, start, n if stop is None else stop, stride, axis) for a in arrays)

    # Scan the sums of neighbours (0,1), (2,3), ...: the results at odd positions.
    odd = _prefix_scan(combine, combine(cut(pairs, 0, n - 1, 2), cut(pairs, 1, None, 2)), axis)
    # Each even position after the first is the odd result before it combined with its own element.
    before = odd if n % 2 else tuple(slice_in_dim(a, 0, core.get_aval(a).shape[axis] - 1, 1, axis) for a in odd)
    even = combine(before, cut(pairs, 2, None, 2))
    even = tuple(concatenate([first, e], axis) for first, e in zip(cut(pairs, 0, 1), even))
    return tuple(_interleave(e, o, axis) for e, o in zip(even, odd))


def _cumulative_jvp(prim, combine):
    def jvp(primals, tangents, *, axis, reverse):
        (x,), (t,) = primals, tangents
        ans = prim.bind(x, axis=axis, reverse=reverse)
        pairs = (rev(x, (axis,)), rev(t, (axis,))) if reverse else (x, t)
        _, t_out = _prefix_scan(combine, pairs, axis)
        return ans, rev(t_out, (axis,)) if reverse else t_out

    return jvp


def _reduce_prod_jvp(primals, tangents, *, axes, out_sharding=None):
    """JAX's rule: the JVP of a halving tree of products over the reduced axes (moved to the front and
    flattened), short halves padded with 1; the tree's own result is the primal (no reduce_prod)."""
    (x,), (t,) = primals, tangents
    shape = core.get_aval(x).shape
    kept = tuple(d for d in range(len(shape)) if d not in axes)
    n = 1
    for d in axes:
        n *= shape[d]
    flat_shape = (n,) + tuple(shape[d] for d in kept)
    perm = tuple(axes) + kept
    x, t = reshape(x, flat_shape, perm), reshape(ad.instantiate(t), flat_shape, perm)
    one = ew._const(x, 1)

    def tree(x):
        while core.get_aval(x).shape[0] > 1:
            size = core.get_aval(x).shape[0]
            half = (size + 1) // 2
            lo, hi = slice_in_dim(x, 0, half), slice_in_dim(x, half, None)
            if size - half != half:
                hi = pad(hi, one, [(0, 1, 0)] + [(0, 0, 0)] * len(kept))
            x = ew.mul(lo, hi)
        if core.get_aval(x).shape[0] == 0:
            return ad.full_like_aval(core.get_aval(x).update(shape=flat_shape[1:]), 1)
        return squeeze(x, (0,))

    (out,), (t_out,) = ad.jvp_flat(lambda v: [tree(v)], [x], [t])
    return out, ad.instantiate(t_out)


reduce_prod_p.def_rules(jvp=_reduce_prod_jvp)
cumprod_p.def_rules(jvp=_cumulative_jvp(cumprod_p, _mul_pairs))
cumlogsumexp_p.def_rules(jvp=_cumulative_jvp(cumlogsumexp_p, _logaddexp_pairs))
cummax_p.def_rules(jvp=_cumulative_jvp(cummax_p, _chooser_pairs("max")))
cummin_p.def_rules(jvp=_cumulative_jvp(cummin_p, _chooser_pairs("min")))


# ---- batching (vmap): the reduced axes shift past the batch axis, which stays put ---------------
from xjax._src.interpreters import batching  # noqa: E402

for _p in (reduce_sum_p, reduce_prod_p, reduce_max_p, reduce_min_p, reduce_and_p, reduce_or_p, reduce_xor_p,
           argmax_p, argmin_p):
    batching.defreducer(_p, "axes")
for _p in (cumsum_p, cumprod_p, cummax_p, cummin_p, cumlogsumexp_p):
    batching.defreducer(_p, "axis", keeps_rank=True)
