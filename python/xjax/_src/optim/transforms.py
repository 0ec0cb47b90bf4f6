"""optax's building blocks: scaling, moments (Adam, RMS, Lion, ...), weight decay and clipping.

Every transformation here works leaf by leaf on pytrees of updates; its state is a NamedTuple of
arrays (an int32 step count where one is needed), as optax's.
"""
from typing import Any, NamedTuple

from xjax._src import dtypes, lax, tree_util
from xjax._src.optim import base
from xjax._src.optim.tree_math import (safe_increment, safe_norm, safe_root_mean_squares, tree_bias_correction,
                                       tree_cast, tree_cast_like, tree_full_like, tree_norm, tree_update_moment,
                                       tree_update_moment_per_elem_norm, tree_zeros_like)
from xjax._src.optim.wrappers import masked
import xjax.numpy as jnp

_is_none = lambda x: x is None  # noqa: E731


def _map(f, *trees):
    return tree_util.tree_map(f, *trees)


def _zero_count():
    return jnp.zeros([], jnp.int32)


def _canonical_dtype(dtype):
    return None if dtype is None else dtypes.canonicalize_dtype(dtype)


# ---- scaling --------------------------------------------------------------------------------

class ScaleByScheduleState(NamedTuple):
    count: Any


def scale(step_size):
    """Multiplies every update by step_size."""
    def update_fn(updates, state, params=None):
        del params
        return _map(lambda g: step_size * g, updates), state

    return base.GradientTransformation(base.init_empty_state, update_fn)


def scale_by_schedule(step_size_fn):
    """Multiplies the updates by step_size_fn(count), count being the number of updates so far."""
    def init_fn(params):
        del params
        return ScaleByScheduleState(count=_zero_count())

    def update_fn(updates, state, params=None):
        del params
        step_size = step_size_fn(state.count)
        updates = _map(lambda g: jnp.array(step_size, dtype=g.dtype) * g, updates)
        return updates, ScaleByScheduleState(count=safe_increment(state.count))

    return base.GradientTransformation(init_fn, update_fn)


def scale_by_learning_rate(learning_rate=None, *, flip_sign=True):
    """Scales by -learning_rate (a number or a schedule of the step count); identity for None."""
    if learning_rate is None:
        return base.identity()
    m = -1 if flip_sign else 1
    if callable(learning_rate):
        return scale_by_schedule(lambda count: m * learning_rate(count))
    return scale(m * learning_rate)


def scale_by_sign():
    """Replaces each update by its sign."""
    def update_fn(updates, state, params=None):
        del params
        return _map(jnp.sign, updates), state

    return base.GradientTransformation(base.init_empty_state, update_fn)


def scale_by_param_block_rms(min_scale=1e-3):
    """Scales each update by the root mean square of its parameter (at least min_scale)."""
    def update_fn(updates, state, params):
        if params is None:
            raise ValueError(base.NO_PARAMS_MSG)
        return _map(lambda u, p: u * safe_root_mean_squares(p, min_scale), updates, params), state

    return base.GradientTransformation(base.init_empty_state, update_fn)


def scale_by_trust_ratio(min_norm=0.0, trust_coefficient=1.0, eps=0.0):
    """Scales each update by |param| / |update| (LARS/LAMB's layer-wise trust ratio; 1 where either is 0)."""
    def update_fn(updates, state, params):
        if params is None:
            raise ValueError(base.NO_PARAMS_MSG)

        def scale_one(u, p):
            p_norm = safe_norm(p, min_norm)
            u_norm = safe_norm(u, min_norm)
            ratio = trust_coefficient * p_norm / (u_norm + eps)
            zero = jnp.logical_or(p_norm == 0.0, u_norm == 0.0)
            return u * jnp.where(zero, jnp.array(1.0, dtype=p.dtype), ratio)

        return _map(scale_one, updates, params), state

    return base.GradientTransformation(base.init_empty_state, update_fn)


# ---- moments --------------------------------------------------------------------------------

class TraceState(NamedTuple):
    trace: Any


def trace(decay, nesterov=False, accumulator_dtype=None):
    """Momentum: t = g + decay * t; returns t (or g + decay * t for Nesterov momentum)."""
    accumulator_dtype = _canonical_dtype(accumulator_dtype)

    def init_fn(params):
        return TraceState(trace=tree_zeros_like(params, dtype=accumulator_dtype))

    def update_fn(updates, state, params=None):
        del params
        f = lambda g, t: g + decay * t  # noqa: E731
        new_trace = tree_util.tree_map(lambda g, t: None if g is None else f(g, t), updates, state.trace,
                                       is_leaf=_is_none)
        updates = _map(f, updates, new_trace) if nesterov else new_trace
        return updates, TraceState(trace=tree_cast(new_trace, accumulator_dtype))

    return base.GradientTransformation(init_fn, update_fn)


class EmaState(NamedTuple):
    count: Any
    ema: Any


def ema(decay, debias=True, accumulator_dtype=None):
    """The exponential moving average of the updates (bias-corrected when debias)."""
    accumulator_dtype = _canonical_dtype(accumulator_dtype)

    def init_fn(params):
        return EmaState(count=_zero_count(), ema=tree_zeros_like(params, dtype=accumulator_dtype))

    def update_fn(updates, state, params=None):
        del params
        updates = new_ema = tree_update_moment(updates, state.ema, decay, 1)
        count = safe_increment(state.count)
        if debias:
            updates = tree_bias_correction(new_ema, decay, count)
        return updates, EmaState(count=count, ema=tree_cast(new_ema, accumulator_dtype))

    return base.GradientTransformation(init_fn, update_fn)


class ScaleByAdamState(NamedTuple):
    count: Any
    mu: Any
    nu: Any


def scale_by_adam(b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, mu_dtype=None, *, nesterov=False):
    """Adam's rescaling: bias-corrected first moment over the square root of the second."""
    mu_dtype = _canonical_dtype(mu_dtype)

    def init_fn(params):
        return ScaleByAdamState(count=_zero_count(), mu=tree_zeros_like(params, dtype=mu_dtype),
                                nu=tree_zeros_like(params))

    def update_fn(updates, state, params=None):
        del params
        mu = tree_update_moment(updates, state.mu, b1, 1)
        nu = tree_update_moment_per_elem_norm(updates, state.nu, b2, 2)
        count = safe_increment(state.count)
        if nesterov:
            mu_hat = _map(lambda m, g: b1 * m + (1 - b1) * g,
                          tree_bias_correction(mu, b1, safe_increment(count)),
                          tree_bias_correction(updates, b1, count))
        else:
            mu_hat = tree_bias_correction(mu, b1, count)
        nu_hat = tree_bias_correction(nu, b2, count)
        updates = tree_util.tree_map(lambda m, v: None if m is None else m / (jnp.sqrt(v + eps_root) + eps),
                                     mu_hat, nu_hat, is_leaf=_is_none)
        return updates, ScaleByAdamState(count=count, mu=tree_cast(mu, mu_dtype), nu=tree_cast_like(nu, state.nu))

    return base.GradientTransformation(init_fn, update_fn)


class ScaleByRmsState(NamedTuple):
    nu: Any


class ScaleByRmsWithCountState(NamedTuple):
    count: Any
    nu: Any


def scale_by_rms(decay=0.9, eps=1e-8, initial_scale=0.0, eps_in_sqrt=True, bias_correction=False):
    """RMSProp's rescaling: the updates over the root of the moving average of their squares."""
    def init_fn(params):
        nu = tree_full_like(params, initial_scale)
        return ScaleByRmsWithCountState(count=_zero_count(), nu=nu) if bias_correction else ScaleByRmsState(nu=nu)

    def update_fn(updates, state, params=None):
        del params
        nu = tree_update_moment_per_elem_norm(updates, state.nu, decay, 2)
        if bias_correction:
            count = safe_increment(state.count)
            nu_hat = tree_bias_correction(nu, decay, count)
        else:
            nu_hat = nu
        if eps_in_sqrt:
            scaling = _map(lambda n: lax.rsqrt(n + eps), nu_hat)
        else:
            scaling = _map(lambda n: 1 / (jnp.sqrt(n) + eps), nu_hat)
        updates = _map(lambda s, g: s * g, scaling, updates)
        new_state = ScaleByRmsWithCountState(count=count, nu=nu) if bias_correction else ScaleByRmsState(nu=nu)
        return updates, new_state

    return base.GradientTransformation(init_fn, update_fn)


class ScaleByRStdDevState(NamedTuple):
    mu: Any
    nu: Any


class ScaleByRStdDevWithCountState(NamedTuple):
    count: Any
    mu: Any
    nu: Any


def scale_by_stddev(decay=0.9, eps=1e-8, initial_scale=0.0, eps_in_sqrt=True, bias_correction=False):
    """Centred RMSProp's rescaling: the updates over the moving standard deviation."""
    def init_fn(params):
        mu, nu = tree_zeros_like(params), tree_full_like(params, initial_scale)
        if bias_correction:
            return ScaleByRStdDevWithCountState(count=_zero_count(), mu=mu, nu=nu)
        return ScaleByRStdDevState(mu=mu, nu=nu)

    def update_fn(updates, state, params=None):
        del params
        mu = tree_update_moment(updates, state.mu, decay, 1)
        nu = tree_update_moment_per_elem_norm(updates, state.nu, decay, 2)
        if bias_correction:
            count = safe_increment(state.count)
            mu_hat, nu_hat = tree_bias_correction(mu, decay, count), tree_bias_correction(nu, decay, count)
        else:
            mu_hat, nu_hat = mu, nu
        if eps_in_sqrt:
            scaling = _map(lambda m, n: lax.rsqrt(n - jnp.square(m) + eps), mu_hat, nu_hat)
        else:
            scaling = _map(lambda m, n: 1 / (jnp.sqrt(n - jnp.square(m)) + eps), mu_hat, nu_hat)
        updates = _map(lambda s, g: s * g, scaling, updates)
        if bias_correction:
            return updates, ScaleByRStdDevWithCountState(count=count, mu=mu, nu=nu)
        return updates, ScaleByRStdDevState(mu=mu, nu=nu)

    return base.GradientTransformation(init_fn, update_fn)


class ScaleByRssState(NamedTuple):
    sum_of_squares: Any


def scale_by_rss(initial_accumulator_value=0.1, eps=1e-7):
    """Adagrad's rescaling: the updates over the root of the running sum of their squares."""
    def init_fn(params):
        return ScaleByRssState(sum_of_squares=tree_full_like(params, initial_accumulator_value))

    def update_fn(updates, state, params=None):
        del params
        sum_of_squares = _map(lambda g, t: jnp.square(g) + t, updates, state.sum_of_squares)
        inv_sqrt = _map(lambda t: jnp.where(t > 0, lax.rsqrt(t + eps), 0.0), sum_of_squares)
        return _map(lambda s, g: s * g, inv_sqrt, updates), ScaleByRssState(sum_of_squares=sum_of_squares)

    return base.GradientTransformation(init_fn, update_fn)


class ScaleByLionState(NamedTuple):
    count: Any
    mu: Any


def scale_by_lion(b1=0.9, b2=0.99, mu_dtype=None, *, mode="hard", smooth_beta=1.0):
    """Lion's update: the sign of an interpolation of gradient and momentum (tanh or clip for other modes)."""
    mu_dtype = _canonical_dtype(mu_dtype)
    if mode not in ("hard", "smooth", "refined"):
        raise ValueError(f'Unknown lion mode: {mode}. It needs to be one of ["hard", "smooth", "refined"].')

    def init_fn(params):
        return ScaleByLionState(count=_zero_count(), mu=tree_zeros_like(params, dtype=mu_dtype))

    def update_fn(updates, state, params=None):
        del params

        def direction(g, m):
            x = (1.0 - b1) * g + b1 * m
            if mode == "hard":
                return jnp.sign(x)
            if mode == "smooth":
                return jnp.tanh(smooth_beta * x)
            return jnp.where(jnp.abs(x) < 1.0, x, jnp.sign(x))

        new_updates = _map(direction, updates, state.mu)
        mu = tree_cast(tree_update_moment(updates, state.mu, b2, 1), mu_dtype)
        return new_updates, ScaleByLionState(count=safe_increment(state.count), mu=mu)

    return base.GradientTransformation(init_fn, update_fn)


# ---- weight decay and clipping --------------------------------------------------------------

class WeightDecaySchedule(NamedTuple):
    count: Any


def add_decayed_weights(weight_decay=0.0, mask=None):
    """Adds weight_decay * param to each update (decoupled weight decay); mask selects the parameters."""
    def init_fn(params):
        del params
        return WeightDecaySchedule(count=_zero_count()) if callable(weight_decay) else base.EmptyState()

    def update_fn(updates, state, params):
        if params is None:
            raise ValueError(base.NO_PARAMS_MSG)
        new_state = WeightDecaySchedule(safe_increment(state.count)) if callable(weight_decay) else state
        if isinstance(weight_decay, (int, float)) and weight_decay == 0.0:
            return updates, new_state
        s = weight_decay(state.count) if callable(weight_decay) else weight_decay
        updates = tree_util.tree_map(lambda g, p: None if g is None else g + s * p, updates, params,
                                     is_leaf=_is_none)
        return updates, new_state

    tx = base.GradientTransformation(init_fn, update_fn)
    if mask is not None:
        return masked(tx, mask)
    return tx


def clip(max_delta):
    """Clips every update element to [-max_delta, max_delta]."""
    def update_fn(updates, state, params=None):
        del params
        return _map(lambda g: jnp.clip(g, -max_delta, max_delta), updates), state

    return base.GradientTransformation(base.init_empty_state, update_fn)


def clip_by_global_norm(max_norm):
    """Rescales all updates together so their global 2-norm is at most max_norm."""
    def update_fn(updates, state, params=None):
        del params
        g_norm = tree_norm(updates)
        trigger = jnp.squeeze(g_norm < max_norm)
        if trigger.ndim:
            raise ValueError(f"clip_by_global_norm: max_norm must be a scalar, got shape {jnp.shape(max_norm)}")
        updates = _map(lambda t: jnp.where(trigger, t, t / g_norm.astype(t.dtype) * max_norm), updates)
        return updates, state

    return base.GradientTransformation(base.init_empty_state, update_fn)


def clip_by_block_rms(threshold):
    """Rescales each update so its root mean square is at most threshold."""
    def update_fn(updates, state, params=None):
        del params
        return _map(lambda u: u / jnp.maximum(1.0, jnp.sqrt(jnp.mean(jnp.square(u))) / threshold), updates), state

    return base.GradientTransformation(base.init_empty_state, update_fn)


ScaleState = base.EmptyState
AddDecayedWeightsState = base.EmptyState
ClipState = base.EmptyState
ClipByGlobalNormState = base.EmptyState
