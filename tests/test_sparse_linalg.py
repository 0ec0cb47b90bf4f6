"""jax.scipy.sparse.linalg (cg, bicgstab, gmres) and jax.scipy.cluster.vq.vq: solutions against NumPy, the
iterates after a few steps against JAX's recorded ones (the same algorithm), matrices and functions and
pytrees as operators, preconditioners, x0, errors, derivatives through custom_linear_solve (check_grads in
x64), jit and vmap."""
import numpy as np
import pytest
import scipy.cluster.vq

import xjax
import xjax.numpy as jnp
from xjax.scipy.cluster.vq import vq
import xjax.scipy.sparse.linalg as sl
from xjax.test_util import check_grads


A = np.array([[4.0, 1.0, 0.5, 0.0], [1.0, 3.0, 0.2, 0.1], [0.5, 0.2, 2.0, 0.3], [0.0, 0.1, 0.3, 1.5]])
N = A + np.triu(A, 1) * 0.7  # not symmetric
B = np.array([1.0, -2.0, 0.5, 3.0])
M = np.diag(1 / np.diag(A))

# JAX 0.10.2's x64 iterates (/tmp/sp.py in the commit that added this file: the same calls under jax)
JAX_ITERATES = {
    'cg2': [0.4542412765929738, -0.8769489075298568, -0.04879876119430649, 2.0879976798690065],
    'cg2M': [0.43004469453770694, -0.9046730424972664, -0.10692692961815109, 2.0845258225232577],
    'bicg1': [0.7493646835000395, -0.9542633902355195, -0.13320607490150216, 1.9182963773497796],
    'bicg2M': [0.748093582255125, -0.9869253530613687, -0.38667389028738913, 2.1444727993076707],
    'gm_b': [0.7703651259224603, -0.9758483315699946, -0.14175024152430077, 1.9689312190105426],
    'gm_i': [0.7703651259224602, -0.9758483315699947, -0.14175024152430057, 1.9689312190105426],
    'gm_bM': [0.7416697806515417, -0.9741398762310416, -0.39623628430984065, 2.1515588714494642],
}
JAX_CALLS = {
    "cg2": lambda: sl.cg(A, B, maxiter=2), "cg2M": lambda: sl.cg(A, B, maxiter=2, M=M),
    "bicg1": lambda: sl.bicgstab(N, B, maxiter=1), "bicg2M": lambda: sl.bicgstab(N, B, maxiter=2, M=M),
    "gm_b": lambda: sl.gmres(N, B, restart=2, maxiter=1),
    "gm_i": lambda: sl.gmres(N, B, restart=2, maxiter=1, solve_method="incremental"),
    "gm_bM": lambda: sl.gmres(N, B, restart=3, maxiter=1, M=M),
}


@pytest.mark.parametrize("name", sorted(JAX_CALLS))
def test_iterates_match_jax(x64, name):
    np.testing.assert_allclose(JAX_CALLS[name]()[0], JAX_ITERATES[name], rtol=1e-13, atol=1e-14)


def _spd(n, seed):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n, n))
    return a @ a.T + n * np.eye(n), rng.normal(size=n)


SOLVERS = [("cg", lambda *a, **k: sl.cg(*a, **k)), ("bicgstab", lambda *a, **k: sl.bicgstab(*a, **k)),
           ("gmres_batched", lambda *a, **k: sl.gmres(*a, **k)),
           ("gmres_incremental", lambda *a, **k: sl.gmres(*a, solve_method="incremental", **k))]


@pytest.mark.parametrize("name,solve", SOLVERS, ids=[s[0] for s in SOLVERS])
@pytest.mark.parametrize("n", [1, 5, 12])
def test_solution_float32(name, solve, n):
    a, b = (v.astype(np.float32) for v in _spd(n, n))
    x, info = solve(a, b, tol=1e-6)
    assert x.dtype == np.float32 and x.shape == (n,)
    np.testing.assert_allclose(x, np.linalg.solve(a.astype(np.float64), b), rtol=2e-4, atol=2e-5)
    assert info is None if not name.startswith("gmres") else int(info) == 0


@pytest.mark.parametrize("name,solve", SOLVERS[1:], ids=[s[0] for s in SOLVERS[1:]])
def test_nonsymmetric_with_preconditioner_and_x0(x64, name, solve):
    rng = np.random.default_rng(7)
    a = rng.normal(size=(8, 8)) + 8 * np.eye(8)
    b = rng.normal(size=8)
    x, _ = solve(a, b, x0=np.ones(8), M=np.diag(1 / np.diag(a)), tol=1e-12)
    np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=1e-9, atol=1e-10)


def test_function_operator_and_pytrees(x64):
    a, b = _spd(5, 3)
    matvec = lambda x: {"u": jnp.dot(a, x["u"]), "v": 3.0 * x["v"]}  # noqa: E731
    rhs = {"u": b, "v": np.arange(3.0)}
    for solver in [sl.cg, sl.bicgstab, sl.gmres]:
        x, _ = solver(matvec, rhs, tol=1e-12)
        np.testing.assert_allclose(x["u"], np.linalg.solve(a, b), rtol=1e-9)
        np.testing.assert_allclose(x["v"], np.arange(3.0) / 3.0, rtol=1e-9)
    # a Python function preconditioner, tolerances by atol only
    x, _ = sl.cg(a, b, M=lambda r: r / np.diag(a), tol=0.0, atol=1e-10)
    np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=1e-8)


def test_gmres_info_reports_nan():
    # JAX's values: a NaN start fails the loop's test at once and is returned, with info -1
    x, info = sl.gmres(np.eye(2, dtype=np.float32), np.ones(2, np.float32), x0=np.array([np.nan, 0], np.float32))
    np.testing.assert_array_equal(x, [np.nan, 0.0])
    assert int(info) == -1 and info.dtype == np.int32


def test_errors_as_jax():
    a, b = _spd(3, 0)
    with pytest.raises(ValueError, match="square matrix"):
        sl.cg(np.ones((3, 2)), b)
    with pytest.raises(TypeError, match="function or ndarray"):
        sl.cg("A", b)
    with pytest.raises(ValueError, match="matching tree structure"):
        sl.cg(a, b, x0=[b])
    with pytest.raises(ValueError, match="matching shapes"):
        sl.bicgstab(a, b, x0=np.zeros(4))
    with pytest.raises(ValueError, match="solve_method"):
        sl.gmres(a, b, solve_method="lgmres")


def test_grads(x64):
    a, b = _spd(4, 11)
    n = a + np.triu(a, 1) * 0.3
    check_grads(lambda b: sl.cg(a, b, tol=1e-13)[0], (b,), order=2, modes=["fwd", "rev"])
    check_grads(lambda a, b: sl.cg(lambda x: jnp.dot(a, x), b, tol=1e-13)[0], (a, b), order=1, modes=["fwd", "rev"])
    for solve_method in ["batched", "incremental"]:
        check_grads(lambda b: sl.gmres(n, b, tol=1e-13, solve_method=solve_method)[0], (b,), order=1,
                    modes=["fwd", "rev"])
    check_grads(lambda b: sl.bicgstab(n, b, tol=1e-13)[0], (b,), order=1, modes=["fwd", "rev"])
    # the cotangent solves with A's transpose
    g = xjax.grad(lambda b: sl.gmres(n, b, tol=1e-13)[0][0])(b)
    np.testing.assert_allclose(g, np.linalg.solve(n.T, np.eye(4)[0]), rtol=1e-9)


def test_jit_and_vmap_match_loop():
    a, _ = _spd(5, 5)
    a = a.astype(np.float32)
    bs = np.random.default_rng(2).normal(size=(3, 5)).astype(np.float32)
    for solver in [sl.cg, sl.bicgstab, sl.gmres]:
        solve = lambda b: solver(a, b, tol=1e-6)[0]  # noqa: E731
        loop = np.stack([solve(b) for b in bs])
        np.testing.assert_allclose(xjax.vmap(solve)(bs), loop, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(xjax.jit(solve)(bs[0]), loop[0], rtol=1e-4, atol=1e-5)


def test_vq_against_scipy():
    rng = np.random.default_rng(4)
    obs, book = rng.normal(size=(30, 3)), rng.normal(size=(5, 3))
    code, dist = vq(obs.astype(np.float32), book.astype(np.float32))
    want_code, want_dist = scipy.cluster.vq.vq(obs, book)
    np.testing.assert_array_equal(code, want_code)
    np.testing.assert_allclose(dist, want_dist, rtol=1e-5)
    code, dist = vq(obs[:, 0].astype(np.float32), book[:, 0].astype(np.float32))  # 1-D: scalars
    want_code, want_dist = scipy.cluster.vq.vq(obs[:, :1], book[:, :1])
    np.testing.assert_array_equal(code, want_code)
    np.testing.assert_allclose(dist, want_dist, rtol=1e-5)
    with pytest.raises(ValueError, match="same rank"):
        vq(obs, book[:, 0])
    with pytest.raises(ValueError, match="ndim"):
        vq(obs[None], book[None])
