"""jax.random.normal with complex dtypes (JAX's bits), random_gamma_p, and jax.nn's scaled matrix products."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import nn, random
from xjax.test_util import check_grads


# JAX 0.10.2's bits (x64 on): random.normal(key(i), shape, dtype) viewed as uint32 (complex64) / uint64 (complex128)
JAX_COMPLEX_NORMAL_BITS = {
    "0": [1060486905, 3218936028, 3206811783, 3216523183, 3204935427, 1041552502, 3209955905, 3196059496, 3206395329,
          3205099162],
    "1": [[4605131622533122824, 4602734725573732016, 4597624127602466134, 4583719875065355733, 13827291134502232256,
           4602705378366803231], [13830324814602580812, 13822149108686922291, 4599155701682857161,
                                  13827381911562894389, 4607795779619484082, 4595209208993497019]],
    "2": [1048339417, 1072542375],
    "legacy": [3218555715, 3215974750, 3214568625, 1033357881, 3199330190, 3171538312, 3207485483, 1046319117],
    "jit": [1050040623, 3212429437, 1062223363, 3204855563, 3203449432, 3210463334],
}


def _bits(x):
    x = np.atleast_1d(np.asarray(x))
    return x.view(np.uint32 if x.dtype == np.complex64 else np.uint64).tolist()


def test_complex_normal_matches_jax_bits():
    with xjax.enable_x64(True):
        cases = {"0": (jnp.complex64, (5,)), "1": (jnp.complex128, (2, 3)), "2": (jnp.complex64, ())}
        for name, (dtype, shape) in cases.items():
            got = random.normal(random.key(int(name)), shape, dtype=dtype)
            assert got.dtype == dtype and got.shape == shape
            assert _bits(got) == JAX_COMPLEX_NORMAL_BITS[name], name
        assert _bits(random.normal(random.PRNGKey(3), (4,), dtype=jnp.complex64)) == JAX_COMPLEX_NORMAL_BITS["legacy"]
        jitted = xjax.jit(lambda k: random.normal(k, (3,), jnp.complex64))(random.key(5))
        assert _bits(jitted) == JAX_COMPLEX_NORMAL_BITS["jit"]


def test_complex_normal_statistics_and_vmap():
    z = np.asarray(random.normal(random.key(1), (200000,), dtype=jnp.complex64))
    assert abs(z.real.var() - 0.5) < 0.01 and abs(z.imag.var() - 0.5) < 0.01
    assert abs(np.mean(z.real * z.imag)) < 0.01 and abs(z.mean()) < 0.01
    keys = random.split(random.key(2), 3)
    np.testing.assert_array_equal(xjax.vmap(lambda k: random.normal(k, (2,), jnp.complex64))(keys),
                                  np.stack([random.normal(k, (2,), jnp.complex64) for k in keys]))
    with pytest.raises(ValueError, match="float or complex"):
        random.normal(random.key(0), (2,), dtype=jnp.int32)


def test_random_gamma_p_is_the_sampler_primitive():
    assert random.random_gamma_p.name == "random_gamma"
    jaxpr = str(xjax.make_jaxpr(lambda k: random.gamma(k, 2.0, (3,)))(random.key(0)))
    assert "random_gamma" in jaxpr


def test_scaled_matmul_against_numpy():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(2, 3, 64)).astype(np.float32), rng.normal(size=(2, 4, 64)).astype(np.float32)
    sa, sb = rng.uniform(0.5, 2, (2, 3, 2)).astype(np.float32), rng.uniform(0.5, 2, (2, 4, 2)).astype(np.float32)
    want = np.einsum("bmk,bnk->bmn", a * np.repeat(sa, 32, -1), b * np.repeat(sb, 32, -1))
    got = nn.scaled_matmul(a, b, sa, sb)
    assert got.dtype == np.float32 and got.shape == (2, 3, 4)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    with xjax.enable_x64(True):
        check_grads(lambda a: nn.scaled_matmul(a, b.astype(np.float64), sa.astype(np.float64), sb.astype(np.float64),
                                               preferred_element_type=np.float64), (a.astype(np.float64),), order=1,
                    modes=["fwd", "rev"])
    with pytest.raises(ValueError, match="3-dimensional"):
        nn.scaled_matmul(a[0], b, sa, sb)
    with pytest.raises(ValueError, match="non-contract"):
        nn.scaled_matmul(a, b, sb, sb)


def test_scaled_dot_general_and_configs():
    config = nn.get_scaled_dot_general_config("mxfp8")
    assert (config.mode, config.block_size, config.global_scale) == ("mxfp8", 32, None)
    assert config.data_type == np.dtype("float8_e4m3fn") and config.scale_type == np.dtype("float8_e8m0fnu")
    nvfp4 = nn.get_scaled_dot_general_config("nvfp4")
    assert nvfp4.block_size == 16 and nvfp4.data_type == np.dtype("float4_e2m1fn")
    with pytest.raises(ValueError, match="Unsupported mode"):
        nn.get_scaled_dot_general_config("int8")
    x, y = np.ones((3, 64), np.float32), np.ones((4, 64), np.float32)
    np.testing.assert_array_equal(nn.scaled_dot_general(x, y, (((1,), (1,)), ((), ()))), np.full((3, 4), 64.0))
    with pytest.raises(NotImplementedError, match="float8"):
        nn.scaled_dot_general(x, y, (((1,), (1,)), ((), ())), configs=[config] * 3)
