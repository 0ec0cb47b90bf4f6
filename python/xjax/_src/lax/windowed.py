"""Windowed reductions: reduce_window_sum/max/min, lax.reduce_window (on them for the add/max/min
monoids, else a fold of strided slices), and max-pool's derivatives select_and_gather_add (the
JVP of reduce_window_max/min) and select_and_scatter_add (its transpose), with their rules."""
import itertools
import operator

from xjax._src import core, tree_util
from xjax._src.lax import elementwise as ew
from xjax._src.lax.base import asarray, define_core_primitive
from xjax._src.lax.convolution import _dilate_shape, _vjp_lhs_padding, padtype_to_pads
from xjax._src.lax.layout import broadcast_in_dim, pad, slice as slice_
from xjax._src.lax.monoids import identity, starts_from_identity

__all__ = ["reduce_window", "reduce_window_max_p", "reduce_window_min_p", "reduce_window_sum_p",
           "select_and_gather_add_p", "select_and_scatter_add_p"]


def _flat_pads(padding):
    return [int(p) for pair in padding for p in pair]


def _window_attrs(window_dimensions, window_strides, padding, base_dilation, window_dilation):
    return dict(window_dimensions=window_dimensions, window_strides=window_strides, padding=_flat_pads(padding),
                base_dilation=base_dilation, window_dilation=window_dilation)


def _gather_attrs(select_prim, window_dimensions, window_strides, padding, base_dilation, window_dilation):
    return dict(select_prim=select_prim.name, **_window_attrs(window_dimensions, window_strides, padding,
                                                               base_dilation, window_dilation))


def _scatter_attrs(select_prim, window_dimensions, window_strides, padding):
    return dict(select_prim=select_prim.name, window_dimensions=window_dimensions, window_strides=window_strides,
                padding=_flat_pads(padding))


reduce_window_sum_p = define_core_primitive("reduce_window_sum", attrs=_window_attrs)
reduce_window_max_p = define_core_primitive("reduce_window_max", attrs=_window_attrs)
reduce_window_min_p = define_core_primitive("reduce_window_min", attrs=_window_attrs)
select_and_gather_add_p = define_core_primitive("select_and_gather_add", attrs=_gather_attrs)
select_and_scatter_add_p = define_core_primitive("select_and_scatter_add", attrs=_scatter_attrs)


# ---- arguments ----------------------------------------------------------------------------------

def _shapelike(name, values, n):
    try:
        t = tuple(operator.index(v) for v in values)
    except TypeError as e:
        raise TypeError(f"reduce_window {name} must be a sequence of ints, got {values!r}.") from e
    if len(t) != n:
        raise TypeError(f"reduce_window got the wrong number of {name}: expected {n} (one per operand dimension), "
                        f"got {t}.")
    if any(v < 1 for v in t):
        raise TypeError(f"reduce_window {name} must have every element be strictly positive, got {t}.")
    return t


def _window_params(shape, window_dimensions, window_strides, padding, base_dilation, window_dilation):
    """Checked params (JAX's messages) with string padding made explicit."""
    n = len(shape)
    try:
        wd = tuple(operator.index(v) for v in window_dimensions)
    except TypeError as e:
        raise TypeError(f"reduce_window window_dimensions must be a sequence of ints, got "
                        f"{window_dimensions!r}.") from e
    if len(wd) != n:
        raise TypeError(f"reduce_window got the wrong number of window_dimensions for operand: got operand shape "
                        f"{tuple(shape)} with window_dimensions {wd}.")
    wd = _shapelike("window_dimensions", wd, n)
    ws = _shapelike("window_strides", window_strides, n)
    bd = (1,) * n if base_dilation is None else _shapelike("base_dilation", base_dilation, n)
    wdl = (1,) * n if window_dilation is None else _shapelike("window_dilation", window_dilation, n)
    if isinstance(padding, str):
        # (JAX pads for the undilated operand under the dilated window)
        pads = tuple(padtype_to_pads(shape, _dilate_shape(wd, wdl), ws, padding))
    else:
        try:
            pads = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
        except (TypeError, ValueError) as e:
            raise ValueError(f"reduce_window padding should be a string or a sequence of (low, high) pairs, got "
                             f"{padding!r}") from e
        if len(pads) != n:
            raise TypeError(f"reduce_window got the wrong number of padding pairs: expected {n}, got {len(pads)}.")
    return dict(window_dimensions=wd, window_strides=ws, padding=pads, base_dilation=bd, window_dilation=wdl)


def _windowed(prim):
    def reduce(operand, window_dimensions, window_strides, padding, base_dilation=None, window_dilation=None):
        x = asarray(operand)
        return prim.bind(x, **_window_params(core.get_aval(x).shape, window_dimensions, window_strides, padding,
                                             base_dilation, window_dilation))

    reduce.__name__ = prim.name
    reduce.__doc__ = f"`{prim.name}` over windows of the operand (padding: a string or (low, high) pairs)."
    return reduce


# The windowed reductions on their own (what pooling layers call), string padding allowed.
_reduce_window_sum = _windowed(reduce_window_sum_p)
_reduce_window_max = _windowed(reduce_window_max_p)
_reduce_window_min = _windowed(reduce_window_min_p)


def _monoid_reducer(computation, init, dtype):
    """The reduce_window_* primitive for lax.add / lax.max / lax.min with their identity as init."""
    prim = {ew.add: reduce_window_sum_p, ew.max: reduce_window_max_p, ew.min: reduce_window_min_p}.get(computation)
    return prim if prim is not None and starts_from_identity(computation, init, dtype) else None


def reduce_window(operand, init_value, computation, window_dimensions, window_strides, padding, base_dilation=None,
                  window_dilation=None):
    """Reduces windows of `operand` (a pytree of arrays) with `computation` starting from
    `init_value`; padding and holes from base_dilation hold init_value.

    lax.add, lax.max and lax.min with their identities run as one windowed kernel each; any other
    computation is folded over the window's taps (strided slices of the padded operand), so it
    must be associative and commutative, as XLA assumes.
    """
    xs, tree = tree_util.tree_flatten(operand)
    inits, init_tree = tree_util.tree_flatten(init_value)
    if init_tree != tree:
        raise TypeError(f"reduce_window: operand tree {tree} and init_value tree {init_tree} must match.")
    xs = [asarray(x) for x in xs]
    shapes = {core.get_aval(x).shape for x in xs}
    if len(shapes) != 1:
        raise TypeError(f"reduce_window: operands must have the same shape, got {sorted(shapes)}.")
    shape = shapes.pop()
    params = _window_params(shape, window_dimensions, window_strides, padding, base_dilation, window_dilation)
    if len(xs) == 1:
        prim = _monoid_reducer(computation, inits[0], core.get_aval(xs[0]).dtype)
        if prim is not None:
            return tree_util.tree_unflatten(tree, [prim.bind(xs[0], **params)])
    inits = [asarray(v, core.get_aval(x).dtype) if isinstance(v, (bool, int, float)) else asarray(v)
             for v, x in zip(inits, xs)]
    for x, v in zip(xs, inits):
        xa, va = core.get_aval(x), core.get_aval(v)
        if va.shape != () or va.dtype != xa.dtype:
            raise TypeError(f"reduce_window: init value {va.str_short()} must be a scalar of the operand's dtype "
                            f"{xa.dtype.name}.")
    # The fold: acc = computation(acc, slice of the padded operand under tap k), k in window order.
    cfg = [(lo, hi, b - 1) for (lo, hi), b in zip(params["padding"], params["base_dilation"])]
    padded = [pad(x, v, cfg) for x, v in zip(xs, inits)]
    pshape = core.get_aval(padded[0]).shape
    span = [(w - 1) * d + 1 for w, d in zip(params["window_dimensions"], params["window_dilation"])]
    out = tuple(0 if p < s else (p - s) // st + 1 for p, s, st in zip(pshape, span, params["window_strides"]))
    acc = [broadcast_in_dim(v, out, ()) for v in inits]
    if 0 in out:
        return tree_util.tree_unflatten(tree, acc)
    for k in itertools.product(*[range(w) for w in params["window_dimensions"]]):
        start = [t * d for t, d in zip(k, params["window_dilation"])]
        limit = [s0 + (o - 1) * st + 1 for s0, o, st in zip(start, out, params["window_strides"])]
        taps = [slice_(p, start, limit, params["window_strides"]) for p in padded]
        res = computation(tree_util.tree_unflatten(tree, acc), tree_util.tree_unflatten(tree, taps))
        leaves, res_tree = tree_util.tree_flatten(res)
        if res_tree != tree:
            raise TypeError(f"reduce_window: computation returned {res_tree}, expected the operand's structure {tree}.")
        acc = leaves
    return tree_util.tree_unflatten(tree, acc)


# ---- differentiation ----------------------------------------------------------------------------
from xjax._src.interpreters import ad  # noqa: E402


def _sum_transpose(ct, x, *, window_dimensions, window_strides, padding, base_dilation, window_dilation):
    """Each input element receives the cotangents of the windows over it: the cotangent, dilated by
    the strides and padded, summed over windows whose strides are the base dilation."""
    shape = x.aval.shape
    pads = _vjp_lhs_padding(shape, window_dimensions, window_strides, core.get_aval(ct).shape, padding, base_dilation,
                            window_dilation)
    ct = pad(ct, ad.zeros_like_aval(core.get_aval(ct).update(shape=())),
             [(lo, hi, s - 1) for (lo, hi), s in zip(pads, window_strides)])
    ones = (1,) * len(shape)
    out = reduce_window_sum_p.bind(ct, window_dimensions=window_dimensions, window_strides=base_dilation,
                                   padding=((0, 0),) * len(shape), base_dilation=ones, window_dilation=window_dilation)
    assert core.get_aval(out).shape == shape, (core.get_aval(out).shape, shape)
    return [out]


ad.deflinear(reduce_window_sum_p, _sum_transpose)


def _chooser_jvp(prim, select_prim):
    def jvp(primals, tangents, **params):
        (x,), (g,) = primals, tangents
        ans = prim.bind(x, **params)
        return ans, select_and_gather_add_p.bind(ad.instantiate(g), x, select_prim=select_prim, **params)

    return jvp


reduce_window_max_p.def_rules(jvp=_chooser_jvp(reduce_window_max_p, ew.ge_p))
reduce_window_min_p.def_rules(jvp=_chooser_jvp(reduce_window_min_p, ew.le_p))


def _gather_jvp(primals, tangents, **params):
    (t, x), (gt, _) = primals, tangents
    ans = select_and_gather_add_p.bind(t, x, **params)
    if type(gt) is ad.Zero:
        return ans, ad.Zero(ad.tangent_aval(core.get_aval(ans)))
    return ans, select_and_gather_add_p.bind(gt, x, **params)


def _gather_transpose(ct, t, x, *, select_prim, window_dimensions, window_strides, padding, base_dilation,
                      window_dilation):
    assert ad.is_undefined(t) and not ad.is_undefined(x)
    if any(d != 1 for d in window_dilation):
        raise NotImplementedError(f"VJP not implemented for select_and_gather (MaxPool) with window dilation, got "
                                  f"window_dilation={window_dilation}.")
    if type(ct) is ad.Zero:
        return [None, None]
    dilated = any(d != 1 for d in base_dilation)
    if dilated:  # the holes hold the identity, which is never selected
        ident = identity(ew.max if select_prim is ew.ge_p else ew.min, core.get_aval(x).dtype)
        x = pad(x, asarray(ident, core.get_aval(x).dtype), [(0, 0, d - 1) for d in base_dilation])
    out = select_and_scatter_add_p.bind(ct, x, select_prim=select_prim, window_dimensions=window_dimensions,
                                        window_strides=window_strides, padding=padding)
    if dilated:
        out = slice_(out, (0,) * len(base_dilation), core.get_aval(out).shape, base_dilation)
    return [out, None]


select_and_gather_add_p.def_rules(jvp=_gather_jvp, transpose=_gather_transpose)


def _scatter_jvp(primals, tangents, **params):
    (s, x), (gs, _) = primals, tangents
    ans = select_and_scatter_add_p.bind(s, x, **params)
    if type(gs) is ad.Zero:
        return ans, ad.Zero(ad.tangent_aval(core.get_aval(ans)))
    return ans, select_and_scatter_add_p.bind(gs, x, **params)


def _scatter_transpose(ct, s, x, *, select_prim, window_dimensions, window_strides, padding):
    assert ad.is_undefined(s) and not ad.is_undefined(x)
    if type(ct) is ad.Zero:
        return [None, None]
    ones = (1,) * len(window_dimensions)
    return [select_and_gather_add_p.bind(ct, x, select_prim=select_prim, window_dimensions=window_dimensions,
                                         window_strides=window_strides, padding=padding, base_dilation=ones,
                                         window_dilation=ones), None]


select_and_scatter_add_p.def_rules(jvp=_scatter_jvp, transpose=_scatter_transpose)


# ---- batching (vmap): the mapped axis is one more dimension with a window of 1 ------------------
from xjax._src.interpreters import batching  # noqa: E402


def _unit_window(d, params, dilations=True):
    """params with a size-1, stride-1, unpadded window inserted at dimension d."""
    out = dict(params)
    out["window_dimensions"] = params["window_dimensions"][:d] + (1,) + params["window_dimensions"][d:]
    out["window_strides"] = params["window_strides"][:d] + (1,) + params["window_strides"][d:]
    out["padding"] = params["padding"][:d] + ((0, 0),) + params["padding"][d:]
    if dilations:
        for k in ("base_dilation", "window_dilation"):
            out[k] = params[k][:d] + (1,) + params[k][d:]
    return out


def _reduce_window_batch(prim):
    def rule(axis, vals, dims, **params):
        (x,), (d,) = vals, dims
        return prim.bind(x, **_unit_window(d, params)), d

    return rule


for _p in (reduce_window_sum_p, reduce_window_max_p, reduce_window_min_p):
    _p.def_rules(batch=_reduce_window_batch(_p))


def _select_batch(prim, dilations):
    def rule(axis, vals, dims, **params):
        a, b = (batching.bdim_at_front(v, d, axis.size) for v, d in zip(vals, dims))
        return prim.bind(a, b, **_unit_window(0, params, dilations)), 0

    return rule


select_and_gather_add_p.def_rules(batch=_select_batch(select_and_gather_add_p, True))
select_and_scatter_add_p.def_rules(batch=_select_batch(select_and_scatter_add_p, False))
