"""Batching rules of sort (several operands, some unmapped; num_keys; any dimension) and top_k (the
batch axis leaves the last axis) against a Python loop, eager and jitted."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import xjax.lax as lax
from batch_cases import check_eager_and_jit, mapped, primitive_names, random_array, rng_of, shapes

DTYPES = st.sampled_from(["float32", "int32", "bool"])
SIZE = st.integers(1, 3)
FEW = settings(max_examples=30, deadline=None)


@FEW
@given(st.data(), shapes(min_rank=1), SIZE, st.integers(1, 3), st.booleans())
def test_sort(data, shape, size, n, is_stable):
    dimension = data.draw(st.integers(-len(shape), len(shape) - 1))
    num_keys = data.draw(st.integers(1, n))
    if not is_stable:  # equal keys may come out in any order: only distinct keys compare with the loop
        num_keys, n = 1, 1
    rng = rng_of(data)
    args, axes = [], []
    for i in range(n):
        dtype = data.draw(DTYPES) if is_stable else "float32"
        a, ax = mapped(data, rng, shape, dtype, size, allow_none=i > 0)
        args.append(a)
        axes.append(ax)
    check_eager_and_jit(lambda *ops: lax.sort(ops, dimension, is_stable, num_keys), tuple(args), tuple(axes))


@FEW
@given(st.data(), shapes(min_rank=1), st.sampled_from(["float32", "int32"]), SIZE)
def test_top_k(data, shape, dtype, size):
    k = data.draw(st.integers(0, shape[-1]))
    x, ax = mapped(data, rng_of(data), shape, dtype, size)
    check_eager_and_jit(lambda v: lax.top_k(v, k), (x,), ax)


X = random_array(np.random.default_rng(0), (2, 3, 4), "float32")


def test_sort_keeps_the_batch_axis_and_top_k_moves_it_off_the_last_axis():
    assert primitive_names(lambda v: lax.sort(v, 0), X, in_axes=1, out_axes=1) == ["sort"]
    assert primitive_names(lambda v: lax.top_k(v, 2), X, in_axes=1, out_axes=1) == ["top_k"]
    assert primitive_names(lambda v: lax.top_k(v, 2), X, in_axes=2, out_axes=0) == ["transpose", "top_k"]
    check_eager_and_jit(lambda v: lax.top_k(v, 2), (X,), 2)
