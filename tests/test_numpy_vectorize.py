"""What waited for vmap: jnp.vectorize, apply_along_axis and apply_over_axes against NumPy, and
lax.map with batch_size against a Python loop."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax

R = np.random.default_rng(0)


def _f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


# ---- vectorize ------------------------------------------------------------------------------

@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("shapes", [((3, 4), (4,)), ((3, 1), (1, 4)), ((2, 1, 3), (5, 1)), ((), (3,)), ((1, 3), (1, 3))])
def test_vectorize_scalar_function_broadcasts(shapes, jit):
    a, b = _f32(*shapes[0]), _f32(*shapes[1])
    f = jnp.vectorize(lambda x, y: x * y + jnp.sin(x))
    got = (xjax.jit(f) if jit else f)(a, b)
    want = np.vectorize(lambda x, y: x * y + np.sin(x))(a, b)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("signature,fun,npfun,shapes", [
    ("(n),(n)->()", jnp.dot, np.dot, ((4, 3), (3,))),
    ("(m,n),(n)->(m)", jnp.matmul, np.matmul, ((2, 1, 4, 3), (5, 3))),
    ("(m,n),(n,p)->(m,p)", jnp.matmul, np.matmul, ((2, 4, 3), (2, 3, 5))),
    ("(n)->()", jnp.sum, np.sum, ((2, 3, 4),)),
    ("(n)->(n)", jnp.cumsum, np.cumsum, ((3, 1, 5),)),
    ("()->(k)", lambda x: jnp.stack([x, 2 * x, x * x]), lambda x: np.stack([x, 2 * x, x * x]), ((2, 3),)),
])
def test_vectorize_signature(signature, fun, npfun, shapes, jit):
    args = [_f32(*s) for s in shapes]
    f = jnp.vectorize(fun, signature=signature)
    got = (xjax.jit(f) if jit else f)(*args)
    want = np.vectorize(npfun, signature=signature)(*args)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_vectorize_multiple_outputs():
    x = _f32(3, 4)
    f = jnp.vectorize(lambda v: (jnp.max(v), jnp.min(v)), signature="(n)->(),()")
    mx, mn = f(x)
    np.testing.assert_array_equal(mx, x.max(-1))
    np.testing.assert_array_equal(mn, x.min(-1))


def test_vectorize_is_one_batched_op_not_a_loop():
    f = jnp.vectorize(jnp.dot, signature="(n),(n)->()")
    jaxpr = xjax.make_jaxpr(f)(np.ones((7, 3), np.float32), np.ones((7, 3), np.float32))
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["dot_general"], jaxpr


def test_vectorize_excluded_and_none():
    x = _f32(2, 3)
    f = jnp.vectorize(lambda v, p, scale=1.0: v ** p * scale, excluded={1, "scale"})
    np.testing.assert_allclose(f(x, 2, scale=3.0), x ** 2 * 3.0, rtol=1e-6)
    g = jnp.vectorize(lambda v, w: v if w is None else w if v is None else v + w)
    np.testing.assert_allclose(g(x, None), x)
    np.testing.assert_allclose(g(None, x), x)  # None first too
    h = jnp.vectorize(lambda table, i: table[i], excluded={0})  # an excluded array is not mapped
    np.testing.assert_array_equal(h(jnp.arange(10) * 2, np.array([[1, 3], [5, 7]])), [[2, 6], [10, 14]])


@pytest.mark.parametrize("make,exc,first_line", [
    (lambda: jnp.vectorize(jnp.dot, signature="(n),(n)")(np.ones(3), np.ones(3)), ValueError,
     "not a valid gufunc signature: (n),(n)"),
    (lambda: jnp.vectorize(jnp.dot, signature="(n),(n)->()")(np.ones(3), np.ones(4)), ValueError,
     "inconsistent size for core dimension 'n': 4 vs 3 on vectorized function with excluded=frozenset() and "
     "signature='(n),(n)->()'"),
    (lambda: jnp.vectorize(jnp.matmul, signature="(m,n),(n)->(m)")(np.ones(3), np.ones(3)), ValueError,
     "input with shape (3,) does not have enough dimensions for all core dimensions ('m', 'n') on vectorized "
     "function with excluded=frozenset() and signature='(m,n),(n)->(m)'"),
    (lambda: jnp.vectorize(jnp.dot, signature="(n),(n)->()")(np.ones(3)), TypeError,
     "wrong number of positional arguments: expected 2, got 1 on vectorized function with excluded=frozenset() "
     "and signature='(n),(n)->()'"),
    (lambda: jnp.vectorize(jnp.sum, signature="(n)->(),()")(np.ones(3)), TypeError,
     "output must be a tuple when multiple outputs are expected, got: "),
    (lambda: jnp.vectorize(jnp.cumsum, signature="(n)->()")(np.ones((2, 3))), ValueError,
     "output shape (3,) does not match core dimensions () on vectorized function with excluded=frozenset() and "
     "signature='(n)->()'"),
    (lambda: jnp.vectorize(jnp.sin, excluded={-1}), ValueError, "excluded={-1} contains negative numbers"),
    (lambda: jnp.vectorize(jnp.sin, excluded={1.5}), TypeError,
     "jax.numpy.vectorize can only exclude integer or string arguments, but excluded={1.5}"),
    (lambda: jnp.vectorize(jnp.add)(np.ones(2), np.ones(3)), ValueError,
     "Incompatible shapes for broadcasting: shapes=[(2,), (3,)]"),
])
def test_vectorize_errors(make, exc, first_line):
    # Messages recorded from JAX 0.10.2.
    with pytest.raises(exc) as e:
        make()
    assert str(e.value).splitlines()[0].startswith(first_line), str(e.value)


# ---- apply_along_axis / apply_over_axes -----------------------------------------------------

@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2])
@pytest.mark.parametrize("fun,npfun", [
    (jnp.sum, np.sum),
    (lambda v: v[::-1] * 2, lambda v: v[::-1] * 2),
    (lambda v: jnp.stack([v.min(), v.max(), v.mean()]), lambda v: np.stack([v.min(), v.max(), v.mean()])),
    (lambda v: jnp.outer(v, v[:2]), lambda v: np.outer(v, v[:2])),
])
def test_apply_along_axis(fun, npfun, axis, jit):
    x = _f32(3, 4, 5)
    f = lambda a: jnp.apply_along_axis(fun, axis, a)  # noqa: E731
    got = (xjax.jit(f) if jit else f)(x)
    want = np.apply_along_axis(npfun, axis, x)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_apply_along_axis_extra_arguments_and_one_batched_op():
    x = _f32(4, 6)
    got = jnp.apply_along_axis(lambda v, w, scale: jnp.dot(v, w) * scale, 1, x, x[0], scale=2.0)
    np.testing.assert_allclose(got, x @ x[0] * 2.0, rtol=1e-5)
    jaxpr = xjax.make_jaxpr(lambda a: jnp.apply_along_axis(jnp.sum, 0, a))(x)
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["reduce_sum"], jaxpr


@pytest.mark.parametrize("axes", [[0], [0, 2], [-1, 0], [1, 1]])
@pytest.mark.parametrize("fun,npfun", [(jnp.sum, np.sum), (jnp.cumsum, np.cumsum),
                                       (lambda a, ax: jnp.max(a, ax, keepdims=True), np.max)])
def test_apply_over_axes(fun, npfun, axes):
    x = _f32(2, 3, 4)
    got = jnp.apply_over_axes(fun, x, axes)
    want = np.apply_over_axes(npfun, x, axes)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_apply_over_axes_rejects_a_result_of_another_rank():
    with pytest.raises(ValueError, match="function is not returning an array of the correct shape"):
        jnp.apply_over_axes(lambda a, ax: jnp.sum(a), _f32(2, 3, 4), [1])


# ---- lax.map with batch_size ----------------------------------------------------------------

def _loop(f, xs):
    outs = [f(xjax.tree_util.tree_map(lambda a: a[i], xs)) for i in range(len(xjax.tree_util.tree_leaves(xs)[0]))]
    return xjax.tree_util.tree_map(lambda *v: np.stack([np.asarray(e) for e in v]), *outs)


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("batch_size", [0, 1, 2, 3, 7, 10, 25])
def test_map_batch_size_equals_the_loop(batch_size, jit):
    xs = {"a": _f32(10, 3), "b": _f32(10, 3, 2)}
    w = _f32(2, 4)

    def f(d):
        return {"y": jnp.dot(d["b"], w) + d["a"][:, None], "s": jnp.sum(d["a"] ** 2)}

    m = lambda xs: lax.map(f, xs, batch_size=batch_size)  # noqa: E731
    got = (xjax.jit(m) if jit else m)(xs)
    want = _loop(f, xs)
    for k in ("y", "s"):
        assert got[k].shape == want[k].shape
        np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-5)


def test_map_batch_size_traces_f_batched_once_per_part():
    # As JAX: x of 10 in batches of 3 traces the chunk body and the remainder, each with (3, 4).
    shapes = []

    def f(x):
        shapes.append(x.shape)
        return x + 1

    y = lax.map(f, jnp.ones((10, 3, 4)), batch_size=3)
    assert shapes == [(3, 4), (3, 4)]
    assert y.shape == (10, 3, 4)
    jaxpr = xjax.make_jaxpr(lambda x: lax.map(lambda r: r * 2.0, x, batch_size=4))(jnp.ones((8, 3)))
    (scan,) = [e for e in jaxpr.jaxpr.eqns if e.primitive.name == "scan"]
    assert scan.params["length"] == 2
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns].count("mul") == 0  # the product is in the scan body


def test_map_batch_size_errors():
    with pytest.raises(ValueError, match="batch_size must be non-negative"):
        lax.map(lambda x: x, jnp.ones(3), batch_size=-1)
    with pytest.raises(TypeError):
        lax.map(lambda x: x, jnp.ones(3), batch_size=1.5)
