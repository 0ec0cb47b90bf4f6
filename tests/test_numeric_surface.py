"""jnp's polynomial functions (polyval, polymul, polydiv, polyfit), r_ and c_, i0 and kaiser, and
histogram2d/histogramdd: against NumPy in float64, dtypes and edge cases against JAX's behaviour,
gradients (check_grads in x64), jit and vmap."""
import numpy as np
import pytest
from scipy import special
from hypothesis import given, settings, strategies as st

import xjax
import xjax.numpy as jnp
from xjax.test_util import check_grads

RNG = np.random.default_rng(27)


@pytest.fixture
def x64():
    with xjax.enable_x64(True):
        yield


def close(a, b, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


# ---- polyval ---------------------------------------------------------------------------------

@settings(max_examples=25)
@given(deg=st.integers(0, 40), xshape=st.sampled_from([(), (3,), (2, 4)]), unroll=st.sampled_from([1, 3, 16, 64]))
def test_polyval_matches_numpy(deg, xshape, unroll):
    with xjax.enable_x64(True):
        p, x = RNG.normal(size=deg + 1), RNG.uniform(-1.2, 1.2, size=xshape)
        close(jnp.polyval(p, x, unroll=unroll), np.polyval(p, x))


def test_polyval_batched_coefficients_and_dtypes():
    # p of shape (M, K): each column a polynomial, broadcast against x (JAX's rule).
    p = np.arange(6).reshape(3, 2)
    out = jnp.polyval(p, np.array([[1], [2]]))
    assert out.dtype == jnp.int32 and out.shape == (2, 2)
    np.testing.assert_array_equal(out, [[6, 9], [8, 15]])
    assert jnp.polyval(jnp.zeros((0,)), 2.0).shape == ()
    with pytest.raises(ValueError, match="at least one dimension"):
        jnp.polyval(1.0, 2.0)


def test_polyval_grad_jit_vmap(x64):
    p, x = RNG.normal(size=5), RNG.normal(size=3)
    check_grads(lambda p, x: jnp.polyval(p, x), (p, x), order=2)
    close(xjax.jit(jnp.polyval, static_argnames="unroll")(p, x, unroll=2), np.polyval(p, x))
    close(xjax.vmap(jnp.polyval, in_axes=(None, 0))(p, x), np.polyval(p, x))


# ---- polymul, polydiv --------------------------------------------------------------------------

@settings(max_examples=25)
@given(n=st.integers(1, 8), m=st.integers(1, 8))
def test_polymul_polydiv_match_numpy(n, m):
    with xjax.enable_x64(True):
        a, b = RNG.normal(size=n), RNG.normal(size=m)
        b[0] = 1.0 + abs(b[0])  # a leading coefficient well away from zero
        close(jnp.polymul(a, b), np.polymul(a, b))
        q, r = jnp.polydiv(a, b)
        nq, nr = np.polydiv(a, b)
        close(q, nq if n >= m else np.zeros(1))
        # JAX keeps the remainder at u's length, its leading entries zero.
        assert r.shape == (n,)
        close(r[n - nr.shape[0]:], nr, rtol=1e-9, atol=1e-12)
        back = jnp.polyadd(jnp.polymul(q, b), r)  # q b + r == a, up to leading zeros
        close(back[back.shape[0] - n:], a, rtol=1e-9, atol=1e-12)
        close(back[:back.shape[0] - n], 0, atol=1e-12)


def test_polymul_polydiv_dtypes_and_trimming():
    out = jnp.polymul(jnp.array([0, 1, 2]), jnp.array([3, 4]))
    assert out.dtype == jnp.float32  # always inexact, as JAX
    np.testing.assert_array_equal(out, [0, 3, 10, 8])
    np.testing.assert_array_equal(jnp.polymul(jnp.array([0, 1, 2]), jnp.array([3, 4]), trim_leading_zeros=True),
                                  [3, 10, 8])
    np.testing.assert_array_equal(jnp.polymul(jnp.zeros(0), jnp.array([1., 2.])), [0, 0])
    q, r = jnp.polydiv(jnp.array([3., 5, 7, 9]), jnp.array([2., 1]), trim_leading_zeros=True)
    np.testing.assert_array_equal(q, [1.5, 1.75, 2.625])
    np.testing.assert_array_equal(r, [6.375])
    with pytest.raises(ValueError, match="1-D"):
        jnp.polymul(jnp.ones((2, 2)), jnp.ones(2))
    with pytest.raises(TypeError):
        jnp.polydiv([1.0, 2.0], jnp.ones(2))  # lists are refused, as JAX


def test_polymul_polydiv_grad_jit_vmap(x64):
    a, b = RNG.normal(size=4), RNG.normal(size=2) + np.array([2.0, 0.0])
    check_grads(jnp.polymul, (a, b), order=2)
    check_grads(lambda u, v: jnp.polydiv(u, v)[0], (a, b), order=1)
    close(xjax.jit(jnp.polydiv)(a, b)[1], jnp.polydiv(a, b)[1])
    bs = RNG.normal(size=(3, 2)) + np.array([2.0, 0.0])
    out = xjax.vmap(jnp.polymul, in_axes=(None, 0))(a, bs)
    close(out, np.stack([np.polymul(a, v) for v in bs]))


# ---- polyfit ----------------------------------------------------------------------------------

def _fit_data(n=30):
    x = np.linspace(-2, 3, n)
    y = np.polyval([0.5, -1.0, 2.0], x) + RNG.normal(size=n) * 0.3
    return x, y, RNG.uniform(0.5, 2.0, size=n)


@pytest.mark.parametrize("deg", [0, 1, 2, 5])
def test_polyfit_matches_numpy(x64, deg):
    x, y, w = _fit_data()
    close(jnp.polyfit(x, y, deg), np.polyfit(x, y, deg), rtol=1e-9)
    close(jnp.polyfit(x, y, deg, w=w), np.polyfit(x, y, deg, w=w), rtol=1e-9)
    y2 = np.stack([y, np.cos(x)], axis=1)
    close(jnp.polyfit(x, y2, deg), np.polyfit(x, y2, deg), rtol=1e-9)


def test_polyfit_full_and_cov(x64):
    x, y, w = _fit_data()
    c, resid, rank, s, rcond = jnp.polyfit(x, y, 2, full=True)
    nc, nresid, nrank, ns, nrcond = np.polyfit(x, y, 2, full=True)
    close(c, nc, rtol=1e-9)
    close(resid, nresid, rtol=1e-9)
    assert int(rank) == nrank and float(rcond) == nrcond
    close(s, ns, rtol=1e-9)
    for kind in (True, "unscaled"):
        c, v = jnp.polyfit(x, y, 2, w=w, cov=kind)
        nc, nv = np.polyfit(x, y, 2, w=w, cov=kind)
        close(c, nc, rtol=1e-9)
        close(v[..., 0] if v.ndim == 3 else v, nv, rtol=1e-8)
    y2 = np.stack([y, 2 * y], axis=1)
    c, v = jnp.polyfit(x, y2, 2, cov=True)
    nc, nv = np.polyfit(x, y2, 2, cov=True)
    assert v.shape == (3, 3, 2)
    close(v, nv, rtol=1e-8)


def test_polyfit_errors():
    x = np.arange(5.0)
    with pytest.raises(ValueError, match="deg >= 0"):
        jnp.polyfit(x, x, -1)
    with pytest.raises(TypeError, match="1D vector for x"):
        jnp.polyfit(np.ones((2, 2)), x, 1)
    with pytest.raises(TypeError, match="same length"):
        jnp.polyfit(x, x[:3], 1)
    with pytest.raises(TypeError, match="1D or 2D"):
        jnp.polyfit(x, np.ones((5, 1, 1)), 1)
    with pytest.raises(TypeError, match="w and y to have the same length"):
        jnp.polyfit(x, x, 1, w=np.ones(4))
    with pytest.raises(TypeError, match="1-d array for weights"):
        jnp.polyfit(x, x, 1, w=np.ones((5, 1)))
    with pytest.raises(ValueError, match="must exceed order"):
        jnp.polyfit(x[:3], x[:3], 2, cov=True)


def test_polyfit_grad_jit_vmap(x64):
    x, y, _ = _fit_data(12)
    check_grads(lambda y: jnp.polyfit(x, y, 2), (y,), order=1, modes=("rev",))
    close(xjax.jit(lambda y: jnp.polyfit(x, y, 2))(y), np.polyfit(x, y, 2), rtol=1e-9)
    ys = RNG.normal(size=(3, 12))
    close(xjax.vmap(lambda y: jnp.polyfit(x, y, 1))(ys), np.stack([np.polyfit(x, v, 1) for v in ys]), rtol=1e-9)


# ---- r_ and c_ -------------------------------------------------------------------------------

R_CASES = [
    lambda m: m.r_[-1:5, 0, 0, 1:4],
    lambda m: m.r_[-1:1:6j, 0, 1:4],
    lambda m: m.r_[1.5, 2],
    lambda m: m.r_[0:10:3],
    lambda m: m.r_["0,2", [1, 2, 3], [4, 5, 6]],
    lambda m: m.r_["0,2,0", [1, 2, 3], [4, 5, 6]],
    lambda m: m.r_["1,2,0", [1, 2, 3], [4, 5, 6]],
    lambda m: m.r_["0,2,-2", [1, 2, 3], [4, 5, 6]],
    lambda m: m.r_["r", [1, 2, 3], [4, 5, 6]],
    lambda m: m.r_["c", [1, 2, 3], [4, 5, 6]],
    lambda m: m.r_[np.ones((2, 2)), np.zeros((1, 2))],
    lambda m: m.c_[[[0, 1, 2], [3, 4, 5]], [[0, 1, 2], [3, 4, 5]]],
    lambda m: m.c_[[1, 2], [3, 4]],
    lambda m: m.c_["0,2,0", [1, 2, 3], [4, 5, 6]],
    lambda m: m.c_["c", [1, 2, 3], [4, 5, 6]],
    lambda m: m.c_[0:1:3j, np.ones(3)],
]


@pytest.mark.parametrize("case", range(len(R_CASES)))
def test_r_c_match_numpy(case):
    out, ref = R_CASES[case](jnp), R_CASES[case](np)
    assert out.shape == ref.shape
    close(out, ref, rtol=1e-6)
    # Dtypes as JAX gives them: NumPy's, narrowed to 32 bits.
    assert out.dtype == {np.dtype("int64"): jnp.int32, np.dtype("float64"): jnp.float32}[ref.dtype]


def test_r_c_directive_past_three_numbers_is_ignored():
    # JAX's rule (NumPy reads a fourth number as the matrix flag).
    assert jnp.r_["0,2,0,7", [1, 2], [3, 4]].shape == (4, 1)


def test_r_c_errors():
    with pytest.raises(ValueError, match="could not understand directive 'a'"):
        jnp.r_["a", 1]
    with pytest.raises(ValueError, match="placed at the beginning"):
        jnp.r_[1, "0"]
    with pytest.raises(TypeError, match="Cannot concatenate"):
        jnp.c_[1:3, 3.0]
    assert len(jnp.r_) == 0 and len(jnp.c_) == 0


def test_r_c_of_traced_arrays():
    f = xjax.jit(lambda a, b: jnp.r_[a, 0.0, b])
    np.testing.assert_array_equal(f(jnp.ones(2), jnp.arange(2.0)), [1, 1, 0, 0, 1])
    g = xjax.vmap(lambda a: jnp.c_[a, 2 * a])
    np.testing.assert_array_equal(g(jnp.ones((2, 3))), np.ones((2, 3, 2)) * np.array([1, 2]))


# ---- i0 and kaiser ----------------------------------------------------------------------------

def test_i0_matches_numpy(x64):
    x = np.concatenate([RNG.uniform(-700, 700, 500), [0.0, -0.0, 1e-300]])
    close(jnp.i0(x), np.i0(x), rtol=1e-14, atol=0)
    assert jnp.i0(jnp.arange(3)).dtype == jnp.float64
    with pytest.raises(TypeError):
        jnp.i0([1.0, 2.0])


def test_i0_float32_and_gradient():
    np.testing.assert_allclose(jnp.i0(np.float32([-2, 0, 1, 3])), np.i0([-2.0, 0, 1, 3]), rtol=2e-6)
    # I0 is even and smooth: its derivative at 0 is 0 (|x| would give NaN or a one-sided slope).
    assert float(xjax.grad(jnp.i0)(0.0)) == 0.0
    with xjax.enable_x64(True):
        check_grads(jnp.i0, (RNG.uniform(-5, 5, 7),), order=2)
        close(xjax.grad(jnp.i0)(-1.5), special.i1(-1.5), rtol=1e-12)  # I0' = I1
        close(xjax.jit(jnp.i0)(np.array([0.5])), np.i0([0.5]), rtol=1e-14)
        close(xjax.vmap(xjax.grad(jnp.i0))(np.array([0.5, 2.0])), special.i1([0.5, 2.0]), rtol=1e-12)


@pytest.mark.parametrize("m, beta", [(0, 1.0), (1, 3.0), (2, 0.0), (7, 1.5), (16, 8.6), (51, 14.0)])
def test_kaiser_matches_numpy(x64, m, beta):
    close(jnp.kaiser(m, beta), np.kaiser(m, beta), rtol=1e-13)


def test_kaiser_float32_jit_and_grad():
    w = jnp.kaiser(4, 1.5)
    assert w.dtype == jnp.float32
    np.testing.assert_allclose(w, np.kaiser(4, 1.5), rtol=2e-6)
    with xjax.enable_x64(True):
        close(xjax.jit(lambda b: jnp.kaiser(9, b))(5.0), np.kaiser(9, 5.0), rtol=1e-13)
        check_grads(lambda b: jnp.kaiser(9, b), (5.0,), order=1)


# ---- histogram2d, histogramdd -----------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [
    dict(bins=4),
    dict(bins=(3, 4, 5), range=[(-2, 2), None, (-1, 1)]),
    dict(bins=3, density=True),
    dict(bins=[np.array([-3., 0, 1, 3]), 2, 3], weights=np.arange(60.0)),
    dict(bins=[2, 3, 4], weights=np.arange(60.0), density=True),
])
def test_histogramdd_matches_numpy(x64, kwargs):
    sample = RNG.normal(size=(60, 3))
    sample[0] = 3.0  # a point on the last edge belongs to the last bin
    hist, edges = jnp.histogramdd(sample, **kwargs)
    nhist, nedges = np.histogramdd(sample, **kwargs)
    close(hist, nhist, rtol=1e-12)
    for e, ne in zip(edges, nedges):
        close(e, ne, rtol=1e-12)


@pytest.mark.parametrize("kwargs", [
    dict(), dict(bins=5), dict(bins=[3, 6]), dict(bins=np.array([-3., -1, 0, 1, 3])),
    dict(bins=4, range=[(-1, 1), (-2, 2)], density=True), dict(bins=3, weights=np.linspace(0, 1, 40)),
])
def test_histogram2d_matches_numpy(x64, kwargs):
    x, y = RNG.normal(size=40), RNG.normal(size=40)
    out, ref = jnp.histogram2d(x, y, **kwargs), np.histogram2d(x, y, **kwargs)
    for a, b in zip(out, ref):
        close(a, b, rtol=1e-12)


def test_histogram_dtypes_errors_jit_vmap():
    x, y = RNG.normal(size=20).astype(np.float32), RNG.normal(size=20).astype(np.float32)
    hist, _, _ = jnp.histogram2d(x, y, bins=np.array([-3., 0, 3]))
    assert hist.dtype == jnp.int32  # counts without weights and density are integers, as JAX
    with pytest.raises(ValueError, match="one weight for each sample"):
        jnp.histogramdd(np.ones((5, 2)), weights=np.ones(4))
    with pytest.raises(ValueError, match="a bin for each dimension"):
        jnp.histogramdd(np.ones((5, 2)), bins=[2, 3, 4])
    with pytest.raises(ValueError, match="range must be a sequence of 2 pairs"):
        jnp.histogramdd(np.ones((5, 2)), range=[(0, 1)])
    f = xjax.jit(lambda a, b: jnp.histogram2d(a, b, bins=3, range=[(-3, 3), (-3, 3)])[0])
    np.testing.assert_array_equal(f(x, y), np.histogram2d(x, y, bins=3, range=[(-3, 3), (-3, 3)])[0])
    batch = RNG.normal(size=(2, 20, 2)).astype(np.float32)
    g = xjax.vmap(lambda s: jnp.histogramdd(s, bins=2, range=[(-3, 3), (-3, 3)])[0])
    np.testing.assert_array_equal(g(batch), np.stack([np.histogramdd(s, bins=2, range=[(-3, 3), (-3, 3)])[0]
                                                       for s in batch]))
