"""xjax.scipy.linalg's special-matrix constructors against scipy.linalg (matrix by matrix over random batch
shapes for the vector-argument ones), their dtypes and errors as JAX gives them, and their gradients."""
import itertools

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings, strategies as st

import xjax
import xjax.numpy as jnp
import xjax.scipy.linalg as sl
from xjax.test_util import check_grads

batch_shapes = st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple)


def per_vector(f, *arrays):
    """SciPy's f applied to each vector of the (common) batch, stacked back."""
    batch = arrays[0].shape[:-1]
    outs = [f(*[a[idx] for a in arrays]) for idx in itertools.product(*map(range, batch))]
    return np.stack(outs).reshape(batch + outs[0].shape)


VECTOR_CASES = [
    ("circulant", lambda rng, b, n: (rng.normal(size=b + (n,)),), 1),
    ("hankel", lambda rng, b, n: (rng.normal(size=b + (n,)), rng.normal(size=b + (n + 1,))), 1),
    ("leslie", lambda rng, b, n: (rng.normal(size=b + (n + 1,)), rng.normal(size=b + (n,))), 1),
    ("companion", lambda rng, b, n: (rng.normal(size=b + (n + 1,)) + 3.0,), 1),
    ("fiedler", lambda rng, b, n: (rng.normal(size=b + (n,)),), 1),
    ("fiedler_companion", lambda rng, b, n: (rng.normal(size=b + (n + 1,)) + 3.0,), 1),  # SciPy: (0,) for n=1
]


@pytest.mark.parametrize("name,make,_", VECTOR_CASES, ids=[c[0] for c in VECTOR_CASES])
@settings(max_examples=8, deadline=None)
@given(batch=batch_shapes, n=st.integers(1, 5), seed=st.integers(0, 2**31 - 1))
def test_vector_constructors_match_scipy(name, make, _, batch, n, seed):
    args = make(np.random.default_rng(seed), batch, n)
    got = getattr(sl, name)(*[a.astype(np.float32) for a in args])
    want = per_vector(getattr(scipy.linalg, name), *[a.astype(np.float32) for a in args])
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)


def test_integer_inputs_keep_their_dtype_or_promote_as_jax():
    assert sl.circulant(np.array([1, 2, 3])).dtype == np.int32
    assert sl.fiedler(np.array([1, 4, 12])).dtype == np.int32
    np.testing.assert_array_equal(sl.fiedler(np.array([1, 4, 12])), scipy.linalg.fiedler([1, 4, 12]))
    assert sl.companion(np.array([1, -10, 31, -30])).dtype == np.float32
    assert sl.leslie(np.array([1, 2]), np.array([0.5])).dtype == np.float32
    np.testing.assert_array_equal(sl.hankel(np.array([1, 2, 3])), scipy.linalg.hankel([1, 2, 3]))
    # hankel broadcasts the batch axes of c and r
    c, r = np.arange(6.0).reshape(2, 3), np.array([9.0, 4.0])
    np.testing.assert_array_equal(sl.hankel(c, r), np.stack([scipy.linalg.hankel(ci, r) for ci in c]))


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("m,n", [(1, 1), (3, 5), (5, 3), (4, 4), (2, 7)])
def test_convolution_matrix(mode, m, n):
    a = np.random.default_rng(m * 10 + n).normal(size=(2, m)).astype(np.float32)
    got = sl.convolution_matrix(a, n, mode)
    want = np.stack([scipy.linalg.convolution_matrix(ai, n, mode) for ai in a])
    np.testing.assert_allclose(got, want, rtol=1e-6)
    v = np.random.default_rng(1).normal(size=n).astype(np.float32)
    np.testing.assert_allclose(np.asarray(got[0]) @ v, np.convolve(a[0], v, mode), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_order_n_constructors(n):
    np.testing.assert_allclose(sl.hilbert(n), scipy.linalg.hilbert(n), rtol=1e-6)
    np.testing.assert_allclose(sl.invhilbert(n), scipy.linalg.invhilbert(n), rtol=2e-3)
    for kind in ["symmetric", "lower", "upper"]:
        np.testing.assert_allclose(sl.pascal(n, kind), scipy.linalg.pascal(n, kind), rtol=1e-5)
        np.testing.assert_allclose(sl.invpascal(n, kind), scipy.linalg.invpascal(n, kind), rtol=1e-4, atol=1e-4)
    assert sl.pascal(n).dtype == np.float32
    for full in [False, True]:
        np.testing.assert_allclose(sl.helmert(n, full), scipy.linalg.helmert(n, full), rtol=1e-6, atol=1e-7)
    for scale in [None, "sqrtn", "n"]:
        got = sl.dft(n, scale)
        assert got.dtype == np.complex64
        np.testing.assert_allclose(got, scipy.linalg.dft(n, scale), rtol=1e-5, atol=1e-5)


def test_hadamard():
    for n in [1, 2, 4, 16]:
        got = sl.hadamard(n)
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, scipy.linalg.hadamard(n))
    assert sl.hadamard(4, dtype=jnp.float32).dtype == np.float32


def test_x64_dtypes(x64):
    assert sl.hilbert(3).dtype == np.float64
    assert sl.invhilbert(3).dtype == np.float64
    assert sl.pascal(3).dtype == np.float32  # JAX builds pascal in float32 whatever x64 says
    assert sl.dft(3).dtype == np.complex128
    np.testing.assert_allclose(sl.invhilbert(10), scipy.linalg.invhilbert(10), rtol=1e-7)
    np.testing.assert_allclose(sl.dft(7, dtype=jnp.complex64), scipy.linalg.dft(7), rtol=1e-5, atol=1e-5)


def test_errors_as_jax():
    with pytest.raises(ValueError, match="positive power of 2"):
        sl.hadamard(6)
    with pytest.raises(ValueError, match="at least 2"):
        sl.companion(np.array([1.0]))
    with pytest.raises(ValueError, match="one less"):
        sl.leslie(np.array([1.0, 2.0]), np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="nonzero length"):
        sl.fiedler_companion(np.zeros((0,)))
    with pytest.raises(ValueError, match="mode must be one of"):
        sl.convolution_matrix(np.ones(3), 2, "wide")
    with pytest.raises(ValueError, match="positive integer"):
        sl.convolution_matrix(np.ones(3), 0)
    with pytest.raises(ValueError, match="kind"):
        sl.pascal(3, "diagonal")
    with pytest.raises(ValueError, match="complex"):
        sl.dft(3, dtype=jnp.float32)
    with pytest.raises(ValueError, match="scale"):
        sl.dft(3, scale="log")
    with pytest.raises(ValueError, match="scalar"):
        sl.hankel(np.float32(1.0))
    with pytest.raises(TypeError):
        sl.circulant([1, 2, 3])  # JAX takes arrays, not lists


def test_grads(x64):
    rng = np.random.default_rng(0)
    v = rng.normal(size=4) + 3.0
    for f in [sl.circulant, sl.companion, sl.fiedler_companion, sl.hankel,
              lambda a: sl.leslie(a, a[1:]), lambda a: sl.convolution_matrix(a, 3, "same")]:
        check_grads(f, (v,), order=2, modes=["fwd", "rev"])
    check_grads(sl.fiedler, (np.array([0.3, 1.5, -2.0]),), order=1, modes=["fwd", "rev"])


def test_vmap_matches_loop():
    a = np.random.default_rng(3).normal(size=(3, 4)).astype(np.float32) + 3.0
    for f in [sl.circulant, sl.companion, sl.fiedler_companion]:
        np.testing.assert_allclose(xjax.vmap(f)(a), np.stack([f(ai) for ai in a]), rtol=1e-6)


def test_fiedler_companion_of_a_constant_is_empty_square():
    assert sl.fiedler_companion(np.ones((2, 1), np.float32)).shape == (2, 0, 0)  # JAX's; SciPy gives (0,)
