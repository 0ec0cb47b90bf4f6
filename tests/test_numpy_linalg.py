"""xjax.numpy.linalg: the Array API's functions over the last two axes, multi_dot, and the
decompositions' signatures (JAX's keywords accepted). Values recorded from JAX 0.10.2; the
decompositions' values are tested in test_numpy_linalg_decomp.py."""
import inspect

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp

X = jnp.arange(24).reshape(2, 3, 4)


@pytest.mark.parametrize("call, want", [
    (lambda: jnp.linalg.trace(X), "Array([15, 51], dtype=int32)"),
    (lambda: jnp.linalg.trace(X, offset=1), "Array([18, 54], dtype=int32)"),
    (lambda: jnp.linalg.trace(X, offset=-1), "Array([13, 37], dtype=int32)"),
    (lambda: jnp.linalg.trace(X, dtype=jnp.float32), "Array([15., 51.], dtype=float32)"),
    (lambda: jnp.linalg.trace(jnp.arange(6, dtype=jnp.int8).reshape(2, 3)), "Array(4, dtype=int32)"),
    (lambda: jnp.linalg.trace(jnp.arange(6, dtype=jnp.uint8).reshape(2, 3)), "Array(4, dtype=uint32)"),
    (lambda: jnp.linalg.diagonal(X), "Array([[ 0,  5, 10],\n       [12, 17, 22]], dtype=int32)"),
    (lambda: jnp.linalg.diagonal(X, offset=2), "Array([[ 2,  7],\n       [14, 19]], dtype=int32)"),
    (lambda: jnp.linalg.diagonal(X, offset=-2), "Array([[ 8],\n       [20]], dtype=int32)"),
    (lambda: jnp.linalg.outer(jnp.arange(3), jnp.arange(2.)),
     "Array([[0., 0.],\n       [0., 1.],\n       [0., 2.]], dtype=float32)"),
    (lambda: jnp.linalg.cross(jnp.array([[1, 0, 0], [0, 1, 0]]), jnp.array([0, 1, 0])),
     "Array([[0, 0, 1],\n       [0, 0, 0]], dtype=int32)"),
    (lambda: jnp.linalg.cross(jnp.array([[1, 0], [0, 1], [0, 0]]), jnp.array([[0, 0], [1, 0], [0, 1]]), axis=0),
     "Array([[0, 1],\n       [0, 0],\n       [1, 0]], dtype=int32)"),
    (lambda: jnp.linalg.tensordot(jnp.arange(6.).reshape(2, 3), jnp.arange(12.).reshape(3, 4), axes=1),
     "Array([[20., 23., 26., 29.],\n       [56., 68., 80., 92.]], dtype=float32)"),
    (lambda: jnp.linalg.multi_dot([jnp.arange(3.), jnp.arange(15.).reshape(3, 5), jnp.arange(10.).reshape(5, 2),
                                   jnp.arange(2.)]), "Array(835., dtype=float32)"),
    (lambda: jnp.linalg.multi_dot([jnp.arange(6.).reshape(2, 3), jnp.arange(3.)]),
     "Array([ 5., 14.], dtype=float32)"),
])
def test_values_match_jax(call, want):
    assert repr(call()) == want


def test_trace_and_diagonal_against_numpy_last_two_axes():
    t = np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5)
    for k in (-3, -1, 0, 2, 7):
        np.testing.assert_array_equal(np.asarray(jnp.linalg.diagonal(jnp.asarray(t), offset=k)),
                                      np.linalg.diagonal(t, offset=k))
        np.testing.assert_allclose(np.asarray(jnp.linalg.trace(jnp.asarray(t), offset=k)),
                                   np.linalg.trace(t, offset=k))
    # jnp.trace/diagonal keep NumPy's axes 0 and 1
    assert jnp.trace(X).tolist() == [16, 18, 20, 22]


def test_multi_dot_order_and_jit():
    rng = np.random.default_rng(0)
    mats = [rng.standard_normal(s).astype(np.float32) for s in [(10, 30), (30, 5), (5, 60), (60, 2)]]
    got = xjax.jit(jnp.linalg.multi_dot)([jnp.asarray(m) for m in mats])
    np.testing.assert_allclose(np.asarray(got), np.linalg.multi_dot(mats), rtol=1e-4, atol=1e-4)
    from xjax._src.numpy.linalg import _chain_order

    split = _chain_order([10, 30, 5, 60])
    assert split[0][2] == 1  # (A0 A1) A2: 10*30*5 + 10*5*60 = 4500 beats 30*5*60 + 10*30*60 = 27000


@pytest.mark.parametrize("call, exc, match", [
    (lambda: jnp.linalg.trace(jnp.ones(3)), ValueError, "at least two dimensions"),
    (lambda: jnp.linalg.diagonal(jnp.ones(3)), ValueError, "at least two dimensions"),
    (lambda: jnp.linalg.outer(jnp.ones((2, 2)), jnp.ones(3)),
     ValueError, r"Input arrays must be one-dimensional, but they are x1.ndim=2 x2.ndim=1"),
    (lambda: jnp.linalg.cross(jnp.ones(2), jnp.ones(2)), ValueError,
     r"Both input arrays must be \(arrays of\) 3-dimensional vectors, but they have x1.shape\[axis\]=2 and "
     r"x2.shape\[axis\]=2"),
    (lambda: jnp.linalg.multi_dot([jnp.ones((2, 3)), jnp.ones((2, 3))]), ValueError,
     r"multi_dot: last dimension of each array must match first dimension of following array. Got array shapes "
     r"\[\(2, 3\), \(2, 3\)\]"),
    (lambda: jnp.linalg.multi_dot([jnp.ones((2, 3))]), ValueError, "at least two arrays"),
    (lambda: jnp.linalg.tensordot(jnp.ones(3), jnp.ones(3), 1), TypeError, "positional"),
])
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


A = jnp.arange(24.).reshape(2, 3, 4)
S = jnp.ones((2, 3, 3))


@pytest.mark.parametrize("name, call", [
    ("svd", lambda: jnp.linalg.svd(A, full_matrices=False)),
    ("svd", lambda: jnp.linalg.svd(A, False, False, hermitian=False, subset_by_index=None)),
    ("svdvals", lambda: jnp.linalg.svdvals(A)),
    ("qr", lambda: jnp.linalg.qr(A, mode="r")),
    ("qr", lambda: jnp.linalg.qr(A, "complete")),
    ("cholesky", lambda: jnp.linalg.cholesky(S, upper=True, symmetrize_input=False)),
    ("pinv", lambda: jnp.linalg.pinv(A, rtol=1e-3)),
    ("pinv", lambda: jnp.linalg.pinv(A, hermitian=False, rcond=1e-3)),
    ("matrix_rank", lambda: jnp.linalg.matrix_rank(A, rtol=1e-3)),
    ("matrix_rank", lambda: jnp.linalg.matrix_rank(A, tol=0.5, hermitian=False)),
    ("eigh", lambda: jnp.linalg.eigh(S, UPLO="U", symmetrize_input=False)),
    ("eigvalsh", lambda: jnp.linalg.eigvalsh(S, "L", symmetrize_input=True)),
    ("inv", lambda: jnp.linalg.inv(S)),
    ("det", lambda: jnp.linalg.det(S)),
    ("slogdet", lambda: jnp.linalg.slogdet(S, method="qr")),
    ("solve", lambda: jnp.linalg.solve(S, jnp.ones((2, 3, 1)))),
    ("lstsq", lambda: jnp.linalg.lstsq(A[0], jnp.ones(3), rcond=None, numpy_resid=True)),
    ("cond", lambda: jnp.linalg.cond(S, p=2)),
    ("tensorinv", lambda: jnp.linalg.tensorinv(jnp.ones((4, 2, 2)), ind=1)),
    ("tensorsolve", lambda: jnp.linalg.tensorsolve(jnp.ones((2, 3, 6)), jnp.ones((2, 3)), axes=None)),
])
def test_decompositions_take_jax_keywords(name, call):
    out = call()
    for leaf in out if isinstance(out, tuple) else (out,):
        assert isinstance(leaf, xjax.Array), name


@pytest.mark.parametrize("call, exc, match", [
    (lambda: jnp.linalg.qr(A, mode="bogus"), ValueError, "Unsupported QR decomposition mode 'bogus'"),
    (lambda: jnp.linalg.svd(jnp.ones(3)), TypeError, r"Input 0 to svd must have rank at least 2, but got shape=\(3,\)"),
    (lambda: jnp.linalg.inv(A), ValueError, r"Argument to inv must have shape \[..., n, n\], got \(2, 3, 4\)"),
    (lambda: jnp.linalg.eigh(S, UPLO="X"), ValueError, "UPLO must be one of None, 'L', or 'U'"),
    (lambda: jnp.linalg.slogdet(S, method="x"), ValueError, "Unknown slogdet method 'x'"),
    (lambda: jnp.linalg.cond(jnp.ones(3)), ValueError, "input array must be at least 2D"),
])
def test_decomposition_argument_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_signatures_match_jax():
    # Recorded with inspect.signature on jax.numpy.linalg (type annotations dropped).
    want = {
        "svd": "(a, full_matrices=True, compute_uv=True, hermitian=False, subset_by_index=None)",
        "svdvals": "(x, /)", "qr": "(a, mode='reduced')", "cholesky": "(a, *, upper=False, symmetrize_input=True)",
        "pinv": "(a, rtol=None, hermitian=False, *, rcond=None)",
        "matrix_rank": "(M, rtol=None, *, hermitian=False, tol=None)",
        "eigh": "(a, UPLO=None, symmetrize_input=True)", "eigvalsh": "(a, UPLO='L', *, symmetrize_input=True)",
        "slogdet": "(a, *, method=None)", "lstsq": "(a, b, rcond=None, *, numpy_resid=False)",
        "trace": "(x, /, *, offset=0, dtype=None)", "diagonal": "(x, /, *, offset=0)", "outer": "(x1, x2, /)",
        "cross": "(x1, x2, /, *, axis=-1)", "multi_dot": "(arrays, *, precision=None)",
        "tensorinv": "(a, ind=2)", "tensorsolve": "(a, b, axes=None)", "cond": "(x, p=None)",
        "matmul": "(x1, x2, /, *, precision=None, preferred_element_type=None)",
        "tensordot": "(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None, out_sharding=None)",
        "solve": "(a, b)", "inv": "(a)", "det": "(a)", "norm": "(x, ord=None, axis=None, keepdims=False)",
        "matrix_power": "(a, n)", "svdvals": "(x, /)", "eig": "(a)", "eigvals": "(a)",
    }
    for name, sig in want.items():
        assert str(inspect.signature(getattr(jnp.linalg, name))) == sig, name
