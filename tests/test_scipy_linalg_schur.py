"""Tests of jax.scipy.linalg's schur, rsf2csf, sqrtm, funm, polar, hessenberg, solve_sylvester and
qr_multiply against SciPy in float64 (hypothesis over sizes from 0 and batches where JAX takes
batches), with JAX's recorded values where its conventions differ from SciPy's."""
import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings, strategies as st

import xjax
import xjax.numpy as jnp
import xjax.scipy.linalg as L
from x64_util import in_x64


def mT(x):
    return np.swapaxes(x, -1, -2)


def loop(fn, *arrays):
    """fn over the leading dims of the arrays' batch (the first array's shape[:-2]), stacked."""
    batch = np.shape(arrays[0])[:-2]
    outs = [fn(*[np.asarray(x)[i] for x in arrays]) for i in np.ndindex(*batch)]
    if isinstance(outs[0], tuple):
        return tuple(np.stack(o).reshape(batch + o[0].shape) for o in zip(*outs))
    return np.stack(outs).reshape(batch + outs[0].shape)


batch_shapes = st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple)
A3 = np.array([[0., 3., 3.], [0., 1., 2.], [2., 0., 1.]])  # a complex pair of eigenvalues


# ---- schur and rsf2csf ------------------------------------------------------------------------

@settings(max_examples=12, deadline=None)
@given(batch=batch_shapes, n=st.integers(0, 6), output=st.sampled_from(["real", "complex"]),
       seed=st.integers(0, 2**31))
@in_x64
def test_schur_reconstructs_and_matches_scipy(batch, n, output, seed):
    a = np.random.default_rng(seed).standard_normal(batch + (n, n))
    t, z = (np.asarray(x) for x in L.schur(a, output=output))
    assert t.dtype == (np.float64 if output == "real" else np.complex128) and t.shape == z.shape == a.shape
    np.testing.assert_allclose(z @ t @ np.conj(mT(z)), a, atol=1e-12)
    np.testing.assert_allclose(np.conj(mT(z)) @ z, np.broadcast_to(np.eye(n), a.shape), atol=1e-12)
    assert np.all(np.tril(t, -1 if output == "complex" else -2) == 0)
    if a.size:  # the diagonal (the eigenvalues, in LAPACK's order) is SciPy's (zgees for 'complex')
        ref = loop(lambda m: scipy.linalg.schur(m, output=output), a)
        np.testing.assert_allclose(np.diagonal(t, 0, -2, -1), np.diagonal(ref[0], 0, -2, -1), atol=1e-10)


def test_complex_schur_of_real_input_is_zgees_as_jax(x64):
    # JAX casts real input to complex and runs zgees (as SciPy does): recorded from JAX 0.10.2.
    t, z = L.schur(A3, output="complex")
    jax_t = np.array([[3.7563213575867134, 0.6920598121990776 - 1.3381084541542458j,
                       1.981057366649525 - 0.6469082030509807j],
                      [0, -0.8781606787933574 + 0.9089231257426884j, -1.795803840361622 - 0.9262634835898044j],
                      [0, 0, -0.878160678793357 - 0.9089231257426887j]])
    jax_z = np.array([[0.6126332609944172 + 0.423195290078241j, -0.3523777661296755 + 0.1815113901119543j,
                       -0.5159125550854021 - 0.149345219813952j],
                      [0.322552834376319 + 0.2228133028361466j, -0.3913760004149324 - 0.3111305332785254j,
                       0.5741578292585803 + 0.5164100171154282j],
                      [0.4445296331707891 + 0.3070725326808539j, 0.7696174848150396 - 0.0243940530681021j,
                       0.2943987217899191 - 0.1688878762858788j]])
    np.testing.assert_allclose(t, jax_t, atol=1e-12)
    np.testing.assert_allclose(z, jax_z, atol=1e-12)
    # rsf2csf of the real form: the same triangular form up to the phases of Z's columns
    ts, _ = scipy.linalg.rsf2csf(*scipy.linalg.schur(A3))
    np.testing.assert_allclose(np.abs(np.asarray(t)), np.abs(ts), atol=1e-12)


@settings(max_examples=10, deadline=None)
@given(batch=batch_shapes, n=st.integers(1, 6), seed=st.integers(0, 2**31))
@in_x64
def test_rsf2csf_against_scipy(batch, n, seed):
    a = np.random.default_rng(seed).standard_normal(batch + (n, n))
    tr, zr = loop(scipy.linalg.schur, a)
    t, z = L.rsf2csf(tr, zr)
    ts, zs = loop(scipy.linalg.rsf2csf, tr, zr)
    np.testing.assert_allclose(t, ts, atol=1e-12)
    np.testing.assert_allclose(z, zs, atol=1e-12)


def test_schur_errors_and_float32():
    with pytest.raises(ValueError, match="'real' or 'complex'"):
        L.schur(np.eye(2), output="x")
    with pytest.raises(ValueError, match="must be square"):
        L.rsf2csf(np.ones((2, 3)), np.ones((2, 3)))
    t, z = L.schur(A3.astype(np.float32), output="complex")
    assert t.dtype == np.complex64
    np.testing.assert_allclose(np.asarray(z) @ np.asarray(t) @ np.asarray(z).conj().T, A3, atol=1e-5)
    assert type(L.schur(A3)) is list  # as JAX's
    t, z = L.schur(np.arange(4.0).reshape(2, 2))  # integers are promoted
    assert t.dtype == np.float32


# ---- sqrtm and funm -------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 5])
def test_sqrtm_against_scipy(x64, n):
    rng = np.random.default_rng(n)
    for a in (rng.standard_normal((n, n)), A3 if n == 5 else np.eye(n) * 4 + rng.standard_normal((n, n)) / 4):
        s = np.asarray(L.sqrtm(a))
        assert s.dtype == np.complex128  # as JAX's (SciPy's returns real where it can)
        np.testing.assert_allclose(s, scipy.linalg.sqrtm(a), atol=1e-10)
        np.testing.assert_allclose(s @ s, a, atol=1e-10)
    with pytest.raises(NotImplementedError, match="Blocked"):
        L.sqrtm(np.eye(2), blocksize=2)


def test_sqrtm_triangular_and_jit(x64):
    a = np.array([[4., 1, 2], [0, 9, 3], [0, 0, 16]])
    np.testing.assert_allclose(xjax.jit(L.sqrtm)(a), scipy.linalg.sqrtm(a), atol=1e-12)


@pytest.mark.parametrize("func, np_func", [(jnp.sin, np.sin), (jnp.exp, np.exp), (lambda x: x * x, lambda x: x * x)])
def test_funm_against_scipy(x64, func, np_func):
    rng = np.random.default_rng(0)
    for a in (rng.standard_normal((5, 5)), A3, np.array([[1., 2], [3, 4]])):
        np.testing.assert_allclose(L.funm(a, func), scipy.linalg.funm(a, np_func), atol=1e-10)
    f, err = L.funm(A3, func, disp=False)
    fs, errs = scipy.linalg.funm(A3, np_func, disp=False)
    np.testing.assert_allclose(f, fs, atol=1e-10)
    np.testing.assert_allclose(err, errs, rtol=1e-6)
    with pytest.raises(ValueError, match="expected square"):
        L.funm(np.ones((2, 3)), func)


def test_funm_recorded_from_jax():
    # JAX 0.10.2, float32: funm([[1, 2], [3, 4]], sin(x) + 2 cos(x)) (its docstring's example)
    got = L.funm(np.array([[1., 2.], [3., 4.]], np.float32), lambda x: jnp.sin(x) + 2 * jnp.cos(x))
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got, [[1.2452652, -0.3701772], [-0.55526584, 0.6899995]], atol=1e-5)


# ---- polar ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["qdwh", "svd"])
@pytest.mark.parametrize("side, shape", [("right", (5, 5)), ("right", (6, 3)), ("left", (5, 5)), ("left", (3, 6)),
                                         ("right", (2, 6, 3))])
def test_polar_against_scipy(x64, method, side, shape):
    if method == "qdwh" and side == "left" and shape[-2] >= shape[-1]:
        pytest.skip("JAX's qdwh takes m < n only for side='left' (test_polar_errors)")
    a = np.random.default_rng(1).standard_normal(shape)
    u, p = L.polar(a, side=side, method=method)
    us, ps = loop(lambda m: scipy.linalg.polar(m, side=side), a) if a.ndim > 2 else scipy.linalg.polar(a, side=side)
    np.testing.assert_allclose(u, us, atol=1e-11)
    np.testing.assert_allclose(p, ps, atol=1e-11)


def test_polar_errors():
    with pytest.raises(NotImplementedError, match="method='qdwh' only supports"):
        L.polar(np.ones((2, 3)), side="right")
    with pytest.raises(NotImplementedError, match="method='qdwh' only supports"):
        L.polar(np.eye(3), side="left")  # as JAX: square matrices only from the right
    with pytest.raises(ValueError, match="side"):
        L.polar(np.eye(2), side="up")
    with pytest.raises(ValueError, match="Unknown polar decomposition method"):
        L.polar(np.eye(2), method="eig")
    with pytest.raises(ValueError, match="at least a 2-D"):
        L.polar(np.ones(3))


# ---- hessenberg -----------------------------------------------------------------------------------

@settings(max_examples=10, deadline=None)
@given(batch=batch_shapes, n=st.integers(0, 6), seed=st.integers(0, 2**31))
@in_x64
def test_hessenberg_against_scipy(batch, n, seed):
    a = np.random.default_rng(seed).standard_normal(batch + (n, n))
    h, q = (np.asarray(x) for x in L.hessenberg(a, calc_q=True))
    assert h.shape == q.shape == a.shape
    h_only = np.asarray(L.hessenberg(a))
    np.testing.assert_allclose(h_only, h)
    if n:
        hs, qs = loop(lambda m: scipy.linalg.hessenberg(m, calc_q=True), a)
        np.testing.assert_allclose(h, hs, atol=1e-12)
        np.testing.assert_allclose(q, qs, atol=1e-12)
        np.testing.assert_allclose(q @ h @ mT(q), a, atol=1e-12)
        assert np.all(np.tril(h, -2) == 0)


# ---- solve_sylvester ------------------------------------------------------------------------------

@settings(max_examples=10, deadline=None)
@given(m=st.integers(1, 5), n=st.integers(1, 5), batch=st.sampled_from([(), (2,)]), seed=st.integers(0, 2**31))
@in_x64
def test_solve_sylvester_against_scipy(m, n, batch, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(batch + (m, m)) + 3 * np.eye(m)  # eigenvalues of A and -B kept apart
    b = rng.standard_normal(batch + (n, n)) + 3 * np.eye(n)
    c = rng.standard_normal(batch + (m, n))
    x = np.asarray(L.solve_sylvester(a, b, c))
    assert x.dtype == np.float64
    np.testing.assert_allclose(x, loop(scipy.linalg.solve_sylvester, a, b, c), atol=1e-10)
    np.testing.assert_allclose(a @ x + x @ b, c, atol=1e-10)


def test_solve_sylvester_singular_and_errors(x64):
    a = np.diag([1., 2.])
    x = L.solve_sylvester(a, -a, np.ones((2, 2)))  # eigenvalues 1 and -1 add to 0: NaN, as JAX
    assert np.isnan(np.asarray(x)).all()
    with pytest.raises(ValueError, match="Incompatible shapes for Sylvester"):
        L.solve_sylvester(np.eye(2), np.eye(3), np.ones((2, 2)))
    with pytest.raises(ValueError, match="Unrecognized method"):
        L.solve_sylvester(np.eye(2), np.eye(2), np.ones((2, 2)), method="x")


def test_solve_sylvester_recorded_from_jax():
    # JAX's docstring example: A X + X B = C with X = I
    x = L.solve_sylvester(jnp.array([[1, 2], [3, 4]]), jnp.array([[5, 6], [7, 8]]), jnp.array([[6, 8], [10, 12]]))
    np.testing.assert_allclose(x, np.eye(2), atol=1e-5)


# ---- qr_multiply ----------------------------------------------------------------------------------

@settings(max_examples=16, deadline=None)
@given(m=st.integers(1, 6), n=st.integers(1, 6), mode=st.sampled_from(["left", "right"]), pivoting=st.booleans(),
       conjugate=st.booleans(), vector=st.booleans(), seed=st.integers(0, 2**31))
@in_x64
def test_qr_multiply_against_scipy(m, n, mode, pivoting, conjugate, vector, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, n))
    k = min(m, n)
    c = rng.standard_normal(((k,) if mode == "left" else (m,)) if vector else ((k, 3) if mode == "left" else (2, m)))
    got = L.qr_multiply(a, c, mode=mode, pivoting=pivoting, conjugate=conjugate)
    want = scipy.linalg.qr_multiply(a, c, mode=mode, pivoting=pivoting, conjugate=conjugate)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, atol=1e-12)


def test_qr_multiply_batched_and_errors(x64):
    rng = np.random.default_rng(2)
    a, c = rng.standard_normal((3, 5, 4)), rng.standard_normal((2, 5))
    cq, r = L.qr_multiply(a, c)  # c broadcasts over a's batch
    for i in range(3):
        want = scipy.linalg.qr_multiply(a[i], c)
        np.testing.assert_allclose(cq[i], want[0], atol=1e-12)
        np.testing.assert_allclose(r[i], want[1], atol=1e-12)
    with pytest.raises(ValueError, match="c @ Q"):
        L.qr_multiply(a, np.ones((2, 4)))
    with pytest.raises(ValueError, match="Q @ c"):
        L.qr_multiply(a, np.ones((5, 2)), mode="left")
    with pytest.raises(ValueError, match="mode must be"):
        L.qr_multiply(a, c, mode="up")


def test_public_names_match_jax():
    for name in ["schur", "rsf2csf", "sqrtm", "funm", "polar", "hessenberg", "solve_sylvester", "qr_multiply"]:
        assert callable(getattr(L, name)), name


def test_vmap_and_jit_against_a_loop(x64):
    from batching_util import check_batch
    a = np.random.default_rng(3).standard_normal((3, 4, 4))
    check_batch(L.sqrtm, (a,), rtol=1e-10, atol=1e-10)
    check_batch(lambda x: L.funm(x, jnp.sin), (a,), rtol=1e-10, atol=1e-10, jit=True)
    check_batch(lambda x, y: L.solve_sylvester(x, y, x), (a, a + 3 * np.eye(4)), rtol=1e-10, atol=1e-10)
    check_batch(lambda x: L.schur(x, output="complex"), (np.moveaxis(a, 0, 1),), in_axes=1, rtol=1e-10, atol=1e-10)
    check_batch(lambda x, c: L.qr_multiply(x, c, pivoting=True), (a, a[0, :2]), in_axes=(0, None), rtol=1e-10,
                atol=1e-10)
    check_batch(lambda x: L.hessenberg(x, calc_q=True), (a,), rtol=1e-10, atol=1e-10, jit=True)
