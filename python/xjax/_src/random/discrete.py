"""Sampling indices and counts: categorical (Gumbel max), choice, permutation (sorting by random
bits), poisson (Knuth's product of uniforms for small rates, transformed rejection above 10)."""
import math

import numpy as np

import xjax.numpy as jnp
from xjax._src import core, dtypes
from xjax._src.config import config
from xjax._src.lax import elementwise as ew, layout, reduction
from xjax._src.lax.control_flow import while_loop
from xjax._src.lax.sorting import sort_key_val, top_k
from xjax._src.numpy import util
from xjax._src.random import prng
from xjax._src.random.keys import check_key
from xjax._src.random.samplers import _gumbel, _randint, uniform_raw
from xjax._src.random.util import canonical_shape, check_shape, int_dtype, staged


def _jnp():
    return jnp


# ---- categorical ------------------------------------------------------------------------------------

@staged(2, 3, 4, 5, 6)
def _categorical(key, logits, shape, batch_shape, axis, replace, mode):
    jnp = _jnp()
    ndim = core.get_aval(logits).ndim
    prefix = shape[:len(shape) - len(batch_shape)]
    dtype = core.get_aval(logits).dtype
    if replace:
        if axis >= 0:
            axis -= ndim
        logits_shape = list(shape[len(shape) - len(batch_shape):])
        logits_shape.insert(axis % ndim, core.get_aval(logits).shape[axis])
        g = _gumbel(key, (*prefix, *logits_shape), dtype, mode)
        return jnp.argmax(ew.add(g, layout.expand_dims(logits, tuple(range(len(prefix))))), axis=axis)
    logits = ew.add(logits, _gumbel(key, core.get_aval(logits).shape, dtype, mode))
    k = math.prod(prefix)
    if k > core.get_aval(logits).shape[axis]:
        raise ValueError(f"Number of samples without replacement ({k}) cannot exceed number of categories "
                         f"({core.get_aval(logits).shape[axis]}).")
    _, indices = top_k(jnp.moveaxis(logits, axis, -1), k)
    nd = core.get_aval(indices).ndim
    return layout.reshape(indices, shape, (nd - 1, *range(nd - 1)))


def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None):
    """Category indices drawn with probabilities softmax(logits) along `axis` (Gumbel-max trick)."""
    data, _ = check_key("categorical", key)
    util.check_arraylike("categorical", logits)
    logits = util.asarray(logits)
    ndim = core.get_aval(logits).ndim
    axis = util.canonicalize_axis(axis, ndim)
    batch_shape = tuple(d for i, d in enumerate(core.get_aval(logits).shape) if i != axis)
    if shape is None:
        shape = batch_shape
    else:
        shape = canonical_shape(shape)
        check_shape("categorical", shape, batch_shape)
    if mode is None:
        mode = "high" if config.jax_use_high_dynamic_range_gumbel else "low"
    if mode not in ("highest", "high", "low"):
        raise ValueError("Must provide valid mode for gumbel got: %s" % mode)
    return _categorical(data, logits, shape, batch_shape, axis, bool(replace), mode)


# ---- permutation and choice ----------------------------------------------------------------------------

@staged(2)
def _shuffle(key, x, axis):
    size = core.get_aval(x).size
    rounds = int(np.ceil(3 * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        key, sub = prng.split_keys(key, 2)
        sort_keys = prng.random_bits(sub, 32, core.get_aval(x).shape)
        _, x = sort_key_val(sort_keys, x, axis)
    return x


def permutation(key, x, axis=0, independent=False):
    """A random permutation of arange(x) (int x), or of x's slices along `axis`."""
    data, _ = check_key("permutation", key)
    util.check_arraylike("permutation", x)
    axis = util.canonicalize_axis(axis, np.ndim(x) or 1)
    if not np.ndim(x):
        if not dtypes.is_int(util.aval_of(x).dtype):
            raise TypeError("x must be an integer or at least 1-dimensional")
        r = int(util.concrete_value(x, "argument x of jax.random.permutation()"))
        return _shuffle(data, _jnp().arange(r), axis)
    x = util.asarray(x)
    if independent or np.ndim(x) == 1:
        return _shuffle(data, x, axis)
    ind = _shuffle(data, _jnp().arange(core.get_aval(x).shape[axis]), 0)
    return _jnp().take(x, ind, axis, unique_indices=True)


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """Samples of a (or of arange(a) for an int a), with or without replacement, optionally by p."""
    data, _ = check_key("choice", key)
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"shape argument of jax.random.choice must be a sequence, got {shape}")
    shape = canonical_shape(shape)
    util.check_arraylike("choice", a)
    jnp = _jnp()
    arr = util.asarray(a)
    if arr.ndim == 0:
        n_inputs = int(util.concrete_value(a, "The error occurred in jax.random.choice()"))
    else:
        axis = util.canonicalize_axis(axis, arr.ndim)
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return jnp.zeros(shape, dtype=arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population (size {n_inputs}) when "
                         "'replace=False'")
    if p is None:
        if replace:
            ind = _randint(data, 0, n_inputs, shape, dtypes.default_int_dtype())
            result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis)
        else:
            slices = (slice(None),) * axis + (slice(n_draws),)
            result = permutation(data, n_inputs if arr.ndim == 0 else arr, axis)[slices]
    else:
        util.check_arraylike("choice", p)
        (p_arr,) = util.promote_dtypes_inexact(p)
        if p_arr.shape != (n_inputs,):
            raise ValueError("p must be None or a 1D vector with the same size as a.shape[axis]. "
                             f"p has shape {p_arr.shape} and a.shape[axis] is {n_inputs}.")
        if replace:
            p_cuml = jnp.cumsum(p_arr)
            u = uniform_raw(data, 0.0, 1.0, shape, p_cuml.dtype)
            r = ew.mul(p_cuml[-1], ew.sub(np.array(1, p_cuml.dtype), u))
            ind = jnp.searchsorted(p_cuml, r).astype(int)
        else:
            if mode is None:
                mode = "high" if config.jax_use_high_dynamic_range_gumbel else "low"
            g = ew.add(_gumbel(data, (n_inputs,), p_arr.dtype, mode), jnp.log(p_arr))
            ind = top_k(g, n_draws)[1].astype(int)
        result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis)
    return result.reshape(shape if arr.ndim == 0 else arr.shape[0:axis] + tuple(shape) + arr.shape[axis + 1:])


# ---- poisson ------------------------------------------------------------------------------------------

def _any(pred):
    return reduction.reduce_or(pred, tuple(range(core.get_aval(pred).ndim))) if core.get_aval(pred).ndim else pred


def _poisson_knuth(key, lam, shape, dtype, max_iters):
    jnp = _jnp()

    def body(carry):
        i, k, rng, log_prod = carry
        rng, sub = prng.split_keys(rng, 2)
        k = ew.select(ew.gt(log_prod, ew.neg(lam)), ew.add(k, np.array(1, dtype)), k)
        u = uniform_raw(sub, 0.0, 1.0, shape, np.float32)
        return ew.add(i, np.array(1, np.int32)), k, rng, ew.add(log_prod, jnp.log(u))

    def cond(carry):
        i, log_prod = carry[0], carry[3]
        return ew.bitwise_and(_any(ew.gt(log_prod, ew.neg(lam))), ew.lt(i, np.array(max_iters, np.int32)))

    k0 = jnp.zeros(shape, dtype)
    log0 = jnp.zeros(shape, np.float32)
    k = while_loop(cond, body, (np.array(0, np.int32), k0, key, log0))[1]
    return ew.sub(k, np.array(1, dtype)).astype(dtype)


def _poisson_rejection(key, lam, shape, dtype, max_iters):
    jnp = _jnp()
    f = lambda v: np.array(v, np.float32)  # noqa: E731
    log_lam = ew.log(lam)
    b = ew.add(f(0.931), ew.mul(f(2.53), ew.sqrt(lam)))
    a = ew.add(f(-0.059), ew.mul(f(0.02483), b))
    inv_alpha = ew.add(f(1.1239), ew.div(f(1.1328), ew.sub(b, f(3.4))))
    v_r = ew.sub(f(0.9277), ew.div(f(3.6224), ew.sub(b, f(2))))

    def body(carry):
        i, k_out, accepted, key = carry
        key, sub0, sub1 = prng.split_keys(key, 3)
        u = ew.sub(uniform_raw(sub0, 0.0, 1.0, shape, np.float32), f(0.5))
        v = uniform_raw(sub1, 0.0, 1.0, shape, np.float32)
        u_shifted = ew.sub(f(0.5), ew.abs(u))
        k = ew.floor(ew.add(ew.add(ew.mul(ew.add(ew.div(ew.mul(f(2), a), u_shifted), b), u), lam), f(0.43)))
        s = ew.log(ew.div(ew.mul(v, inv_alpha), ew.add(ew.div(a, ew.mul(u_shifted, u_shifted)), b)))
        t = ew.sub(ew.add(ew.neg(lam), ew.mul(k, log_lam)), ew.lgamma(ew.add(k, f(1))))
        accept1 = ew.bitwise_and(ew.ge(u_shifted, f(0.07)), ew.le(v, v_r))
        reject = ew.bitwise_or(ew.lt(k, f(0)), ew.bitwise_and(ew.lt(u_shifted, f(0.013)), ew.gt(v, u_shifted)))
        accept2 = ew.le(s, t)
        accept = ew.bitwise_or(accept1, ew.bitwise_and(ew.bitwise_not(reject), accept2))
        k_out = ew.select(accept, k, k_out)
        return ew.add(i, np.array(1, np.int32)), k_out, ew.bitwise_or(accepted, accept), key

    def cond(carry):
        i, _, accepted, _ = carry
        return ew.bitwise_and(_any(ew.bitwise_not(accepted)), ew.lt(i, np.array(max_iters, np.int32)))

    k0 = jnp.full(shape, -1, np.float32)
    acc0 = jnp.zeros(shape, bool)
    k = while_loop(cond, body, (np.array(0, np.int32), k0, acc0, key))[1]
    return k.astype(dtype)


@staged(2, 3)
def _poisson(key, lam, shape, dtype):
    jnp = _jnp()
    use_knuth = ew.bitwise_or(ew.ne(lam, lam), ew.lt(lam, np.array(10, np.float32)))
    lam_knuth = ew.select(use_knuth, lam, jnp.zeros_like(lam))
    lam_rejection = ew.select(use_knuth, jnp.full_like(lam, 1e5), lam)
    # JAX's bound: the dtype's max, taken by the int32 counter of the loop.
    max_iters = min(int(dtypes.iinfo(dtype).max), int(np.iinfo(np.int32).max))
    result = ew.select(use_knuth, _poisson_knuth(key, lam_knuth, shape, dtype, max_iters),
                       _poisson_rejection(key, lam_rejection, shape, dtype, max_iters))
    return ew.select(ew.eq(lam, np.array(0, np.float32)), jnp.zeros_like(result), result)


def poisson(key, lam, shape=None, dtype=None):
    """Poisson counts with rates lam (computed in float32, as JAX)."""
    data, _ = check_key("poisson", key)
    dtype = int_dtype(dtype)
    shape = tuple(np.shape(lam)) if shape is None else canonical_shape(shape)
    lam = util.broadcast_to_shape(util.asarray(lam), shape)
    lam = ew.convert_element_type(lam, np.float32)
    return _poisson(data, lam, shape, dtype)
