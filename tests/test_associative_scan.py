"""lax.associative_scan against a Python loop: pytrees, axes, reverse, jit, vmap and gradients."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import xjax as jax
import xjax.numpy as jnp
from xjax import lax
from xjax.test_util import check_grads


def loop_scan(fn, xs, axis, reverse):
    """The prefix combination, one element at a time (NumPy); reversed: [.., f(f(z, y), x), f(z, y), z]."""
    xs = np.moveaxis(xs, axis, 0)
    order = range(len(xs) - 1, -1, -1) if reverse else range(len(xs))
    out, acc = np.empty_like(xs), None
    for i in order:
        acc = xs[i] if acc is None else fn(acc, xs[i])
        out[i] = acc
    return np.moveaxis(out, 0, axis)


@given(shape=st.lists(st.integers(0, 9), min_size=1, max_size=3), data=st.data(), reverse=st.booleans())
def test_sums_and_maxima_match_a_loop(shape, data, reverse):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = np.random.default_rng(len(shape)).integers(-50, 50, shape).astype(np.int32)
    for fn, np_fn in [(jnp.add, np.add), (jnp.maximum, np.maximum)]:
        got = lax.associative_scan(fn, jnp.asarray(x), reverse=reverse, axis=axis)
        np.testing.assert_array_equal(got, loop_scan(np_fn, x, axis, reverse))


@pytest.mark.parametrize("n", [1, 2, 5, 8, 13])
@pytest.mark.parametrize("reverse", [False, True])
def test_a_non_commutative_pytree_combination(n, reverse):
    # affine maps x -> a x + b composed: (a1, b1) then (a2, b2) is (a1 a2, a2 b1 + b2)
    a = np.linspace(0.5, 1.5, n).astype(np.float32)
    b = np.linspace(-1.0, 2.0, n).astype(np.float32)
    fn = lambda p, q: (p[0] * q[0], q[0] * p[1] + q[1])
    got_a, got_b = lax.associative_scan(fn, (jnp.asarray(a), jnp.asarray(b)), reverse=reverse)
    pairs = np.stack([a, b], 1).astype(np.float64)
    want = loop_scan(lambda p, q: np.array([p[0] * q[0], q[0] * p[1] + q[1]]), pairs, 0, reverse)
    np.testing.assert_allclose(got_a, want[:, 0], rtol=1e-5)
    np.testing.assert_allclose(got_b, want[:, 1], rtol=1e-5, atol=1e-6)


def test_under_jit_and_vmap():
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    got = jax.jit(jax.vmap(lambda r: lax.associative_scan(jnp.add, r)))(x)
    np.testing.assert_allclose(got, np.cumsum(x, 1))


def test_gradient_checks_numerically():
    jax.config.update("jax_enable_x64", True)
    try:
        x = np.array([0.3, -1.2, 0.8, 1.5, -0.4])
        check_grads(lambda x: jnp.sum(jnp.sin(lax.associative_scan(jnp.multiply, x))), (x,), order=2)
    finally:
        jax.config.update("jax_enable_x64", False)


def test_errors():
    with pytest.raises(ValueError, match="same first dimension"):
        lax.associative_scan(lambda a, b: a, (jnp.ones(3), jnp.ones(4)))
    with pytest.raises(ValueError, match="elementwise"):
        lax.associative_scan(lambda a, b: jnp.sum(a + b), jnp.ones(4))
