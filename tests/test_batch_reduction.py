"""Batching rules of the reductions, argmax/argmin and the cumulative ops against a Python loop, over
random shapes, reduced axes, batch axes and dtypes, eager and jitted; the batch axis never moves."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xjax.lax as lax
from batch_cases import check_eager_and_jit, mapped, primitive_names, random_array, rng_of, shapes

SIZE = st.integers(1, 3)
FEW = settings(max_examples=15, deadline=None)
# The dtypes each op accepts.
REDUCERS = {"reduce_sum": ("float32", "int32"), "reduce_prod": ("float32", "int32"),
            "reduce_max": ("float32", "int32", "bool"), "reduce_min": ("float32", "int32", "bool"),
            "reduce_and": ("int32", "bool"), "reduce_or": ("int32", "bool"), "reduce_xor": ("int32", "bool")}
CUMULATIVE = {"cumsum": ("float32", "int32"), "cumprod": ("float32", "int32"), "cummax": ("float32", "int32", "bool"),
              "cummin": ("float32", "int32", "bool"), "cumlogsumexp": ("float32",)}


@pytest.mark.parametrize("name, dtype", [(n, d) for n, ds in REDUCERS.items() for d in ds])
@FEW
@given(data=st.data(), shape=shapes(), size=SIZE)
def test_reductions(name, dtype, data, shape, size):
    axes = data.draw(st.lists(st.integers(-len(shape), len(shape) - 1) if shape else st.nothing(),
                              unique_by=lambda a: a % len(shape)))
    x, ax = mapped(data, rng_of(data), shape, dtype, size)
    check_eager_and_jit(lambda v: getattr(lax, name)(v, axes), (x,), ax, tol=1e-5)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", ["float32", "int32", "bool"])
@FEW
@given(data=st.data(), shape=shapes(min_rank=1), size=SIZE)
def test_argmax_argmin(name, dtype, data, shape, size):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x, ax = mapped(data, rng_of(data), shape, dtype, size)
    check_eager_and_jit(lambda v: getattr(lax, name)(v, axis, np.int32), (x,), ax)


@pytest.mark.parametrize("name, dtype", [(n, d) for n, ds in CUMULATIVE.items() for d in ds])
@FEW
@given(data=st.data(), shape=shapes(min_rank=1), size=SIZE, reverse=st.booleans())
def test_cumulative(name, dtype, data, shape, size, reverse):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x, ax = mapped(data, rng_of(data), shape, dtype, size)
    check_eager_and_jit(lambda v: getattr(lax, name)(v, axis, reverse), (x,), ax, tol=1e-5)


X = random_array(np.random.default_rng(0), (2, 3, 4, 5), "float32")


@pytest.mark.parametrize("fun, out_axis", [
    (lambda v: lax.reduce_sum(v, (0, 2)), 0),  # per-example axes 0 and 2: batched axes 0 and 3
    (lambda v: lax.reduce_max(v, (2,)), 1),
    (lambda v: lax.argmin(v, 0, np.int32), 0),
    (lambda v: lax.cumsum(v, 2, True), 1),
    (lambda v: lax.cummax(v, 0), 1),
])
def test_the_batch_axis_stays_in_place(fun, out_axis):
    prims = primitive_names(fun, X, in_axes=1, out_axes=out_axis)
    assert len(prims) == 1 and prims[0] != "transpose", prims
    check_eager_and_jit(fun, (X,), 1, out_axis, tol=1e-5)
