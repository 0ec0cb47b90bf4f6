"""Gamma-family samplers: the random_gamma primitive (Marsaglia-Tsang, with its implicit
reparameterisation gradient), gamma, loggamma, beta, dirichlet, t, chisquare, generalized_normal.

random_gamma(keys, a) draws one gamma sample per element of `a` from its own key (the key split in
a.size). Each element runs Marsaglia and Tsang's rejection loop; the loop is vectorised over the
elements as JAX's vmapped while loop runs it: while any element still rejects, every element
computes a proposal and the rejecting ones take theirs, so each element sees exactly the draws it
would see alone. Its derivative in `a` is -(dF/da) / (dF/dx) at the sample, F the regularised
incomplete gamma function: `random_gamma_grad`, by the series / continued fraction that XLA uses.
"""
import functools
import math

import numpy as np

from xjax._src import core, dtypes
from xjax._src.backends import cpu
from xjax._src.interpreters import ad, batching
from xjax._src.lax import elementwise as ew, layout, reduction
from xjax._src.lax.base import scalars_like
from xjax._src.lax.control_flow import while_loop
from xjax._src.numpy import reductions, ufuncs, util
from xjax._src.random import prng
from xjax._src.random.keys import check_key
from xjax._src.random.samplers import _rademacher, exponential_raw, normal_raw, uniform_raw
from xjax._src.random.util import broadcast_shape, check_shape, float_dtype, staged


def _c(x, v):
    """A constant of x's dtype."""
    return np.array(v, core.get_aval(x).dtype)


def _any(pred):
    return reduction.reduce_or(pred, tuple(range(core.get_aval(pred).ndim))) if core.get_aval(pred).ndim else pred


def _masked_while(cond, body, init):
    """JAX's vmapped while loop over per-element predicates: runs while any element's cond holds;
    each step, elements whose cond holds take the body's values, the others keep theirs."""

    def step(state):
        p = cond(state)
        new = body(state)
        return tuple(_where(p, n, o) for n, o in zip(new, state))

    return while_loop(lambda s: _any(cond(s)), step, tuple(init))


def _where(p, new, old):
    """select per element of p, p broadcast over the trailing dims of new (keys carry a word axis)."""
    pshape, vshape = core.get_aval(p).shape, core.get_aval(new).shape
    if pshape != vshape:
        p = layout.broadcast_in_dim(p, vshape, tuple(range(len(pshape))))
    return ew.select(p, new, old)


def _gamma_one(keys, alpha, log_space):
    """One gamma sample per element of alpha (shape (n,)) from keys (n, 2)."""
    zero, one = _c(alpha, 0), _c(alpha, 1)
    dtype = core.get_aval(alpha).dtype
    boost = ew.ge(alpha, one)
    alpha_orig = alpha
    alpha = ew.select(boost, alpha, ew.add(alpha, one))
    d = ew.sub(alpha, _c(alpha, 1.0 / 3.0))
    c = ew.div(_c(alpha, 1.0 / 3.0), ew.sqrt(d))
    def full(v):
        return ew.add(ew.mul(alpha, zero), _c(alpha, v))

    def rejects(state):  # Marsaglia-Tsang's squeeze and log tests both fail
        _, X, V, U = state
        return ew.bitwise_and(
            ew.ge(U, ew.sub(one, ew.mul(_c(alpha, 0.0331), ew.mul(X, X)))),
            ew.ge(ew.log(U), ew.add(ew.mul(X, _c(alpha, 0.5)), ew.mul(d, ew.add(ew.sub(one, V), ew.log(V))))))

    def propose(state):
        key = state[0]
        key, x_key, u_key = prng.split_keys(key, 3)

        def next_x(kxv):
            k, sub = prng.split_keys(kxv[0], 2)
            x = normal_raw(sub, (), dtype)
            return k, x, ew.add(one, ew.mul(x, c))

        _, x, v = _masked_while(lambda kxv: ew.le(kxv[2], zero), next_x, (x_key, full(0), full(-1)))
        U = uniform_raw(u_key, 0.0, 1.0, (), dtype)
        return key, ew.mul(x, x), ew.mul(ew.mul(v, v), v), U

    key, subkey = prng.split_keys(keys, 2)
    _, _, V, _ = _masked_while(rejects, propose, (key, full(0), full(1), full(2)))
    if log_space:
        log_samples = ew.neg(exponential_raw(subkey, (), dtype))
        log_boost = ew.select(ew.bitwise_or(boost, ew.eq(log_samples, zero)), full(0),
                              ew.mul(log_samples, ew.div(one, alpha_orig)))
        return ew.add(ew.add(ew.log(d), ew.log(V)), log_boost)
    samples = ew.sub(one, uniform_raw(subkey, 0.0, 1.0, (), dtype))
    boosted = ew.select(boost, full(1), ew.pow(samples, ew.div(one, alpha_orig)))
    return ew.mul(ew.mul(d, V), boosted)


def _gamma_impl(keys, a, *, log_space):
    """keys (*K, 2), a (*K, *S): each key split in prod(S), one sample per element of a."""
    k_lead = core.get_aval(keys).shape[:-1]
    a_shape = core.get_aval(a).shape
    count = math.prod(a_shape[len(k_lead):])
    total = math.prod(a_shape)
    subkeys = layout.reshape(prng.random_split(keys, (count,)), (total, 2))
    samples = _gamma_one(subkeys, layout.reshape(a, (total,)), log_space)
    return layout.reshape(samples, a_shape)


def _gamma_eval(keys, a, *, log_space):
    return a


def _gamma_batch(axis, vals, dims, *, log_space):
    (keys, a), (kd, ad_) = vals, dims
    keys = batching.bdim_at_front(keys, kd, axis.size)
    a = batching.bdim_at_front(a, ad_, axis.size)
    return random_gamma_p.bind(keys, a, log_space=log_space), 0


def _gamma_jvp(primals, tangents, *, log_space):
    keys, a = primals
    ans = random_gamma_p.bind(keys, a, log_space=log_space)
    ta = tangents[1]
    if type(ta) is ad.Zero:
        return ans, ad.zero_tangent(ans)
    return ans, ew.mul(ta, _gamma_grad(ans, a, log_space))


random_gamma_p = core.Primitive("random_gamma")
random_gamma_p.def_rules(abstract_eval=_gamma_eval, impl=functools.partial(cpu.apply_primitive, random_gamma_p),
                         lowering=prng._lower_fun(_gamma_impl), batch=_gamma_batch, jvp=_gamma_jvp)


# ---- the implicit gradient -----------------------------------------------------------------------

def _gamma_grad(sample, a, log_space):
    if log_space:  # d log(x) = dx / x; exp(log x) may round to 0: use the smallest normal instead
        x = ew.exp(sample)
        x = ew.select(ew.eq(x, _c(x, 0)), ew.add(ew.mul(x, _c(x, 0)), _c(x, dtypes.finfo(core.get_aval(x).dtype).tiny)), x)
        return ew.div(random_gamma_grad(a, x), x)
    return random_gamma_grad(a, sample)


def random_gamma_grad(a, x):
    """d x / d a for x ~ Gamma(a, 1) held at a fixed quantile: -(dP/da) / (dP/dx), P(a, x) the
    regularised lower incomplete gamma function (elementwise; lax.random_gamma_grad in JAX)."""
    return random_gamma_grad_p.bind(*scalars_like((a, x)))


def _gamma_grad_impl(a, x):
    dtype = core.get_aval(a).dtype
    if np.dtype(dtype).itemsize == 2:  # 16-bit floats compute in float32, as XLA's
        out = _gamma_grad_impl(ew.convert_element_type(a, np.float32), ew.convert_element_type(x, np.float32))
        return ew.convert_element_type(out, dtype)
    zero, one = _c(a, 0), _c(a, 1)
    is_nan = ew.bitwise_or(ew.ne(a, a), ew.ne(x, x))
    x_is_zero = ew.eq(x, zero)
    domain_error = ew.bitwise_or(ew.lt(x, zero), ew.le(a, zero))
    use_cf = ew.bitwise_and(ew.gt(x, one), ew.gt(x, a))
    ax = ew.sub(ew.sub(ew.mul(a, ew.log(x)), x), ew.lgamma(a))
    underflow = ew.lt(ax, _c(a, -np.log(dtypes.finfo(dtype).max)))
    ax = ew.exp(ax)
    enabled = ew.bitwise_not(ew.bitwise_or(ew.bitwise_or(ew.bitwise_or(x_is_zero, domain_error), underflow), is_nan))
    eps = _c(a, dtypes.finfo(dtype).eps)
    cf = _continued_fraction_grad(x, a, ew.bitwise_and(enabled, use_cf), eps)
    series = _series_grad(x, a, ew.bitwise_and(enabled, ew.bitwise_not(use_cf)), eps)
    out = ew.select(use_cf, ew.neg(cf), series)
    out = ew.select(x_is_zero, ew.mul(out, zero), out)
    return ew.select(ew.bitwise_or(domain_error, is_nan), ew.add(out, _c(a, np.nan)), out)


def _gamma_grad_eval(a, x):
    if a.shape != x.shape or a.dtype != x.dtype or not dtypes.is_float(a.dtype):
        raise TypeError(f"random_gamma_grad takes float operands of one shape and dtype, got {a} and {x}")
    return a.update(weak_type=False)


# A primitive (as in JAX), elementwise: it batches by binding on the batched operands, whatever
# its while loops would need.
random_gamma_grad_p = core.Primitive("random_gamma_grad")
random_gamma_grad_p.def_rules(abstract_eval=_gamma_grad_eval, impl=functools.partial(cpu.apply_primitive,
                                                                                      random_gamma_grad_p),
                              lowering=prng._lower_fun(_gamma_grad_impl))
batching.defbroadcasting(random_gamma_grad_p)


def _gamma_grad_jvp(primals, tangents):
    raise NotImplementedError("Differentiation rule for 'random_gamma_grad' not implemented: second derivatives of "
                              "gamma samples are not supported (JAX cannot take them in reverse mode either)")


random_gamma_grad_p.def_rules(jvp=_gamma_grad_jvp)


def _series_grad(x, a, enabled, eps):
    """-(d/da of the series for P) * x / a (the sample derivative), for x <= max(1, a)."""
    one = _c(a, 1)

    def cond(s):
        return _any(s[0])

    def body(s):
        on, r, c, ans, dc_da, dans_da = s
        r2 = ew.add(r, one)
        dc2 = ew.add(ew.mul(dc_da, ew.div(x, r2)), ew.div(ew.mul(ew.mul(_c(a, -1), c), x), ew.mul(r2, r2)))
        dans2 = ew.add(dans_da, dc2)
        c2 = ew.mul(c, ew.div(x, r2))
        ans2 = ew.add(ans, c2)
        more = ew.bitwise_and(on, ew.gt(ew.abs(ew.div(dc2, dans2)), eps))
        keep = lambda new, old: ew.select(on, new, old)  # noqa: E731
        return more, keep(r2, r), keep(c2, c), keep(ans2, ans), keep(dc2, dc_da), keep(dans2, dans_da)

    ones, zeros = ew.add(ew.mul(a, _c(a, 0)), one), ew.mul(a, _c(a, 0))
    _, _, _, ans, _, dans_da = while_loop(cond, body, (enabled, a, ones, ones, zeros, zeros))
    dlogax_da = ew.sub(ew.log(x), ew.digamma(ew.add(a, one)))
    return ew.div(ew.mul(ew.neg(ew.add(dans_da, ew.mul(ans, dlogax_da))), x), a)


def _continued_fraction_grad(x, a, enabled, eps):
    """The sample derivative from the continued fraction for Q = 1 - P, for x > max(1, a)."""
    one, zero = _c(a, 1), _c(a, 0)
    y = ew.sub(one, a)
    z = ew.add(ew.add(x, y), one)
    pkm2, qkm2 = ew.add(ew.mul(x, zero), one), x
    pkm1, qkm1 = ew.add(x, one), ew.mul(z, x)
    ans = ew.div(pkm1, qkm1)
    zeros = ew.mul(x, zero)
    dqkm1 = ew.neg(x)
    dans = ew.div(ew.sub(zeros, ew.mul(ans, dqkm1)), qkm1)
    big = _c(a, 1.0 / float(eps))

    def cond(s):
        return ew.bitwise_and(ew.lt(s[5], _c(a, 2000)), _any(s[0]))

    def body(s):
        on, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2, dpkm2, dqkm2, dpkm1, dqkm1, dans = s
        c2 = ew.add(c, one)
        y2 = ew.add(y, one)
        z2 = ew.add(z, _c(a, 2))
        yc = ew.mul(y2, c2)
        pk = ew.sub(ew.mul(pkm1, z2), ew.mul(pkm2, yc))
        qk = ew.sub(ew.mul(qkm1, z2), ew.mul(qkm2, yc))
        nz = ew.ne(qk, zero)
        r = ew.div(pk, qk)
        t2 = ew.select(nz, ew.abs(ew.div(ew.sub(ans, r), r)), ew.add(zeros, one))
        ans2 = ew.select(nz, r, ans)
        dpk = ew.add(ew.sub(ew.sub(ew.mul(dpkm1, z2), pkm1), ew.mul(dpkm2, yc)), ew.mul(pkm2, c2))
        dqk = ew.add(ew.sub(ew.sub(ew.mul(dqkm1, z2), qkm1), ew.mul(dqkm2, yc)), ew.mul(qkm2, c2))
        dans2 = ew.select(nz, ew.div(ew.sub(dpk, ew.mul(ans2, dqk)), qk), dans)
        grad_change = ew.select(nz, ew.abs(ew.sub(dans2, dans)), ew.add(zeros, one))
        rescale = ew.gt(ew.abs(pk), big)
        scale = lambda v: ew.select(rescale, ew.mul(v, eps), v)  # noqa: E731
        n_pkm2, n_pkm1, n_qkm2, n_qkm1 = scale(pkm1), scale(pk), scale(qkm1), scale(qk)
        n_dpkm2, n_dqkm2, n_dpkm1, n_dqkm1 = scale(dpkm1), scale(dqkm1), scale(dpk), scale(dqk)
        more = ew.bitwise_and(on, ew.gt(grad_change, eps))
        keep = lambda new, old: ew.select(on, new, old)  # noqa: E731
        return (more, keep(ans2, ans), keep(t2, t), keep(y2, y), keep(z2, z), c2, keep(n_pkm1, pkm1),
                keep(n_qkm1, qkm1), keep(n_pkm2, pkm2), keep(n_qkm2, qkm2), keep(n_dpkm2, dpkm2),
                keep(n_dqkm2, dqkm2), keep(n_dpkm1, dpkm1), keep(n_dqkm1, dqkm1), keep(dans2, dans))

    init = (enabled, ans, ew.add(zeros, one), y, z, zero, pkm1, qkm1, pkm2, qkm2, zeros, zeros, zeros, dqkm1, dans)
    out = while_loop(cond, body, init)
    ans, dans = out[1], out[14]
    dlogax_da = ew.sub(ew.log(x), ew.digamma(a))
    return ew.mul(ew.neg(ew.add(dans, ew.mul(ans, dlogax_da))), x)


# ---- the samplers ---------------------------------------------------------------------------------

@staged(2, 3, 4)
def gamma_raw(key, a, shape, dtype, log_space=False):
    if shape is None:
        shape = tuple(np.shape(a))
    else:
        check_shape("gamma", shape, tuple(np.shape(a)))
    a = ew.convert_element_type(a, dtype)
    if core.get_aval(a).shape != shape:
        a = layout.broadcast_in_dim(a, shape, tuple(range(len(shape) - core.get_aval(a).ndim, len(shape))))
    return random_gamma_p.bind(key, a, log_space=log_space)


def gamma(key, a, shape=None, dtype=None):
    """Gamma(a, 1) floats (differentiable in a, by the implicit reparameterisation gradient)."""
    data, _ = check_key("gamma", key)
    dtype = float_dtype("gamma", dtype)
    if shape is not None:
        shape = tuple(broadcast_shape("gamma", shape))
    return gamma_raw(data, a, shape, dtype, False)


def loggamma(key, a, shape=None, dtype=None):
    """log of Gamma(a, 1) floats, computed in log space (accurate for small a)."""
    data, _ = check_key("loggamma", key)
    dtype = float_dtype("gamma", dtype)
    if shape is not None:
        shape = tuple(broadcast_shape("loggamma", shape))
    return gamma_raw(data, a, shape, dtype, True)


@staged(3, 4)
def _beta(key, a, b, shape, dtype):
    if shape is None:
        shape = broadcast_shape("beta", None, a, b)
    else:
        check_shape("beta", shape, tuple(np.shape(a)), tuple(np.shape(b)))
    a = ew.convert_element_type(a, dtype)
    b = ew.convert_element_type(b, dtype)
    key_a, key_b = prng.split_keys(key, 2)
    a = _broadcast_to(a, shape)
    b = _broadcast_to(b, shape)
    log_a = gamma_raw(key_a, a, shape, dtype, True)
    log_b = gamma_raw(key_b, b, shape, dtype, True)
    log_max = ew.max(log_a, log_b)
    ga = ufuncs.exp(ew.sub(log_a, log_max))
    gb = ufuncs.exp(ew.sub(log_b, log_max))
    return ew.div(ga, ew.add(ga, gb))


def _broadcast_to(x, shape):
    xs = core.get_aval(x).shape
    if xs == tuple(shape):
        return x
    return util.broadcast_to_shape(x, tuple(shape))


def beta(key, a, b, shape=None, dtype=None):
    """Beta(a, b) floats."""
    data, _ = check_key("beta", key)
    dtype = float_dtype("beta", dtype)
    shape = broadcast_shape("beta", shape, a, b)
    return _beta(data, a, b, shape, dtype)


@staged(2, 3)
def _dirichlet(key, alpha, shape, dtype):
    if np.ndim(alpha) < 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {np.ndim(alpha)}")
    if shape is None:
        shape = tuple(np.shape(alpha)[:-1])
    else:
        check_shape("dirichlet", shape, tuple(np.shape(alpha)[:-1]))
    alpha = ew.convert_element_type(util.asarray(alpha), dtype)
    log_g = gamma_raw(key, alpha, shape + tuple(np.shape(alpha)[-1:]), dtype, True)
    return _softmax_last(log_g)


def _softmax_last(x):
    """softmax over the last axis, as jax.nn.softmax computes it."""
    axis = core.get_aval(x).ndim - 1
    unnormalized = ufuncs.exp(ufuncs.subtract(x, reductions.max(x, axis, keepdims=True)))
    return ufuncs.divide(unnormalized, reductions.sum(unnormalized, axis, keepdims=True))


def dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet(alpha) vectors along the last axis."""
    data, _ = check_key("dirichlet", key)
    dtype = float_dtype("dirichlet", dtype)
    if shape is not None:
        shape = tuple(broadcast_shape("dirichlet", shape))
    return _dirichlet(data, alpha, shape, dtype)


@staged(2, 3)
def _t(key, df, shape, dtype):
    if shape is None:
        shape = tuple(np.shape(df))
    else:
        check_shape("t", shape, tuple(np.shape(df)))
    df = ew.convert_element_type(df, dtype)
    key_n, key_g = prng.split_keys(key, 2)
    n = normal_raw(key_n, shape, dtype)
    half_df = ew.div(df, _c(n, 2))
    g = gamma_raw(key_g, half_df, shape, dtype, False)
    return ufuncs.multiply(n, ufuncs.sqrt(ufuncs.divide(half_df, g)))


def t(key, df, shape=None, dtype=None):
    """Student's t floats with df degrees of freedom."""
    data, _ = check_key("t", key)
    dtype = float_dtype("t", dtype)
    return _t(data, df, broadcast_shape("t", shape, df), dtype)


@staged(2, 3)
def _chisquare(key, df, shape, dtype):
    df = ew.convert_element_type(df, dtype)
    half_df = ew.div(df, _c(df, 2))
    log_g = gamma_raw(key, half_df, shape, dtype, True)
    return ew.mul(ufuncs.exp(log_g), _c(df, 2))


def chisquare(key, df, shape=None, dtype=None):
    """Chi-square floats with df degrees of freedom."""
    data, _ = check_key("chisquare", key)
    dtype = float_dtype("chisquare", dtype)
    return _chisquare(data, df, broadcast_shape("chisquare", shape, df), dtype)


@staged(1, 2, 3)
def generalized_normal_raw(key, p, shape, dtype):
    k0, k1 = prng.split_keys(key, 2)
    g = gamma_raw(k0, 1 / p, shape, dtype, False)
    r = _rademacher(k1, shape, dtype)
    return ufuncs.multiply(r, ufuncs.power(g, 1 / p))
