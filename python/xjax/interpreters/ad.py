"""xjax.interpreters.ad (jax.interpreters.ad): JVP and transpose rules of primitives, in JAX's
conventions, stored on the primitives themselves.

    ad.primitive_jvps[p] = jvp            # jvp(primals, tangents, **params) -> (out, tangent out)
    ad.primitive_transposes[p] = t        # t(cts, *args, **params) -> one cotangent per arg
    ad.defjvp(p, *rules)                  # rule_i(tangent_i, *primals, **params)

xjax's rules take the same arguments as JAX's, so the tables store them as they are.
"""
from xjax._src.interpreters import ad as _ad
from xjax._src.interpreters.ad import (JVPTrace, JVPTracer, UndefinedPrimal, Zero, add_tangents,  # noqa: F401
                                       defjvp, defjvp2, defjvp_zero, zeros_like_aval)
from xjax._src.interpreters.rule_tables import RuleTable as _RuleTable
from xjax._src.lax.elementwise import add_any_p as add_jaxvals_p  # noqa: F401


def _same(rule, primitive):
    return lambda *args, **params: rule(*args, **params)


primitive_jvps = _RuleTable("ad.primitive_jvps", "jvp", _same, lambda rule, p: rule)
primitive_transposes = _RuleTable("ad.primitive_transposes", "transpose", _same, lambda rule, p: rule)


def get_primitive_transpose(p):
    try:
        return primitive_transposes[p]
    except KeyError as err:
        raise NotImplementedError(f"Transpose rule (for reverse-mode differentiation) for '{p}' not implemented") \
            from err


def is_undefined_primal(x):
    return _ad.is_undefined(x)


def instantiate_zeros(tangent):
    """A tangent as an array: a symbolic Zero becomes zeros."""
    return _ad.instantiate(tangent)


def add_jaxvals(x, y):
    return add_jaxvals_p.bind(x, y)


def _zero_cotangents(args):
    return [Zero(_ad.tangent_aval(x.aval)) if _ad.is_undefined(x) else None for x in args]


def deflinear(primitive, transpose_rule):
    """A primitive linear in all operands; transpose_rule(ct, **params) gives every operand's cotangent."""

    def transpose(ct, *args, **params):
        if type(ct) is Zero:
            return _zero_cotangents(args)
        return transpose_rule(ct, **params)

    _ad.deflinear(primitive, transpose)


def deflinear2(primitive, transpose_rule):
    """As deflinear, with the operands (UndefinedPrimal for the linear ones): transpose_rule(ct, *args, **params)."""

    def transpose(ct, *args, **params):
        if type(ct) is Zero:
            return _zero_cotangents(args)
        return transpose_rule(ct, *args, **params)

    _ad.deflinear(primitive, transpose)


def defbilinear(primitive, lhs_rule, rhs_rule):
    """A primitive linear in each of its two operands: lhs_rule(ct, x, y, **params) is x's cotangent
    (x undefined), rhs_rule(ct, x, y, **params) is y's."""

    def transpose(ct, x, y, **params):
        if type(ct) is Zero:
            return _zero_cotangents((x, y))
        return [lhs_rule(ct, x, y, **params) if _ad.is_undefined(x) else None,
                rhs_rule(ct, x, y, **params) if _ad.is_undefined(y) else None]

    _ad.defbilinear(primitive, transpose)
