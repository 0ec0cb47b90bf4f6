"""Batching rules of the layout primitives (reshape, squeeze, broadcast_in_dim, transpose, slice, rev,
pad, concatenate) against a Python loop, over random shapes, batch axes and dtypes, eager and jitted."""
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import xjax.lax as lax
from batch_cases import check_eager_and_jit, mapped, primitive_names, random_array, rng_of, shapes

DTYPES = st.sampled_from(["float32", "int32", "bool"])
SIZE = st.integers(1, 3)
FEW = settings(max_examples=25, deadline=None)


@FEW
@given(st.data(), shapes(), DTYPES, SIZE)
def test_reshape(data, shape, dtype, size):
    n = int(np.prod(shape))
    new = data.draw(st.sampled_from([(n,), (1,) + shape, shape + (1,), (n, 1), tuple(reversed(shape))]))
    x, ax = mapped(data, rng_of(data), shape, dtype, size)
    check_eager_and_jit(lambda v: lax.reshape(v, new), (x,), ax)


@FEW
@given(st.data(), shapes(min_rank=2), SIZE)
def test_reshape_with_dimensions(data, shape, size):
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    x, ax = mapped(data, rng_of(data), shape, "float32", size)
    check_eager_and_jit(lambda v: lax.reshape(v, (int(np.prod(shape)),), dimensions=perm), (x,), ax)


@FEW
@given(st.data(), shapes(min_rank=1, min_side=1, max_side=2), DTYPES, SIZE)
def test_squeeze(data, shape, dtype, size):
    ones = [i for i, s in enumerate(shape) if s == 1]
    assume(ones)
    dims = data.draw(st.lists(st.sampled_from(ones), min_size=1, unique=True))
    x, ax = mapped(data, rng_of(data), shape, dtype, size)
    check_eager_and_jit(lambda v: lax.squeeze(v, dims), (x,), ax)


@FEW
@given(st.data(), shapes(max_side=2), DTYPES, SIZE)
def test_broadcast_in_dim(data, shape, dtype, size):
    extra = data.draw(st.integers(0, 2))
    positions = sorted(data.draw(st.lists(st.integers(0, len(shape) + extra - 1), min_size=len(shape),
                                          max_size=len(shape), unique=True))) if shape else []
    out = [data.draw(st.integers(1, 3)) for _ in range(len(shape) + extra)]
    for i, p in enumerate(positions):  # an operand dim keeps its size, or broadcasts from 1
        out[p] = shape[i] if shape[i] != 1 else data.draw(st.integers(1, 3))
    x, ax = mapped(data, rng_of(data), shape, dtype, size)
    check_eager_and_jit(lambda v: lax.broadcast_in_dim(v, tuple(out), tuple(positions)), (x,), ax)


@FEW
@given(st.data(), shapes(), DTYPES, SIZE)
def test_expand_dims(data, shape, dtype, size):
    dims = data.draw(st.lists(st.integers(-len(shape) - 1, len(shape)), min_size=1, max_size=1))
    x, ax = mapped(data, rng_of(data), shape, dtype, size)
    check_eager_and_jit(lambda v: lax.expand_dims(v, dims), (x,), ax)


@FEW
@given(st.data(), shapes(), DTYPES, SIZE)
def test_transpose(data, shape, dtype, size):
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    x, ax = mapped(data, rng_of(data), shape, dtype, size)
    check_eager_and_jit(lambda v: lax.transpose(v, perm), (x,), ax)


@FEW
@given(st.data(), shapes(min_rank=1), DTYPES, SIZE)
def test_slice(data, shape, dtype, size):
    start = [data.draw(st.integers(0, s)) for s in shape]
    limit = [data.draw(st.integers(b, s)) for b, s in zip(start, shape)]
    strides = data.draw(st.none() | st.just([data.draw(st.integers(1, 3)) for _ in shape]))
    x, ax = mapped(data, rng_of(data), shape, dtype, size)
    check_eager_and_jit(lambda v: lax.slice(v, start, limit, strides), (x,), ax)


@FEW
@given(st.data(), shapes(min_rank=1), DTYPES, SIZE)
def test_rev(data, shape, dtype, size):
    dims = data.draw(st.lists(st.integers(0, len(shape) - 1), unique=True))
    x, ax = mapped(data, rng_of(data), shape, dtype, size)
    check_eager_and_jit(lambda v: lax.rev(v, dims), (x,), ax)


@FEW
@given(st.data(), shapes(min_rank=1), DTYPES, SIZE)
def test_pad_with_a_mapped_or_unmapped_padding_value(data, shape, dtype, size):
    config = [(data.draw(st.integers(-1, 2)), data.draw(st.integers(-1, 2)), data.draw(st.integers(0, 2)))
              for _ in shape]
    assume(all(lo + hi + s + (s - 1) * i >= 0 for (lo, hi, i), s in zip(config, shape)))
    rng = rng_of(data)
    x, xa = mapped(data, rng, shape, dtype, size, allow_none=True)
    v, va = mapped(data, rng, (), dtype, size, allow_none=xa is not None)
    check_eager_and_jit(lambda a, b: lax.pad(a, b, config), (x, v), (xa, va))


@FEW
@given(st.data(), shapes(min_rank=1), DTYPES, SIZE, st.integers(2, 3))
def test_concatenate_mixes_mapped_and_unmapped_operands(data, shape, dtype, size, n):
    dim = data.draw(st.integers(0, len(shape) - 1))
    rng = rng_of(data)
    args, axes = [], []
    for i in range(n):
        s = shape[:dim] + (data.draw(st.integers(0, 3)),) + shape[dim + 1:]
        a, ax = mapped(data, rng, s, dtype, size, allow_none=i > 0)
        args.append(a)
        axes.append(ax)
    check_eager_and_jit(lambda *ops: lax.concatenate(ops, dim), tuple(args), tuple(axes))


X = random_array(np.random.default_rng(0), (2, 3, 4, 5), "float32")


@pytest.mark.parametrize("name, fun, want", [
    ("squeeze", lambda v: lax.squeeze(lax.expand_dims(v, (0,)), (0,)), ["transpose", "broadcast_in_dim", "squeeze"]),
    ("broadcast_in_dim", lambda v: lax.broadcast_in_dim(v, (2, 6, 4, 5), (0, 2, 3)), ["transpose", "broadcast_in_dim"]),
    ("transpose", lambda v: lax.transpose(v, (2, 0, 1)), ["transpose"]),
    ("reshape", lambda v: lax.reshape(v, (2, 20)), ["transpose", "reshape"]),
])
def test_layout_ops_batch_with_the_batch_axis_in_front(name, fun, want):
    """As JAX's rules: squeeze, broadcast_in_dim, reshape move the batch axis to the front (one transpose)
    and leave it there; transpose folds it into its permutation."""
    prims = primitive_names(fun, X, in_axes=1)
    assert prims == want, prims
    check_eager_and_jit(fun, (X,), 1)


@pytest.mark.parametrize("name, fun, out_axis", [
    ("slice", lambda v: lax.slice(v, (0, 1, 1), (2, 3, 5), (1, 2, 1)), 1),
    ("rev", lambda v: lax.rev(v, (0, 2)), 1),
    ("pad", lambda v: lax.pad(v, 0.0, ((1, 0, 1), (0, 2, 0), (1, 1, 0))), 1),
    ("concatenate", lambda v: lax.concatenate([v, v], 2), 1),
])
def test_the_batch_axis_stays_in_place(name, fun, out_axis):
    prims = primitive_names(fun, X, in_axes=1, out_axes=out_axis)
    assert name in prims and prims.count("transpose") == (name == "transpose"), prims
    check_eager_and_jit(fun, (X,), 1, out_axis)


def test_reshape_moves_the_batch_axis_when_the_prefix_changes():
    prims = primitive_names(lambda v: lax.reshape(v, (8, 5)), X, in_axes=1)
    assert prims == ["transpose", "reshape"], prims
    check_eager_and_jit(lambda v: lax.reshape(v, (8, 5)), (X,), 1)
