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
