"""Binomial and multinomial counts, drawn as JAX draws them (the same numbers for the same keys).

binomial: where n*q <= 10 (q = min(p, 1 - p)), by inversion: counting geometric waiting times
until they pass n; elsewhere by Hormann's BTRS transformed rejection, whose acceptance bound uses
Stirling's series for log-factorials (a table for k <= 9). multinomial: one binomial per category
along a scan, each of what remains with the category's share of the remaining probability.
"""
import numpy as np

import xjax.numpy as jnp
from xjax._src import core, dtypes
from xjax._src.lax import elementwise as ew
from xjax._src.lax.control_flow import scan, while_loop
from xjax._src.lax.reduction import cumsum
from xjax._src.numpy import util
from xjax._src.random import prng
from xjax._src.random.keys import check_key, split
from xjax._src.random.samplers import uniform_raw
from xjax._src.random.util import check_shape, float_dtype, staged

# log(k!) - Stirling's approximation of it, for k = 0 .. 9
_STIRLING_TAIL = [0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                  0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                  0.00925546218271273, 0.00833056343336287]


def _jnp():
    return jnp


def _stirling_tail(k):
    jnp = _jnp()
    table = jnp.array(_STIRLING_TAIL, dtype=k.dtype)
    small = k <= 9
    k = jnp.clip(k, 0.0, 9.0)
    k1sq = (k + 1) * (k + 1)
    series = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / k1sq) / k1sq) / (k + 1)
    return ew.select(small, table[jnp.floor(k).astype(np.int32)], series)


def _any(x):
    return _jnp().any(x)


def _inversion(key, n, q, shape, max_iters):
    """Counts the geometric(q) waiting times whose running sum stays within n."""
    jnp = _jnp()
    log1mq = jnp.log1p(-q)

    def body(carry):
        i, count, total, key = carry
        sub, key = prng.split_keys(key, 2)
        count = ew.select(total <= n, count + 1, count)
        u = uniform_raw(sub, 0.0, 1.0, shape, q.dtype)
        return i + 1, count, total + jnp.ceil(jnp.log(u) / log1mq), key

    def cond(carry):
        i, _, total, _ = carry
        return _any(total <= n) & (i < max_iters)

    zeros = jnp.zeros(shape, q.dtype)
    return while_loop(cond, body, (jnp.int32(0), zeros, zeros, key))[1] - 1


def _btrs(key, n, q, shape, max_iters):
    """Hormann's transformed rejection with squeeze (BTRS), for n*q > 10."""
    jnp = _jnp()
    stddev = jnp.sqrt(n * q * (1 - q))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * q
    c = n * q + 0.5
    v_r = 0.92 - 4.2 / b
    r = q / (1 - q)
    alpha = (2.83 + 5.1 / b) * stddev
    m = jnp.floor((n + 1) * q)

    def body(carry):
        i, k_out, accepted, key = carry
        key, sub0, sub1 = prng.split_keys(key, 3)
        u = uniform_raw(sub0, 0.0, 1.0, shape, q.dtype) - 0.5
        v = uniform_raw(sub1, 0.0, 1.0, shape, q.dtype)
        us = 0.5 - jnp.abs(u)
        accept_fast = (us >= 0.07) & (v <= v_r)
        k = jnp.floor((2 * a / us + b) * u + c)
        out_of_range = (k < 0) | (k > n)
        log_v = jnp.log(v * alpha / (a / (us * us) + b))
        bound = ((m + 0.5) * jnp.log((m + 1) / (r * (n - m + 1)))
                 + (n + 1) * jnp.log((n - m + 1) / (n - k + 1))
                 + (k + 0.5) * jnp.log(r * (n - k + 1) / (k + 1))
                 + _stirling_tail(m) + _stirling_tail(n - m) - _stirling_tail(k) - _stirling_tail(n - k))
        accept = accept_fast | (~out_of_range & (log_v <= bound))
        return i + 1, ew.select(accept, k, k_out), accepted | accept, key

    def cond(carry):
        i, _, accepted, _ = carry
        return _any(~accepted) & (i < max_iters)

    init = (jnp.int32(0), jnp.full(shape, -1, q.dtype), jnp.zeros(shape, bool), key)
    return while_loop(cond, body, init)[1]


@staged(3, 4)
def _binomial(key, n, p, shape, dtype):
    jnp = _jnp()
    n = jnp.broadcast_to(n.astype(p.dtype), shape)
    p = jnp.broadcast_to(p, shape)
    p_small = p < 0.5
    q = ew.select(p_small, p, 1.0 - p)  # draw the rarer outcome; flip at the end
    n_bad = jnp.isnan(n) | (n < 0.0)
    n_inf = jnp.isinf(n)
    q_nan, q_neg = jnp.isnan(q), q < 0.0
    q = ew.select(q_nan | q_neg, jnp.full_like(q, 0.01), q)
    by_inversion = n_bad | (n * q <= 10.0)
    n = jnp.floor(n)
    # Both samplers run on every element (their loops are vectorised); each gets harmless inputs
    # where the other one's result is used.
    max_iters = float(dtypes.finfo(dtype).max)
    samples = ew.select(by_inversion,
                        _inversion(key, ew.select(by_inversion, n, jnp.zeros_like(n)), q, shape, max_iters),
                        _btrs(key, ew.select(by_inversion, jnp.full_like(n, 1e4), n),
                              ew.select(by_inversion, jnp.full_like(q, 0.5), q), shape, max_iters)).astype(dtype)
    invalid = q_neg | q_nan | n_bad
    samples = ew.select(invalid, jnp.full_like(samples, np.nan), samples)
    samples = ew.select(n_inf & ~invalid, jnp.full_like(samples, np.inf), samples)
    return ew.select(p_small | n_bad | q_nan | n_inf, samples, n.astype(dtype) - samples)


def _inexact(x):
    x = util.asarray(x)
    return x if dtypes.is_float(x.dtype) else ew.convert_element_type(x, dtypes.to_inexact_dtype(x.dtype))


def binomial(key, n, p, shape=None, dtype=None):
    """Counts of successes in n trials of probability p (floats; nan where n < 0 or p is invalid)."""
    data, _ = check_key("binomial", key)
    util.check_arraylike("binomial", n, p)
    dtype = float_dtype("binomial", dtype)
    if shape is None:
        shape = util.broadcast_shapes(np.shape(n), np.shape(p))
    else:
        shape = util.canonicalize_shape(shape)
        check_shape("binomial", shape, np.shape(n), np.shape(p))
    return _binomial(data, util.asarray(n), _inexact(p), tuple(shape), dtype)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Counts of n draws over the categories of the last axis of p (probabilities summing to 1)."""
    jnp = _jnp()
    check_key("multinomial", key)
    util.check_arraylike("multinomial", n, p)
    n, p = _inexact(n), _inexact(p)
    dt = jnp.result_type(n, p)
    n, p = n.astype(dt), p.astype(dt)
    dtype = float_dtype("multinomial", dtype)
    shape = core.get_aval(p).shape if shape is None else util.canonicalize_shape(shape)
    n = jnp.broadcast_to(n, shape[:-1])
    p = jnp.moveaxis(jnp.broadcast_to(p, shape), -1, 0)
    remaining = cumsum(p, 0, reverse=True)  # probability of this category and of those after it
    shares = p / jnp.where(remaining == 0, 1, remaining)

    def draw(left, share_key):
        share, k = share_key
        count = binomial(k, left, share.clip(0, 1), dtype=left.dtype)
        return left - count, count

    _, counts = scan(draw, n, (shares, split(key, core.get_aval(shares).shape[0])), unroll=unroll)
    return jnp.moveaxis(counts, 0, -1).astype(dtype)
