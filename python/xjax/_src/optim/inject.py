"""inject_hyperparams: an optimizer's numeric hyperparameters moved into its state.

They can then be read and changed between steps (state.hyperparams['learning_rate']), and a
schedule passed for one is evaluated at the step count and stored there.
"""
import functools
import inspect
from typing import Any, NamedTuple

import numpy as np

from xjax._src import core, dtypes
from xjax._src.array import Array
from xjax._src.optim import base
from xjax._src.optim.tree_math import safe_increment, tree_dtype_highest
import xjax.numpy as jnp


class InjectHyperparamsState(NamedTuple):
    count: Any
    hyperparams: Any
    inner_state: Any


class InjectStatefulHyperparamsState(NamedTuple):
    count: Any
    hyperparams: Any
    hyperparams_states: Any
    inner_state: Any


class WrappedScheduleState(NamedTuple):
    count: Any


class WrappedSchedule:
    """A schedule of the step count, given the interface of a stateful schedule (init, update, call)."""

    def __init__(self, schedule_fn):
        self.schedule_fn = schedule_fn

    def init(self):
        return WrappedScheduleState(count=jnp.zeros([], jnp.int32))

    def update(self, state, **extra_args):
        del extra_args
        return WrappedScheduleState(count=safe_increment(state.count))

    def __call__(self, state, **extra_args):
        del extra_args
        return self.schedule_fn(state.count)


def _is_stateful_schedule(v):
    return all(callable(getattr(v, name, None)) for name in ("init", "update", "__call__"))


def _convert_floats(x, dtype):
    """Floating values (and weakly typed arrays) as `dtype`; strongly typed arrays and integers unchanged."""
    if isinstance(x, (Array, core.Tracer)) and not getattr(x, "weak_type", False):
        return x
    current = x.dtype if hasattr(x, "dtype") else type(x)
    if dtypes.issubdtype(current, np.floating):
        return jnp.asarray(x, dtype=dtype)
    return x


def inject_hyperparams(inner_factory, static_args=(), hyperparam_dtype=None):
    """Wraps an optimizer factory so its numeric hyperparameters live in the optimizer state.

    static_args names arguments kept as Python values (booleans always are).
    """
    static_args = {static_args} if isinstance(static_args, str) else set(static_args)
    signature = inspect.signature(inner_factory)
    if not static_args.issubset(signature.parameters):
        raise ValueError("`static_args` must specify a subset of `inner_factory`'s parameters. Given "
                         f"`static_args`: {static_args}. `inner_factory` parameters: "
                         f"{set(signature.parameters.keys())}")

    @functools.wraps(inner_factory)
    def wrapped(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        schedules, numeric, other = {}, {}, {}
        for name, value in bound.arguments.items():
            if name in static_args or isinstance(value, bool):
                other[name] = value
            elif _is_stateful_schedule(value) and not isinstance(value, (Array, np.ndarray)):
                schedules[name] = value
            elif callable(value):
                schedules[name] = WrappedSchedule(value)
            elif isinstance(value, (int, float, Array, np.ndarray, core.Tracer)):
                numeric[name] = value
            else:
                other[name] = value

        def hp_dtype(params):
            return tree_dtype_highest(params) if hyperparam_dtype is None else hyperparam_dtype

        def init_fn(params):
            dtype = hp_dtype(params)
            hparams = {k: jnp.asarray(_convert_floats(v, dtype)) for k, v in numeric.items()}
            sched_states = {k: f.init() for k, f in schedules.items()}
            hparams.update({k: _convert_floats(f(sched_states[k]), dtype) for k, f in schedules.items()})
            return InjectStatefulHyperparamsState(count=jnp.zeros([], jnp.int32), hyperparams=hparams,
                                                  hyperparams_states=sched_states,
                                                  inner_state=inner_factory(**other, **hparams).init(params))

        def update_fn(updates, state, params=None, **extra_args):
            dtype = hp_dtype(params)
            hparams = {k: _convert_floats(v, dtype) for k, v in state.hyperparams.items()}
            hparams.update({k: _convert_floats(f(state.hyperparams_states[k], **extra_args), dtype)
                            for k, f in schedules.items()})
            sched_states = {k: f.update(state.hyperparams_states[k], **extra_args) for k, f in schedules.items()}
            inner = base.with_extra_args_support(inner_factory(**other, **hparams))
            updates, inner_state = inner.update(updates, state.inner_state, params, **extra_args)
            return updates, InjectStatefulHyperparamsState(count=safe_increment(state.count), hyperparams=hparams,
                                                           hyperparams_states=sched_states, inner_state=inner_state)

        return base.GradientTransformationExtraArgs(init_fn, update_fn)

    return wrapped


def inject_stateful_hyperparams(inner_factory, static_args=(), hyperparam_dtype=None):
    """The same as inject_hyperparams (optax keeps this older name)."""
    return inject_hyperparams(inner_factory, static_args, hyperparam_dtype)
