"""jit partitioned through control flow (partition_control.py) and loops holding collectives driven
per device (program_control.py): values against NumPy or one device, result specs against JAX's,
training loops inside scan and fori_loop against one device's losses, random layouts, thread counts.

As in test_jit_partition.py, each test runs a script with XJAX_NUM_CPU_DEVICES=4 (a 2x2 mesh); the
specs and types are JAX 0.10.2's, recorded with XLA_FLAGS=--xla_force_host_platform_device_count=4.
"""
from test_jit_partition import run as _run_partition

_CASES = """
from xjax import lax
from xjax._src import program_control
program_control.MIN_WORK = 0  # (these small loops holding collectives driven per device, as large ones are)
xs = rng.randn(4, 8, 16).astype(np.float32)

def control_cases(mesh):
    put_ = lambda v, *spec: put(mesh, v, *spec)  # noqa: E731

    def scan_dp(w, xs):  # least-squares steps over a batch split along 'data'
        def step(w, x):
            return w - 0.01 * x.T @ (x @ w - 1.0), jnp.sum((x @ w - 1.0) ** 2)
        return lax.scan(step, w, xs)

    def scan_megatron(w1, w2, xs):
        def step(c, x):
            return (c[0] * 0.99, c[1] * 0.99), (jnp.tanh(x @ c[0]) @ c[1]).sum()
        return lax.scan(step, (w1, w2), xs)

    return {
        "scan_carry": (lambda a: lax.scan(lambda c, _: (c * 0.5 + 1.0, c.sum(0)), a, None, length=4),
                       [put_(x, "data", "model")]),
        "scan_xs": (lambda v: lax.scan(lambda c, t: (c + t, jnp.sin(t)), jnp.zeros((8, 16)), v),
                    [put_(xs, None, "data", "model")]),
        "scan_xs_split0": (lambda v: lax.scan(lambda c, t: (c + t, t * 2), jnp.zeros((8, 16)), v), [put_(xs, "data")]),
        "scan_dp": (scan_dp, [put_(w), put_(xs, None, "data")]),
        "scan_megatron": (scan_megatron, [put_(w, None, "model"), put_(w.T, "model"), put_(xs)]),
        "scan_contract": (lambda a, v: lax.scan(lambda c, t: (c + t @ a, None), jnp.zeros((8, 4)), v)[0],
                          [put_(w, "model"), put_(xs, None, None, "model")]),
        "scan_init_whole": (lambda a, v: lax.scan(lambda c, t: (jnp.tanh(c + t), c.sum()), a, v),
                            [put_(x), put_(xs, None, "data")]),
        "fori": (lambda a: lax.fori_loop(0, 3, lambda i, c: c * 2.0 + i, a), [put_(x, "data", "model")]),
        "fori_dot": (lambda a, b: lax.fori_loop(0, 3, lambda i, c: c + a @ b, jnp.zeros((8, 4))),
                     [put_(x, None, "model"), put_(w, "model")]),
        "while": (lambda a: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2.0), (0, a))[1],
                  [put_(x, "data", "model")]),
        "while_norm": (lambda a: lax.while_loop(lambda c: jnp.sum(c * c) < 1e4, lambda c: c * 2.0, a),
                       [put_(x, "data")]),
        "cond": (lambda a: lax.cond(a.sum() > 0, lambda v: v * 2.0, lambda v: v - 1.0, a), [put_(x, "data", "model")]),
        "cond_whole_branch": (lambda a: lax.cond(a.sum() > 0, lambda v: v * 2.0, lambda v: jnp.zeros_like(v), a),
                              [put_(x, "data", "model")]),
        "cond_reduce": (lambda a: lax.cond(a.sum() > 0, lambda v: v.sum(0), lambda v: v.max(0), a),
                        [put_(x, "data", "model")]),
        "cond_transposed": (lambda a, b: lax.cond(a.sum() > 0, lambda u, v: u, lambda u, v: v, a, b),
                            [put_(x, "data"), put_(x, None, "model")]),
        "switch": (lambda i, a: lax.switch(i, [lambda v: v + 1.0, lambda v: v @ jnp.ones((16, 16)), lambda v: -v], a),
                   [put_(np.int32(1)), put_(x, "data", "model")]),
    }

def control_report(mesh):
    for name, (f, args) in control_cases(mesh).items():
        try:
            out = jax.jit(f)(*args)
        except Exception as err:
            print(name, type(err).__name__, str(err).splitlines()[0][:80])
            continue
        want = jax.tree.leaves(f(*[np.asarray(a) for a in args]))
        got = jax.tree.leaves(out)
        for g, r in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), np.asarray(r), rtol=2e-5, atol=2e-5, err_msg=name)
        print(name, " ".join(f"{o.sharding.spec}:{jax.typeof(o)}" if type(o) is ShardedArray else "whole" for o in got))
"""


def run(code, threads="2"):
    return _run_partition(_CASES + code, threads)


_AUTO = """\
scan_carry P('data', 'model'):float32[8,16] P(None, 'model'):float32[4,16]
scan_xs P('data', 'model'):float32[8,16] P(None, 'data', 'model'):float32[4,8,16]
scan_xs_split0 P():float32[8,16] P():float32[4,8,16]
scan_dp P():float32[16,4] P():float32[4]
scan_megatron P(None, 'model'):float32[16,4] P('model',):float32[4,16] P():float32[4]
scan_contract P():float32[8,4]
scan_init_whole P('data',):float32[8,16] P():float32[4]
fori P('data', 'model'):float32[8,16]
fori_dot P():float32[8,4]
while P('data', 'model'):float32[8,16]
while_norm P('data',):float32[8,16]
cond P('data', 'model'):float32[8,16]
cond_whole_branch P('data', 'model'):float32[8,16]
cond_reduce P('model',):float32[16]
cond_transposed P('data', 'model'):float32[8,16]
switch P('data', 'model'):float32[8,16]"""

# JAX's over Explicit axes (a product over contracting dimensions split alike is JAX's
# ShardingTypeError, raised by its type), but where marked: a carry whose init is whole over the
# Explicit axes takes the body's split (JAX: TypeError "scan body function carry input and carry output must have equal types", though it
# accepts the same for a jnp.zeros init, scan_xs); branches split differently run unpartitioned,
# whole (JAX: TypeError "cond branches must have equal output types").
_EXPLICIT = """\
scan_carry P('data', 'model'):float32[8@data,16@model] P(None, 'model'):float32[4,16@model]
scan_xs P('data', 'model'):float32[8@data,16@model] P(None, 'data', 'model'):float32[4,8@data,16@model]
scan_xs_split0 ValueError 0th dimension of all xs should be replicated. Got P('data', None, None)
scan_dp P(None, None):float32[16,4] P(None,):float32[4]
scan_megatron ShardingTypeError Contracting dimensions are sharded and it is ambiguous how the output should be 
scan_contract P(None, None):float32[8,4]
scan_init_whole P('data', None):float32[8@data,16] P(None,):float32[4]
fori P('data', 'model'):float32[8@data,16@model]
fori_dot ShardingTypeError Contracting dimensions are sharded and it is ambiguous how the output should be 
while P('data', 'model'):float32[8@data,16@model]
while_norm P('data', None):float32[8@data,16]
cond P('data', 'model'):float32[8@data,16@model]
cond_whole_branch P('data', 'model'):float32[8@data,16@model]
cond_reduce P('model',):float32[16@model]
cond_transposed whole
switch whole"""


def test_scan_while_and_cond_give_numpy_values_and_jax_result_specs():
    out = run("""
control_report(auto)
print("--")
control_report(explicit)
""")
    assert out.splitlines() == _AUTO.splitlines() + ["--"] + _EXPLICIT.splitlines()


def test_a_loop_with_a_psum_in_its_body_runs_per_device():
    out = run("""
f, args = control_cases(auto)["scan_dp"]
jf = jax.jit(f)
jf(*args)
(entry,) = jf._cache.values()
p = partition.plan_for(entry.jaxpr, args, auto)
(loop,) = p.program.steps  # the scan, driven: its body's segments run on every device
assert type(loop) is program_control.Driven, p.program.steps
body = loop.body.jaxpr
print([e.primitive.name for e in body.eqns if e.primitive.name in ("psum", "all_gather")])
print([str(v.aval) for v in body.invars])
""")
    # the batch's block (8 rows over 'data': 4), the psums of the gradient and the loss in the body
    assert out.splitlines() == ["['psum', 'psum']", "['float32[16,4]', 'float32[4,16]']"]


def test_only_loops_doing_enough_work_per_iteration_are_driven():
    out = run("""
program_control.MIN_WORK = 1 << 20  # (the default)
for n in (16, 128):  # a scan whose body contracts a split dimension: n x n products
    f = lambda a, v: lax.scan(lambda c, t: (jnp.tanh(c @ t), None), a, v)[0]  # noqa: E731
    v = (rng.randn(3, n, n) / np.sqrt(n)).astype(np.float32)
    args = put(auto, rng.randn(n, n).astype(np.float32)), put(auto, v, None, "data")
    jf = jax.jit(f)
    got = jf(*args)
    (entry,) = jf._cache.values()
    steps = partition.plan_for(entry.jaxpr, args, auto).program.steps
    print(n, [type(s).__name__ for s in steps])
    want = f(*[jnp.asarray(np.asarray(a)) for a in args])
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-5, atol=2e-5)
""")
    # below MIN_WORK the loop runs as one equation over the devices' blocks stacked (its vmap rule)
    assert out.splitlines() == ["16 ['tuple']", "128 ['Driven']"]


_TRAIN_LOOP = """
def loss(p, xb, yb):
    h = jnp.tanh(xb @ p["w1"] + p["b1"])
    return jnp.mean((h @ p["w2"] + p["b2"] - yb) ** 2)

def sgd(p, b):
    l, g = jax.value_and_grad(loss)(p, *b)
    return jax.tree.map(lambda a, d: a - 0.1 * d, p, g), l

@jax.jit
def train_scan(p, xb, yb):
    return lax.scan(sgd, p, (xb, yb))

@jax.jit
def train_fori(p, xb, yb):  # the same steps in fori_loop (the batch read with dynamic indexing)
    def body(i, c):
        q, ls = sgd(c[0], (xb[i], yb[i]))
        return q, c[1].at[i].set(ls)
    return lax.fori_loop(0, xb.shape[0], body, (p, jnp.zeros(xb.shape[0])))

p0 = {"w1": rng.randn(16, 32).astype(np.float32) * .3, "b1": np.zeros(32, np.float32),
      "w2": rng.randn(32, 4).astype(np.float32) * .3, "b2": np.zeros(4, np.float32)}
xb = rng.randn(5, 8, 16).astype(np.float32)
yb = rng.randn(5, 8, 4).astype(np.float32)
whole = {k: jnp.asarray(v) for k, v in p0.items()}
"""


def test_training_loops_in_scan_and_fori_loop_match_one_device():
    out = run(_TRAIN_LOOP + """
megatron = {"w1": (None, "model"), "b1": ("model",), "w2": ("model",), "b2": ()}
for name, train in [("scan", train_scan), ("fori", train_fori)]:
    q1, l1 = train(whole, jnp.asarray(xb), jnp.asarray(yb))
    for layout, p, batch in [
            ("data-parallel", {k: put(auto, v) for k, v in p0.items()}, (None, ("data", "model"))),
            ("megatron", {k: put(auto, v, *megatron[k]) for k, v in p0.items()}, (None, "data")),
            ("explicit data-parallel", {k: put(explicit, v) for k, v in p0.items()}, (None, "data"))]:
        mesh = explicit if layout.startswith("explicit") else auto
        q, losses = train(p, put(mesh, xb, *batch), put(mesh, yb, *batch))
        np.testing.assert_allclose(np.asarray(losses), np.asarray(l1), rtol=1e-5)
        for k in q:
            np.testing.assert_allclose(np.asarray(q[k]), np.asarray(q1[k]), rtol=1e-5, atol=1e-6)
        print(name, layout, {k: v.sharding.spec for k, v in sorted(q.items())}, type(losses).__name__)
""")
    assert out.splitlines() == [
        f"{loop} {line}" for loop in ("scan", "fori") for line in [
            "data-parallel {'b1': P(), 'b2': P(), 'w1': P(), 'w2': P()} ShardedArray",
            "megatron {'b1': P('model',), 'b2': P(), 'w1': P(None, 'model'), 'w2': P('model',)} ShardedArray",
            "explicit data-parallel {'b1': P(None,), 'b2': P(None,), 'w1': P(None, None), 'w2': P(None, None)} "
            "ShardedArray"]]


def test_gradients_through_partitioned_loops_match_one_device_in_x64():
    out = run("""
jax.config.update("jax_enable_x64", True)
a64 = rng.randn(8, 16)
xs64 = rng.randn(4, 8, 16)

def f(a, v):
    def step(c, t):
        c = jnp.tanh(c * t + c @ jnp.ones((16, 16)) * 0.1)
        return c, lax.cond(c.sum() > 0, lambda u: u.sum(0), lambda u: u.max(0), c)
    c, ys = lax.scan(step, a, v)
    c = lax.fori_loop(0, 2, lambda i, c: c * 0.5 + jnp.sin(c), c)
    return jnp.sum(c ** 2) + jnp.sum(ys)

g = jax.jit(jax.grad(f, argnums=(0, 1)))
want = g(jnp.asarray(a64), jnp.asarray(xs64))
got = g(put(auto, a64, "data", "model"), put(auto, xs64, None, "data", "model"))
for u, v in zip(got, want):
    assert type(u) is ShardedArray
    np.testing.assert_allclose(np.asarray(u), np.asarray(v), rtol=1e-12, atol=1e-12)
from xjax.test_util import check_grads
check_grads(jax.jit(f), (put(auto, a64, "data", "model"), put(auto, xs64, None, "data", "model")), order=1,
            modes=["rev"])
print([u.sharding.spec for u in got])
""")
    assert out.splitlines() == ["[P('data', 'model'), P(None, 'data', 'model')]"]


def test_random_layouts_of_loops_and_conds_against_numpy():
    out = run("""
from hypothesis import HealthCheck, given, settings, strategies as st
entries = st.sampled_from([None, "data", "model", ("data", "model"), ("model", "data")])

def valid(spec):
    names = [n for e in spec if e for n in (e if isinstance(e, tuple) else (e,))]
    return len(names) == len(set(names))

specs2 = st.tuples(entries, entries).filter(valid)
specs3 = st.tuples(entries, entries, entries).filter(valid)
c_np = rng.randn(8, 12).astype(np.float32)
v_np = rng.randn(4, 8, 12).astype(np.float32)
m_np = rng.randn(12, 12).astype(np.float32) * 0.2
programs = [
    lambda c, v, m: lax.scan(lambda k, t: (jnp.tanh(k @ m + t), (k * t).sum(1)), c, v),
    lambda c, v, m: lax.fori_loop(0, 3, lambda i, k: k @ m + v[i].T.T, c),
    lambda c, v, m: lax.scan(lambda k, t: (k + t.sum(0), lax.cond(k.sum() > 0, lambda u: u @ m, lambda u: -u, t)),
                             c.sum(0), v, reverse=True),
    lambda c, v, m: lax.while_loop(lambda k: k[1] < 3, lambda k: (k[0] @ m + k[0], k[1] + 1), (c, 0))[0],
    lambda c, v, m: lax.scan(lambda k, t: ((k[0] + t, k[1] @ m), jnp.cumsum(t, 1)), (c, c.T @ c), v),
]

@settings(max_examples=50, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(specs2, specs3, specs2, st.sampled_from(range(len(programs))), st.booleans())
def check(sc, sv, sm, which, is_explicit):
    mesh = explicit if is_explicit else auto
    f = programs[which]
    args = put(mesh, c_np, *sc), put(mesh, v_np, *sv), put(mesh, m_np, *sm)
    try:
        got = jax.jit(f)(*args)
    except Exception as err:  # JAX's refusals over Explicit axes
        assert is_explicit and type(err).__name__ in ("ShardingTypeError", "ValueError"), err
        return
    want = f(jnp.asarray(c_np), jnp.asarray(v_np), jnp.asarray(m_np))  # (one device)
    for g, r in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(r), rtol=5e-5, atol=5e-5)
        if type(g) is ShardedArray:  # every block is its slice of the whole
            for shard in g.addressable_shards:
                np.testing.assert_allclose(np.asarray(shard.data), np.asarray(r)[shard.index], rtol=5e-5, atol=5e-5)
check()
print("ok")
""")
    assert out.split() == ["ok"]


def test_loop_results_do_not_depend_on_the_thread_count():
    code = _TRAIN_LOOP + """
import hashlib
batch = (put(auto, xb, None, "data"), put(auto, yb, None, "data"))
q, losses = train_scan({k: put(auto, v) for k, v in p0.items()}, *batch)
print(hashlib.sha1(b"".join(np.asarray(v).tobytes() for _, v in sorted(q.items())) + np.asarray(losses).tobytes())
      .hexdigest())
"""
    assert run(code, threads="1") == run(code, threads="3")


def test_driven_while_and_cond_keep_the_vmap_rules_semantics_where_devices_differ():
    # pmap over 4 devices: trip counts and branches differ among devices, the bodies hold psums; a
    # loop over the devices in NumPy computes the vmap rule's semantics (a finished device keeps its
    # carry but its value still enters the psums; every branch some device takes runs on all).
    out = run("""
n = np.array([1, 3, 2, 0], np.int32)

def f(k):
    return lax.while_loop(lambda c: c[0] < k, lambda c: (c[0] + 1, c[1] + lax.psum(c[0] + c[1], "i")), (0, 1))

i, acc = np.zeros(4, np.int64), np.ones(4, np.int64)
while (i < n).any():
    total = (i + acc).sum()
    running = i < n
    i, acc = np.where(running, i + 1, i), np.where(running, acc + total, acc)
got = jax.pmap(f, axis_name="i")(jnp.asarray(n))
np.testing.assert_array_equal(np.asarray(got[0]), i)
np.testing.assert_array_equal(np.asarray(got[1]), acc)

v = np.array([3.0, -1.0, 2.0, -5.0], np.float32)
g = lambda a: lax.cond(a > 0, lambda u: u - lax.psum(u * 2, "i"), lambda u: lax.psum(u, "i") * u, a)  # noqa: E731
np.testing.assert_allclose(np.asarray(jax.pmap(g, axis_name="i")(jnp.asarray(v))),
                           np.where(v > 0, v - (2 * v).sum(), v.sum() * v))
print("ok")
""")
    assert out.split() == ["ok"]


def test_a_cond_whose_branches_contract_a_split_dimension_runs_per_device():
    out = run("""
a_np, m_np = rng.randn(8, 16).astype(np.float32), rng.randn(16, 16).astype(np.float32)
f = lambda a, m: lax.cond(a.sum() > 0, lambda u: u @ m, lambda u: u @ m.T, a)  # noqa: E731
a, m = put(auto, a_np, "data", "model"), put(auto, m_np, "model")
jf = jax.jit(f)
got = jf(a, m)
(entry,) = jf._cache.values()
steps = partition.plan_for(entry.jaxpr, [a, m], auto).program.steps
print(got.sharding.spec, [s[1].primitive.name if type(s) is tuple else type(s).__name__ for s in steps
                          if type(s).__name__ != "_Segment"])
want = a_np @ (m_np if a_np.sum() > 0 else m_np.T)
np.testing.assert_allclose(np.asarray(got), want, rtol=2e-5, atol=2e-5)
""")
    # the predicate's psum, then the cond driven: each branch's product psum'd over 'model' inside it
    assert out.splitlines() == ["P('data',) ['psum', 'Driven']"]
