"""The shard_map primitive: make_jaxpr prints its equation as JAX 0.10.2 does (the texts recorded from JAX
with XLA_FLAGS=--xla_force_host_platform_device_count=4 JAX_PLATFORMS=cpu, the programs in _PROGRAMS run by
both), and the equation's rules: its impl (the jaxpr evaluated: every device at once), its lowering (jit),
its batching (vmap against a Python loop) and its JVP (check_grads in x64), against NumPy."""
from isolated import run_isolated

_PRELUDE = """\
import numpy as np, xjax as jax, xjax.numpy as jnp
from xjax import lax
from xjax.sharding import AxisType, PartitionSpec as P
mesh = jax.make_mesh((4,), ("x",), axis_types=(AxisType.Auto,))
mesh2 = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
sm = lambda f, m, i, o: jax.shard_map(f, mesh=m, in_specs=i, out_specs=o, check_vma=False)
x = jnp.arange(8.0)
psum2 = sm(lambda a: lax.psum(a * 2, "x"), mesh, P("x"), P())
x4 = jnp.arange(16.0).reshape(4, 4)
fsb = sm(lambda a, b: lax.psum(jnp.sin(a) * b, "x"), mesh, (P("x"), P()), P())
"""

_PROGRAMS = """
progs = {
  "psum": jax.make_jaxpr(psum2)(x),
  "two_axes_replicated": jax.make_jaxpr(sm(lambda a, b: a * b.sum(), mesh2, (P("x", "y"), P(None)), P("x", "y")))(
      jnp.ones((4, 4)), jnp.ones(3)),
  "in_jit": jax.make_jaxpr(jax.jit(psum2))(x),
  "vmap": jax.make_jaxpr(jax.vmap(psum2))(jnp.ones((3, 8))),
  "psum_y_pmax_two_outputs": jax.make_jaxpr(sm(lambda a: (lax.psum(a, "y"), lax.pmax(a, ("x", "y"))), mesh2,
                                              P("x", "y"), (P("x"), P())))(jnp.ones((4, 4))),
  "one_spec_for_all_args": jax.make_jaxpr(jax.shard_map(lambda a, b: (a + b, a), mesh=mesh2, in_specs=P("x"),
                                                        out_specs=P("x"), check_vma=False))(x4, x4),
  "axis_names_subset": jax.make_jaxpr(jax.shard_map(lambda a: lax.psum(a, "x") * lax.axis_index("x"), mesh=mesh2,
                                                    in_specs=P("x"), out_specs=P("x"), axis_names={"x"},
                                                    check_vma=False))(x4),
  "jvp": jax.make_jaxpr(lambda a, b: jax.jvp(fsb, (a, b), (a, b)))(x, x[:2]),
  "linearize": jax.make_jaxpr(lambda a, b: jax.linearize(fsb, a, b)[1](a, b))(x, x[:2]),
  "linearize_scalar_residual": jax.make_jaxpr(
      lambda a: jax.linearize(sm(lambda a: a * a.sum(), mesh, P("x"), P("x")), a)[1](a))(x),
}
for k, p in progs.items():
    print(repr(k), repr(str(p)))
"""

_JAX = {
    'psum': "{ lambda ; a:f32[8]. let\n    b:f32[2] = shard_map[\n      check_vma=False\n      in_specs=(P('x',),)\n      jaxpr={ lambda ; c:f32[2]. let\n          d:f32[2] = mul c 2.0:f32[]\n          e:f32[2] = psum[axes=('x',) axis_index_groups=None] d\n        in (e,) }\n      mesh=Mesh('x': 4, axis_types=(Auto,))\n      newly_manual_axes=frozenset({'x'})\n      out_specs=(P(),)\n    ] a\n  in (b,) }",
    'two_axes_replicated': "{ lambda ; a:f32[4,4] b:f32[3]. let\n    c:f32[4,4] = shard_map[\n      check_vma=False\n      in_specs=(P('x', 'y'), P(None,))\n      jaxpr={ lambda ; d:f32[2,2] e:f32[3]. let\n          f:f32[] = reduce_sum[axes=(0,) out_sharding=None] e\n          g:f32[2,2] = mul d f\n        in (g,) }\n      mesh=Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto))\n      newly_manual_axes=frozenset({'x', 'y'})\n      out_specs=(P('x', 'y'),)\n    ] a b\n  in (c,) }",
    'in_jit': "{ lambda ; a:f32[8]. let\n    b:f32[2] = jit[\n      name=<lambda>\n      jaxpr={ lambda ; a:f32[8]. let\n          b:f32[2] = shard_map[\n            check_vma=False\n            in_specs=(P('x',),)\n            jaxpr={ lambda ; c:f32[2]. let\n                d:f32[2] = mul c 2.0:f32[]\n                e:f32[2] = psum[axes=('x',) axis_index_groups=None] d\n              in (e,) }\n            mesh=Mesh('x': 4, axis_types=(Auto,))\n            newly_manual_axes=frozenset({'x'})\n            out_specs=(P(),)\n          ] a\n        in (b,) }\n    ] a\n  in (b,) }",
    'vmap': "{ lambda ; a:f32[3,8]. let\n    b:f32[3,2] = shard_map[\n      check_vma=False\n      in_specs=(P(None, 'x'),)\n      jaxpr={ lambda ; c:f32[3,2]. let\n          d:f32[3,2] = mul c 2.0:f32[]\n          e:f32[3,2] = psum[axes=('x',) axis_index_groups=None] d\n        in (e,) }\n      mesh=Mesh('x': 4, axis_types=(Auto,))\n      newly_manual_axes=frozenset({'x'})\n      out_specs=(P(None,),)\n    ] a\n  in (b,) }",
    'psum_y_pmax_two_outputs': "{ lambda ; a:f32[4,4]. let\n    b:f32[4,2] c:f32[2,2] = shard_map[\n      check_vma=False\n      in_specs=(P('x', 'y'),)\n      jaxpr={ lambda ; d:f32[2,2]. let\n          e:f32[2,2] = psum[axes=('y',) axis_index_groups=None] d\n          f:f32[2,2] = pmax[axes=('x', 'y') axis_index_groups=None] d\n        in (e, f) }\n      mesh=Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto))\n      newly_manual_axes=frozenset({'x', 'y'})\n      out_specs=(P('x',), P())\n    ] a\n  in (b, c) }",
    'one_spec_for_all_args': "{ lambda ; a:f32[4,4] b:f32[4,4]. let\n    c:f32[4,4] d:f32[4,4] = shard_map[\n      check_vma=False\n      in_specs=(P('x',), P('x',))\n      jaxpr={ lambda ; e:f32[2,4] f:f32[2,4]. let\n          g:f32[2,4] = add e f\n        in (g, e) }\n      mesh=Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto))\n      newly_manual_axes=frozenset({'x', 'y'})\n      out_specs=(P('x',), P('x',))\n    ] a b\n  in (c, d) }",
    'axis_names_subset': "{ lambda ; a:f32[4,4]. let\n    b:f32[4,4] = shard_map[\n      check_vma=False\n      in_specs=(P('x',),)\n      jaxpr={ lambda ; c:f32[2,4]. let\n          d:f32[2,4] = psum[axes=('x',) axis_index_groups=None] c\n          e:i32[] = axis_index[axis_name=x] \n          f:f32[] = convert_element_type[new_dtype=float32 weak_type=False] e\n          g:f32[2,4] = mul d f\n        in (g,) }\n      mesh=Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto))\n      newly_manual_axes=frozenset({'x'})\n      out_specs=(P('x',),)\n    ] a\n  in (b,) }",
    'jvp': "{ lambda ; a:f32[8] b:f32[2]. let\n    c:f32[2] d:f32[2] = shard_map[\n      check_vma=False\n      in_specs=(P('x',), P(), P('x',), P())\n      jaxpr={ lambda ; e:f32[2] f:f32[2] g:f32[2] h:f32[2]. let\n          i:f32[2] = sin e\n          j:f32[2] = cos e\n          k:f32[2] = mul g j\n          l:f32[2] = mul i f\n          m:f32[2] = mul k f\n          n:f32[2] = mul i h\n          o:f32[2] = add_any m n\n          p:f32[2] = psum[axes=('x',) axis_index_groups=None] l\n          q:f32[2] = psum[axes=('x',) axis_index_groups=None] o\n        in (p, q) }\n      mesh=Mesh('x': 4, axis_types=(Auto,))\n      newly_manual_axes=frozenset({'x'})\n      out_specs=(P(), P())\n    ] a b a b\n  in (c, d) }",
    'linearize': "{ lambda ; a:f32[8] b:f32[2]. let\n    c:f32[8] d:f32[8] _:f32[2] = shard_map[\n      check_vma=False\n      in_specs=(P('x',), P())\n      jaxpr={ lambda ; e:f32[2] f:f32[2]. let\n          g:f32[2] = sin e\n          h:f32[2] = cos e\n          i:f32[2] = mul g f\n          j:f32[2] = psum[axes=('x',) axis_index_groups=None] i\n        in (h, g, j) }\n      mesh=Mesh('x': 4, axis_types=(Auto,))\n      newly_manual_axes=frozenset({'x'})\n      out_specs=(P('x',), P('x',), P())\n    ] a b\n    k:f32[2] = shard_map[\n      check_vma=False\n      in_specs=(P('x',), P(), P('x',), P('x',), P())\n      jaxpr={ lambda ; l:f32[2] m:f32[2] n:f32[2] o:f32[2] p:f32[2]. let\n          q:f32[2] = mul o l\n          r:f32[2] = mul q m\n          s:f32[2] = mul n p\n          t:f32[2] = add_any r s\n          u:f32[2] = psum[axes=('x',) axis_index_groups=None] t\n        in (u,) }\n      mesh=Mesh('x': 4, axis_types=(Auto,))\n      newly_manual_axes=frozenset({'x'})\n      out_specs=(P(),)\n    ] c b d a b\n  in (k,) }",
    'linearize_scalar_residual': "{ lambda ; a:f32[8]. let\n    b:f32[4] _:f32[8] = shard_map[\n      check_vma=False\n      in_specs=(P('x',),)\n      jaxpr={ lambda ; c:f32[2]. let\n          d:f32[] = reduce_sum[axes=(0,) out_sharding=None] c\n          e:f32[2] = mul c d\n          f:f32[1] = broadcast_in_dim d\n        in (f, e) }\n      mesh=Mesh('x': 4, axis_types=(Auto,))\n      newly_manual_axes=frozenset({'x'})\n      out_specs=(P('x',), P('x',))\n    ] a\n    g:f32[8] = shard_map[\n      check_vma=False\n      in_specs=(P('x',), P('x',), P('x',))\n      jaxpr={ lambda ; h:f32[1] i:f32[2] j:f32[2]. let\n          k:f32[] = squeeze[dimensions=(0,)] h\n          l:f32[] = reduce_sum[axes=(0,) out_sharding=None] j\n          m:f32[2] = mul j k\n          n:f32[2] = mul i l\n          o:f32[2] = add_any m n\n        in (o,) }\n      mesh=Mesh('x': 4, axis_types=(Auto,))\n      newly_manual_axes=frozenset({'x'})\n      out_specs=(P('x',),)\n    ] b a a\n  in (g,) }",
}


def run(code):
    return run_isolated(code, prelude=_PRELUDE, env={"XJAX_NUM_CPU_DEVICES": "4"})


def test_jaxprs_print_as_jax_prints_them():
    for line in run(_PROGRAMS).splitlines():
        name, text = line.split(" ", 1)
        assert eval(text) == _JAX[eval(name)], name


def test_equation_rules_against_numpy():
    out = run("""
        x_np = np.arange(8.0, dtype=np.float32)
        blocks = x_np.reshape(4, 2)
        want = 2 * blocks.sum(0)
        closed = jax.make_jaxpr(psum2)(x)
        # impl: the equation evaluated on concrete arrays runs on every device
        got = jax.core.eval_jaxpr(closed.jaxpr, closed.consts, x)[0]
        print(type(got).__name__, got.sharding.spec)
        np.testing.assert_array_equal(np.asarray(got), want)
        np.testing.assert_array_equal(np.asarray(jax.jit(psum2)(x)), want)  # the lowering
        # batching: against a loop over the batch, with a batched and an unbatched operand
        f = sm(lambda a, b: lax.psum(a * b, "y") + lax.axis_index("x"), mesh2, (P("x", "y"), P(None, "y")), P("x"))
        a = np.arange(3 * 4 * 4, dtype=np.float32).reshape(3, 4, 4)
        b = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
        loop = np.stack([np.asarray(f(jnp.asarray(a[i]), jnp.asarray(b[:1]))) for i in range(3)])
        np.testing.assert_allclose(np.asarray(jax.vmap(f, in_axes=(0, None))(a, b[:1])), loop, rtol=1e-6)
        np.testing.assert_allclose(np.asarray(jax.jit(jax.vmap(f, in_axes=(0, None)))(a, b[:1])), loop, rtol=1e-6)
        ref = np.stack([np.concatenate([(a[i, 2 * r:2 * r + 2, :2] * b[:1, :2] + a[i, 2 * r:2 * r + 2, 2:] * b[:1, 2:]) + r
                                        for r in range(2)]) for i in range(3)])
        np.testing.assert_allclose(loop, ref, rtol=1e-6)
        """)
    assert out.split() == ["ShardedArray", "P()"]


def test_jvp_and_grad_check_grads_x64():
    out = run("""
        from xjax.test_util import check_grads
        jax.config.update("jax_enable_x64", True)
        f = sm(lambda a, b: lax.psum(jnp.sin(a) * b, "x") + jnp.cos(b), mesh, (P("x"), P()), P())
        a = jnp.linspace(-1.0, 1.0, 8)
        b = jnp.linspace(0.5, 1.5, 2)
        check_grads(f, (a, b), order=2, modes=("fwd", "rev"))
        check_grads(jax.jit(f), (a, b), order=1, modes=("fwd", "rev"))
        got = np.asarray(jax.grad(lambda a, b: f(a, b).sum())(a, b))
        np.testing.assert_allclose(got, np.cos(np.asarray(a)) * np.tile(np.asarray(b), 4), rtol=1e-12)
        # scalar residuals ([1] per device), two manual axes (residuals split over both), replicated inputs
        g = sm(lambda a, w: lax.psum(jnp.tanh(a @ w) * a.sum(), ("x", "y")) + lax.psum(w, "y"), mesh2,
               (P("x", "y"), P("y")), P())
        a4 = jnp.linspace(-1.0, 1.0, 16).reshape(4, 4)
        w = jnp.linspace(0.5, 1.5, 12).reshape(4, 3)
        check_grads(g, (a4, w), order=2, modes=("fwd", "rev"))
        check_grads(jax.vmap(g, in_axes=(0, None)), (jnp.stack([a4, -a4]), w), order=1, modes=("rev",))
        a_np, w_np = np.asarray(a4), np.asarray(w)
        blk = lambda i, j: a_np[2 * i:2 * i + 2, 2 * j:2 * j + 2]
        loop = sum(np.tanh(blk(i, j) @ w_np[2 * j:2 * j + 2]) * blk(i, j).sum() for i in range(2) for j in range(2))
        loop = loop + w_np[:2] + w_np[2:]
        np.testing.assert_allclose(np.asarray(g(a4, w)), loop, rtol=1e-12)
        print("ok")
        """)
    assert out.split() == ["ok"]


def test_one_spec_for_all_arguments_and_axis_names():
    out = run("""
        x_np = np.arange(16.0, dtype=np.float32).reshape(4, 4)
        # one spec, a prefix of the arguments' tree, for all of them
        f = jax.shard_map(lambda a, b: (a + b["k"], a), mesh=mesh2, in_specs=P("x"), out_specs=P("x"))
        for g in (f, jax.jit(f)):
            s, t = g(x4, {"k": x4})
            np.testing.assert_array_equal(np.asarray(s), 2 * x_np)
            np.testing.assert_array_equal(np.asarray(t), x_np)
        # axis_names: manual over x only; y stays Auto (values whole along it, not nameable in the body)
        g = jax.shard_map(lambda a: lax.psum(a, "x") * lax.axis_index("x"), mesh=mesh2, in_specs=P("x"),
                          out_specs=P("x"), axis_names={"x"})
        want = np.concatenate([0 * (x_np[:2] + x_np[2:]), 1 * (x_np[:2] + x_np[2:])])
        for h in (g, jax.jit(g), lambda a: jax.vmap(g)(a[None])[0]):
            np.testing.assert_array_equal(np.asarray(h(x4)), want)
        print(g(x4).sharding.spec)
        for bad in [lambda: jax.shard_map(lambda a: a, mesh=mesh2, in_specs=P("x", "y"), out_specs=P("x"),
                                          axis_names={"x"})(x4),
                    lambda: jax.shard_map(lambda a: a, mesh=mesh2, in_specs=P("x"), out_specs=P("x", "y"),
                                          axis_names={"x"})(x4),
                    lambda: jax.shard_map(lambda a: lax.psum(a, "y"), mesh=mesh2, in_specs=P("x"), out_specs=P("x"),
                                          axis_names={"x"})(x4),
                    lambda: jax.shard_map(lambda a: a, mesh=mesh2, in_specs=P("x"), out_specs=P("x"),
                                          axis_names={"z"})(x4),
                    lambda: jax.shard_map(lambda a: a, mesh=mesh2, in_specs=P("x"), out_specs=P("x"),
                                          axis_names=["x"])(x4)]:
            try:
                bad()
            except Exception as err:
                print(type(err).__name__, "|", " ".join(str(err).split()))
        """)
    # JAX's errors (an unbound axis is a NameError in both, with each one's message; a set's order varies)
    lines = out.splitlines()
    assert lines.pop(4).startswith("ValueError | jax.shard_map requires axis_names=frozenset({'z'}) to be a subset of "
                                   "mesh.axis_names=frozenset({")
    assert lines == [
        "P('x',)",
        "ValueError | shard_map in_specs argument must refer to an axis marked as manual (frozenset({'x'})), but: "
        "in_specs refers to 'y' Check the in_specs values passed to shard_map.",
        "ValueError | shard_map out_specs argument must refer to an axis marked as manual (frozenset({'x'})), but: "
        "out_specs refers to 'y' Check the out_specs values passed to shard_map.",
        "NameError | unbound axis name: y. The following axis names (e.g. defined by pmap or vmap) are available to "
        "collective operations: ['x']",
        "TypeError | `axis_names` argument of shard_map should be of type `frozenset` or `set`. Got type: <class 'list'>"]
