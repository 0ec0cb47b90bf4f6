"""Shardings in traced types for indexing, scatter, dynamic slices, convolution, linear algebra, split and
top_k, and the out_sharding arguments of jnp.matmul/dot/reshape and lax.reshape/conv_general_dilated and
ShapeDtypeStruct(sharding=): JAX 0.10.2's jaxprs, types and errors (tests/sharding_types_more_values.py,
recorded by tests/tools/record_sharding_types.py from tests/sharding_types_more_programs.py), the
partitioned and eager results against NumPy, and check_grads in x64.

Each test runs in a subprocess with XJAX_NUM_CPU_DEVICES=4 (a 2x2 mesh of Explicit axes).
"""
import json
import os
import textwrap

from isolated import run_isolated
from sharding_types_more_values import JAX_TEXTS

_TESTS = os.path.dirname(os.path.abspath(__file__))
_PRELUDE = f"""\
import json, sys
sys.path.insert(0, {_TESTS!r})
import numpy as np, xjax as jax, xjax.numpy as jnp
from xjax.sharding import AxisType, NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 2), ("X", "Y"), axis_types=(AxisType.Explicit,) * 2)
put = lambda a, *spec: jax.device_put(a, NamedSharding(mesh, P(*spec)))
x_np = np.arange(32, dtype=np.float32).reshape(8, 4) / 10
w_np = np.arange(24, dtype=np.float32).reshape(4, 6) / 10
x, w = put(x_np, "X", None), put(w_np, None, "Y")
ids = np.array([3, 0, 2], np.int32)
"""

# Where xjax's result differs from JAX's, and why: JAX's jnp.linalg.cholesky masks its result with a
# `select` whose mask (an iota under jax.set_mesh) is typed over the context mesh, unsplit, which JAX's
# select rule refuses against the batch-split cases; xjax's unsplit values carry no mesh, so its mask
# selects as a scalar would, and the result is typed as cholesky's rule types it.
_DIFFERENT = {"cholesky": "float32[4@X,3,3]"}


def run(code, threads="2"):
    return run_isolated(code, prelude=_PRELUDE, env={"XJAX_NUM_CPU_DEVICES": "4", "XJAX_NUM_THREADS": threads})


def test_jaxprs_types_and_errors_are_jax_s():
    out = run("""
        from sharding_types_more_programs import programs
        print(json.dumps(programs(jax, jnp, np, P, NamedSharding, AxisType)))
        """)
    got = json.loads(out)
    assert sorted(got) == sorted(JAX_TEXTS)
    for name, want in JAX_TEXTS.items():
        assert got[name] == _DIFFERENT.get(name, want), f"{name}:\n{got[name]}\n-- JAX:\n{want}"


_PROGRAMS = """
img_np = np.random.RandomState(0).randn(4, 3, 6, 6).astype(np.float32)
ker = np.random.RandomState(1).randn(2, 3, 3, 3).astype(np.float32)
spd_np = np.stack([np.eye(3, dtype=np.float32) * (4 + i) + 1 for i in range(4)])
rhs_np = np.arange(24, dtype=np.float32).reshape(4, 3, 2)
img, stack, rhs = put(img_np, "X"), put(spd_np, "X"), put(rhs_np, "X")
added = w_np.copy()
np.add.at(added, ids, 1.0)
dus = x_np.copy()
dus[2:6] = x_np[:4] * 2
conv = sum(np.pad(img_np.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))[:, None, :, i:i + 6, j:j + 6]
           * ker[None, :, :, i, j, None, None] for i in range(3) for j in range(3)).sum(2)
cases = {
    "columns": (lambda x, i: x[:, i], (x, ids), x_np[:, ids]),
    "rows": (lambda w, i: w[i], (w, ids), w_np[ids]),
    "at_add": (lambda w, i: w.at[i].add(1.0), (w, ids), added),
    "dynamic_slice": (lambda x, i: jax.lax.dynamic_slice(x, (i, 0), (4, 2)), (x, np.int32(1)), x_np[1:5, :2]),
    "dynamic_update_slice": (lambda x: jax.lax.dynamic_update_slice(x, x[:4] * 2, (2, 0)), (x,), dus),
    "conv": (lambda a: jax.lax.conv_general_dilated(a, ker, (1, 1), "SAME"), (img,), conv),
    "cholesky": (jnp.linalg.cholesky, (stack,), np.linalg.cholesky(spd_np.astype(np.float64))),
    "solve": (jnp.linalg.solve, (stack, rhs), np.linalg.solve(spd_np.astype(np.float64), rhs_np)),
    "matmul": (lambda x, w: jnp.matmul(x, w, out_sharding=P(None, "Y")), (x, w), x_np @ w_np),
    "reshape": (lambda x: jnp.reshape(x, (2, 16), out_sharding=P("X", None)), (x,), x_np.reshape(2, 16)),
    "split": (lambda x: jnp.split(x, 2, axis=1)[1], (x,), x_np[:, 2:]),
    "top_k": (lambda x: jax.lax.top_k(x, 2)[0], (x,), -np.sort(-x_np, axis=1)[:, :2]),
}
"""


def test_partitioned_and_eager_results_match_numpy_and_have_their_types_shardings():
    code = _PROGRAMS + textwrap.dedent("""
        import hashlib
        digest = hashlib.sha1()
        with jax.set_mesh(mesh):
            for name, (f, args, want) in cases.items():
                for how, g in (("jit", jax.jit(f)), ("eager", f)):
                    r = g(*args)
                    np.testing.assert_allclose(np.asarray(r), want, rtol=2e-5, atol=2e-5, err_msg=f"{how} {name}")
                    assert r.sharding.spec == jax.typeof(r).sharding.spec, (how, name)
                    digest.update(np.asarray(r).tobytes())
                print(name, jax.typeof(r))
        print(digest.hexdigest())
        """)
    out = run(code, threads="1")
    assert out.splitlines()[:-1] == [
        "columns float32[8@X,3]", "rows float32[3,6@Y]", "at_add float32[4,6@Y]", "dynamic_slice float32[4@X,2]",
        "dynamic_update_slice float32[8@X,4]", "conv float32[4@X,2,6,6]", "cholesky float32[4@X,3,3]",
        "solve float32[4@X,3,2]", "matmul float32[8,6@Y]", "reshape float32[2@X,16]", "split float32[8@X,2]",
        "top_k float32[8@X,2]"]
    assert run(code, threads="3") == out  # the same bits whatever the thread count


def test_rules_check_grads_x64():
    out = run("""
        import xjax
        from xjax.test_util import check_grads
        xjax.config.update("jax_enable_x64", True)
        v = put(np.linspace(-1, 1, 32).reshape(8, 4), "X", None)
        img = put(np.random.RandomState(0).randn(4, 2, 5, 5), "X")
        ker = np.random.RandomState(1).randn(3, 2, 3, 3)
        stack = put(np.stack([np.eye(3) * (4 + i) + 0.5 for i in range(4)]), "X")
        with jax.set_mesh(mesh):
            both, rev = ("fwd", "rev"), ("rev",)  # (check_grads' tangents are whole: the tangent operand of a
            fs = [(lambda v: jnp.sin(v[:, ids]).sum(), v, both),  # scatter or update is split unlike its updates')
                  (lambda v: jnp.sin(v.at[:, ids].add(v[:, :3] ** 2)), v, rev),
                  (lambda v: jnp.cos(jax.lax.dynamic_slice(v, (2, 1), (4, 2))), v, both),
                  (lambda v: jax.lax.dynamic_update_slice(v, jnp.sin(v[:4]), (4, 0)), v, rev),
                  (lambda v: jnp.reshape(v, (2, 16), out_sharding=P("X", None)) ** 2, v, both),
                  (lambda a: jnp.tanh(jax.lax.conv_general_dilated(a, ker, (1, 1), "SAME")), img, both),
                  (lambda a: jnp.linalg.solve(a, jnp.sin(a[:, :, :2])), stack, both)]
            for f, arg, modes in fs:
                if modes == rev:  # (a scalar result: its cotangent is broadcast as the types say)
                    f = (lambda f: lambda a: f(a).sum())(f)
                check_grads(f, (arg,), order=1, modes=modes)
                check_grads(jax.jit(f), (arg,), order=1, modes=("rev",))
                print(jax.typeof(jax.grad(lambda a: f(a).sum())(arg)))
        """)
    assert out.splitlines() == ["float64[8@X,4]"] * 5 + ["float64[4@X,2,5,5]", "float64[4@X,3,3]"]


def test_shape_dtype_struct_sharding_types_traces_and_out_sharding_errors():
    out = run("""
        spec = jax.ShapeDtypeStruct((8, 4), jnp.float32, sharding=NamedSharding(mesh, P("X", None)))
        print(jax.eval_shape(lambda a: a.T, spec).sharding.spec)
        print(jax.jit(lambda a: a * 2).trace(spec).out_info.sharding.spec)
        for f in [lambda: jnp.reshape(x, (32,), out_sharding=3),
                  lambda: jax.lax.conv_general_dilated(x[None, None], np.ones((1, 1, 1, 1), np.float32), (1, 1),
                                                       "SAME", out_sharding=P("X")),
                  lambda: jax.jit(lambda v: jnp.matmul(v, w, out_sharding=NamedSharding(mesh, P(None, "Z"))))(x)]:
            try:
                f()
            except (ValueError, TypeError) as err:
                print(type(err).__name__, " ".join(str(err).split()[:6]))
        """)
    assert out.splitlines() == [
        "P(None, 'X')", "P('X', None)",
        "TypeError reshape: expected a jax.sharding.Sharding or PartitionSpec,",
        "ValueError Using PartitionSpec when you are not",
        "ValueError Resource axis: Z of P(None, 'Z')"]


def test_linear_algebra_solves_each_device_s_batch_block():
    """Over a batch-split stack, jit's plan runs each decomposition on the device's own block of problems
    (no all_gather); a split problem dimension (an Auto axis) is gathered first. Values against NumPy."""
    out = run("""
        from xjax._src import partition
        auto = jax.make_mesh((2, 2), ("X", "Y"), axis_types=(AxisType.Auto,) * 2)
        rng = np.random.RandomState(0)
        a_np = rng.randn(4, 6, 6).astype(np.float32)
        spd_np = a_np @ a_np.transpose(0, 2, 1) + 6 * np.eye(6, dtype=np.float32)
        ref = spd_np.astype(np.float64)
        cases = {"cholesky": (jnp.linalg.cholesky, np.linalg.cholesky(ref)),
                 "eigvalsh": (jnp.linalg.eigvalsh, np.linalg.eigvalsh(ref)),
                 "svdvals": (lambda a: jnp.linalg.svd(a, compute_uv=False), np.linalg.svd(ref, compute_uv=False)),
                 "inv": (jnp.linalg.inv, np.linalg.inv(ref))}
        for m, spec in ((mesh, P("X")), (auto, P("X")), (auto, P(None, "Y"))):
            stack = jax.device_put(spd_np, NamedSharding(m, spec))
            for name, (f, want) in cases.items():
                g = jax.jit(f)
                r = g(stack)
                np.testing.assert_allclose(np.asarray(r), want, rtol=2e-4, atol=2e-4, err_msg=name)
                p = partition.plan_for(jax.make_jaxpr(f)(stack), [stack], m)
                gathers = sum(e.primitive.name == "all_gather" for e in p.jaxpr.jaxpr.eqns)
                print(name, spec, r.sharding.spec, gathers > 0)
        """)
    lines = out.splitlines()
    names = ("cholesky", "eigvalsh", "svdvals", "inv")
    explicit = [f"{n} P('X',) P('X', None{', None' * (n in ('cholesky', 'inv'))}) False" for n in names]
    assert out.splitlines() == explicit + [f"{n} P('X',) P('X',) False" for n in names] + [
        f"{n} P(None, 'Y') P() True" for n in names]
