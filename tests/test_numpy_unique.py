"""The Array API's unique_* functions: JAX's named tuples, NaNs counted as distinct, size/fill_value,
and jnp.unique's size padding (reprs recorded from JAX 0.10.2)."""
import pytest

import xjax
import xjax.numpy as jnp

X = jnp.array([1., jnp.nan, 2., jnp.nan, 1.])
M = jnp.array([[3, 1], [3, 2]])


def test_named_tuple_types_and_fields():
    cases = [(jnp.unique_all, "_UniqueAllResult", ("values", "indices", "inverse_indices", "counts")),
             (jnp.unique_counts, "_UniqueCountsResult", ("values", "counts")),
             (jnp.unique_inverse, "_UniqueInverseResult", ("values", "inverse_indices"))]
    for fn, name, fields in cases:
        r = fn(M)
        assert type(r).__name__ == name and r._fields == fields and isinstance(r, tuple)
    assert jnp.unique_all(M).counts.tolist() == [1, 1, 2]
    assert jnp.unique_inverse(M).inverse_indices.shape == M.shape


@pytest.mark.parametrize("call, want", [
    (lambda: jnp.unique_values(X), "Array([ 1.,  2., nan, nan], dtype=float32)"),
    (lambda: jnp.unique_counts(X), "_UniqueCountsResult(values=Array([ 1.,  2., nan, nan], dtype=float32), "
                                   "counts=Array([2, 1, 1, 1], dtype=int32))"),
    (lambda: jnp.unique_inverse(X), "_UniqueInverseResult(values=Array([ 1.,  2., nan, nan], dtype=float32), "
                                    "inverse_indices=Array([0, 2, 1, 3, 0], dtype=int32))"),
    (lambda: jnp.unique_all(X), "_UniqueAllResult(values=Array([ 1.,  2., nan, nan], dtype=float32), "
                                "indices=Array([0, 2, 1, 3], dtype=int32), inverse_indices=Array([0, 2, 1, 3, 0], "
                                "dtype=int32), counts=Array([2, 1, 1, 1], dtype=int32))"),
    (lambda: jnp.unique_all(X, size=5, fill_value=-1.),
     "_UniqueAllResult(values=Array([ 1.,  2., nan, nan, -1.], dtype=float32), indices=Array([0, 2, 1, 3, 0], "
     "dtype=int32), inverse_indices=Array([0, 2, 1, 3, 0], dtype=int32), counts=Array([2, 1, 1, 1, 0], dtype=int32))"),
    (lambda: jnp.unique_inverse(M, size=4), "_UniqueInverseResult(values=Array([1, 2, 3, 1], dtype=int32), "
                                            "inverse_indices=Array([[2, 0],\n       [2, 1]], dtype=int32))"),
    (lambda: jnp.unique_all(M, size=4), "_UniqueAllResult(values=Array([1, 2, 3, 1], dtype=int32), "
                                        "indices=Array([1, 3, 0, 1], dtype=int32), inverse_indices=Array([[2, 0],\n"
                                        "       [2, 1]], dtype=int32), counts=Array([1, 1, 2, 0], dtype=int32))"),
    (lambda: jnp.unique_all(jnp.array([], jnp.float32)),
     "_UniqueAllResult(values=Array([], shape=(0,), dtype=float32), indices=Array([], shape=(0,), dtype=int32), "
     "inverse_indices=Array([], shape=(0,), dtype=int32), counts=Array([], shape=(0,), dtype=int32))"),
    (lambda: jnp.unique_counts(jnp.array(5)), "_UniqueCountsResult(values=Array([5], dtype=int32, weak_type=True), "
                                              "counts=Array([1], dtype=int32))"),
    # size shorter than the number of unique values: each count is its own value's.
    (lambda: jnp.unique_counts(M, size=2), "_UniqueCountsResult(values=Array([1, 2], dtype=int32), "
                                           "counts=Array([1, 1], dtype=int32))"),
    (lambda: jnp.unique(X), "Array([ 1.,  2., nan], dtype=float32)"),
    (lambda: jnp.unique(X, return_counts=True), "(Array([ 1.,  2., nan], dtype=float32), "
                                                "Array([2, 1, 2], dtype=int32))"),
])
def test_values_match_jax(call, want):
    assert repr(call()) == want


def test_unique_all_with_size_under_jit():
    r = xjax.jit(lambda x: jnp.unique_all(x, size=4))(M)
    assert type(r).__name__ == "_UniqueAllResult"
    assert r.counts.tolist() == [1, 1, 2, 0] and r.indices.tolist() == [1, 3, 0, 1]
