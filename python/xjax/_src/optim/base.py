"""The optax protocol: a GradientTransformation is a pair of pure functions over pytrees.

init(params) -> state and update(updates, state, params=None) -> (updates, state). States are
NamedTuples (pytrees) of arrays, so they pass through jit, grad and tree_map like any value.
"""
from typing import Any, Callable, NamedTuple

from xjax._src import tree_util
import xjax.numpy as jnp

NO_PARAMS_MSG = (
    "You are using a transformation that requires the current value of parameters, but you are not passing "
    "`params` when calling `update`.")

Params = Any
Updates = Any
OptState = Any
Schedule = Callable[[Any], Any]
ScalarOrSchedule = Any


class GradientTransformation(NamedTuple):
    """init(params) -> state; update(updates, state, params=None) -> (new updates, new state)."""

    init: Callable
    update: Callable


class GradientTransformationExtraArgs(GradientTransformation):
    """A GradientTransformation whose update also takes keyword arguments (passed on to inner transforms)."""


class EmptyState(NamedTuple):
    """The state of a stateless transformation."""


def init_empty_state(params):
    """The init of a stateless transformation."""
    del params
    return EmptyState()


def identity():
    """Leaves updates unchanged."""
    def update_fn(updates, state, params=None):
        del params
        return updates, state

    return GradientTransformation(init_empty_state, update_fn)


def set_to_zero():
    """Replaces every update by zeros (freezes the parameters it is applied to)."""
    def update_fn(updates, state, params=None):
        del params
        return tree_util.tree_map(jnp.zeros_like, updates), state

    return GradientTransformation(init_empty_state, update_fn)


def stateless(f):
    """A transformation from f(updates, params) -> updates, with no state."""
    def update_fn(updates, state, params=None):
        del state
        return f(updates, params), EmptyState()

    return GradientTransformation(init_empty_state, update_fn)


def stateless_with_tree_map(f):
    """A transformation applying f(update, param) leaf by leaf (param is None when params are not given)."""
    def update_fn(updates, state, params=None):
        del state
        if params is None:
            return tree_util.tree_map(lambda u: f(u, None), updates), EmptyState()
        return tree_util.tree_map(f, updates, params), EmptyState()

    return GradientTransformation(init_empty_state, update_fn)


def with_extra_args_support(tx):
    """tx as a GradientTransformationExtraArgs (extra keyword arguments are dropped for a plain one)."""
    if isinstance(tx, GradientTransformationExtraArgs):
        return tx

    def update(updates, state, params=None, **extra_args):
        del extra_args
        return tx.update(updates, state, params)

    return GradientTransformationExtraArgs(tx.init, update)


def chain(*transforms):
    """Applies the transformations in order; the state is the tuple of their states."""
    transforms = [with_extra_args_support(t) for t in transforms]

    def init_fn(params):
        return tuple(t.init(params) for t in transforms)

    def update_fn(updates, state, params=None, **extra_args):
        if len(transforms) != len(state):
            raise ValueError("The number of updates and states has to be the same in chain! Make sure you have "
                             "called init first!")
        new_state = []
        for s, t in zip(state, transforms):
            updates, s = t.update(updates, s, params, **extra_args)
            new_state.append(s)
        return updates, tuple(new_state)

    return GradientTransformationExtraArgs(init_fn, update_fn)
