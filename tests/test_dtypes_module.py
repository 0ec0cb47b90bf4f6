"""jax.dtypes: extended dtypes (PRNG keys), canonicalisation and promotion; values recorded from JAX 0.10.2."""
import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax import dtypes


def test_extended_dtypes():
    k = jax.random.key(0).dtype
    assert dtypes.issubdtype(k, dtypes.prng_key) and dtypes.issubdtype(k, dtypes.extended)
    assert not dtypes.issubdtype(k, jnp.floating) and not dtypes.issubdtype(jnp.float32, dtypes.extended)
    assert jnp.issubdtype(k, dtypes.prng_key)
    assert dtypes.canonicalize_dtype(k, allow_extended_dtype=True) == k
    with pytest.raises(ValueError, match="extended dtype"):
        dtypes.canonicalize_dtype(k)


def test_canonicalize_promote_and_friends():
    assert dtypes.canonicalize_dtype(jnp.float64) == np.float32 and dtypes.canonicalize_dtype(np.int64) == np.int32
    assert dtypes.result_type(jnp.float16, 1.0) == np.float16
    assert dtypes.scalar_type_of(jnp.int32(1)) is int and dtypes.scalar_type_of(jnp.ones(2)) is float
    assert dtypes.itemsize_bits(jnp.bfloat16) == 16
    assert dtypes.float0 == np.dtype([("float0", np.void, 0)]) and jax.float0 == dtypes.float0
    assert jax.grad(lambda x, i: x, argnums=(0, 1), allow_int=True)(1.0, 2)[1].dtype == dtypes.float0
    assert issubclass(dtypes.TypePromotionError, ValueError)
    assert dtypes.finfo(jnp.bfloat16).bits == 16 and dtypes.iinfo(jnp.int8).min == -128


def test_complex_names_and_arrays():
    assert jnp.complex64 == np.complex64 and not jnp.issubdtype(jnp.float32, jnp.complexfloating)
    assert jnp.zeros(2, jnp.complex64).dtype == jnp.complex64 and jnp.issubdtype(jnp.complex64, jnp.complexfloating)
