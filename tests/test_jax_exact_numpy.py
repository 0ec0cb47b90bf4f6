"""jnp and lax results where JAX's semantics differ from NumPy's; the values are recorded from JAX 0.10.2."""
import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax import lax


def same(got, want, dtype):
    assert got.dtype == dtype, got.dtype
    np.testing.assert_array_equal(np.asarray(got), want)


# ---- integer division by zero: the divisor taken as 1 for remainders, sign() for floor_divide ---------

@pytest.mark.parametrize("dtype", [jnp.int8, jnp.int32])
def test_integer_division_by_zero(dtype):
    x, z = jnp.array([7, -7, 0], dtype), jnp.zeros(3, dtype)
    same(jnp.remainder(x, z), [0, 0, 0], dtype)  # JAX: [0 0 0]
    same(jnp.fmod(x, z), [0, 0, 0], dtype)
    same(jnp.floor_divide(x, z), [-2, -2, -1], dtype)  # JAX: [-2 -2 -1]
    q, r = jnp.divmod(x, z)
    same(q, [-2, -2, -1], dtype)
    same(r, [0, 0, 0], dtype)
    same(x % 0, [0, 0, 0], dtype)


def test_unsigned_division_by_zero():
    x, z = jnp.array([7, 5], jnp.uint32), jnp.zeros(2, jnp.uint32)
    same(jnp.remainder(x, z), [0, 0], jnp.uint32)  # JAX: [0 0]
    same(jnp.floor_divide(x, z), [2 ** 32 - 1] * 2, jnp.uint32)  # JAX: [4294967295 4294967295]


def test_integer_division_by_nonzero_keeps_python_semantics():
    x, y = np.array([7, -7, 5, -5, 0], np.int32), np.array([3, 3, -2, -2, 4], np.int32)
    same(jnp.remainder(x, y), np.remainder(x, y), jnp.int32)
    same(jnp.floor_divide(x, y), np.floor_divide(x, y), jnp.int32)
    same(jnp.fmod(x, y), np.fmod(x, y), jnp.int32)


# ---- small functions ------------------------------------------------------------------------------

def test_square_of_bools_is_the_default_int():
    out = jnp.square(jnp.array([True, False]))
    same(out, [1, 0], jnp.int32)
    assert not jnp.square(True).aval.weak_type  # JAX: Array(1, dtype=int32)


def test_geomspace_signs():
    np.testing.assert_array_equal(jnp.geomspace(-1.0, 10.0, 3), [np.nan] * 3)  # JAX: [nan nan nan]
    np.testing.assert_array_equal(jnp.geomspace(0.0, 10.0, 3), [np.nan] * 3)
    np.testing.assert_allclose(jnp.geomspace(-1.0, -10.0, 3), [-1.0, -3.1622777, -10.0], rtol=1e-6)
    np.testing.assert_allclose(jnp.geomspace(1.0, 1000.0, 4), [1.0, 10.0, 100.0, 1000.0], rtol=1e-6)
    np.testing.assert_array_equal(jnp.geomspace(2.0, 8.0, 1), [2.0])


def test_polyder_of_higher_rank_and_orders():
    np.testing.assert_array_equal(jnp.polyder(jnp.ones((3, 2))), [[2.0, 1.0], [2.0, 1.0]])  # JAX's broadcast
    np.testing.assert_array_equal(jnp.polyder(jnp.arange(1.0, 8.0), 3), np.polyder(np.arange(1.0, 8.0), 3))
    same(jnp.polyder(jnp.array([1, 2, 3, 4])), [3.0, 4.0, 3.0], jnp.float32)
    np.testing.assert_array_equal(jnp.polyder(jnp.array([1.0, 2.0]), 0), [1.0, 2.0])
    assert jnp.polyder(jnp.arange(1.0, 3.0), 3).shape == (0,)
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting: shapes=\[\(2, 3\), \(2,\)\]"):
        jnp.polyder(jnp.ones((4, 3)), 2)


def test_broadcasting_errors_as_jax_words_them():
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting: shapes=\[\(2, 3\), \(2,\)\]"):
        jnp.ones((2, 3)) * jnp.ones(2)
    with pytest.raises(TypeError, match=r"add got incompatible shapes for broadcasting: \(5,\), \(4,\)"):
        jnp.add(jnp.ones(5), jnp.ones(4))


def test_stack_and_concatenate_typed_keys():
    k0, k1 = jax.random.key(0), jax.random.key(1)
    keys = jnp.stack([k0, k1])
    assert keys.shape == (2,) and keys.dtype == k0.dtype
    np.testing.assert_array_equal(jax.random.key_data(keys), [[0, 0], [0, 1]])  # JAX's key data
    assert float(jax.random.normal(keys[1])) == float(jax.random.normal(k1))
    assert jnp.stack([jax.random.split(k0, 2)] * 3, axis=-1).shape == (2, 3)
    assert jnp.concatenate([jax.random.split(k0, 2), k1[None]]).shape == (3,)
    with pytest.raises(ValueError, match="is not a valid dtype for JAX type promotion"):
        jnp.stack([k0, jnp.ones(2)])


def test_top_k_returns_a_list():
    out = lax.top_k(jnp.array([3.0, 1.0, 4.0, 1.0, 5.0]), 2)
    assert type(out) is list
    np.testing.assert_array_equal(out[0], [5.0, 4.0])
    np.testing.assert_array_equal(out[1], [4, 2])


def test_vmap_out_axes_none_returns_a_python_scalar_as_it_is():
    assert jax.vmap(lambda x: 1.0, out_axes=None, axis_size=2)(jnp.ones(2)) == 1.0
    assert type(jax.vmap(lambda x: 1.0, out_axes=None, axis_size=2)(jnp.ones(2))) is float
    a, b = jax.vmap(lambda x: (1, x), out_axes=(None, 0))(jnp.ones(2))
    assert a == 1 and type(a) is int and b.shape == (2,)
    assert isinstance(jax.vmap(lambda x: 1.0, axis_size=2)(jnp.ones(2)), jax.Array)  # out_axes=0: broadcast
