"""NumPy indexing of xjax arrays (__getitem__, .at[], take, take_along_axis) against NumPy, and JAX's
out-of-bounds rules recorded from JAX."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xjax.numpy as jnp

A = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
V = np.arange(5, dtype=np.int32)
F = np.arange(1.0, 6.0, dtype=np.float32)


def check(got, want, dtype=None):
    got_np = np.asarray(got)
    want = np.asarray(want)
    assert got_np.shape == want.shape, (got_np.shape, want.shape)
    np.testing.assert_array_equal(got_np, want)
    if dtype is not None:
        assert got.dtype == np.dtype(dtype)


BASIC = [
    1, -1, slice(None), slice(1, None), slice(None, None, -1), slice(None, None, 2), slice(-1, 0, -2),
    (0, 1), (1, -1, 2), (slice(None), 1), (Ellipsis, 1), (None, 0), (0, None, slice(1, 3)), (Ellipsis,),
    (slice(None), None, slice(None, None, -1)), (1, Ellipsis, None), (), (slice(5, 1),),
    (slice(None), slice(None), slice(3, 0, -1)), (np.int64(1), np.int32(2)), True, False, (0, False, 1),
]


@pytest.mark.parametrize("idx", BASIC, ids=[repr(i) for i in BASIC])
def test_basic_indexing(idx):
    check(jnp.asarray(A)[idx], A[idx])


ADVANCED = [
    np.array([1, 0, 1]), (slice(None), np.array([0, 2])), (slice(None), [0, 1], 0), (0, slice(None), [0, 1]),
    ([0, 1], slice(None), [0, 1]), (slice(None), None, [0, 1], [1, 2]), ([0, 1], None, [1, 2]),
    (np.array([[0], [1]]), slice(None), np.array([1, 2, 3])), (Ellipsis, np.array([3, 0])),
    (np.array([1, -1]), slice(None, None, -1)), (slice(None), slice(None, None, 2), np.array([[1, 2]])),
    (np.array([0, 1]), np.array([2, 0]), np.array([3, 1])), (1, np.array([[0, 1], [2, 2]])),
    (np.array([], dtype=np.int32),), (slice(None), np.array([0, 2]), slice(1, None)),
    (Ellipsis, np.array([True, False, True, False])), (0, np.array([True, False, True]), Ellipsis),
    (None, Ellipsis, np.array([[True, False, True, False]] * 3)),
]


@pytest.mark.parametrize("idx", ADVANCED, ids=[repr(i) for i in ADVANCED])
def test_advanced_indexing_matches_numpy(idx):
    check(jnp.asarray(A)[idx], A[idx])


def test_jax_array_indices():
    x = jnp.asarray(A)
    check(x[jnp.asarray([1, 0])], A[[1, 0]])
    check(x[:, jnp.asarray([[0, 2]]), jnp.asarray(1)], A[:, [[0, 2]], 1])
    check(x[jnp.asarray(1)], A[1])
    check(x[jnp.asarray(-1), 1], A[-1, 1])
    check(x[0, jnp.asarray(2)], A[0, 2])


def test_boolean_masks():
    x = jnp.asarray(A)
    check(x[x > 10], A[A > 10])
    check(x[np.array([True, False])], A[np.array([True, False])])
    check(x[:, jnp.asarray([True, False, True])], A[:, [True, False, True]])
    m = A[0] % 3 == 0
    check(x[0][jnp.asarray(m)], A[0][m])
    check(x[1, jnp.asarray(m)], A[1, m])
    assert x[jnp.asarray(True)].shape == (1, 2, 3, 4)
    with pytest.raises(IndexError, match="boolean index did not match shape of indexed array in index 0"):
        x[jnp.asarray([True, False, True])]


# Recorded from JAX 0.10.2: retrieval clamps out-of-bounds indices; negative indices wrap once.
def test_out_of_bounds_retrieval_from_jax():
    x = jnp.arange(5)
    assert repr(x[10]) == "Array(4, dtype=int32)"
    assert repr(x[-6]) == "Array(0, dtype=int32)"
    assert repr(x[jnp.asarray(10)]) == "Array(4, dtype=int32)"
    assert repr(x[jnp.asarray(-10)]) == "Array(0, dtype=int32)"
    assert repr(x[jnp.asarray([10, -10, -1])]) == "Array([4, 0, 4], dtype=int32)"
    assert repr(x[np.array([10, -10, -1])]) == "Array([4, 0, 4], dtype=int32)"
    assert repr(x.at[10].get()) == "Array(4, dtype=int32)"
    assert repr(x.at[10].get(mode="fill")) == "Array(-2147483648, dtype=int32)"
    f = jnp.arange(5.0)
    assert repr(f.at[10].get(mode="fill")) == "Array(nan, dtype=float32)"
    assert repr(f.at[-10].get(mode="fill")) == "Array(nan, dtype=float32)"
    assert repr(jnp.arange(3, dtype=jnp.uint8).at[5].get(mode="fill")) == "Array(255, dtype=uint8)"
    assert repr(jnp.asarray([True]).at[5].get(mode="fill")) == "Array(True, dtype=bool)"
    assert repr(f.at[jnp.asarray([1, 9])].get(mode="fill", fill_value=-1.0)) == "Array([ 1., -1.], dtype=float32)"


def test_index_errors_match_jax():
    x = jnp.arange(5)
    with pytest.raises(TypeError, match="Indexer must have integer or boolean type, got indexer with type float64"):
        x[1.0]
    with pytest.raises(TypeError, match="Indexer must have integer or boolean type, got indexer with type float32"):
        x[jnp.asarray([1.0])]
    with pytest.raises(IndexError, match="Too many indices: array is 1-dimensional, but 2 were indexed"):
        x[0, 0]
    with pytest.raises(IndexError, match="Too many indices: array is 2-dimensional, but 3 were indexed"):
        jnp.zeros((2, 2))[0, 0, 0]
    with pytest.raises(IndexError, match="an index can only have a single ellipsis"):
        x[..., ...]
    with pytest.raises(TypeError, match="JAX arrays are immutable"):
        x[0] = 1


def test_weak_type_kept_by_indexing():
    wa = jnp.full(3, 2.0)
    assert wa[0].weak_type and wa[jnp.asarray([0])].weak_type
    assert repr(wa.at[0].set(1.0)) == "Array([1., 2., 2.], dtype=float32, weak_type=True)"


def test_at_updates_from_jax():
    x = jnp.arange(5)
    assert repr(x.at[10].set(9)) == "Array([0, 1, 2, 3, 4], dtype=int32)"
    assert repr(x.at[-1].set(9)) == "Array([0, 1, 2, 3, 9], dtype=int32)"
    assert repr(x.at[-6].set(9)) == "Array([0, 1, 2, 3, 4], dtype=int32)"
    assert repr(x.at[jnp.asarray([0, 0, 1])].add(1)) == "Array([2, 2, 2, 3, 4], dtype=int32)"
    assert repr(x.at[1:3].set(2.7)) == "Array([0, 2, 2, 3, 4], dtype=int32)"
    assert repr(x.at[::2].multiply(3)) == "Array([ 0,  1,  6,  3, 12], dtype=int32)"
    f = jnp.arange(1.0, 6.0)
    assert repr(f.at[jnp.asarray([0, 0])].divide(2)) == "Array([0.25, 2.  , 3.  , 4.  , 5.  ], dtype=float32)"
    assert repr(f.at[jnp.asarray([0, 0])].multiply(3)) == "Array([9., 2., 3., 4., 5.], dtype=float32)"
    assert repr(x.at[0].divide(2)) == "Array([0., 1., 2., 3., 4.], dtype=float32)"
    assert repr(x.at[0].power(2)) == "Array([0, 1, 2, 3, 4], dtype=int32)"
    assert repr(x.at[jnp.asarray([0, 0])].min(-1)) == "Array([-1,  1,  2,  3,  4], dtype=int32)"
    assert repr(x.at[jnp.asarray([0, 0])].max(9)) == "Array([9, 1, 2, 3, 4], dtype=int32)"
    assert repr(x.at[1].subtract(5)) == "Array([ 0, -4,  2,  3,  4], dtype=int32)"
    assert repr(x.at[1].apply(lambda v: v * 10)) == "Array([ 0, 10,  2,  3,  4], dtype=int32)"
    assert repr(x.at[10].set(9, mode="clip")) == "Array([0, 1, 2, 3, 9], dtype=int32)"
    assert repr(x.at[10].set(9, mode="promise_in_bounds")) == "Array([0, 1, 2, 3, 4], dtype=int32)"
    m = jnp.arange(12).reshape(3, 4)
    assert repr(m.at[:, 1].set(jnp.asarray([1, 2, 3]))) == (
        "Array([[ 0,  1,  2,  3],\n       [ 4,  2,  6,  7],\n       [ 8,  3, 10, 11]], dtype=int32)")
    assert repr(x.at[x > 2].set(0)) == "Array([0, 1, 2, 0, 0], dtype=int32)"


SCATTER_IDX = [
    0, -1, slice(1, 3), slice(None, None, -1), slice(None, None, 2), (slice(None), 1), (1, slice(None), 2),
    (Ellipsis, np.array([0, 2])), (np.array([1, 0]), np.array([2, 2])), (slice(None), np.array([[0], [2]]), 1),
    (None, 1), (0, slice(3, 0, -2)),
]


@pytest.mark.parametrize("idx", SCATTER_IDX, ids=[repr(i) for i in SCATTER_IDX])
def test_at_set_and_add_match_numpy(idx):
    x = jnp.asarray(A)
    shape = A[idx].shape
    vals = (np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape) + 100)
    want = A.copy()
    want[idx] = vals
    check(x.at[idx].set(jnp.asarray(vals)), want)
    want = A.copy()
    want[idx] = A[idx] + vals  # the indices are unique
    check(x.at[idx].add(jnp.asarray(vals)), want)
    want = A.copy()
    want[idx] = 7
    check(x.at[idx].set(7), want)


def test_at_repeated_indices_accumulate():
    x = jnp.zeros(4, dtype=jnp.int32)
    idx = np.array([0, 1, 1, 3, 3, 3])
    want = np.zeros(4, np.int32)
    np.add.at(want, idx, 1)
    check(x.at[idx].add(1), want)
    check(jnp.ones(4).at[idx].multiply(2.0), np.array([2.0, 4.0, 1.0, 8.0]))


def test_take():
    x = jnp.arange(5)
    assert repr(jnp.take(x, jnp.asarray([0, 10, -1]))) == "Array([          0, -2147483648,           4], dtype=int32)"
    assert repr(jnp.take(x, jnp.asarray([0, 10, -1]), mode="clip")) == "Array([0, 4, 0], dtype=int32)"
    assert repr(jnp.take(x, jnp.asarray([0, 10, -1]), mode="wrap")) == "Array([0, 0, 4], dtype=int32)"
    assert repr(jnp.take(jnp.arange(5.0), jnp.asarray([0, 10, -1]))) == "Array([ 0., nan,  4.], dtype=float32)"
    check(jnp.take(jnp.asarray(A), jnp.asarray([0, 2]), axis=1), np.take(A, [0, 2], axis=1))
    check(jnp.take(jnp.asarray(A), jnp.asarray([[0, 1], [3, 2]]), axis=-1), np.take(A, [[0, 1], [3, 2]], axis=-1))
    check(jnp.take(jnp.asarray(A), jnp.asarray([5, 23])), np.take(A, [5, 23]))
    check(jnp.asarray(A).take(jnp.asarray([0, 5])), A.take([0, 5]))
    check(jnp.take(jnp.asarray(A), 1, axis=0), np.take(A, 1, axis=0))


def test_take_along_axis():
    m = jnp.arange(12).reshape(3, 4)
    assert repr(jnp.take_along_axis(m, jnp.asarray([[0], [1], [5]]), axis=1)) == (
        "Array([[          0],\n       [          5],\n       [-2147483648]], dtype=int32)")
    idx = np.argsort(-A, axis=1)
    check(jnp.take_along_axis(jnp.asarray(A), jnp.asarray(idx), axis=1), np.take_along_axis(A, idx, axis=1))
    idx = np.array([[[0]], [[2]]])
    check(jnp.take_along_axis(jnp.asarray(A), jnp.asarray(idx), axis=2), np.take_along_axis(A, idx, axis=2))
    check(jnp.take_along_axis(jnp.asarray(V), jnp.asarray([4, 0]), axis=None), V[[4, 0]])


def test_iteration_and_unpacking():
    theta = jnp.asarray([1.0, 2.0])
    w, b = theta
    assert float(w) == 1.0 and float(b) == 2.0
    assert [int(v) for v in jnp.arange(3)] == [0, 1, 2]
    with pytest.raises(TypeError):
        iter(jnp.asarray(1.0))


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_slicing_hypothesis(data):
    shape = tuple(data.draw(st.lists(st.integers(0, 4), min_size=1, max_size=3)))
    a = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    idx = []
    for n in shape:
        kind = data.draw(st.sampled_from(["slice", "int", "arr"] if n else ["slice"]))
        if kind == "slice":
            start = data.draw(st.none() | st.integers(-n - 1, n + 1))
            stop = data.draw(st.none() | st.integers(-n - 1, n + 1))
            step = data.draw(st.none() | st.sampled_from([-3, -2, -1, 1, 2, 3]))
            idx.append(slice(start, stop, step))
        elif kind == "int":
            idx.append(data.draw(st.integers(-n, n - 1)))
        else:
            idx.append(np.array(data.draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=3))))
    arrays = [i for i in idx if isinstance(i, np.ndarray)]
    if len({len(i) for i in arrays}) > 1:
        return
    idx = tuple(idx)
    check(jnp.asarray(a)[idx], a[idx])
