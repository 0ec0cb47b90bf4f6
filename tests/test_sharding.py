"""jax.sharding on one device: arrays' and abstract values' shardings, meshes, PartitionSpec, and the
refusal of `out_sharding=`/`device=` layouts that split an array over devices (issue 29). Reprs
recorded from JAX 0.10.2. Arrays split over several devices: test_sharded_arrays.py."""
import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P, SingleDeviceSharding


def test_array_and_abstract_value_shardings():
    x = jnp.ones((2, 3))
    assert repr(x.sharding) == "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)"
    assert x.sharding == SingleDeviceSharding(jax.devices()[0])
    assert x.sharding.device_set == {jax.devices()[0]} and x.sharding.is_fully_replicated
    assert x.sharding.shard_shape((3, 4)) == (3, 4) and x.sharding.num_devices == 1
    s = jax.typeof(x).sharding
    assert repr(s) == "NamedSharding(mesh=AbstractMesh((), axis_types=()), spec=P(None, None))"
    assert s.mesh.empty and not s.mesh.are_all_axes_explicit
    jax.jit(lambda a: jax.typeof(a).sharding.mesh.empty or 1 / 0)(x)  # a tracer's type has one too


def test_jit_retraces_under_a_mesh():
    # A trace reads the mesh jax.set_mesh sets (values recorded from JAX 0.10.2): a signature cached
    # without one, also on the C++ call path, is not reused under one, nor the other way round.
    f = jax.jit(lambda a: a + (1 if jax.sharding.get_abstract_mesh().empty else 2))
    x = jnp.ones(3)
    outs = [f(x), f(x)]
    with jax.set_mesh(jax.make_mesh((1,), ("x",))):
        outs += [f(x), f(x)]
    outs += [f(x)]
    assert [float(o[0]) for o in outs] == [2.0, 2.0, 3.0, 3.0, 2.0]


def test_partition_spec():
    assert repr(P(("a", "b"), None)) == "P(('a', 'b'), None)"
    assert P("a") == P("a") and P("a", None) != P("a") and len(P("a", None)) == 2
    assert P(("a",)) == P("a") and hash(P("a", None)) == hash(P("a", None))
    assert P("a") + ("b",) == P("a", "b") and ("b",) + P("a") == P("b", "a")
    assert jax.P is P and jax.tree.leaves(P("a")) == [P("a")]  # a leaf, not a tuple


def test_meshes():
    m = jax.make_mesh((1,), ("x",))
    assert m.axis_types == (AxisType.Explicit,) and m.are_all_axes_explicit and m.size == 1
    assert dict(m.shape) == {"x": 1} and not m.empty
    assert repr(Mesh(np.array(jax.devices()), ("d",))) == "Mesh(axis_sizes=(1,), axis_names=('d',), axis_types=(Auto,))"
    s = NamedSharding(m, P(None, "x"))
    assert repr(s) == "NamedSharding(mesh=Mesh('x': 1, axis_types=(Explicit,)), spec=P(None, 'x'), memory_kind=device)"
    assert s.is_fully_replicated and s.shard_shape((4, 6)) == (4, 6) and s.num_devices == 1
    with pytest.raises(ValueError, match="Resource axis: y of P\\('y',\\) is not found in mesh"):
        NamedSharding(m, P("y"))
    assert repr(jax.sharding.get_abstract_mesh()) == "AbstractMesh((), axis_types=())"
    with jax.set_mesh(m):
        assert jax.sharding.get_abstract_mesh().axis_names == ("x",)
        out = jnp.zeros((2, 3), out_sharding=s)  # whole on the one device: allowed
    np.testing.assert_array_equal(out, np.zeros((2, 3)))
    placed = jax.device_put(np.ones(3, np.float32), s)  # a whole-array layout: placed on the one device
    assert isinstance(placed, jax.Array) and placed.sharding == SingleDeviceSharding(jax.devices()[0])
    with pytest.raises(ValueError, match="needs 2 devices"):
        jax.make_mesh((2,), ("x",))


def test_splitting_over_devices_is_refused():
    two = Mesh(np.array([jax.devices()[0], jax.devices()[0]], dtype=object), ("x",))  # a stand-in for 2 devices
    with pytest.raises(NotImplementedError, match="issue 29"):
        jnp.zeros((4,), out_sharding=NamedSharding(two, P("x")))
    np.testing.assert_array_equal(jnp.ones((2,), device=NamedSharding(two, P())), [1, 1])  # replicated: fine
    with pytest.raises(ValueError, match="must name each device once"):  # device_put splits over real devices only
        jax.device_put(np.ones(4), NamedSharding(two, P("x")))
    with pytest.raises(TypeError, match="NamedSharding: spec must be a PartitionSpec"):
        NamedSharding(two, "x")


def test_whole_arrays_have_one_shard():
    x = jnp.arange(6.0).reshape(2, 3)
    (s,) = x.addressable_shards
    assert s.device == jax.devices()[0] and s.index == (slice(None), slice(None)) and s.replica_id == 0
    assert s.data is x and x.is_fully_replicated
    one = NamedSharding(jax.make_mesh((1,), ("x",)), P("x"))
    np.testing.assert_array_equal(jax.lax.with_sharding_constraint(x, one), np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(jax.jit(lambda v: jax.lax.with_sharding_constraint(v * 2, one))(x),
                                  2 * np.arange(6.0).reshape(2, 3))
