"""grad, value_and_grad, jvp, vjp, linearize, jacobians: values, nesting with jit, control flow, errors.

Numerical checks use check_grads in x64; references are NumPy formulas or values recorded from JAX.
"""
import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax.test_util import check_grads


@pytest.fixture
def x64():
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", False)


X = np.array([1.0, 2.0, 3.0, 4.0], np.float32)


def test_grad_of_sum_of_squares():
    np.testing.assert_allclose(jax.grad(lambda x: jnp.sum(x ** 2))(X), 2 * X)


def test_value_and_grad_argnums_and_aux():
    y = X + 0.1
    (v, aux), (gx, gy) = jax.value_and_grad(lambda x, y: (jnp.sum((x - y) ** 2), x - y), argnums=(0, 1),
                                            has_aux=True)(X, y)
    np.testing.assert_allclose(v, np.sum((X - y) ** 2), rtol=1e-6)
    np.testing.assert_allclose(gx, 2 * (X - y), rtol=1e-5)
    np.testing.assert_allclose(gy, -2 * (X - y), rtol=1e-5)
    assert type(aux) is jax.Array


def test_higher_order_and_every_jit_ordering():
    f = lambda x: x ** 4  # noqa: E731
    for g in (jax.grad(jax.grad(jax.grad(f))), jax.jit(jax.grad(jax.grad(jax.grad(f)))),
              jax.grad(jax.jit(jax.grad(jax.grad(f)))), jax.grad(jax.grad(jax.grad(jax.jit(f))))):
        assert float(g(2.0)) == pytest.approx(48.0)


def test_nested_jit_stays_one_equation_in_both_passes():
    f = jax.jit(lambda x: jnp.sum(jnp.sin(x) * x))
    text = str(jax.make_jaxpr(jax.grad(f))(X))
    assert text.count("jit[") == 2 and text.count("name=<lambda>") == 2  # both keep the jit's name, as in JAX
    np.testing.assert_allclose(jax.grad(f)(X), np.cos(X) * X + np.sin(X), rtol=1e-5)


def test_eager_python_control_flow_on_concrete_tracers():
    def f(x):
        if x > 0:
            return x * 2.0
        return jnp.sum(jnp.nonzero(jnp.array([x, 0.0, x]))[0]) * x
    assert float(jax.grad(f)(3.0)) == 2.0
    assert float(jax.grad(f)(-3.0)) == 2.0


def test_perturbation_confusion():
    # d/dx [x * d/dy (x + y)] = 1: the inner derivative must not see the outer x's tangent.
    f = lambda x: x * jax.grad(lambda y: x + y)(1.0)  # noqa: E731
    assert float(jax.grad(f)(2.0)) == 1.0
    g = lambda x: jax.jvp(lambda y: x * y, (1.0,), (1.0,))[1]  # noqa: E731
    assert float(jax.jvp(g, (3.0,), (1.0,))[1]) == 1.0


def test_leaked_tracer_raises():
    leaked = []
    jax.grad(lambda x: leaked.append(x) or x * 2.0)(1.0)
    with pytest.raises(jax.errors.UnexpectedTracerError):
        jax.jit(lambda y: y + leaked[0])(1.0)


def test_check_grads_elementwise_and_matmul(x64):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4))
    check_grads(lambda x: jnp.tanh(x) @ x.T, (a,), 3)
    check_grads(lambda x: jnp.max(x, axis=1) + jnp.sum(jnp.exp(x), 0)[:3], (a,), 2)


def test_cond_switch_grads(x64):
    f = lambda x: jnp.sum(jax.lax.cond(x[0] > 0, lambda x: jnp.sin(x) * x, jnp.cos, x))  # noqa: E731
    check_grads(f, (np.array([1.0, 2.0, 3.0]),), 2)
    check_grads(f, (np.array([-1.0, 2.0, 3.0]),), 2)
    s = lambda x: jnp.sum(jax.lax.switch(1, [jnp.sin, jnp.cos, lambda x: x * 3], x))  # noqa: E731
    np.testing.assert_allclose(jax.grad(s)(X.astype(np.float64)), -np.sin(X), rtol=1e-6)


def test_scan_grads_first_order(x64):
    def f(w, xs):
        def cell(h, x):
            h = jnp.tanh(h @ w + x)
            return h, jnp.sum(h)
        h, ys = jax.lax.scan(cell, jnp.zeros(3), xs)
        return jnp.sum(ys) + jnp.sum(h)
    args = (np.ones((3, 3)) * 0.3, np.arange(12.0).reshape(4, 3) / 10)
    check_grads(f, args, 2)
    g1 = jax.grad(f, argnums=(0, 1))(*args)
    g2 = jax.jit(jax.grad(f, argnums=(0, 1)))(*args)
    for a, b in zip(g1, g2):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    check_grads(lambda x: jax.lax.scan(lambda c, x: (c * x, c + x), 1.0, x, reverse=True)[1],
                (np.arange(1, 5.0),), 1)


RNG = np.random.default_rng(7)
W3, XS = RNG.standard_normal((3, 3)) * 0.4, RNG.standard_normal((4, 3))


def _rnn_reverse(w, xs):  # tuple carry, ys, reverse scan
    def cell(c, x):
        h, s = c
        h = jnp.sin(h * x) @ w
        return (h, s + jnp.sum(h)), h * 2.0
    (h, s), ys = jax.lax.scan(cell, (jnp.ones(3), 0.0), xs, reverse=True)
    return jnp.sum(ys ** 2) + s + jnp.sum(h)


def _scan_in_cond_in_scan(w, xs):
    def outer(c, x):
        inner = jax.lax.scan(lambda d, y: (jnp.tanh(d * y + c), d), c, jnp.stack([x, x * 0.5]))[0]
        return jax.lax.cond(x[0] > 0, lambda: inner @ w, lambda: inner), jnp.sum(inner)
    c, ys = jax.lax.scan(outer, xs[0], xs)
    return jnp.sum(c) + jnp.sum(ys)


@pytest.mark.parametrize("f", [
    _rnn_reverse,
    _scan_in_cond_in_scan,
    lambda w, xs: jnp.sum(jax.lax.scan(lambda c, _: (jnp.cos(c @ w) * xs[0], None), xs[1], None, length=3)[0]),
    lambda w, xs: jnp.sum(jax.lax.scan(lambda c, x: (c + jnp.sin(w), jnp.cos(w) * x[0]), jnp.zeros((3, 3)), xs)[1]),
    lambda w, xs: jnp.sum(jax.lax.fori_loop(0, 3, lambda i, c: jnp.sin(c @ w) + xs[i], xs[0])),
    lambda w, xs: jnp.sum(jax.lax.cond(xs[0, 0] > 0, lambda a, b: jnp.sin(a @ b), lambda a, b: jnp.cos(a) * b[0],
                                       w, xs[:3])),
], ids=["scan_reverse", "scan_cond_scan", "scan_no_xs", "scan_consts", "fori", "cond"])
@pytest.mark.parametrize("jit", [False, True])
def test_control_flow_second_order_both_modes(x64, f, jit):
    # Reverse over reverse and forward over reverse: the transposed loops are differentiated again.
    check_grads(jax.jit(f) if jit else f, (W3, XS), 2, modes=("fwd", "rev"))


def test_while_loop_second_order_forward_mode(x64):
    # Two body consts with a tangent on one: primal and tangent consts stay paired in the nested JVP.
    f = lambda x: jnp.sum(jax.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, jnp.sin(c[1]) * x),  # noqa
                                             (0, x))[1])
    x = np.array([0.3, 0.7])
    check_grads(f, (x,), 2, modes=("fwd",))
    check_grads(jax.jit(f), (x,), 2, modes=("fwd",))
    h = lambda x: jax.jvp(f, (x,), (np.array([1.0, -2.0]),))[1]  # noqa: E731
    p, t = jax.jvp(h, (x,), (np.array([0.5, 0.25]),))
    # JAX 0.10.2 (x64): (-2.069838252327777, -1.256156633855181)
    assert float(p) == pytest.approx(-2.069838252327777, rel=1e-12)
    assert float(t) == pytest.approx(-1.256156633855181, rel=1e-12)


def test_scan_residuals_that_are_xs_are_read_from_xs():
    # The backward scan reads the known xs it needs as they are: no stacked copy from the forward scan.
    def f(w, xs):
        return jnp.sum(jax.lax.scan(lambda c, x: (jnp.tanh(c @ w + x) * x, None), jnp.ones(3), xs)[0])
    closed = jax.make_jaxpr(jax.grad(f))(W3, XS)
    scans = [e for e in closed.jaxpr.eqns if e.primitive.name == "scan"]
    assert len(scans) == 2 and closed.jaxpr.invars[1] in scans[1].invars
    body = scans[0].params["jaxpr"].jaxpr
    assert body.invars[-1] not in body.outvars  # the forward body does not return its x as a residual


def test_fori_loop_static_trip_count_reverse_mode():
    g = jax.grad(lambda x: jax.lax.fori_loop(0, 3, lambda i, c: c * c, x))(1.1)
    assert float(g) == pytest.approx(8 * 1.1 ** 7, rel=1e-5)


def test_while_loop_forward_mode_and_reverse_error():
    f = lambda x: jax.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * c[1] + 0.5), (0, x))[1]  # noqa
    p, t = jax.jvp(f, (1.1,), (1.0,))
    assert float(p) == pytest.approx(12.224462, rel=1e-6) and float(t) == pytest.approx(51.52586, rel=1e-5)
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work for lax.while_loop"):
        jax.grad(f)(1.1)


def test_jacobians_and_hessian():
    np.testing.assert_allclose(jax.jacfwd(lambda x: x * 2)(jnp.arange(3.0)), 2 * np.eye(3))
    np.testing.assert_allclose(jax.jacrev(lambda x: {"a": x * 2})(jnp.arange(3.0))["a"], 2 * np.eye(3))
    np.testing.assert_allclose(jax.hessian(lambda x: jnp.sum(x ** 3))(jnp.arange(3.0)), np.diag([0.0, 6.0, 12.0]))


def test_linearize_matches_jvp():
    y, f_jvp = jax.linearize(jnp.sin, 1.0)
    assert float(y) == pytest.approx(np.sin(1.0)) and float(f_jvp(2.0)) == pytest.approx(2 * np.cos(1.0))


def test_errors_worded_as_jax():
    with pytest.raises(TypeError, match=r"Gradient only defined for scalar-output functions. Output had shape: \(3,\)"):
        jax.grad(lambda x: jnp.ones(3) * x)(1.0)
    with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
        jax.grad(lambda x: x)(1)
    with pytest.raises(TypeError, match="expected function with aux output to return a two-element tuple"):
        jax.grad(lambda x: x, has_aux=True)(1.0)
    with pytest.raises(TypeError, match="requires at least 4 positional arguments"):
        jax.grad(lambda x: x, argnums=3)(1.0)
    with pytest.raises(TypeError, match="primal and tangent arguments to jax.jvp do not match"):
        jax.jvp(lambda x: x * 2, (1.0,), (1,))
    with pytest.raises(TypeError, match="grad with holomorphic=True requires inputs with complex dtype, but got "
                                        "float32"):
        jax.grad(lambda x: x, holomorphic=True)(1.0)


RANGE = ("Positional argument indices, e.g. for `static_argnums`, must have value greater than or equal to "
         "-len(args) and less than len(args), but got value {} for len(args) == {}.")
NEED = ("differentiating with respect to argnums={} requires at least {} positional arguments to be passed by "
        "the caller, but got only {} positional arguments.")


@pytest.mark.parametrize("transform, argnums, nargs, error, message", [
    # First lines recorded from JAX 0.10.2.
    (jax.grad, 1, 1, TypeError, NEED.format(1, 2, 1)),
    (jax.grad, (0, 3), 2, TypeError, NEED.format((0, 3), 4, 2)),
    (jax.grad, 0, 0, TypeError, NEED.format(0, 1, 0)),
    (jax.grad, -2, 1, ValueError, RANGE.format(-2, 1)),
    (jax.grad, (0, -3), 2, ValueError, RANGE.format(-3, 2)),
    (jax.value_and_grad, 2, 2, TypeError, NEED.format(2, 3, 2)),
    (jax.value_and_grad, -3, 2, ValueError, RANGE.format(-3, 2)),
    (jax.jacrev, 2, 2, ValueError, RANGE.format(2, 2)),
    (jax.jacrev, -3, 2, ValueError, RANGE.format(-3, 2)),
    (jax.jacrev, 0, 0, ValueError, RANGE.format(0, 0)),
    (jax.jacfwd, 1, 1, ValueError, RANGE.format(1, 1)),
    (jax.hessian, 2, 2, ValueError, RANGE.format(2, 2)),
])
def test_argnums_out_of_range_and_too_few_args_as_jax(transform, argnums, nargs, error, message):
    f = transform(lambda *a: sum(a) * 2.0, argnums=argnums)
    with pytest.raises(error) as info:
        f(*[1.0] * nargs)
    assert str(info.value).splitlines()[0] == message


def test_argnums_negative_in_range_and_repeated():
    assert float(jax.grad(lambda x, y: x * y, argnums=-1)(3.0, 2.0)) == 3.0
    with pytest.raises(TypeError, match=r"argnums=\(0, -2\) names the same positional argument more than once"):
        jax.grad(lambda x, y: x * y, argnums=(0, -2))(3.0, 2.0)


def test_integer_inputs_with_allow_int_get_float0():
    g = jax.grad(lambda x, y: x * y, argnums=(0, 1), allow_int=True)(1.0, 2)
    assert float(g[0]) == 2.0 and g[1].dtype == np.dtype([("float0", np.void, 0)])


def test_scan_with_several_differentiated_consts(x64):
    # Two weights: the loop body's primal/tangent input order must stay paired per value.
    def loss(wh, wx, xs):
        def cell(h, x):
            h = jnp.tanh(h @ wh + x @ wx)
            return h, jnp.sum(h * h)
        h, ys = jax.lax.scan(cell, jnp.zeros((2, 3)), xs)
        return jnp.sum(ys) + jnp.sum(h)
    rng = np.random.default_rng(3)
    check_grads(loss, (rng.standard_normal((3, 3)) * 0.3, rng.standard_normal((4, 3)) * 0.3,
                       rng.standard_normal((5, 2, 4))), 1)
