"""Shardings in the types of traced values (JAX's explicit sharding): jax.typeof of tracers, the
jaxprs of programs over arrays split over Explicit mesh axes, jax.reshard and
with_sharding_constraint as equations, JAX's ShardingTypeErrors, and the partitioned results.

The jaxpr texts are JAX 0.10.2's (tests/sharding_types_values.py, recorded by
tests/tools/record_sharding_types.py from the programs of tests/sharding_types_programs.py). Each test
runs in a subprocess with XJAX_NUM_CPU_DEVICES=4 (a 2x2 mesh), since the number of devices is fixed at
their first use.
"""
import json
import os

from isolated import run_isolated
from sharding_types_values import JAX_TEXTS

_TESTS = os.path.dirname(os.path.abspath(__file__))
_PRELUDE = f"""\
import json, sys
sys.path.insert(0, {_TESTS!r})
import numpy as np, xjax as jax, xjax.numpy as jnp
from xjax.sharding import AxisType, NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 2), ("X", "Y"), axis_types=(AxisType.Explicit,) * 2)
auto = jax.make_mesh((2, 2), ("X", "Y"), axis_types=(AxisType.Auto,) * 2)
x_np = np.arange(32, dtype=np.float32).reshape(8, 4) / 10
w_np = np.arange(24, dtype=np.float32).reshape(4, 6) / 10
x = jax.device_put(x_np, NamedSharding(mesh, P("X", None)))
w = jax.device_put(w_np, NamedSharding(mesh, P(None, "Y")))
"""

def run(code, threads="2"):
    return run_isolated(code, prelude=_PRELUDE, env={"XJAX_NUM_CPU_DEVICES": "4", "XJAX_NUM_THREADS": threads})


def test_jaxprs_types_and_errors_are_jax_s():
    out = run("""
        from sharding_types_programs import programs
        print(json.dumps(programs(jax, jnp, np, P, NamedSharding, AxisType)))
        """)
    got = json.loads(out)
    assert sorted(got) == sorted(JAX_TEXTS)
    for name, want in JAX_TEXTS.items():
        text = got[name]
        assert text == want, f"{name}:\n{got[name]}\n-- JAX:\n{want}"


def test_programs_without_explicit_shardings_print_as_before():
    out = run("""
        f = jax.grad(lambda v: jnp.tanh(v).sum())
        a = jax.device_put(x_np, NamedSharding(auto, P("X", None)))  # (Auto axes: not in types)
        print(str(jax.make_jaxpr(f)(x_np)) == str(jax.make_jaxpr(f)(a)))
        print(jax.make_jaxpr(f)(x_np).jaxpr.eqns[3].primitive, jax.typeof(a))
        """)
    assert out.splitlines() == ["True", "broadcast_in_dim float32[8,4]"]


def test_partitioned_results_match_numpy_and_have_their_types_shardings():
    code = """
        import hashlib
        x64, w64 = x_np.astype(np.float64), w_np.astype(np.float64)
        with jax.set_mesh(mesh):
            r = jax.jit(lambda x, w: jax.reshard(jnp.sin(x @ w).sum(axis=0), P()))(x, w)
            np.testing.assert_allclose(np.asarray(r), np.sin(x64 @ w64).sum(0), rtol=2e-6, atol=2e-6)
            print(r.sharding.spec, jax.typeof(r))
            g = jax.jit(jax.grad(lambda w, x: jnp.tanh(x @ w).sum()))(w, x)
            t = np.tanh(x64 @ w64)
            np.testing.assert_allclose(np.asarray(g), x64.T @ (1 - t * t), rtol=2e-6, atol=1e-5)
            print(g.sharding.spec, jax.typeof(g))
            h = jax.jit(lambda x: jax.reshard(x * 2, P(None, "X")))(x)
            np.testing.assert_array_equal(np.asarray(h), 2 * x_np)
            print(h.sharding.spec, [s.data.shape for s in h.addressable_shards][0])
            z = jax.device_put(x_np.T.copy(), NamedSharding(mesh, P(None, "X")))
            d = jax.jit(lambda x, z: jax.lax.dot_general(z, x, (([1], [0]), ([], [])), out_sharding=P("X", None)))(x, z)
            np.testing.assert_allclose(np.asarray(d), x64.T @ x64, rtol=2e-6)
            print(d.sharding.spec, jax.typeof(d))
            e = jax.lax.dot_general(x, x, (([0], [0]), ([], [])), out_sharding=P("X"))  # eagerly: placed so
            np.testing.assert_allclose(np.asarray(e), x64.T @ x64, rtol=2e-6)
            print(e.sharding.spec, jax.typeof(e))
        a = jax.device_put(x_np, NamedSharding(auto, P("X", None)))
        c = jax.jit(lambda v: jax.lax.with_sharding_constraint(v * 2, NamedSharding(auto, P(None, "Y"))))(a)
        np.testing.assert_array_equal(np.asarray(c), 2 * x_np)
        print(c.sharding.spec)
        print(hashlib.sha1(np.asarray(g).tobytes() + np.asarray(r).tobytes() + np.asarray(d).tobytes()).hexdigest())
        """
    out = run(code, threads="1")
    assert out.splitlines()[:-1] == [
        "P(None,) float32[6]", "P(None, 'Y') float32[4,6@Y]", "P(None, 'X') (8, 2)", "P('X', None) float32[4@X,4]",
        "P('X', None) float32[4@X,4]", "P(None, 'Y')"]
    assert run(code, threads="3") == out  # the same bits whatever the thread count


def test_reshard_and_constraint_rules_check_grads_x64_and_batch_as_a_loop():
    out = run("""
        import xjax
        from xjax.test_util import check_grads
        xjax.config.update("jax_enable_x64", True)
        v = jax.device_put(np.linspace(-1, 1, 32).reshape(8, 4), NamedSharding(mesh, P("X", None)))
        with jax.set_mesh(mesh):
            f = lambda v: jnp.sin(jax.reshard(v * v, P(None, "Y"))).sum(0)
            check_grads(f, (v,), order=2, modes=("fwd", "rev"))
            check_grads(jax.jit(f), (v,), order=1, modes=("fwd", "rev"))
            print(jax.make_jaxpr(jax.grad(lambda v: f(v).sum()))(v).jaxpr.eqns[-1].outvars[0].aval.str_short())
            per_row = jax.vmap(lambda r: jax.reshard(jnp.cos(r), P("Y")))(v)
            print(jax.typeof(per_row), np.array_equal(per_row, np.stack([np.cos(r) for r in np.asarray(v)])))
        a = jax.device_put(np.linspace(-1, 1, 32).reshape(8, 4), NamedSharding(auto, P("X", None)))
        g = lambda v: jnp.sin(jax.lax.with_sharding_constraint(v * v, NamedSharding(auto, P(None, "Y")))).sum()
        check_grads(g, (a,), order=2, modes=("fwd", "rev"))
        rows = jax.vmap(lambda r: jax.lax.with_sharding_constraint(r * 3, NamedSharding(auto, P("Y"))))(a)
        print(np.array_equal(rows, np.stack([r * 3 for r in np.asarray(a)])))
        """)
    assert out.splitlines() == ["f64[8@X,4]", "float64[8@X,4@Y] True", "True"]


def test_bad_shardings_are_clear_errors():
    out = run("""
        for f in [lambda: jax.jit(lambda v: jax.reshard(v, P()))(x),  # no mesh set for a bare P
                  lambda: jax.jit(lambda v: jax.reshard(v, NamedSharding(auto, P("X"))))(x),
                  lambda: jax.jit(lambda v: jax.reshard(v, "X"))(x),
                  lambda: jax.jit(lambda v: jax.lax.dot_general(v, v, (([0], [0]), ([], [])), out_sharding=3))(x)]:
            try:
                f()
            except (ValueError, TypeError) as err:
                print(type(err).__name__, " ".join(str(err).split()[:6]))
        """)
    assert out.splitlines() == [
        "ValueError Using PartitionSpec when you are not",
        "ValueError PartitionSpec passed to reshard cannot contain",
        "TypeError reshard: expected a jax.sharding.NamedSharding or PartitionSpec,",
        "TypeError dot_general: out_sharding must be a jax.sharding.NamedSharding"]
