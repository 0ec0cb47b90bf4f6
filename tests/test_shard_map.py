"""jax.shard_map over the CPU devices of one process (a 2x2 mesh: XJAX_NUM_CPU_DEVICES=4, so each
test runs a script in a subprocess): collectives against NumPy and a Python loop over the blocks,
the eager path (every device at once) against the traced one (jit, grad, vmap), and data- and
tensor-parallel training against one device. JAX's results and errors recorded from JAX 0.10.2
(XLA_FLAGS=--xla_force_host_platform_device_count=4 JAX_PLATFORMS=cpu)."""
from isolated import run_isolated

_PRELUDE = """\
import numpy as np, xjax as jax, xjax.numpy as jnp
from xjax import lax
from xjax.sharding import AxisType, NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 2), ("X", "Y"), axis_types=(AxisType.Auto,) * 2)
x_np = np.arange(32, dtype=np.float32).reshape(8, 4)
x = jnp.asarray(x_np)

def blocks(a, rows, cols):
    # a's blocks as a Python loop sees them: [X position][Y position]
    r, c = a.shape[0] // rows, a.shape[1] // cols
    return [[a[i * r:(i + 1) * r, j * c:(j + 1) * c] for j in range(cols)] for i in range(rows)]

def both(f, *args):
    # the eager result (every device at once) and jit's (the traced path): equal
    eager, jitted = f(*args), jax.jit(f)(*args)
    np.testing.assert_allclose(np.asarray(eager), np.asarray(jitted), rtol=1e-6)
    return np.asarray(eager)
"""


def run(code, setup="", threads="2"):
    return run_isolated(code, prelude=_PRELUDE + setup, env={"XJAX_NUM_CPU_DEVICES": "4", "XJAX_NUM_THREADS": threads})


def test_collectives_against_a_loop_over_blocks():
    out = run("""
        b = blocks(x_np, 2, 2)
        f = jax.shard_map(lambda a: lax.psum(a, "Y"), mesh=mesh, in_specs=P("X", "Y"), out_specs=P("X", None))
        r = f(x)
        print(jax.typeof(r), r.sharding)
        np.testing.assert_array_equal(both(f, x), np.concatenate([b[i][0] + b[i][1] for i in range(2)]))
        f = jax.shard_map(lambda a: lax.psum(a, ("X", "Y")), mesh=mesh, in_specs=P("X", "Y"), out_specs=P())
        np.testing.assert_array_equal(both(f, x), b[0][0] + b[0][1] + b[1][0] + b[1][1])
        f = jax.shard_map(lambda a: lax.pmax(a, "X") - lax.pmin(a, "X"), mesh=mesh, in_specs=P("X"), out_specs=P())
        np.testing.assert_array_equal(both(f, x), np.full((4, 4), 16.0))
        f = jax.shard_map(lambda a: a * (10 * lax.axis_index("X") + lax.axis_index("Y")), mesh=mesh,
                          in_specs=P("X", "Y"), out_specs=P("X", "Y"))
        np.testing.assert_array_equal(both(f, x), np.block([[b[i][j] * (10 * i + j) for j in range(2)] for i in range(2)]))
        # (all_gather's result is typed as varying over X, as JAX types it: replicating it needs check_vma=False)
        f = jax.shard_map(lambda a: lax.all_gather(a, "X", tiled=True), mesh=mesh, in_specs=P("X", "Y"),
                          out_specs=P(None, "Y"), check_vma=False)
        np.testing.assert_array_equal(both(f, x), x_np)
        f = jax.shard_map(lambda a: lax.ppermute(a, "X", [(0, 1), (1, 0)]), mesh=mesh, in_specs=P("X"), out_specs=P("X"))
        np.testing.assert_array_equal(both(f, x), np.concatenate([x_np[4:], x_np[:4]]))
        f = jax.shard_map(lambda a: lax.psum_scatter(a, "X", tiled=True), mesh=mesh, in_specs=P(None, "Y"),
                          out_specs=P("X", "Y"))
        np.testing.assert_array_equal(both(f, x), 2 * x_np)
        # a spec splitting one dimension over both axes, and several arguments and results
        f = jax.shard_map(lambda a, c: (a + c, lax.psum(a.sum(), ("Y", "X"))), mesh=mesh,
                          in_specs=(P(("Y", "X")), P()), out_specs=(P(("Y", "X")), P()))
        s, t = f(x, x_np[:2])
        np.testing.assert_array_equal(np.asarray(s), x_np + np.tile(x_np[:2], (4, 1)))
        print(float(t), s.sharding.spec)
        """)
    assert out.splitlines() == [
        "float32[8,2] NamedSharding(mesh=Mesh('X': 2, 'Y': 2, axis_types=(Auto, Auto)), spec=P('X', None), "
        "memory_kind=device)", "496.0 P(('Y', 'X'),)"]


def test_grad_vmap_and_errors():
    out = run("""
        w = jnp.linspace(-1, 1, 24, dtype=jnp.float32).reshape(4, 6)
        def loss(w):
            local = lambda a, w: lax.psum(jnp.sum(jnp.tanh(a @ w / 32)), ("X", "Y"))
            return jax.shard_map(local, mesh=mesh, in_specs=(P("X"), P(None, "Y")), out_specs=P())(x, w)
        ref = lambda w: jnp.sum(jnp.tanh(x @ w / 32))
        np.testing.assert_allclose(float(loss(w)), float(ref(w)), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(jax.grad(loss)(w)), np.asarray(jax.grad(ref)(w)), rtol=1e-5)
        np.testing.assert_allclose(np.asarray(jax.jit(jax.grad(loss))(w)), np.asarray(jax.grad(ref)(w)), rtol=1e-5)
        v = jax.vmap(jax.shard_map(lambda a: lax.psum(a, "X"), mesh=mesh, in_specs=P("X"), out_specs=P()))(
            jnp.stack([x, 2 * x]))
        np.testing.assert_array_equal(np.asarray(v), np.stack([x_np[:4] + x_np[4:], 2 * (x_np[:4] + x_np[4:])]))
        # grad inside the body: per device (pmap's transpose) with check_vma=False, as JAX's
        def body(a, w):
            return jax.grad(lambda w: lax.psum(jnp.sum(a @ w), "Y") ** 2)(w)
        xs, ws = jnp.arange(8.0).reshape(4, 2) / 8, jnp.ones((2, 4)) * 0.5
        g = jax.shard_map(body, mesh=mesh, in_specs=(P("X"), P(None, "Y")), out_specs=P("X", "Y"), check_vma=False)
        print(np.asarray(g(xs, ws))[:, 0].tolist())
        # and with check_vma=True, JAX's: ws is the same on every device of X, so its gradient is summed over X
        g = jax.shard_map(body, mesh=mesh, in_specs=(P("X"), P(None, "Y")), out_specs=P("X", "Y"))
        print(np.asarray(g(xs, ws)).tolist(), np.asarray(jax.jit(g)(xs, ws))[:, 0].tolist())
        for bad in [lambda: jax.shard_map(lambda a: a, mesh=mesh, in_specs=P("X"), out_specs=P("X"))(jnp.arange(5.0)),
                    lambda: jax.shard_map(lambda a: a, mesh=mesh, in_specs=P("X", "Y"), out_specs=P("X"))(jnp.arange(8.0)),
                    lambda: jax.shard_map(lambda a: a, mesh=mesh, in_specs=P("X", "X"), out_specs=P("X"))(x)]:
            try:
                bad()
            except Exception as err:
                print(type(err).__name__, "|", str(err).splitlines()[0])
        # check_vma: an out_spec leaving out an axis the result varies over (JAX's error), eagerly and under jit
        for f in [jax.shard_map(lambda a: a * 2, mesh=mesh, in_specs=P("X"), out_specs=P()),
                  jax.jit(jax.shard_map(lambda a: jax.jit(jnp.sin)(a), mesh=mesh, in_specs=P("X"), out_specs=P()))]:
            try:
                f(x)
            except ValueError as err:
                print(str(err).splitlines()[4])
        free = jax.shard_map(lambda a: a * 2, mesh=mesh, in_specs=P("X"), out_specs=P(), check_vma=False)
        np.testing.assert_array_equal(np.asarray(free(x)), 2 * x_np[:4])  # the first device's
        gathered = jax.shard_map(lambda a: lax.all_gather(a, "X", tiled=True) + lax.axis_index("Y"), mesh=mesh,
                                 in_specs=P("X"), out_specs=P(None, "Y"))
        try:
            gathered(x)
        except ValueError as err:
            print(str(err).splitlines()[4])
        ok = jax.shard_map(lambda a: lax.psum(lax.all_gather(a, "X", tiled=True), "X") + lax.axis_index("Y"),
                           mesh=mesh, in_specs=P("X"), out_specs=P(None, "Y"))
        print(ok(x).shape)
        """)
    assert out.splitlines() == [
        "[1.5, 3.0, 27.5, 33.0]",
        "[[14.5, 14.5, 14.5, 14.5], [18.0, 18.0, 18.0, 18.0], [14.5, 14.5, 14.5, 14.5], [18.0, 18.0, 18.0, 18.0]] "
        "[14.5, 18.0, 14.5, 18.0]",
        "ValueError | shard_map applied to the function '<lambda>' was given argument arrays with axis sizes that are "
        "not evenly divisible by the corresponding mesh axis sizes:",
        "ValueError | shard_map applied to the function '<lambda>' was given an in_specs entry which is too long to be "
        "compatible with the corresponding input value from the function:",
        "DuplicateSpecError | A single NamedSharding spec specification can map every mesh axis to at most one "
        "positional dimension, but P('X', 'X') has duplicate entries for `X`"] + [
        "out_specs is P() which implies that the corresponding output value is only varying across mesh axes {} and "
        "not {X}, but it was inferred to be possibly varying over {X}"] * 2 + [
        "out_specs is P(None, 'Y') which implies that the corresponding output value is replicated across mesh axis "
        "'X', but could not infer replication over any axes", "(8, 8)"]


_MLP = """
rng = np.random.default_rng(0)
d, h, o, n = 8, 16, 4, 32
xs = jnp.asarray(rng.normal(size=(n, d)).astype(np.float32))
ys = jnp.asarray(rng.normal(size=(n, o)).astype(np.float32))
params = {"w1": jnp.asarray(rng.normal(size=(d, h)).astype(np.float32) / 3), "b1": jnp.zeros(h),
          "w2": jnp.asarray(rng.normal(size=(h, o)).astype(np.float32) / 4), "b2": jnp.zeros(o)}

def loss_one(p, a, y):
    return jnp.mean((jax.nn.relu(a @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - y) ** 2)

def train(loss, p, steps=8, lr=0.1):
    step = jax.jit(lambda p: (lambda l, g: (l, jax.tree.map(lambda v, gv: v - lr * gv, p, g)))(*jax.value_and_grad(loss)(p)))
    losses = []
    for _ in range(steps):
        l, p = step(p)
        losses.append(float(l))
    return losses

reference = train(lambda p: loss_one(p, xs, ys), params)
"""


def test_data_parallel_training_matches_one_device():
    out = run(setup=_MLP, code="""
        def dp_loss(p):  # the batch split over both axes, the parameters replicated
            local = lambda p, a, y: lax.pmean(loss_one(p, a, y), ("X", "Y"))
            return jax.shard_map(local, mesh=mesh, in_specs=(P(), P(("X", "Y")), P(("X", "Y"))), out_specs=P())(p, xs, ys)
        got = train(dp_loss, params)
        np.testing.assert_allclose(got, reference, rtol=2e-6)
        # the eager per-device step (check_vma=False: each device's gradient, then the pmean) gives it too
        def step(p, a, y):
            l, g = jax.value_and_grad(loss_one)(p, a, y)
            g = lax.pmean(g, ("X", "Y"))
            return lax.pmean(l, ("X", "Y")), jax.tree.map(lambda v, gv: v - 0.1 * gv, p, g)
        sm = jax.shard_map(step, mesh=mesh, in_specs=(P(), P(("X", "Y")), P(("X", "Y"))), out_specs=(P(), P()),
                           check_vma=False)
        p, eager = params, []
        for _ in range(8):
            l, p = sm(p, xs, ys)
            eager.append(float(l))
        np.testing.assert_allclose(eager, reference, rtol=2e-6)
        print(reference[0] > reference[-1])
        """)
    assert out.split() == ["True"]


def test_megatron_tensor_parallel_training_matches_one_device():
    out = run(setup=_MLP, code="""
        # X: data parallel; Y: w1 split by columns, w2 by rows, the psum where the row-parallel layer ends
        def local(p, a, y):
            hidden = jax.nn.relu(a @ p["w1"] + p["b1"])
            out = lax.psum(hidden @ p["w2"], "Y") + p["b2"]
            return lax.pmean(jnp.mean((out - y) ** 2), "X")
        specs = {"w1": P(None, "Y"), "b1": P("Y"), "w2": P("Y", None), "b2": P()}
        tp = lambda p: jax.shard_map(local, mesh=mesh, in_specs=(specs, P("X"), P("X")), out_specs=P())(p, xs, ys)
        np.testing.assert_allclose(train(tp, params), reference, rtol=2e-6)
        # the parameters placed as the specs say: the same losses, and the forward pass per device
        placed = {k: jax.device_put(v, NamedSharding(mesh, specs[k])) for k, v in params.items()}
        print(placed["w1"].addressable_shards[1].data.shape, placed["w2"].addressable_shards[1].data.shape)
        np.testing.assert_allclose(train(tp, placed), reference, rtol=2e-6)
        np.testing.assert_allclose(float(jax.shard_map(local, mesh=mesh, in_specs=(specs, P("X"), P("X")),
                                                       out_specs=P())(placed, xs, ys)), reference[0], rtol=2e-6)
        """)
    assert out.split() == ["(8,", "8)", "(8,", "4)"]


def test_results_do_not_depend_on_the_thread_count():
    code = """
        import hashlib
        a = jnp.linspace(-2, 2, 128 * 96, dtype=jnp.float32).reshape(128, 96)
        w = jnp.linspace(-1, 1, 96 * 64, dtype=jnp.float32).reshape(96, 64)
        f = jax.shard_map(lambda a, w: lax.psum(jnp.tanh(a @ w).sum(0), "X") + lax.pmax(a, ("X", "Y")).sum(),
                          mesh=mesh, in_specs=(P("X", "Y"), P("Y")), out_specs=P(), check_vma=False)
        print(hashlib.sha1(np.asarray(f(a, w)).tobytes()).hexdigest())
        """
    assert run(code, threads="1") == run(code, threads="3")


def test_in_specs_inferred_from_the_arguments():
    # JAX's default in_specs (Infer): over Explicit mesh axes, each argument's own spec. Values and the
    # result's type recorded from JAX 0.10.2 (the same program).
    out = run("""
        from xjax.sharding import NamedSharding
        emesh = jax.make_mesh((2, 2), ("X", "Y"), axis_types=(AxisType.Explicit,) * 2)
        a = jax.device_put(jnp.arange(32.0).reshape(8, 4), NamedSharding(emesh, P("X", None)))
        w = jax.device_put(jnp.ones((4, 4)), NamedSharding(emesh, P(None, "Y")))
        f = jax.shard_map(lambda a, b: a @ b, mesh=emesh, out_specs=P("X", "Y"))
        r = f(a, w)
        print(np.asarray(r).sum(), r.sharding.spec, jax.typeof(r))
        np.testing.assert_array_equal(np.asarray(r), np.asarray(a) @ np.asarray(w))
        with jax.set_mesh(emesh):
            print(np.asarray(jax.shard_map(lambda a: lax.psum(a, "X"), out_specs=P(None, None))(a)).sum())
        try:
            jax.shard_map(lambda a: a, mesh=mesh, out_specs=P("X"))(x)
        except TypeError as err:
            print(type(err).__name__, str(err).replace("{'Y', 'X'}", "{'X', 'Y'}"))
        r = jax.jit(f)(a, w)  # (in_specs inferred from the traced arguments' types)
        print(np.asarray(r).sum(), jax.typeof(r))
        """)
    assert out.splitlines() == [
        "1984.0 P('X', 'Y') float32[8@X,4@Y]", "496.0",
        "TypeError shard_map in_specs argument must be a pytree of `jax.sharding.PartitionSpec` instances, but it was "
        "`None` when axis_names=frozenset({'X', 'Y'}) are of type AxisType.Auto, AxisType.Auto",
        "1984.0 float32[8@X,4@Y]"]


def test_mesh_of_jax_set_mesh_is_abstract_in_params_and_runs():
    # JAX names the abstract mesh in the params of a shard_map whose mesh is jax.set_mesh's (text and
    # result spec recorded from JAX 0.10.2); the
    # equation still runs over that mesh's devices: eagerly, jitted, differentiated and evaluated after
    # the mesh is unset.
    out = run("""
        from xjax._src.jaxpr import eval_jaxpr
        b = blocks(x_np, 2, 2)
        want = np.concatenate([b[i][0] + b[i][1] for i in range(2)]) * 2
        f = jax.shard_map(lambda a: lax.psum(a, "Y") * 2, in_specs=P("X", "Y"), out_specs=P("X", None))
        with jax.set_mesh(mesh):
            closed = jax.make_jaxpr(f)(x)
            print([line.strip() for line in str(closed).splitlines() if "mesh=" in line])
            r = jax.jit(f)(x)
            np.testing.assert_array_equal(np.asarray(r), want)
            print(r.sharding.spec, r.sharding.mesh is mesh)
            g = jax.grad(lambda a: (f(a) ** 2).sum())(x)
        (e,) = eval_jaxpr(closed.jaxpr, closed.consts, x)  # (no mesh set: the concrete one it was traced under)
        np.testing.assert_array_equal(np.asarray(e), want)
        # d/da of sum((2 psum_Y a)^2) = 8 psum_Y a on each block (JAX 0.10.2: the same)
        s = np.concatenate([b[i][0] + b[i][1] for i in range(2)])
        np.testing.assert_allclose(np.asarray(g), np.tile(8 * s, (1, 2)), rtol=1e-6)
        """)
    assert out.splitlines() == [
        "[\"mesh=AbstractMesh('X': 2, 'Y': 2, axis_types=(Auto, Auto), device_kind=cpu, num_cores=None, "
        "platform=cpu)\"]",
        "P('X',) True"]
