"""xjax.nn against values recorded from jax 0.10.2 (tests/jax_values_nn.py), gradients at the edge points
(kinks, infinities, masked entries), jit and eager agreement, and errors."""
import numpy as np
import pytest

import jax_values_nn as ref
import xjax as jax
import xjax.numpy as jnp
from xjax import nn

NAMESPACE = {name: getattr(ref, name) for name in dir(ref) if name.isupper()}
NAMESPACE.update(jax=jax, jnp=jnp, nn=nn)


def _rounding(want):
    """A few float32 ulps of the array's magnitude: sums may round differently from XLA's order."""
    finite = np.abs(want[np.isfinite(want)]) if want.dtype.kind == "f" else np.zeros(1)
    return 4 * np.finfo(np.float32).eps * max(1.0, float(finite.max(initial=0.0)))


def _check(expr, expected):
    if isinstance(expected, str):  # JAX raised this exception
        with pytest.raises(getattr(__builtins__, expected, None) or Exception):
            eval(expr, NAMESPACE)
        return
    out = eval(expr, NAMESPACE)
    outs = out if isinstance(out, tuple) else (out,)
    assert len(outs) == len(expected)
    for got, (values, dtype) in zip(outs, expected):
        assert str(got.dtype) == dtype, expr
        want = np.asarray(values, dtype)
        assert got.shape == want.shape, expr
        np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6, atol=_rounding(want), err_msg=expr)


@pytest.mark.parametrize("expr,expected", ref.VALUES, ids=[e for e, _ in ref.VALUES])
def test_value_matches_jax(expr, expected):
    _check(expr, expected)


@pytest.mark.parametrize("expr,expected", ref.GRADS, ids=[e for e, _ in ref.GRADS])
def test_gradient_matches_jax(expr, expected):
    _check(expr, expected)


def test_inside_jit_matches_eager():
    x = ref.M

    def f(x):
        return nn.gelu(x) + nn.softmax(x, axis=0) + nn.logsumexp(x, axis=1, keepdims=True) + nn.relu6(x)

    np.testing.assert_allclose(np.asarray(jax.jit(f)(x)), np.asarray(f(x)), rtol=1e-6, atol=1e-6)


def test_derivatives_numerically():
    from xjax.test_util import check_grads

    x = ref.M * 0.3
    check_grads(lambda x: nn.softmax(x, where=ref.W), (x,), order=2, modes=["rev"], atol=1e-2, rtol=1e-2)
    check_grads(lambda x: nn.logsumexp(x, axis=1, b=ref.B), (x,), order=2, modes=["fwd", "rev"], atol=1e-2,
                rtol=1e-2)
    check_grads(lambda x: nn.gelu(x, approximate=False), (x,), order=2, modes=["rev"], atol=1e-2, rtol=1e-2)
    check_grads(lambda q, k: nn.dot_product_attention(q, k, ref.V, is_causal=True), (ref.Q, ref.K), order=1,
                modes=["rev"], atol=1e-2, rtol=1e-2)


def test_relu_has_jax_custom_derivative_at_zero():
    g = jax.grad(lambda x: jnp.sum(nn.relu(x) + nn.relu6(x + 6.0) + nn.relu6(x - 6.0)))
    np.testing.assert_array_equal(np.asarray(g(jnp.zeros(3))), np.zeros(3, np.float32))
    assert float(jax.jit(jax.grad(nn.relu))(0.0)) == 0.0


@pytest.mark.parametrize("call,exc,match", [
    (lambda: nn.glu(jnp.ones((2, 3))), ValueError, "divisible by 2"),
    (lambda: nn.one_hot(jnp.arange(3), 2.5), TypeError, "num_classes"),
    (lambda: nn.standardize(ref.M, algorithm="exact"), ValueError, "Unknown algorithm 'exact'"),
    (lambda: nn.dot_product_attention(ref.Q, ref.K, ref.V[..., :4]), ValueError, "value shape should be"),
    (lambda: nn.dot_product_attention(ref.Q[..., :3, :], ref.K, ref.V), ValueError, "multiple of key/value heads"),
    (lambda: nn.dot_product_attention(ref.Q, ref.K, ref.V, mask=jnp.ones((1, 1, 3, 4))), ValueError,
     "mask dtype should be bool"),
    (lambda: nn.dot_product_attention(ref.Q, ref.K, ref.V, implementation="flash"), ValueError,
     "Unsupported implementation"),
    (lambda: nn.softmax([1.0, 2.0]), TypeError, "softmax requires ndarray or scalar arguments"),
])
def test_errors_name_the_problem(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
