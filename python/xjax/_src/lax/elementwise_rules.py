"""The differentiation (jvp, transpose) and batching rules of the elementwise primitives (elementwise.py).

The formulas are JAX's (lax.py), so that transformed programs print JAX's equations: per-operand
JVP rules (ad.defjvp: rule(tangent, *primals); defjvp2 also gets the output), the transposes of
the linear ops (a cotangent of a broadcasting operand is summed back to its shape), and the
constants made as JAX makes them (`_const`, `_one`, `_zeros`, ...: weakly typed exactly when
their example is), which decides the weak types of derivatives.
"""
import numpy as np

from xjax._src import core, dtypes
from xjax._src.interpreters import ad, batching
from xjax._src.lax import layout
from xjax._src.lax.elementwise import (BINARY, COMPARE, PRIMITIVES, UNARY, _const,  # noqa: A004 - lax's abs and pow
                                       _convert, _eq_meet, abs, add, add_any_p, bitcast_convert_type_p, bitwise_and,
                                       broadcast_shapes, clamp_p, convert_element_type, convert_element_type_p, cos,
                                       cosh, digamma, div, eq, exp, floor, fma_p, full_like, ge, gt, integer_pow,
                                       iota_p, log, lt, mul, neg, pow, reciprocal, rsqrt, select, select_n, select_n_p,
                                       sign, sin, sinh, square, sub)
from xjax._src.lax.complex_parts import conj, real
from xjax._src.lax.special import polygamma
from xjax._src.sharding import NamedSharding, PartitionSpec

P = PRIMITIVES



def _zeros(x):
    return full_like(x, 0)


def _ones(x):
    return full_like(x, 1)


def _twos(x):
    return full_like(x, 2)


def _zero(x):
    return full_like(x, 0, shape=())


def _one(x):
    """1 as a scalar over the mesh of x's type, where it has one (JAX's _one: a reshard then)."""
    typed = getattr(core.get_aval(x), "_sharding", None)
    return full_like(x, 1, shape=(), sharding=None if typed is None else NamedSharding(typed.mesh, PartitionSpec()))


def _replace_zero(x):
    return select(eq(x, _const(x, 0)), _ones(x), x)



def _balanced_eq(x, z, y):
    """1 where x is the result z (1/2 where y is too), else 0: max/min's tangent weights."""
    return div(select(_eq_meet(x, z), _ones(z), _zeros(z)), select(_eq_meet(y, z), _twos(z), _ones(z)))


def _maybe_broadcast(shape, x):
    """x broadcast to `shape` (rank 0, or size-1 dims of equal rank)."""
    x_shape = core.get_aval(x).shape
    if x_shape == tuple(shape):
        return x
    if not x_shape:
        return layout.broadcast_in_dim(x, tuple(shape), ())
    dims = [i for i, (a, b) in enumerate(zip(x_shape, shape)) if a == b]
    return layout.broadcast_in_dim(layout.reshape(x, tuple(x_shape[i] for i in dims)), tuple(shape), tuple(dims))


# nextafter has no rule, as in JAX (its derivative is not zero: a zero rule would be silently wrong).
for _name in ("sign", "floor", "ceil", "round", "is_finite", "not", "population_count", "clz",
              "and", "or", "xor", "shift_left", "shift_right_logical", "shift_right_arithmetic", *COMPARE):
    ad.defjvp_zero(P[_name])
ad.defjvp_zero(iota_p)
ad.defjvp_zero(bitcast_convert_type_p)  # as JAX: reinterpreted bits carry no derivative

ad.defjvp2(P["exp"], lambda g, ans, x: mul(g, ans))
ad.defjvp2(P["exp2"], lambda g, ans, x: mul(log(_const(x, 2)), mul(g, ans)))
ad.defjvp(P["log"], lambda g, x: div(g, x))
ad.defjvp(P["log1p"], lambda g, x: div(g, add(x, _one(x))))
ad.defjvp2(P["expm1"], lambda g, ans, x: mul(g, add(ans, _one(ans))))
ad.defjvp2(P["tanh"], lambda g, ans, x: mul(add(g, mul(g, ans)), sub(_one(x), ans)))
ad.defjvp2(P["logistic"], lambda g, ans, x: mul(g, mul(ans, sub(_one(ans), ans))))
ad.defjvp(P["sin"], lambda g, x: mul(g, cos(x)))
ad.defjvp(P["cos"], lambda g, x: neg(mul(g, sin(x))))
ad.defjvp2(P["tan"], lambda g, ans, x: mul(g, add(_const(x, 1), square(ans))))
ad.defjvp(P["asin"], lambda g, x: mul(g, rsqrt(sub(_const(x, 1), square(x)))))
ad.defjvp(P["acos"], lambda g, x: mul(g, neg(rsqrt(sub(_const(x, 1), square(x))))))
ad.defjvp(P["atan"], lambda g, x: div(g, add(_const(x, 1), square(x))))
ad.defjvp(P["sinh"], lambda g, x: mul(g, cosh(x)))
ad.defjvp(P["cosh"], lambda g, x: mul(g, sinh(x)))
ad.defjvp(P["asinh"], lambda g, x: mul(g, rsqrt(add(square(x), _one(x)))))
ad.defjvp(P["acosh"], lambda g, x: mul(g, rsqrt(sub(square(x), _one(x)))))
ad.defjvp(P["atanh"], lambda g, x: mul(reciprocal(add(_one(x), x)), div(g, sub(_one(x), x))))
ad.defjvp2(P["sqrt"], lambda g, ans, x: mul(g, div(_const(x, 0.5), ans)))
ad.defjvp2(P["rsqrt"], lambda g, ans, x: mul(g, mul(_const(x, -0.5), div(ans, x))))
ad.defjvp2(P["cbrt"], lambda g, ans, x: mul(g, mul(_const(x, 1 / 3), integer_pow(ans, -2))))
def _abs_jvp(g, ans, x):
    if dtypes.is_complex(core.get_aval(x).dtype):  # JAX's: re(g conj(x) / |x|), |x| = 0 counted as 1
        return real(mul(g, div(conj(x), _replace_zero(convert_element_type(ans, core.get_aval(x).dtype)))))
    return select(ge(x, _zero(x)), g, neg(g))


ad.defjvp2(P["abs"], _abs_jvp)
ad.defjvp(P["erf"], lambda g, x: mul(_const(x, 2. / np.sqrt(np.pi)), mul(g, exp(neg(square(x))))))
ad.defjvp(P["erfc"], lambda g, x: mul(_const(x, -2. / np.sqrt(np.pi)), mul(g, exp(neg(square(x))))))
ad.defjvp2(P["erf_inv"], lambda g, ans, x: mul(_const(x, np.sqrt(np.pi) / 2.), mul(g, exp(square(ans)))))
ad.defjvp(P["lgamma"], lambda g, x: mul(g, digamma(x)))
ad.defjvp2(P["square"], lambda g, ans, x: mul(g, mul(_const(x, 2), x)))


def _digamma_jvp(g, x):
    return mul(g, polygamma(_const(x, 1), x))


ad.defjvp(P["digamma"], _digamma_jvp)


def _integer_pow_jvp(g, x, *, y):
    if y == 0:
        return _zeros(g)
    if y == 1:
        return g
    if y == 2:
        return mul(g, mul(_const(x, y), x))
    return mul(g, mul(_const(x, y), integer_pow(x, y - 1)))


ad.defjvp(P["integer_pow"], _integer_pow_jvp)


def _pow_jvp_lhs(g, ans, x, y):
    # lax.pow converts an integer exponent to x's dtype before binding, so y is floating here.
    dtype = dtypes.result_type(core.get_aval(x).dtype, core.get_aval(y).dtype)
    x, y = convert_element_type(x, dtype), convert_element_type(y, dtype)
    return mul(g, mul(y, pow(x, sub(y, _ones(y)))))


def _pow_jvp_rhs(g, ans, x, y):
    return convert_element_type(mul(g, mul(log(_replace_zero(x)), ans)), core.get_aval(y).dtype)


ad.defjvp2(P["pow"], _pow_jvp_lhs, _pow_jvp_rhs)

ad.defjvp2(P["max"], lambda g, ans, x, y: mul(g, _balanced_eq(x, ans, y)),
           lambda g, ans, x, y: mul(g, _balanced_eq(y, ans, x)))
ad.defjvp2(P["min"], lambda g, ans, x, y: mul(g, _balanced_eq(x, ans, y)),
           lambda g, ans, x, y: mul(g, _balanced_eq(y, ans, x)))
ad.defjvp(P["atan2"], lambda g, x, y: mul(g, div(y, add(square(x), square(y)))),
          lambda g, x, y: mul(g, div(neg(x), add(square(x), square(y)))))
ad.defjvp(P["rem"], lambda g, x, y: _maybe_broadcast(broadcast_shapes("rem", [core.get_aval(x).shape,
                                                                            core.get_aval(y).shape]), g),
          lambda g, x, y: mul(neg(g), mul(sign(div(x, y)), floor(abs(div(x, y))))))


def _ct_aval(x):
    return x.aval if ad.is_undefined(x) else core.get_aval(x)


def _additive_jvp(name, combine, sign):
    """The JVP of add (sign: identity) or sub (sign: neg): the tangents combine as the values do; a
    lone tangent is broadcast to the result's shape."""

    def jvp(primals, tangents):
        (x, y), (gx, gy) = primals, tangents
        ans = P[name].bind(x, y)
        shape = core.get_aval(ans).shape
        if type(gx) is ad.Zero:
            return ans, _maybe_broadcast(shape, sign(gy))
        if type(gy) is ad.Zero:
            return ans, _maybe_broadcast(shape, gx)
        return ans, combine(gx, gy)

    return jvp


def _add_transpose(ct, x, y):
    if type(ct) is ad.Zero:
        return [None, None]
    return [ad.unbroadcast(ct, _ct_aval(x)), ad.unbroadcast(ct, _ct_aval(y))]


def _sub_transpose(ct, x, y):
    if type(ct) is ad.Zero:
        return [None, None]
    return [ad.unbroadcast(ct, _ct_aval(x)), ad.unbroadcast(neg(ct), _ct_aval(y))]


def _mul_transpose(ct, x, y):
    if ad.is_undefined(x) and ad.is_undefined(y):
        raise ValueError("mul is linear in one operand only: both were linear in a transposed jaxpr")
    if type(ct) is ad.Zero:
        return [None, None]
    if ad.is_undefined(x):
        return [ad.unbroadcast(mul(ct, y), x.aval), None]
    return [None, ad.unbroadcast(mul(x, ct), y.aval)]


def _div_transpose(ct, x, y):
    if ad.is_undefined(y):
        raise ValueError("div is linear in its numerator only")
    if type(ct) is ad.Zero:
        return [None, None]
    return [ad.unbroadcast(div(ct, y), x.aval), None]


ad.deflinear(P["neg"], lambda ct, x: [neg(ct)])
ad.deflinear(P["copy"], lambda ct, x: [P["copy"].bind(ct)])
P["add"].def_rules(jvp=_additive_jvp("add", add, lambda t: t), transpose=_add_transpose)
P["sub"].def_rules(jvp=_additive_jvp("sub", sub, neg), transpose=_sub_transpose)
ad.defjvp(P["mul"], lambda g, x, y: mul(g, y), lambda g, x, y: mul(x, g))
ad.defjvp(fma_p, lambda g, a, b, c: mul(g, b), lambda g, a, b, c: mul(a, g), lambda g, a, b, c: g)
ad.defjvp(P["div"], lambda g, x, y: div(g, y), lambda g, x, y: mul(mul(neg(g), x), integer_pow(y, -2)))
P["mul"].def_rules(transpose=_mul_transpose)
P["div"].def_rules(transpose=_div_transpose)


ad.deflinear(add_any_p, _add_transpose)  # batching may leave an operand to broadcast


def _select_n_jvp(primals, tangents):
    which, *cases = primals
    ans = select_n_p.bind(which, *cases)
    case_tangents = tangents[1:]
    if all(type(t) is ad.Zero for t in case_tangents):
        return ans, ad.zero_tangent(ans)
    z = _zeros(next(t for t in case_tangents if type(t) is not ad.Zero))
    return ans, select_n(which, *[z if type(t) is ad.Zero else t for t in case_tangents])


def _select_n_transpose(ct, which, *cases):
    if ad.is_undefined(which):
        raise ValueError("select_n is not linear in its predicate")
    if type(ct) is ad.Zero:
        return [None] + [None] * len(cases)
    zeros = full_like(ct, 0)
    if core.get_aval(which).dtype == dtypes.bool_:
        ct0 = select(which, zeros, ct) if ad.is_undefined(cases[0]) else None
        ct1 = select(which, ct, zeros) if len(cases) > 1 and ad.is_undefined(cases[1]) else None
        return [None, ct0, ct1][:1 + len(cases)]
    return [None] + [select(eq(which, _const(which, i)), ct, zeros) if ad.is_undefined(c) else None
                     for i, c in enumerate(cases)]


select_n_p.def_rules(jvp=_select_n_jvp, transpose=_select_n_transpose)

def _bound_tangent(g, x):
    """A scalar bound's tangent at x's shape (JAX's select would refuse it)."""
    return _maybe_broadcast(core.get_aval(x).shape, g)


ad.defjvp(clamp_p,
          lambda g, lo, x, hi: select(bitwise_and(gt(lo, x), lt(lo, hi)), _bound_tangent(g, x), _zeros(x)),
          lambda g, lo, x, hi: select(bitwise_and(gt(x, lo), lt(x, hi)), g, _zeros(x)),
          lambda g, lo, x, hi: select(lt(hi, x), _bound_tangent(g, x), _zeros(x)))



def _convert_jvp(primals, tangents, *, new_dtype, weak_type=False, sharding=None):
    (x,), (g,) = primals, tangents
    ans = convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type, sharding=sharding)
    if not ad.is_differentiable(new_dtype) or type(g) is ad.Zero:
        return ans, ad.zero_tangent(ans)
    # _convert: a convert that changes nothing is no equation (JAX's jaxpr traces forward it).
    return ans, _convert(g, new_dtype, weak_type)


def _convert_transpose(ct, x, *, new_dtype, weak_type=False, sharding=None):
    if type(ct) is ad.Zero or not ad.is_differentiable(x.aval.dtype):
        return [None]
    if dtypes.is_complex(core.get_aval(ct).dtype) and not dtypes.is_complex(x.aval.dtype):
        ct = real(ct)  # the real part, as the transposed conversion keeps it (without the user-level warning)
    return [_convert(ct, x.aval.dtype, x.aval.weak_type)]


convert_element_type_p.def_rules(jvp=_convert_jvp, transpose=_convert_transpose)




# ---- batching (vmap) -------------------------------------------------------------------------------

for _name in list(UNARY) + ["is_finite"]:
    batching.defvectorized(P[_name])
batching.defvectorized(convert_element_type_p)
for _name in list(BINARY) + list(COMPARE):
    batching.defbroadcasting(P[_name])
batching.defbroadcasting(add_any_p)
batching.defbroadcasting(fma_p)


def _bitcast_batch(axis, vals, dims, *, new_dtype):
    # A width change adds or drops a trailing axis: the batch axis goes in front, out of its way.
    (x,), (d,) = vals, dims
    return bitcast_convert_type_p.bind(batching.moveaxis(x, d, 0), new_dtype=new_dtype), 0


def _full_batched(v, d, size, shape):
    """v batched at axis 0 with per-example shape `shape` (rank-0 operands are broadcast to it)."""
    v = batching.bdim_at_front(v, d, size)
    if core.get_aval(v).ndim == 1 and shape:
        v = layout.broadcast_in_dim(v, (size,) + shape, (0,))
    return v


def _select_n_batch(axis, vals, dims):
    (which, *cases), (wd, *cds) = vals, dims
    size = batching.size_of(vals, dims)
    shape = batching.example_shape(cases[0], cds[0])
    cases = [_full_batched(c, d, size, shape) for c, d in zip(cases, cds)]
    if wd is batching.not_mapped and not core.get_aval(which).shape:
        return select_n_p.bind(which, *cases), 0
    return select_n_p.bind(_full_batched(which, wd, size, shape), *cases), 0


def _clamp_batch(axis, vals, dims):
    (lo, x, hi), (ld, xd, hd) = vals, dims
    size = batching.size_of(vals, dims)
    shape = batching.example_shape(x, xd)
    x = _full_batched(x, xd, size, shape)
    bounds = [b if d is batching.not_mapped and not core.get_aval(b).shape else _full_batched(b, d, size, shape)
              for b, d in ((lo, ld), (hi, hd))]
    return clamp_p.bind(bounds[0], x, bounds[1]), 0


bitcast_convert_type_p.def_rules(batch=_bitcast_batch)
select_n_p.def_rules(batch=_select_n_batch)
clamp_p.def_rules(batch=_clamp_batch)
