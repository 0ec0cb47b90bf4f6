"""jnp.ufunc and jnp.frompyfunc against NumPy's frompyfunc (reduce, accumulate, at, reduceat, outer), jnp's binary
functions as ufunc objects against NumPy's ufunc methods, and jnp.roots(strip_zeros=False) against JAX's values."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp

RNG = np.random.default_rng(0)
A = (RNG.integers(-4, 5, (3, 4)) / 2).astype(np.float32)


def _py(x, y):
    return x * y + 1


UF = jnp.frompyfunc(_py, 2, 1)
NP = np.frompyfunc(_py, 2, 1)


def close(got, want):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want, dtype=np.float64), rtol=1e-6, atol=1e-6)


def test_frompyfunc_methods_match_numpy():
    obj = A.astype(np.float64).astype(object)
    assert repr(UF) == "<jnp.ufunc '_py'>" and UF.nin == 2 and UF.nout == 1 and UF.identity is None
    close(UF(A, 2.0), NP(obj, 2.0).astype(float))
    for axis in [0, 1, -1]:
        close(UF.reduce(A, axis=axis), NP.reduce(obj, axis=axis).astype(float))
        close(UF.accumulate(A, axis=axis), NP.accumulate(obj, axis=axis).astype(float))
    close(UF.reduce(A, axis=None), float(NP.reduce(obj.ravel())))
    close(UF.reduce(A, axis=1, keepdims=True), NP.reduce(obj, axis=1, keepdims=True).astype(float))
    close(UF.reduce(A, axis=1, initial=2.0), NP.reduce(obj, axis=1, initial=2.0).astype(float))
    close(UF.outer(A[0], A[1]), NP.outer(obj[0], obj[1]).astype(float))
    v = A[0].repeat(2)
    idx = np.array([0, 3, 3, 5])
    close(UF.reduceat(v, idx), NP.reduceat(v.astype(np.float64).astype(object), idx).astype(float))
    close(UF.reduceat(A, np.array([0, 2]), axis=1), NP.reduceat(obj, [0, 2], axis=1).astype(float))
    want = obj.copy()
    NP.at(want, (np.array([0, 1, 1]), np.array([3, 0, 0])), np.array([1.0, 2.0, 3.0]))
    close(UF.at(A, (np.array([0, 1, 1]), np.array([3, 0, 0])), np.array([1.0, 2.0, 3.0], np.float32), inplace=False),
          want.astype(float))
    close(xjax.jit(lambda a: UF.reduce(a, axis=1))(A), NP.reduce(obj, axis=1).astype(float))


def test_frompyfunc_where_identity_and_errors():
    g = jnp.frompyfunc(lambda x, y: jnp.maximum(x, y), 2, 1, identity=-np.inf)
    np.testing.assert_array_equal(g.reduce(A, axis=0, where=A > 1), np.max(A, axis=0, where=A > 1, initial=-np.inf))
    with pytest.raises(ValueError, match="identity"):
        UF.reduce(A, where=A > 0)
    with pytest.raises(NotImplementedError, match="inplace"):
        UF.at(A, 0, 1.0)
    with pytest.raises(ValueError, match="binary"):
        jnp.frompyfunc(lambda x: x, 1, 1).reduce(A)
    with pytest.raises(ValueError, match="no identity"):
        UF.reduce(np.zeros((0,), np.float32))
    assert jnp.frompyfunc(_py, 2, 1) == UF and hash(jnp.frompyfunc(_py, 2, 1)) == hash(UF)


@pytest.mark.parametrize("name", ["add", "multiply", "subtract", "maximum", "minimum", "logical_and", "logical_or",
                                  "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "logaddexp"])
def test_binary_functions_are_ufuncs(name):
    uf, ref = getattr(jnp, name), getattr(np, name)
    assert isinstance(uf, jnp.ufunc) and uf.__name__ == name
    x = RNG.integers(0, 4, (3, 5))
    if name.startswith("logical"):
        x = x > 1
    elif name == "logaddexp":
        x = x.astype(np.float32)
    np.testing.assert_allclose(uf(x, x[::-1]), ref(x, x[::-1]), rtol=1e-6)
    np.testing.assert_allclose(uf.outer(x[0], x[1]), ref.outer(x[0], x[1]), rtol=1e-6)
    if name != "subtract":  # NumPy's subtract.reduce exists, JAX's (no identity) scans too
        np.testing.assert_allclose(uf.reduce(x, axis=1), ref.reduce(x, axis=1), rtol=1e-6)
    np.testing.assert_allclose(uf.accumulate(x, axis=1), ref.accumulate(x, axis=1), rtol=1e-6)


def test_at_methods_accumulate_repeated_indices():
    want = np.zeros(4)
    np.add.at(want, [0, 0, 3], [1.0, 2.0, 5.0])
    np.testing.assert_array_equal(jnp.add.at(np.zeros(4), np.array([0, 0, 3]), np.array([1.0, 2.0, 5.0]),
                                             inplace=False), want)
    np.testing.assert_array_equal(jnp.subtract.at(np.zeros(3), np.array([1, 1]), 2.0, inplace=False), [0, -4, 0])
    np.testing.assert_array_equal(jnp.multiply.at(np.full(3, 2.0), np.array([2, 2]), 3.0, inplace=False), [2, 2, 18])
    np.testing.assert_array_equal(jnp.add.at(np.array([True, False]), np.array([1]), True, inplace=False),
                                  [True, True])


# JAX 0.10.2's jnp.roots(p, strip_zeros=False): leading zeros give NaN roots, at the end
ROOTS = [([0.0, 0.0, 1.0, -3.0, 2.0], [1, 2, np.nan, np.nan]), ([1.0, -6.0, 11.0, -6.0], [3, 2, 1]),
         ([0.0, 0.0, 0.0], [np.nan, np.nan]), ([0.0, 2.0, 0.0, 0.0], [0, 0, np.nan]), ([0.0, 1.0], [np.nan])]


@pytest.mark.parametrize("p,want", ROOTS)
def test_roots_without_stripping(p, want):
    p = np.array(p, np.float32)
    for fn in [lambda p: jnp.roots(p, strip_zeros=False), xjax.jit(lambda p: jnp.roots(p, strip_zeros=False))]:
        got = np.asarray(fn(p))
        assert got.dtype == np.complex64
        want_c = np.array(want, np.complex64)
        want_c[np.isnan(np.array(want, float))] = complex(np.nan, np.nan)
        np.testing.assert_allclose(np.sort_complex(got[:len(got) - np.isnan(want).sum()]),
                                   np.sort_complex(want_c[~np.isnan(np.array(want, float))]), atol=1e-4)
        assert np.isnan(got).sum() == np.isnan(want).sum()
        assert np.all(np.isnan(got[len(got) - np.isnan(want).sum():]))
