"""jnp.interp (period=, 'extrapolate'), jnp.cov/corrcoef (fweights, aweights, dtype) and
jnp.gradient (coordinate arrays) against NumPy in float64, with JAX's extensions and refusals."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xjax.numpy as jnp
from xjax.test_util import check_grads


pytestmark = pytest.mark.usefixtures("x64")  # conftest.py's, for every test here


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 9), seed=st.integers(0, 2**16), period=st.sampled_from([None, 3.0, -7.5]))
def test_interp_against_numpy(n, seed, period):
    rng = np.random.default_rng(seed)
    xp = np.sort(rng.uniform(0, 10, n))
    fp = rng.standard_normal(n)
    x = rng.uniform(-3, 13, 17)
    np.testing.assert_allclose(jnp.interp(x, xp, fp, period=period), np.interp(x, xp, fp, period=period),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(jnp.interp(x, xp, fp, left=-5.0, right=5.0),
                               np.interp(x, xp, fp, left=-5.0, right=5.0), rtol=1e-12, atol=1e-12)


def test_interp_extrapolate_and_complex():
    xp, fp = np.array([0.0, 1.0, 3.0]), np.array([1.0, 3.0, 2.0])
    np.testing.assert_allclose(jnp.interp(np.array([-1.0, 4.0]), xp, fp, left="extrapolate", right="extrapolate"),
                               [-1.0, 1.5])
    fpc = fp + 1j * fp[::-1]
    np.testing.assert_allclose(jnp.interp(np.array([0.5, 2.0]), xp, fpc), np.interp([0.5, 2.0], xp, fpc))
    with pytest.raises(ValueError, match="'extrapolate'"):
        jnp.interp(1.0, xp, fp, left="wild")
    with pytest.raises(ValueError, match="period must be a scalar"):
        jnp.interp(1.0, xp, fp, period=np.ones(2))


def test_interp_gradient():
    xp, fp = np.array([0.0, 1.0, 3.0, 4.5]), np.array([1.0, 3.0, 2.0, -1.0])
    check_grads(lambda x: jnp.interp(x, xp, fp, period=5.0), (np.array([0.3, 2.2, 7.9]),), order=1)
    check_grads(lambda f: jnp.interp(np.array([0.3, 2.2]), xp, f), (fp,), order=1, modes=["fwd", "rev"])


@pytest.mark.parametrize("kwargs", [{}, {"fweights": "f"}, {"aweights": "a"}, {"fweights": "f", "aweights": "a"},
                                    {"fweights": "f", "aweights": "a", "ddof": 2}, {"aweights": "a", "bias": True},
                                    {"rowvar": False}])
def test_cov_weights_against_numpy(kwargs):
    rng = np.random.default_rng(0)
    m = rng.standard_normal((3, 9))
    weights = {"f": rng.integers(0, 4, 9), "a": rng.uniform(0.1, 2, 9)}
    kw = {k: weights[v] if isinstance(v, str) else v for k, v in kwargs.items()}
    data = m.T if kw.get("rowvar") is False else m
    np.testing.assert_allclose(jnp.cov(data, **kw), np.cov(data, **kw), rtol=1e-12)
    mc = m + 1j * rng.standard_normal((3, 9))
    np.testing.assert_allclose(jnp.cov(mc, **{k: v for k, v in kw.items() if k != "rowvar"}),
                               np.cov(mc, **{k: v for k, v in kw.items() if k != "rowvar"}), rtol=1e-12)


def test_cov_edges_and_refusals():
    assert jnp.cov(np.zeros((0, 3))).shape == (0, 0)
    assert np.isnan(jnp.cov(np.zeros((2, 0)))).all()
    assert jnp.cov(np.ones((3, 5)), dtype=np.float32).dtype == np.float32
    np.testing.assert_allclose(jnp.corrcoef(np.arange(10.0).reshape(2, 5), dtype=np.float32), np.ones((2, 2)))
    with pytest.raises(TypeError, match="fweights must be integer"):
        jnp.cov(np.ones((2, 3)), fweights=np.ones(3))
    with pytest.raises(RuntimeError, match="incompatible numbers of samples and aweights"):
        jnp.cov(np.ones((2, 3)), aweights=np.ones(2))
    with pytest.raises(ValueError, match="dtype must be a subclass of float or complex"):
        jnp.cov(np.ones((2, 3)), dtype=np.int32)


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(2, 5), min_size=1, max_size=3), seed=st.integers(0, 2**16))
def test_gradient_with_coordinates_against_numpy(shape, seed):
    rng = np.random.default_rng(seed)
    f = rng.standard_normal(shape)
    coords = [np.cumsum(rng.uniform(0.1, 1.0, n)) for n in shape]
    spacing = [c if i % 2 == 0 else 0.5 for i, c in enumerate(coords)]  # arrays and scalars mixed
    got, want = jnp.gradient(f, *spacing), np.gradient(f, *spacing)
    for g, w in zip(got if isinstance(got, list) else [got], want if isinstance(want, (list, tuple)) else [want]):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(jnp.gradient(f, coords[-1], axis=-1), np.gradient(f, coords[-1], axis=-1),
                               rtol=1e-12, atol=1e-12)


def test_gradient_refusals():
    f = np.ones((3, 4))
    with pytest.raises(NotImplementedError, match="edge_order"):
        jnp.gradient(f, edge_order=2)
    with pytest.raises(ValueError, match="same length as the dimension"):
        jnp.gradient(f, np.arange(2.0), axis=0)
    with pytest.raises(TypeError, match="Invalid number of spacing arguments"):
        jnp.gradient(f, 1.0, 2.0, 3.0)
    assert jnp.gradient(f, axis=()) == []


def test_weighted_cov_gradient():
    rng = np.random.default_rng(3)
    m, w = rng.standard_normal((3, 6)), rng.uniform(0.5, 2, 6)
    check_grads(lambda m: jnp.cov(m, aweights=w, fweights=np.arange(6)), (m,), order=2)
