"""jax.random.binomial and multinomial: the numbers JAX 0.10.2 draws for the same keys (recorded),
through both of binomial's samplers (inversion for n*q <= 10, BTRS above), its special values, jit
and vmap."""
import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp

nan, inf = float("nan"), float("inf")

# Recorded from JAX 0.10.2: name -> (values, dtype).
RECORDED = {
    'small': ([0.0, 0.0, 1.0, 0.0, 3.0, 4.0, 2.0, 0.0], 'float32'),
    'big': ([16.0, 25.0, 520.0], 'float32'),
    'mixed': ([[0.0, 3.0, 0.0], [4.0, 46.0, 24.0]], 'float32'),
    'bad': ([nan, inf, nan], 'float32'),
    'multi': ([4.0, 12.0, 4.0], 'float32'),
    'multi_b': ([[0.0, 5.0, 5.0], [23.0, 24.0, 53.0]], 'float32'),
    'jit': ([11.0, 12.0, 8.0, 10.0], 'float32'),
    'vmap': ([9.0, 9.0, 9.0], 'float32'),
}


def _draw(name):
    k = jax.random.PRNGKey(3)
    return {
        "small": lambda: jax.random.binomial(k, 5, 0.3, shape=(8,)),
        "big": lambda: jax.random.binomial(k, jnp.array([20.0, 100.0, 1000.0]), jnp.array([0.6, 0.25, 0.5])),
        "mixed": lambda: jax.random.binomial(jax.random.key(1), jnp.array([[3.0], [50.0]]),
                                             jnp.array([0.1, 0.9, 0.5]), shape=(2, 3)),
        "bad": lambda: jax.random.binomial(k, jnp.array([-1.0, jnp.inf, 4.0]), jnp.array([0.5, 0.5, jnp.nan])),
        "multi": lambda: jax.random.multinomial(k, 20.0, jnp.array([0.2, 0.5, 0.3])),
        "multi_b": lambda: jax.random.multinomial(jax.random.key(7), jnp.array([10.0, 100.0]),
                                                  jnp.array([[0.1, 0.6, 0.3], [0.25, 0.25, 0.5]])),
        "jit": lambda: jax.jit(lambda kk: jax.random.binomial(kk, 30.0, 0.4, (4,)))(k),
        "vmap": lambda: jax.vmap(lambda kk: jax.random.binomial(kk, 12.0, 0.7))(jax.random.split(k, 3)),
    }[name]()


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_same_numbers_as_jax(name):
    values, dtype = RECORDED[name]
    out = _draw(name)
    assert str(out.dtype) == dtype
    np.testing.assert_array_equal(out, np.array(values, dtype))


def test_arguments_are_checked():
    k = jax.random.PRNGKey(0)
    with pytest.raises(ValueError, match="must be a float dtype"):
        jax.random.binomial(k, 5, 0.5, dtype=jnp.int32)
    with pytest.raises(ValueError, match="broadcast-compatible"):
        jax.random.binomial(k, jnp.ones((2, 3)), 0.5, shape=(3,))
    with pytest.raises(TypeError, match="binomial requires ndarray or scalar arguments"):
        jax.random.binomial(k, [5], 0.5)
