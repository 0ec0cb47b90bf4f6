"""Primitives defined outside xjax, as libraries define them through jax.extend and the rule tables
of jax.interpreters (ad, batching, mlir), run eagerly and under jit, grad, vmap, scan and export.

References: NumPy formulas, check_grads in x64, and a Python loop for vmap.
"""
import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax import lax
from xjax.export import deserialize, export
from xjax.extend.core import Primitive
from xjax.interpreters import ad, batching, mlir
from xjax.test_util import check_grads


@pytest.fixture
def x64():
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", False)


# ---- a nonlinear primitive: cube(x, y) = x**3 * y, with rules in JAX's conventions ------------------

def _cube_impl(x, y):
    _cube_impl.calls += 1
    return x * x * x * y


_cube_impl.calls = 0
cube_p = Primitive("test_cube")
cube_p.def_impl(_cube_impl)
cube_p.def_abstract_eval(lambda x, y: jax.core.ShapedArray(x.shape, x.dtype))


def _cube_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    t = None
    if type(tx) is not ad.Zero:
        t = 3 * x * x * y * tx
    if type(ty) is not ad.Zero:
        t = x * x * x * ty if t is None else t + x * x * x * ty
    return cube_p.bind(x, y), t


def _cube_batch(args, dims):
    size = next(jnp.shape(a)[d] for a, d in zip(args, dims) if d is not batching.not_mapped)
    x, y = [jnp.broadcast_to(a, (size,) + jnp.shape(a)) if d is batching.not_mapped else jnp.moveaxis(a, d, 0)
            for a, d in zip(args, dims)]
    return cube_p.bind(x, y), 0


ad.primitive_jvps[cube_p] = _cube_jvp
batching.primitive_batchers[cube_p] = _cube_batch
mlir.register_lowering(cube_p, mlir.lower_fun(_cube_impl, multiple_results=False))


def cube(x, y):
    return cube_p.bind(x, y)


# ---- a linear primitive with two results: (2x, -x), transposed through ad.deflinear2 --------------

def _split_impl(x):
    return [2 * x, -x]


split_p = Primitive("test_split")
split_p.multiple_results = True
split_p.def_impl(_split_impl)
split_p.def_abstract_eval(lambda x: [x, x])
ad.deflinear2(split_p, lambda cts, x: [2 * ad.instantiate_zeros(cts[0]) - ad.instantiate_zeros(cts[1])])
batching.primitive_batchers[split_p] = lambda args, dims: (split_p.bind(*args), [dims[0], dims[0]])
mlir.register_lowering(split_p, mlir.lower_fun(_split_impl, multiple_results=True))

X = np.array([0.5, -1.5, 2.0], np.float32)
Y = np.array([1.0, 2.0, -3.0], np.float32)


def test_eager_and_jit_match_numpy():
    np.testing.assert_allclose(cube(X, Y), X ** 3 * Y, rtol=1e-6)
    a, b = split_p.bind(X)
    np.testing.assert_allclose(a, 2 * X)
    np.testing.assert_allclose(b, -X)
    np.testing.assert_allclose(jax.jit(lambda x, y: jnp.sin(cube(x, y)))(X, Y), np.sin(X ** 3 * Y), rtol=1e-6)


def test_jit_lowers_the_python_implementation_instead_of_calling_it():
    f = jax.jit(lambda x, y: cube(x, y) + 1.0)
    f(X, Y)  # traced and compiled: the lowering traced _cube_impl once
    before = _cube_impl.calls
    np.testing.assert_allclose(f(X + 1, Y), (X + 1) ** 3 * Y + 1, rtol=1e-6)
    assert _cube_impl.calls == before  # a compiled call runs the graph, not Python


def test_abstract_eval_under_make_jaxpr():
    text = str(jax.make_jaxpr(lambda x: cube(x, x))(X))
    assert "test_cube" in text


def test_grad_against_formula_and_check_grads(x64):
    x, y = X.astype(np.float64), Y.astype(np.float64)
    gx, gy = jax.grad(lambda x, y: jnp.sum(cube(x, y)), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx, 3 * x ** 2 * y, rtol=1e-12)
    np.testing.assert_allclose(gy, x ** 3, rtol=1e-12)
    check_grads(lambda x, y: jnp.tanh(cube(x, y)), (x, y), order=2, modes=("fwd", "rev"))
    check_grads(lambda x: sum(split_p.bind(jnp.sin(x))), (x,), order=2, modes=("fwd", "rev"))
    check_grads(jax.jit(lambda x, y: cube(jnp.cos(x), y)), (x, y), order=1, modes=("rev",))


def test_transpose_of_a_linear_primitive_with_two_results():
    g = jax.grad(lambda x: jnp.sum(split_p.bind(x)[0] * 3.0 + split_p.bind(x)[1]))(X)
    np.testing.assert_allclose(g, np.full(3, 2 * 3.0 - 1.0, np.float32))
    _, vjp = jax.vjp(lambda x: split_p.bind(x), X)
    (ct,) = vjp([Y, 2 * Y])
    np.testing.assert_allclose(ct, 2 * Y - 2 * Y)
    (ct,) = vjp([Y, jnp.zeros(3)])
    np.testing.assert_allclose(ct, 2 * Y)


def test_vmap_matches_a_python_loop():
    xs = np.stack([X, 2 * X, -X])
    got = jax.vmap(cube, in_axes=(0, None))(xs, Y)
    np.testing.assert_allclose(got, np.stack([x ** 3 * Y for x in xs]), rtol=1e-6)
    got = jax.vmap(cube, in_axes=(1, 0))(xs.T, xs)
    np.testing.assert_allclose(got, np.stack([x ** 3 * x for x in xs]), rtol=1e-6)
    a, b = jax.vmap(split_p.bind)(xs)
    np.testing.assert_allclose(a, 2 * xs)
    np.testing.assert_allclose(jax.vmap(jax.grad(lambda x: cube(x, 2.0)))(X), 6 * X ** 2, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.vmap(cube))(xs, xs), xs ** 4, rtol=1e-6)


def test_scan_body_with_the_primitive():
    def body(c, x):
        return c + cube(x, c), c

    c, cs = lax.scan(body, np.float32(1.0), X)
    want_c, want_cs = np.float32(1.0), []
    for x in X:
        want_cs.append(want_c)
        want_c = want_c + x ** 3 * want_c
    np.testing.assert_allclose(c, want_c, rtol=1e-6)
    np.testing.assert_allclose(cs, want_cs, rtol=1e-6)
    g = jax.grad(lambda x: lax.scan(body, np.float32(1.0), x)[0])(X)
    eps = 1e-3
    fd = [(lax.scan(body, np.float32(1.0), X + eps * e)[0] - lax.scan(body, np.float32(1.0), X - eps * e)[0])
          / (2 * eps) for e in np.eye(3, dtype=np.float32)]
    np.testing.assert_allclose(g, fd, rtol=2e-2)


def test_export_round_trip():
    f = jax.jit(lambda x, y: cube(x, y) + split_p.bind(x)[1])
    exp = export(f)(X, Y)
    back = deserialize(exp.serialize())
    np.testing.assert_allclose(back.call(X, Y), X ** 3 * Y - X, rtol=1e-6)


def test_tables_are_views_onto_the_primitive():
    assert ad.primitive_jvps[cube_p] is _cube_jvp  # read back as registered
    assert cube_p.jvp is not None and cube_p in ad.primitive_jvps
    assert batching.primitive_batchers[cube_p] is _cube_batch
    assert cube_p in batching.fancy_primitive_batchers  # the same field, in xjax's own convention
    assert split_p in ad.primitive_transposes and cube_p not in ad.primitive_transposes
    from xjax._src.lax.elementwise import sin_p

    assert sin_p in ad.primitive_jvps and sin_p in list(ad.primitive_jvps)  # xjax's own rules too
    out, t = ad.primitive_jvps[sin_p]((jnp.float32(0.5),), (jnp.float32(1.0),))
    np.testing.assert_allclose(t, np.cos(np.float32(0.5)), rtol=1e-6)


def test_missing_rules_raise_clear_errors():
    p = Primitive("test_no_rules")
    p.def_impl(lambda x: x)
    p.def_abstract_eval(lambda x: x)
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'test_no_rules'"):
        jax.grad(lambda x: p.bind(x))(1.0)
    with pytest.raises(NotImplementedError, match="Batching rule for 'test_no_rules'"):
        jax.vmap(p.bind)(X)
    with pytest.raises(TypeError, match="keys are Primitives"):
        ad.primitive_jvps["sin"] = _cube_jvp


def test_closed_call_applies_its_jaxpr_under_transformations(x64):
    from xjax.extend.core.primitives import call_p, closed_call_p

    closed = jax.make_jaxpr(lambda x, y: [jnp.sin(x) * y])(1.0, 2.0)

    def f(x, y):
        return closed_call_p.bind(x, y, call_jaxpr=closed)[0]

    x, y = np.float64(0.7), np.float64(-1.3)
    np.testing.assert_allclose(f(x, y), np.sin(x) * y, rtol=1e-12)
    np.testing.assert_allclose(jax.jit(f)(x, y), np.sin(x) * y, rtol=1e-12)
    np.testing.assert_allclose(call_p.bind(x, y, call_jaxpr=closed.jaxpr)[0], np.sin(x) * y, rtol=1e-12)
    check_grads(f, (x, y), order=2, modes=("fwd", "rev"))
    xs = np.linspace(-1, 1, 4)
    np.testing.assert_allclose(jax.vmap(f, in_axes=(0, None))(xs, y), [np.sin(v) * y for v in xs], rtol=1e-12)
