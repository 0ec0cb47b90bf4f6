"""Hypothesis building blocks for batching-rule tests: random per-example shapes, and arguments
mapped along a random axis (negative ones included) or not mapped at all."""
import numpy as np
from hypothesis import strategies as st

from batching_util import check_batch


def shapes(min_rank=0, max_rank=3, min_side=1, max_side=4):
    return st.lists(st.integers(min_side, max_side), min_size=min_rank, max_size=max_rank).map(tuple)


def random_array(rng, shape, dtype):
    """Values with ties (small integers, booleans) so that order-sensitive rules are exercised."""
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype == "int32":
        return rng.integers(-4, 5, shape).astype(np.int32)
    return rng.standard_normal(shape).astype(np.float32)


def rng_of(data):
    return np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))


def mapped(data, rng, shape, dtype, size, allow_none=False):
    """(array, in_axis): an argument whose examples have `shape`, stacked along a drawn axis."""
    choices = list(range(-len(shape) - 1, len(shape) + 1)) + ([None] if allow_none else [])
    axis = data.draw(st.sampled_from(choices), label="in_axis")
    if axis is None:
        return random_array(rng, shape, dtype), None
    full = list(shape)
    full.insert(axis % (len(shape) + 1), size)
    return random_array(rng, tuple(full), dtype), axis


def check_eager_and_jit(fun, args, in_axes, out_axes=0, tol=1e-6):
    for jit in (False, True):
        check_batch(fun, args, in_axes, out_axes, rtol=tol, atol=tol, jit=jit)


def primitive_names(fun, *args, **vmap_kwargs):
    """The primitives of vmap(fun)'s jaxpr (to assert that a rule moved no axis)."""
    import xjax

    jaxpr = xjax.make_jaxpr(xjax.vmap(fun, **vmap_kwargs))(*args)
    return [e.primitive.name for e in jaxpr.jaxpr.eqns]
