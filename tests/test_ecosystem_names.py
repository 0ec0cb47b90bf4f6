"""The JAX names that Flax, NumPyro and BlackJAX need beyond the core API: typed keys as arrays of
a prng_key dtype, typeof, out_sharding, trace_state_clean, scipy.linalg.toeplitz,
nn.initializers.delta_orthogonal, cond's old form, and the names that exist only to raise
NotImplementedError. References are values recorded from JAX 0.10.2, or NumPy/SciPy.
"""
import numpy as np
import pytest
import scipy.linalg

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax._src import core
from xjax.sharding import Mesh, NamedSharding, PartitionSpec, SingleDeviceSharding


@pytest.mark.parametrize("c, r", [([1, 2, 3], None), ([1.0, 2.0, 3.0], [-1.0, -2.0, -3.0, -4.0]), ([5.0], [7.0, 8.0])])
def test_toeplitz_matches_scipy(c, r):
    np.testing.assert_array_equal(xjax.scipy.linalg.toeplitz(np.array(c), None if r is None else np.array(r)),
                                  scipy.linalg.toeplitz(c, r))


def test_toeplitz_broadcasts_leading_axes():
    c, r = np.arange(6.0).reshape(2, 3), np.arange(4.0) + 10
    out = xjax.scipy.linalg.toeplitz(c, r)
    assert out.shape == (2, 3, 4)
    for i in range(2):
        np.testing.assert_array_equal(out[i], scipy.linalg.toeplitz(c[i], r))


def test_delta_orthogonal_matches_jax():
    k = xjax.nn.initializers.delta_orthogonal()(xjax.random.PRNGKey(3), (3, 3, 2, 4))
    # Recorded from JAX 0.10.2: the centre tap holds an orthogonal 2 x 4 matrix, the rest is zero.
    want = [[-0.711297869682312, 0.1881241649389267, -0.2890264689922333, -0.6124772429466248],
            [0.4531198740005493, 0.848662793636322, 0.014643307775259018, -0.27246975898742676]]
    np.testing.assert_allclose(k[1, 1], want, rtol=1e-5, atol=1e-6)
    assert float(jnp.abs(k).sum() - jnp.abs(k[1, 1]).sum()) == 0.0
    with pytest.raises(ValueError, match="fan_in"):
        xjax.nn.initializers.delta_orthogonal()(xjax.random.PRNGKey(3), (3, 3, 4, 2))


def test_ensure_compile_time_eval_runs_concrete_work_while_tracing():
    seen = []

    @xjax.jit
    def f(x):
        with xjax.ensure_compile_time_eval():
            y = jnp.sin(2.0) + jnp.ones(3)
            z = x * 2  # x is a tracer: still traced
        seen.append((isinstance(y, core.Tracer), isinstance(z, core.Tracer)))
        return z + y

    np.testing.assert_allclose(f(1.0), np.full(3, 2 + np.sin(np.float32(2.0)) + 1), rtol=1e-6)
    assert seen == [(False, True)]


def test_trace_state_and_typeof():
    assert core.trace_state_clean()
    xjax.jit(lambda x: [None for _ in [core.trace_state_clean()] if not _] or x)(1.0)  # not clean inside
    assert xjax.typeof(jnp.ones((2, 3))) == core.ShapedArray((2, 3), jnp.float32)
    assert xjax.typeof(2.0).weak_type
    key_aval = xjax.typeof(xjax.random.key(0))
    assert key_aval.shape == () and key_aval.dtype == xjax.random.key(0).dtype and key_aval.sharding is None


def test_trace_state_is_not_clean_under_a_transformation():
    states = []
    xjax.vmap(lambda x: states.append(core.trace_state_clean()) or x)(jnp.ones(2))
    assert states == [False]


def test_opaque_trace_state_compares_traces():
    from xjax.extend.core import get_opaque_trace_state

    outside = get_opaque_trace_state()
    assert outside == get_opaque_trace_state()
    inside = []
    xjax.jit(lambda x: inside.append(get_opaque_trace_state()) or x)(1.0)
    assert inside[0] != outside


def test_typed_keys_are_arrays_of_prng_key_dtype():
    key = xjax.random.key(0)
    assert isinstance(key, xjax.Array)
    assert xjax.dtypes.issubdtype(key.dtype, xjax.dtypes.prng_key)
    assert xjax.dtypes.issubdtype(key.dtype, xjax.dtypes.extended)
    assert xjax.dtypes.issubdtype(key.dtype, key.dtype)
    assert not xjax.dtypes.issubdtype(key.dtype, np.floating)
    assert not xjax.dtypes.issubdtype(np.uint32, xjax.dtypes.prng_key)
    assert xjax.dtypes.issubdtype(np.float32, np.floating)


def test_samplers_take_unsplit_out_sharding():
    key = xjax.random.PRNGKey(0)
    want = xjax.random.normal(key, (3,))
    mesh = Mesh(np.array(xjax.devices()[:1]), ("x",))
    for sharding in (None, PartitionSpec(), PartitionSpec(None), NamedSharding(mesh, PartitionSpec()),
                     SingleDeviceSharding(xjax.devices()[0]), xjax.typeof(want).sharding):
        np.testing.assert_array_equal(xjax.random.normal(key, (3,), out_sharding=sharding), want)
    with pytest.raises(NotImplementedError, match="jax.random.normal: sharding .* splits"):
        xjax.random.normal(key, (3,), out_sharding=PartitionSpec("x"))


def test_array_makers_take_unsplit_out_sharding():
    x = jnp.arange(6.0)
    np.testing.assert_array_equal(jnp.reshape(x, (2, 3), out_sharding=PartitionSpec()), np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(jnp.arange(3, out_sharding=None), np.arange(3))
    np.testing.assert_array_equal(lax.broadcast_in_dim(x, (2, 6), (1,), out_sharding=PartitionSpec(None, None)),
                                  np.broadcast_to(np.arange(6.0), (2, 6)))
    with pytest.raises(ValueError, match="Using PartitionSpec when you are not under a mesh context"):  # (JAX's)
        jnp.reshape(x, (2, 3), out_sharding=PartitionSpec("x"))


def test_cond_old_five_argument_form():
    # cond(pred, true_operand, true_fun, false_operand, false_fun), which JAX still accepts
    assert float(lax.cond(True, 2.0, lambda x: x * 10, 3.0, lambda x: x - 1)) == 20.0
    assert float(lax.cond(False, 2.0, lambda x: x * 10, 3.0, lambda x: x - 1)) == 2.0


def test_tree_registry_membership():
    from xjax._src.tree_util import _registry

    assert tuple in _registry and dict in _registry and type(None) in _registry
    assert int not in _registry and xjax.Array not in _registry


@pytest.mark.parametrize("call, name", [
    (lambda: xjax.scipy.stats.gaussian_kde(jnp.ones(3)), "gaussian_kde"),
    (lambda: xjax.shard_map(lambda x: x, mesh=None, in_specs=None, out_specs=None), "shard_map"),
])
def test_missing_features_raise_by_name(call, name):
    with pytest.raises(NotImplementedError, match=name):
        call()


def test_check_tracer_leaks_is_a_flag_context():
    assert not xjax.config.read("jax_check_tracer_leaks")
    with xjax.check_tracer_leaks():
        assert xjax.config.read("jax_check_tracer_leaks")
    assert not xjax.config.read("jax_check_tracer_leaks")
