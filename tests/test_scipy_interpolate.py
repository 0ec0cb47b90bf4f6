"""jax.scipy.interpolate.RegularGridInterpolator against scipy.interpolate's in float64 (linear and
nearest, fill values, extrapolation, trailing value axes, the forms of the query points), as a
pytree under jit and vmap, gradients, and JAX's errors."""
import numpy as np
import pytest
import scipy.interpolate as si
from hypothesis import given, settings, strategies as st

import xjax
import xjax.numpy as jnp
from xjax.scipy.interpolate import RegularGridInterpolator
from xjax.test_util import check_grads

RNG = np.random.default_rng(2702)


@pytest.fixture
def x64():
    with xjax.enable_x64(True):
        yield


def grid(sizes, rng=RNG):
    return tuple(np.sort(rng.uniform(-2, 2, n)) + np.arange(n) * 1e-3 for n in sizes)


def assert_like_scipy(got, want):
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13, atol=1e-13, equal_nan=True)


@pytest.mark.parametrize("method", ["linear", "nearest"])
@pytest.mark.parametrize("fill_value", [np.nan, None, 2.5])
def test_against_scipy(x64, method, fill_value):
    points, values = grid((5, 4)), RNG.normal(size=(5, 4, 3))
    query = RNG.uniform(-2.5, 2.5, (6, 7, 2))
    got = RegularGridInterpolator(points, values, method, fill_value=fill_value)(query)
    want = si.RegularGridInterpolator(points, values, method, bounds_error=False, fill_value=fill_value)(query)
    assert got.shape == want.shape == (6, 7, 3)
    assert_like_scipy(got, want)


@settings(max_examples=20, deadline=None)
@given(sizes=st.lists(st.integers(2, 5), min_size=1, max_size=3), method=st.sampled_from(["linear", "nearest"]),
       seed=st.integers(0, 2 ** 16))
def test_shapes_hypothesis(sizes, method, seed):
    rng = np.random.default_rng(seed)
    points, values = grid(sizes, rng), rng.normal(size=sizes)
    query = rng.uniform(-2.2, 2.2, (4, len(sizes)))
    with xjax.enable_x64(True):
        got = RegularGridInterpolator(points, values, method, fill_value=None)(query)
    assert_like_scipy(got, si.RegularGridInterpolator(points, values, method, bounds_error=False,
                                                      fill_value=None)(query))


def test_query_forms_and_method_override(x64):
    points, values = grid((4, 6)), RNG.normal(size=(4, 6))
    interp, ref = RegularGridInterpolator(points, values), si.RegularGridInterpolator(points, values)
    q0, q1 = RNG.uniform(-1, 1, (3, 1)), RNG.uniform(-1, 1, (1, 5))
    assert_like_scipy(interp((q0, q1)), ref((q0, q1)))  # a tuple of arrays broadcast together
    assert_like_scipy(interp(np.array([0.1, 0.2])), ref(np.array([0.1, 0.2])))  # one point as a 1-d array
    q = RNG.uniform(-1, 1, (5, 2))
    assert_like_scipy(interp(q, method="nearest"), ref(q, method="nearest"))


def test_float32_docstring_example():
    points = (jnp.array([1, 2, 3]), jnp.array([4, 5, 6]))
    values = jnp.array([[10, 20, 30], [40, 50, 60], [70, 80, 90]])
    got = RegularGridInterpolator(points, values, method="linear")(jnp.array([[1.5, 4.5], [2.2, 5.8]]))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, [30.0, 64.0], rtol=1e-6)


def test_pytree_jit_vmap_and_grad(x64):
    points, values = grid((5, 3)), RNG.normal(size=(5, 3))
    interp = RegularGridInterpolator(points, values, fill_value=0.0)
    leaves, treedef = xjax.tree_util.tree_flatten(interp)
    assert len(leaves) == 4  # two grid axes, the values and the fill value
    query = RNG.uniform(-1.5, 1.5, (8, 2))
    want = si.RegularGridInterpolator(points, values, bounds_error=False, fill_value=0.0)(query)
    assert_like_scipy(xjax.jit(lambda f, q: f(q))(interp, query), want)
    stacked = RNG.normal(size=(3, 5, 3))
    batched = xjax.vmap(lambda v: RegularGridInterpolator(points, v)(query))(stacked)
    assert_like_scipy(batched, np.stack([si.RegularGridInterpolator(points, v, bounds_error=False)(query)
                                         for v in stacked]))
    inside = np.stack([RNG.uniform(p[0], p[-1], 4) for p in points], axis=-1)
    check_grads(lambda v, q: RegularGridInterpolator(points, v)(q), (values, inside), order=1)


def test_errors():
    points, values = (jnp.arange(3.0),), jnp.arange(3.0)
    with pytest.raises(ValueError, match="method 'cubic' is not defined"):
        RegularGridInterpolator(points, values, method="cubic")
    with pytest.raises(ValueError, match="method 'spline' is not defined"):
        RegularGridInterpolator(points, values)(jnp.zeros((1, 1)), method="spline")
    with pytest.raises(NotImplementedError, match="bounds_error"):
        RegularGridInterpolator(points, values, bounds_error=True)
    with pytest.raises(ValueError, match="there are 2 point arrays, but values has 1 dimensions"):
        RegularGridInterpolator(points * 2, values)
    with pytest.raises(ValueError, match="fill_value must be either 'None' or of a type compatible"):  # as JAX
        RegularGridInterpolator(points, values, fill_value=1j)
    with pytest.raises(ValueError, match="have dimension 2, but this RegularGridInterpolator has dimension 1"):
        RegularGridInterpolator(points, values)(jnp.zeros((4, 2)))
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
        RegularGridInterpolator(points, [0.0, 1.0, 2.0])
