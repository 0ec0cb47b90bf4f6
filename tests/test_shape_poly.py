"""Symbolic dimensions (jax.export.symbolic_shape) and jax.eval_shape over them, as Keras uses them to
infer its layers' output shapes. Expected shapes recorded from JAX 0.10.2."""
import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp


def sym(spec="(b)", constraints=("b >= 2",)):
    return jax.export.symbolic_shape(spec, constraints=constraints)


def test_symbolic_shape_and_arithmetic_print_as_jax():
    b, = sym()
    assert jax.export.is_symbolic_dim(b) and not jax.export.is_symbolic_dim(3)
    assert [repr(e) for e in (b, b * 8 + 1, 2 - b, b - 2, -3 * b - 1)] == ["b", "8*b + 1", "- b + 2", "b - 2",
                                                                          "- 3*b - 1"]
    assert b - b == 0 and isinstance(b - b, int)
    assert sym("(n, 64, m)", ())[1] == 64


def test_eval_shape_gives_affine_symbolic_dimensions():
    b, = sym()
    out = jax.eval_shape(lambda x, w: (x.reshape(-1), x.sum(0), x[:, None] * 2, x.T @ x, jnp.concatenate([x, x]),
                                       jnp.tanh(x @ w)),
                         jax.ShapeDtypeStruct((b, 5), jnp.float32), np.ones((5, 3), np.float32))
    assert [o.shape for o in out] == [(5 * b,), (5,), (b, 1, 5), (5, 5), (2 * b, 5), (b, 3)]
    assert [repr(o.shape) for o in out][0] == "(5*b,)"  # as JAX prints it
    assert out[0].dtype == np.float32


def test_eval_shape_with_two_symbols():
    n, m = sym("(n, m)", ())
    out = jax.eval_shape(lambda x, y: jnp.concatenate([x, y], axis=1),
                         jax.ShapeDtypeStruct((n, 3), jnp.float32), jax.ShapeDtypeStruct((n, m), jnp.float32))
    assert out.shape == (n, m + 3)


def test_what_is_not_affine_or_not_valid_raises():
    b, = sym()
    with pytest.raises(NotImplementedError, match="not an affine function"):  # JAX: floordiv(b + 1, 2)
        jax.eval_shape(lambda x: x[::2], jax.ShapeDtypeStruct((b, 5), jnp.float32))
    with pytest.raises(TypeError, match="incompatible shapes"):  # b is not 5 for every b
        jax.eval_shape(lambda x: x + jnp.ones(5), jax.ShapeDtypeStruct((b,), jnp.float32))
    with pytest.raises(NotImplementedError, match="supported by jax.eval_shape only"):
        jax.jit(lambda x: x * 2).lower(jax.ShapeDtypeStruct((b,), jnp.float32))
    with pytest.raises(NotImplementedError, match="lower bounds only"):
        sym("(b)", ("b <= 4",))
