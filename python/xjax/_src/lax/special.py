"""Special-function primitives: the regularized incomplete gamma functions (igamma, igammac) and
igamma's derivative in a (igamma_grad_a), polygamma, Hurwitz zeta, the scaled Bessel functions
bessel_i0e and bessel_i1e, and the regularized incomplete beta function (betainc).

Each is elementwise (lax broadcasting, operands of one float dtype) and lowers to the C++ op of
the same name, whose scalar definition follows XLA's algorithm (core/ops/scalar_special.h).
The derivative rules are JAX's; where JAX has none for an operand, ours raises as JAX's does.
"""
from xjax._src import core, dtypes
from xjax._src.interpreters import ad, batching
from xjax._src.lax import elementwise as ew
from xjax._src.lax.base import asarray, define_primitive, scalars_like

__all__ = ["igamma", "igammac", "igamma_grad_a", "polygamma", "zeta", "bessel_i0e", "bessel_i1e", "betainc",
           "igamma_p", "igammac_p", "igamma_grad_a_p", "polygamma_p", "zeta_p", "bessel_i0e_p", "bessel_i1e_p",
           "regularized_incomplete_beta_p"]


def _nary(name):
    prim = define_primitive(name, ew._nary_eval(name, ew._FLOAT))
    prim.lowering = ew.broadcasting_lowering(name)
    return prim


def _unary(name):
    return define_primitive(name, ew._unary_eval(name, ew._FLOAT))


igamma_p = _nary("igamma")
igammac_p = _nary("igammac")
igamma_grad_a_p = _nary("igamma_grad_a")
polygamma_p = _nary("polygamma")
zeta_p = _nary("zeta")
regularized_incomplete_beta_p = _nary("regularized_incomplete_beta")
bessel_i0e_p = _unary("bessel_i0e")
bessel_i1e_p = _unary("bessel_i1e")


def igamma(a, x):
    """The regularized lower incomplete gamma function P(a, x), elementwise."""
    return igamma_p.bind(*scalars_like((a, x)))


def igammac(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x), elementwise."""
    return igammac_p.bind(*scalars_like((a, x)))


def igamma_grad_a(a, x):
    """The derivative of igamma(a, x) in a, elementwise."""
    return igamma_grad_a_p.bind(*scalars_like((a, x)))


def polygamma(m, x):
    """psi^(m)(x), the m-th derivative of digamma (NaN unless m is a natural number), elementwise."""
    return polygamma_p.bind(*scalars_like((m, x)))


def zeta(x, q):
    """The Hurwitz zeta function sum_k (k + q)^-x, elementwise."""
    return zeta_p.bind(*scalars_like((x, q)))


def bessel_i0e(x):
    """exp(-|x|) I0(x), the exponentially scaled modified Bessel function of order 0."""
    return bessel_i0e_p.bind(asarray(x))


def bessel_i1e(x):
    """exp(-|x|) I1(x), the exponentially scaled modified Bessel function of order 1."""
    return bessel_i1e_p.bind(asarray(x))


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b), elementwise."""
    return regularized_incomplete_beta_p.bind(*scalars_like((a, b, x)))


# ---- differentiation rules ------------------------------------------------------------------

def _igamma_dx(g, a, x):
    """dP/dx = x^(a-1) e^-x / Gamma(a)."""
    return ew.mul(g, ew.exp(ew.sub(ew.sub(ew.mul(ew.sub(a, 1.0), ew.log(x)), x), ew.lgamma(a))))


def _igamma_da(g, a, x):
    return ew.mul(g, igamma_grad_a(a, x))


ad.defjvp(igamma_p, _igamma_da, _igamma_dx)
ad.defjvp(igammac_p, lambda g, a, x: ew.neg(_igamma_da(g, a, x)), lambda g, a, x: ew.neg(_igamma_dx(g, a, x)))


def _igamma_grad_a_da(g, a, x):
    raise NotImplementedError("Differentiation rule for 'igamma_grad_a' with respect to a not implemented: "
                              "JAX has no second derivative of igamma in a either")


def _igamma_grad_a_dx(g, a, x):
    # d/dx dP/da = d/da dP/dx = dP/dx * (log x - digamma(a)).
    return ew.mul(_igamma_dx(g, a, x), ew.sub(ew.log(x), ew.digamma(a)))


ad.defjvp(igamma_grad_a_p, _igamma_grad_a_da, _igamma_grad_a_dx)


def _polygamma_dm(g, m, x):
    raise ValueError("polygamma gradient with respect to m is not supported")


ad.defjvp(polygamma_p, _polygamma_dm, lambda g, m, x: ew.mul(g, polygamma(ew.add(m, 1.0), x)))


def _zeta_dx(g, x, q):
    raise NotImplementedError("Differentiation rule for 'zeta' with respect to x not implemented: "
                              "jax.scipy.special.zeta differentiates a series expansion instead")


# d/dq sum_k (k + q)^-x = -x zeta(x + 1, q)
ad.defjvp(zeta_p, _zeta_dx, lambda g, x, q: ew.mul(g, ew.neg(ew.mul(x, zeta(ew.add(x, 1.0), q)))))


def _betainc_dab(g, a, b, x):
    raise ValueError("Betainc gradient with respect to a and b not supported.")


def _betainc_dx(g, a, b, x):
    """dI/dx = x^(a-1) (1-x)^(b-1) / B(a, b)."""
    lbeta = ew.sub(ew.add(ew.lgamma(a), ew.lgamma(b)), ew.lgamma(ew.add(a, b)))
    log_density = ew.sub(ew.add(ew.mul(ew.sub(b, 1.0), ew.log1p(ew.neg(x))), ew.mul(ew.sub(a, 1.0), ew.log(x))),
                         lbeta)
    return ew.mul(ew.exp(log_density), g)


ad.defjvp(regularized_incomplete_beta_p, _betainc_dab, _betainc_dab, _betainc_dx)

ad.defjvp2(bessel_i0e_p, lambda g, y, x: ew.mul(g, ew.sub(bessel_i1e(x), ew.mul(ew.sign(x), y))))


def _bessel_i1e_jvp(g, y, x):
    # i1e'(x) = i0e(x) - y (sign(x) + 1/x), with its limit 1/2 at |x| <= eps.
    aval = core.get_aval(x)
    eps = float(dtypes.finfo(aval.dtype).eps)
    not_tiny = ew.gt(ew.abs(x), eps)
    safe_x = ew.select(not_tiny, x, ad.full_like_aval(aval, eps))
    dy_dx = ew.sub(bessel_i0e(safe_x), ew.mul(y, ew.add(ew.sign(safe_x), ew.div(1.0, safe_x))))
    return ew.mul(g, ew.select(not_tiny, dy_dx, ad.full_like_aval(aval, 0.5)))


ad.defjvp2(bessel_i1e_p, _bessel_i1e_jvp)


# ---- batching (vmap) ------------------------------------------------------------------------------

for _p in (igamma_p, igammac_p, igamma_grad_a_p, polygamma_p, zeta_p, regularized_incomplete_beta_p):
    batching.defbroadcasting(_p)
batching.defvectorized(bessel_i0e_p)
batching.defvectorized(bessel_i1e_p)
