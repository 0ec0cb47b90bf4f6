"""jax.linear_transpose and jax.jacobian, against NumPy and values recorded from JAX 0.10.2."""
import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp


def test_transpose_of_a_linear_map_is_its_matrix_transposed():
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    t = jax.linear_transpose(lambda x: jnp.dot(jnp.asarray(a), x), jax.ShapeDtypeStruct((3,), jnp.float32))
    (ct,) = t(jnp.array([1.0, -2.0]))
    np.testing.assert_array_equal(ct, a.T @ np.float32([1.0, -2.0]))


def test_pytrees_jit_and_constants():
    def f(x, y):
        return {"a": 2.0 * x + y.sum(), "b": jnp.dot(jnp.ones((2, 3)), y)}

    t = jax.linear_transpose(f, jnp.float32(1.0), jnp.ones(3))
    ct = {"a": jnp.float32(1.0), "b": jnp.array([1.0, 2.0])}
    for got in (t(ct), jax.jit(t)(ct)):  # the transposed function is a pytree (it can cross jit)
        assert isinstance(got, tuple) and len(got) == 2
        np.testing.assert_array_equal(got[0], 2.0)  # recorded from JAX 0.10.2
        np.testing.assert_array_equal(got[1], [4.0, 4.0, 4.0])


def test_refusals():
    with pytest.raises(NotImplementedError, match="'sin'"):
        jax.linear_transpose(jnp.sin, 1.0)(1.0)
    with pytest.raises(TypeError, match="linear_transpose only supports"):
        jax.linear_transpose(lambda x: x.astype(jnp.int32), 1.0)
    t = jax.linear_transpose(lambda x: 3.0 * x, jnp.ones(2))
    with pytest.raises(TypeError, match="cotangent type does not match"):
        t(jnp.ones(3))
    with pytest.raises(TypeError, match="cotangent tree does not match"):
        t((jnp.ones(2),))


def test_jacobian_is_jacrev():
    f = lambda x: jnp.array([x[0] * x[1], jnp.sin(x[1])])  # noqa: E731
    x = jnp.array([2.0, 0.5])
    np.testing.assert_allclose(jax.jacobian(f)(x), [[0.5, 2.0], [0.0, np.cos(0.5)]], rtol=1e-6)
    assert jax.jacobian is jax.jacrev
