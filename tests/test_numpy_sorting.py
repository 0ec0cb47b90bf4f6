"""xjax.numpy sorting, searching, nonzero, unique and counting against NumPy (JAX's values where they differ)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xjax.numpy as jnp

R = np.random.default_rng(1)
M = R.integers(-5, 5, (4, 6)).astype(np.int32)
F = np.array([3.0, np.nan, -1.0, 2.0, np.inf, -np.inf, 2.0], np.float32)


def check(got, want, dtype=None):
    got_np = np.asarray(got)
    want = np.asarray(want)
    assert got_np.shape == want.shape, (got_np.shape, want.shape)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got_np, want, rtol=1e-6)
    else:
        np.testing.assert_array_equal(got_np, want)
    if dtype is not None:
        assert got.dtype == np.dtype(dtype)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_sort_argsort(axis):
    check(jnp.sort(jnp.asarray(M), axis=axis), np.sort(M, axis=axis))
    check(jnp.argsort(jnp.asarray(M), axis=axis), np.argsort(M, axis=axis, kind="stable"), np.int32)
    check(jnp.sort(jnp.asarray(M), axis=axis, descending=True), -np.sort(-M, axis=axis))


def test_sort_nan_and_descending_from_jax():
    check(jnp.sort(jnp.asarray(F)), np.sort(F))
    check(jnp.argsort(jnp.asarray(F)), np.argsort(F, kind="stable"))
    assert repr(jnp.argsort(jnp.asarray([3, 1, 2, 1]))) == "Array([1, 3, 2, 0], dtype=int32)"
    assert repr(jnp.argsort(jnp.asarray([3, 1, 2, 1]), descending=True)) == "Array([0, 2, 1, 3], dtype=int32)"
    x = jnp.asarray(M)
    check(x.sort(axis=0), np.sort(M, axis=0))
    check(x.argsort(), np.argsort(M, kind="stable"))


def test_lexsort_partition():
    a, b = np.array([1, 2, 1, 0]), np.array([0, 0, 1, 1])
    check(jnp.lexsort((jnp.asarray(a), jnp.asarray(b))), np.lexsort((a, b)))
    check(jnp.lexsort((jnp.asarray(M[0]), jnp.asarray(M[1]), jnp.asarray(M[2]))), np.lexsort((M[0], M[1], M[2])))
    assert repr(jnp.partition(jnp.asarray([3, 1, 2, 5, 4]), 2)) == "Array([1, 2, 3, 5, 4], dtype=int32)"
    assert repr(jnp.argpartition(jnp.asarray([3, 1, 2, 5, 4]), 2)) == "Array([1, 2, 0, 3, 4], dtype=int32)"
    p = np.asarray(jnp.partition(jnp.asarray(M), 3, axis=1))
    ref = np.sort(M, axis=1)
    np.testing.assert_array_equal(p[:, 3], ref[:, 3])
    assert (p[:, :3] <= p[:, 3:4]).all() and (p[:, 4:] >= p[:, 3:4]).all()


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_digitize(side):
    a = np.array([1.0, 2.0, 2.0, 3.0, np.nan], np.float32)
    v = np.array([[0.0, 2.0], [5.0, np.nan]], np.float32)
    check(jnp.searchsorted(jnp.asarray(a), jnp.asarray(v), side=side), np.searchsorted(a, v, side=side), np.int32)
    assert repr(jnp.searchsorted(jnp.asarray([1, 2, 3]), 2)) == "Array(1, dtype=int32)"
    bins = np.array([0.0, 1.0, 2.5, 4.0])
    x = np.array([-1.0, 0.0, 1.0, 2.0, 4.0, 5.0])
    for right in (False, True):
        check(jnp.digitize(jnp.asarray(x), jnp.asarray(bins), right=right), np.digitize(x, bins, right=right))
        check(jnp.digitize(jnp.asarray(x), jnp.asarray(bins[::-1].copy()), right=right),
              np.digitize(x, bins[::-1], right=right))
    s = np.array([30, 10, 20])
    check(jnp.searchsorted(jnp.asarray(s), jnp.asarray([15, 25]), sorter=jnp.asarray(np.argsort(s))),
          np.searchsorted(s, [15, 25], sorter=np.argsort(s)))


def test_nonzero_family():
    m = M > 1
    for got, want in zip(jnp.nonzero(jnp.asarray(m)), np.nonzero(m)):
        check(got, want, np.int32)
    check(jnp.argwhere(jnp.asarray(M)), np.argwhere(M))
    check(jnp.flatnonzero(jnp.asarray(M)), np.flatnonzero(M))
    check(jnp.asarray(M).nonzero()[1], M.nonzero()[1])
    got = jnp.nonzero(jnp.asarray([0, 3, 0, 4]), size=4, fill_value=-1)
    check(got[0], [1, 3, -1, -1])
    got = jnp.nonzero(jnp.asarray([0, 3, 0, 4]), size=1)
    check(got[0], [1])
    check(jnp.nonzero(jnp.zeros((0, 2)))[1], np.zeros(0, np.int64))
    with pytest.raises(ValueError, match="Calling nonzero on 0d arrays is not allowed"):
        jnp.nonzero(jnp.asarray(1))
    assert jnp.argwhere(jnp.asarray(3)).shape == (1, 0)


def test_unique():
    x = np.array([3, 1, 1, 2, 3, 3], np.int32)
    check(jnp.unique(jnp.asarray(x)), np.unique(x))
    for got, want in zip(jnp.unique(jnp.asarray(x), return_index=True, return_inverse=True, return_counts=True),
                         np.unique(x, return_index=True, return_inverse=True, return_counts=True)):
        check(got, want)
    assert repr(jnp.unique(jnp.asarray([3, 1, 1, 2]), return_counts=True, return_index=True,
                           return_inverse=True)) == (
        "(Array([1, 2, 3], dtype=int32), Array([1, 3, 0], dtype=int32), Array([2, 0, 0, 1], dtype=int32), "
        "Array([2, 1, 1], dtype=int32))")
    check(jnp.unique(jnp.asarray(M)), np.unique(M))
    _, inv = jnp.unique(jnp.asarray(M), return_inverse=True)
    check(inv, np.unique(M, return_inverse=True)[1])
    rows = np.array([[1, 2], [1, 2], [0, 3]], np.int32)
    check(jnp.unique(jnp.asarray(rows), axis=0), np.unique(rows, axis=0))
    for got, want in zip(jnp.unique(jnp.asarray(rows), axis=0, return_counts=True, return_index=True),
                         np.unique(rows, axis=0, return_counts=True, return_index=True)):
        check(got, want)
    f = np.array([2.0, np.nan, 1.0, np.nan], np.float32)
    check(jnp.unique(jnp.asarray(f)), np.unique(f))
    check(jnp.unique(jnp.asarray(x), size=5, fill_value=0), [1, 2, 3, 0, 0])
    vals, counts = jnp.unique_counts(jnp.asarray(x))
    check(counts, [2, 1, 3])
    check(jnp.unique_values(jnp.asarray(x)), [1, 2, 3])


def test_bincount_histogram():
    assert repr(jnp.bincount(jnp.asarray([0, 1, 1, 3]))) == "Array([1, 2, 0, 1], dtype=int32)"
    assert repr(jnp.bincount(jnp.asarray([0, 1, 1, 3]), length=6)) == "Array([1, 2, 0, 1, 0, 0], dtype=int32)"
    assert repr(jnp.bincount(jnp.asarray([0, 1, 1]), weights=jnp.asarray([0.5, 1., 1.]))) == (
        "Array([0.5, 2. ], dtype=float32)")
    assert repr(jnp.bincount(jnp.asarray([-1, -1, 1, 3, 10]), length=5)) == "Array([2, 1, 0, 1, 0], dtype=int32)"
    check(jnp.bincount(jnp.asarray([2, 2]), minlength=5), np.bincount([2, 2], minlength=5))
    data = R.standard_normal(50).astype(np.float32)
    counts, edges = jnp.histogram(jnp.asarray(data), bins=5)
    wc, we = np.histogram(data, bins=5)
    check(counts, wc)
    np.testing.assert_allclose(np.asarray(edges), we, rtol=1e-5, atol=1e-6)
    counts, _ = jnp.histogram(jnp.asarray(data), bins=jnp.asarray([-1.0, 0.0, 1.0]))
    check(counts, np.histogram(data, bins=[-1.0, 0.0, 1.0])[0])


def test_select_choose_compress():
    x = jnp.arange(5)
    assert repr(jnp.select([x > 3, x > 1], [x, -x], 99)) == "Array([99, 99, -2, -3,  4], dtype=int32)"
    assert repr(jnp.choose(jnp.asarray([0, 1, 0]), [jnp.asarray([1, 2, 3]), jnp.asarray([4, 5, 6])])) == (
        "Array([1, 5, 3], dtype=int32)")
    check(jnp.choose(jnp.asarray([0, 3, -1]), [jnp.asarray([1, 2, 3]), jnp.asarray([4, 5, 6])], mode="clip"),
          np.choose([0, 3, -1], [[1, 2, 3], [4, 5, 6]], mode="clip"))
    check(jnp.choose(jnp.asarray([0, 3, -1]), [jnp.asarray([1, 2, 3]), jnp.asarray([4, 5, 6])], mode="wrap"),
          np.choose([0, 3, -1], [[1, 2, 3], [4, 5, 6]], mode="wrap"))
    with pytest.raises(ValueError, match="invalid entry in choice array"):
        jnp.choose(jnp.asarray([2]), [jnp.asarray([1]), jnp.asarray([2])])
    check(jnp.compress(jnp.asarray([True, False, True, False]), jnp.asarray(M), axis=0),
          np.compress([True, False, True, False], M, axis=0))
    check(jnp.extract(jnp.asarray(M > 2), jnp.asarray(M)), np.extract(M > 2, M))
    with pytest.raises(ValueError, match="condlist must have length equal to choicelist"):
        jnp.select([x > 3], [x, x])


def test_index_helpers():
    for got, want in zip(jnp.tril_indices(3), np.tril_indices(3)):
        check(got, want, np.int32)
    for got, want in zip(jnp.triu_indices(3, 1), np.triu_indices(3, 1)):
        check(got, want)
    for got, want in zip(jnp.triu_indices(3, 1, 4), np.triu_indices(3, 1, 4)):
        check(got, want)
    for got, want in zip(jnp.tril_indices_from(jnp.zeros((3, 4)), -1), np.tril_indices_from(np.zeros((3, 4)), -1)):
        check(got, want)
    for got, want in zip(jnp.diag_indices(2), np.diag_indices(2)):
        check(got, want)
    for got, want in zip(jnp.ix_(jnp.asarray([0, 1]), jnp.asarray([2, 3])), np.ix_([0, 1], [2, 3])):
        check(got, want)
    a = np.arange(20).reshape(4, 5)
    check(jnp.asarray(a)[jnp.ix_(jnp.asarray([0, 2]), jnp.asarray([1, 3, 4]))], a[np.ix_([0, 2], [1, 3, 4])])
    for got, want in zip(jnp.unravel_index(jnp.asarray([0, 7, 19]), (4, 5)), np.unravel_index([0, 7, 19], (4, 5))):
        check(got, want)
    check(jnp.ravel_multi_index((jnp.asarray([1, 3]), jnp.asarray([2, 4])), (4, 5)),
          np.ravel_multi_index(([1, 3], [2, 4]), (4, 5)))


def test_set_operations():
    a, b = np.array([1, 2, 3, 4, 4]), np.array([3, 4, 5])
    check(jnp.isin(jnp.asarray(a), jnp.asarray(b)), np.isin(a, b))
    check(jnp.isin(jnp.asarray(a), jnp.asarray(b), invert=True), np.isin(a, b, invert=True))
    check(jnp.union1d(jnp.asarray(a), jnp.asarray(b)), np.union1d(a, b))
    check(jnp.intersect1d(jnp.asarray(a), jnp.asarray(b)), np.intersect1d(a, b))
    check(jnp.setdiff1d(jnp.asarray(a), jnp.asarray(b)), np.setdiff1d(a, b))
    check(jnp.setxor1d(jnp.asarray(a), jnp.asarray(b)), np.setxor1d(a, b))


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(-3, 3), min_size=0, max_size=12))
def test_unique_and_argsort_hypothesis(values):
    x = np.array(values, np.int32)
    check(jnp.argsort(jnp.asarray(x)), np.argsort(x, kind="stable"))
    if x.size:
        u, i, inv, c = jnp.unique(jnp.asarray(x), return_index=True, return_inverse=True, return_counts=True)
        wu, wi, winv, wc = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
        for got, want in ((u, wu), (i, wi), (inv, winv), (c, wc)):
            check(got, want)
