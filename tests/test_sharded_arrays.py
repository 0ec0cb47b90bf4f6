"""Arrays split over the CPU devices of one process (jax.device_put with a NamedSharding): their
shards, shardings and types, the make_array_from_* constructors, JAX's errors, and eager ops on them.

The number of devices is fixed at their first use, so each test runs a script in a subprocess with
XJAX_NUM_CPU_DEVICES=4 (a 2x2 mesh). The strings are JAX 0.10.2's, recorded with
XLA_FLAGS=--xla_force_host_platform_device_count=4 JAX_PLATFORMS=cpu.
"""
from isolated import run_isolated

_PRELUDE = """\
import itertools
import numpy as np, xjax as jax, xjax.numpy as jnp
from xjax.sharding import AxisType, NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 2), ("X", "Y"))
auto = jax.make_mesh((2, 2), ("X", "Y"), axis_types=(AxisType.Auto,) * 2)
x_np = np.arange(32, dtype=np.float32).reshape(8, 4)
x = jnp.asarray(x_np)
"""


def run(code, threads="2"):
    return run_isolated(code, prelude=_PRELUDE, env={"XJAX_NUM_CPU_DEVICES": "4", "XJAX_NUM_THREADS": threads})


def test_every_spec_of_a_matrix_places_and_gathers_as_numpy_slices():
    out = run("""
        entries = [None, "X", "Y", ("X", "Y"), ("Y", "X")]
        count = 0
        for a, b in itertools.product(entries, entries):
            names = [n for e in (a, b) if e for n in (e if isinstance(e, tuple) else (e,))]
            if len(names) != len(set(names)):
                continue
            s = NamedSharding(mesh, P(a, b))
            y = jax.device_put(x, s)
            assert y.sharding == s and y.is_fully_replicated == (not names)
            np.testing.assert_array_equal(np.asarray(y), x_np)
            index = s.devices_indices_map(x.shape)
            assert [sh.device for sh in y.addressable_shards] == jax.devices()
            for sh in y.addressable_shards:
                assert sh.index == index[sh.device]
                np.testing.assert_array_equal(np.asarray(sh.data), x_np[sh.index])
            # eager elementwise ops run per device and stay split as JAX's do
            z = jnp.sin(y) * 2 + y
            assert type(z) is type(y) and z.sharding.spec == P(a, b)
            np.testing.assert_array_equal(np.asarray(z), np.asarray(jnp.sin(x) * 2 + x))
            count += 1
        print(count)
        """)
    assert out.split() == ["11"]


def test_shards_types_and_reprs_as_jax_prints_them():
    out = run("""
        for spec in [P("X"), P("X", "Y"), P(None, "Y"), P(("X", "Y")), P(), P(None, ("Y", "X"))]:
            print(jax.typeof(jax.device_put(x, NamedSharding(mesh, spec))))
        z = jax.device_put(x, NamedSharding(mesh, P("X", "Y")))
        print(repr(z.sharding))
        print(repr(jax.typeof(z).sharding))
        print(z.addressable_shards[1])
        print([s.replica_id for s in jax.device_put(x, NamedSharding(mesh, P("X"))).addressable_shards])
        print(z.sharding.devices_indices_map((8, 4)))
        y = jax.device_put(x, NamedSharding(auto, P("X", "Y")))
        print(jax.typeof(y), repr(jax.typeof(y)), repr(jax.typeof(y).sharding))
        i = jax.device_put(jnp.arange(8, dtype=jnp.int32), NamedSharding(mesh, P("X")))
        print(repr(jax.typeof(i)))
        print(repr(y))
        """)
    assert out.splitlines() == [
        "float32[8@X,4]", "float32[8@X,4@Y]", "float32[8,4@Y]", "float32[8@(X,Y),4]", "float32[8,4]",
        "float32[8,4@(Y,X)]",
        "NamedSharding(mesh=Mesh('X': 2, 'Y': 2, axis_types=(Explicit, Explicit)), spec=P('X', 'Y'), "
        "memory_kind=device)",
        "NamedSharding(mesh=AbstractMesh('X': 2, 'Y': 2, axis_types=(Explicit, Explicit), device_kind=cpu, "
        "num_cores=None, platform=cpu), spec=P('X', 'Y'))",
        "Shard(device=CpuDevice(id=1), index=(slice(0, 4, None), slice(2, 4, None)), replica_id=0, data=[[ 2.  3.]",
        " [ 6.  7.]", " [10. 11.]", " [14. 15.]])",
        "[0, 1, 0, 1]",
        "{CpuDevice(id=0): (slice(0, 4, None), slice(0, 2, None)), CpuDevice(id=1): (slice(0, 4, None), "
        "slice(2, 4, None)), CpuDevice(id=2): (slice(4, 8, None), slice(0, 2, None)), CpuDevice(id=3): "
        "(slice(4, 8, None), slice(2, 4, None))}",
        "float32[8,4] ShapedArray(float32[8,4]) NamedSharding(mesh=AbstractMesh('X': 2, 'Y': 2, "
        "axis_types=(Auto, Auto), device_kind=cpu, num_cores=None, platform=cpu), spec=P(None, None))",
        "ShapedArray(int32[8@X])",
        "Array([[ 0.,  1.,  2.,  3.],", "       [ 4.,  5.,  6.,  7.],", "       [ 8.,  9., 10., 11.],",
        "       [12., 13., 14., 15.],", "       [16., 17., 18., 19.],", "       [20., 21., 22., 23.],",
        "       [24., 25., 26., 27.],", "       [28., 29., 30., 31.]], dtype=float32)"]


def test_make_array_from_blocks_and_errors_as_jax_raises_them():
    out = run("""
        s = NamedSharding(mesh, P("X", "Y"))
        calls = []
        a = jax.make_array_from_callback((8, 4), NamedSharding(mesh, P("X")), lambda idx: calls.append(idx) or x_np[idx])
        print(jax.typeof(a), len(calls), np.array_equal(a, x_np))  # one call per distinct block
        blocks = [x_np[idx] for idx in s.addressable_devices_indices_map((8, 4)).values()]
        b = jax.make_array_from_single_device_arrays((8, 4), s, [jnp.asarray(v) for v in blocks])
        print(jax.typeof(b), np.array_equal(b, x_np), b.sharding == s)
        c = jax.make_array_from_process_local_data(NamedSharding(mesh, P("X")), x_np)
        print(jax.typeof(c), np.array_equal(c, x_np))
        for bad in [lambda: jax.make_array_from_single_device_arrays((8, 4), s, blocks[:3]),
                    lambda: jax.make_array_from_callback((5, 4), NamedSharding(mesh, P("X")), lambda i: x_np[:2]),
                    lambda: jax.device_put(jnp.arange(5.0), NamedSharding(auto, P("X"))),
                    lambda: jax.device_put(x, NamedSharding(mesh, P(("X", "Y"), "X"))),
                    lambda: jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("X", None))),
                    lambda: jax.make_array_from_callback((8, 4), NamedSharding(mesh, P("X")), lambda i: x_np[:3])]:
            try:
                bad()
            except Exception as err:
                print(type(err).__name__, "|", err)
        """)
    m = "Mesh('X': 2, 'Y': 2, axis_types=(Explicit, Explicit))"
    assert out.splitlines() == [
        "float32[8@X,4] 2 True", "float32[8@X,4@Y] True True", "float32[8@X,4] True",
        "ValueError | Expected 4 per-device arrays (this is how many devices are addressable by the sharding), "
        "but got 3",
        f"IndivisibleError | Sharding NamedSharding(mesh={m}, spec=P('X',), memory_kind=device) implies that array "
        "axis 0 is partitioned 2 times, but the dimension size is 5 (full shape: (5, 4), per-dimension tiling "
        "factors: [2, 1] should evenly divide the shape)",
        "IndivisibleError | Sharding NamedSharding(mesh=Mesh('X': 2, 'Y': 2, axis_types=(Auto, Auto)), spec=P('X',), "
        "memory_kind=device) implies that array axis 0 is partitioned 2 times, but the dimension size is 5 (full "
        "shape: (5,), per-dimension tiling factors: [2] should evenly divide the shape)",
        "DuplicateSpecError | A single NamedSharding spec specification can map every mesh axis to at most one "
        "positional dimension, but P(('X', 'Y'), 'X') has duplicate entries for `X`",
        f"ValueError | One of device_put args is incompatible with its sharding annotation NamedSharding(mesh={m}, "
        f"spec=P('X', None), memory_kind=device): Sharding NamedSharding(mesh={m}, spec=P('X', None), "
        "memory_kind=device) is only valid for values of rank at least 2, but was applied to a value of rank 1.",
        "ValueError | Expected shard shape (4, 4) doesn't match the single device array shape (3, 4). Shape of Array "
        f"is float32[8@X,4] with sharding NamedSharding(mesh={m}, spec=P('X',), memory_kind=device)"]


def test_eager_ops_give_jax_shardings_or_refuse():
    out = run("""
        e = jax.device_put(x, NamedSharding(mesh, P("X")))
        f = jax.device_put(x, NamedSharding(mesh, P(None, "Y")))
        w = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
        cases = [("add same", lambda: e + e, x_np + x_np), ("mul scalar", lambda: e * 2, x_np * 2),
                 ("add split differently", lambda: e + f, x_np + x_np), ("add whole", lambda: e + x, x_np + x_np),
                 ("broadcast row", lambda: e + jnp.ones(4), x_np + 1), ("exp", lambda: jnp.exp(e / 32), np.exp(x_np / 32)),
                 ("sum0", lambda: e.sum(0), x_np.sum(0)), ("sum1", lambda: e.sum(1), x_np.sum(1)),
                 ("T", lambda: e.T, x_np.T), ("dot", lambda: e @ w, x_np @ w)]
        for name, fn, want in cases:
            r = fn()
            np.testing.assert_allclose(np.asarray(r), want, rtol=1e-6, err_msg=name)
            print(name, jax.typeof(r), r.sharding.spec)
        r = e.reshape(32)  # (typed by reshape's sharding rule, as JAX's eager ops are)
        np.testing.assert_array_equal(np.asarray(r), x_np.reshape(32))
        print("reshape", jax.typeof(r), r.sharding.spec)
        ea = jax.device_put(x, NamedSharding(auto, P("X")))
        for name, fn in [("A add", lambda: ea + ea), ("A sum0", lambda: ea.sum(0)), ("A T", lambda: ea.T),
                         ("A reshape", lambda: ea.reshape(32))]:
            r = fn()
            print(name, jax.typeof(r), r.sharding.spec)
        np.testing.assert_array_equal(np.asarray(ea.reshape(32)), x_np.reshape(32))
        r = jax.jit(lambda a: a * 2)(e)  # (partitioned: tests/test_jit_partition.py)
        np.testing.assert_array_equal(np.asarray(r), x_np * 2)
        print(jax.block_until_ready(e) is e, e.is_ready(), e.devices() == set(jax.devices()))
        with jax.set_mesh(mesh):
            print(jax.typeof(jax.device_put(x, P("Y"))))
        print(jax.device_put(e, jax.devices()[0]).sharding)
        """)
    assert out.splitlines() == [
        "add same float32[8@X,4] P('X', None)", "mul scalar float32[8@X,4] P('X', None)",
        "add split differently float32[8@X,4@Y] P('X', 'Y')", "add whole float32[8@X,4] P('X', None)",
        "broadcast row float32[8@X,4] P('X', None)", "exp float32[8@X,4] P('X', None)",
        "sum0 float32[4] P(None,)", "sum1 float32[8@X] P('X',)", "T float32[4,8@X] P(None, 'X')",
        "dot float32[8@X,3] P('X', None)",
        "reshape float32[32@X] P('X',)",
        "A add float32[8,4] P('X',)", "A sum0 float32[4] P()", "A T float32[4,8] P(None, 'X')",
        "A reshape float32[32] P()",
        "True True True", "float32[8@Y,4]", "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)"]


def test_per_device_results_do_not_depend_on_the_thread_count():
    code = """
        import hashlib
        y = jax.device_put(jnp.linspace(-3, 3, 4096, dtype=jnp.float32).reshape(64, 64), NamedSharding(mesh, P("X", "Y")))
        z = jnp.tanh(y) * jnp.exp(y / 3) + y
        assert z.sharding.spec == P("X", "Y")
        print(hashlib.sha1(np.asarray(z).tobytes()).hexdigest())
        """
    assert run(code, threads="1") == run(code, threads="3")


def test_reshard_places_arrays_and_traced_values():
    out = run("""
        r = jax.reshard({"a": x, "b": x}, NamedSharding(mesh, P("X")))
        print(jax.typeof(r["a"]), jax.typeof(r["b"]))
        with jax.set_mesh(mesh):
            back = jax.sharding.reshard(r["a"], P(None, "Y"))
        print(jax.typeof(back), np.array_equal(back, x_np))
        t = jax.jit(lambda v: jax.reshard(v, NamedSharding(mesh, P("X"))))(x)
        print(jax.typeof(t), np.array_equal(t, x_np))
        c = jax.lax.with_sharding_constraint(x, NamedSharding(mesh, P(None, "Y")))
        print(jax.typeof(c), np.array_equal(c, x_np))
        try:  # (JAX's refusal: over Explicit axes a constraint is a reshard)
            jax.jit(lambda v: jax.lax.with_sharding_constraint(v, NamedSharding(mesh, P("X"))))(x)
        except ValueError as err:
            print(str(err).split(".")[0])
        """)
    assert out.splitlines() == ["float32[8@X,4] float32[8@X,4]", "float32[8,4@Y] True", "float32[8@X,4] True",
                                "float32[8,4@Y] True", "The spec of NamedSharding passed to with_sharding_constraint "
                                "can only refer to Auto axes of the mesh"]


def test_jit_in_and_out_shardings_place_arguments_and_results():
    out = run("""
        both = (NamedSharding(mesh, P("X")), NamedSharding(mesh, P()))
        f = jax.jit(lambda a, b: (a * 2, b.sum()), in_shardings=both,
                    out_shardings=(NamedSharding(mesh, P(None, "Y")), NamedSharding(mesh, P())))
        r = f(x, x_np)
        print(jax.typeof(r[0]), jax.typeof(r[1]), r[0].sharding.spec)
        np.testing.assert_array_equal(np.asarray(r[0]), 2 * x_np)
        assert float(r[1]) == x_np.sum()
        g = jax.jit(lambda a, k: a + k, in_shardings=NamedSharding(mesh, P("X")), static_argnums=1)
        np.testing.assert_array_equal(np.asarray(g(x, 3)), x_np + 3)
        try:
            g(jax.device_put(x, NamedSharding(mesh, P("Y"))), 1)
        except ValueError as err:
            print(str(err).splitlines()[0].split(" Got")[0])
        with jax.set_mesh(mesh):
            k = jax.jit(lambda a: a + 1, in_shardings=P("X"), out_shardings=P("Y"))
            print(jax.typeof(k(x)))
        h = jax.jit(lambda a: a + 1, out_shardings=NamedSharding(mesh, P("X")))
        try:
            jax.jit(lambda v: h(v) * 2)(x)
        except NotImplementedError as err:
            print("traced", "issue 29" in str(err))
        whole = jax.jit(lambda a: a + 1, out_shardings=NamedSharding(mesh, P()))
        np.testing.assert_array_equal(np.asarray(jax.jit(lambda v: whole(v) * 2)(x)), (x_np + 1) * 2)
        """)
    assert out.splitlines() == [
        "float32[8,4@Y] float32[] P(None, 'Y')",
        "Sharding passed to jit does not match the sharding on the respective arg.",
        "float32[8@Y,4]", "traced True"]


def test_sharded_arrays_through_whole_array_paths():
    out = run("""
        import pickle
        s = jax.device_put(x_np, NamedSharding(mesh, P("X", "Y")))
        a = jax.device_put(x_np, NamedSharding(auto, P("X", "Y")))
        np.testing.assert_array_equal(jax.vmap(lambda r: r.sum())(s), x_np.sum(1))
        np.testing.assert_array_equal(jax.vmap(lambda r: r * 2)(s), x_np * 2)
        np.testing.assert_array_equal(jax.grad(lambda v: (v * v).sum())(s), 2 * x_np)
        np.testing.assert_array_equal(jax.pmap(lambda r: r + 1)(a[:4]), x_np[:4] + 1)
        np.testing.assert_array_equal(pickle.loads(pickle.dumps(s)), x_np)
        np.testing.assert_array_equal(jnp.where(a > 3, a, 0), np.where(x_np > 3, x_np, 0))
        np.testing.assert_array_equal(a[2:5, 1], x_np[2:5, 1])
        np.testing.assert_array_equal(jax.lax.fori_loop(0, 3, lambda i, c: c + 1, s), x_np + 3)
        whole = jnp.asarray(s, device=jax.devices()[1])
        np.testing.assert_array_equal(whole, x_np)
        print(jnp.asarray(s) is s, s.copy().sharding.spec, type(whole) is jax.Array, type(jax.device_put(s, jax.devices()[0])) is jax.Array)
        """)
    assert out.split() == ["True", "P('X',", "'Y')", "True", "True"]
