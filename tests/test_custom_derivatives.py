"""custom_jvp, custom_vjp, custom_gradient and closure_convert: the examples of JAX's custom derivatives
tutorial (rewritten), nesting with jit and higher-order differentiation, symbolic zeros, and jaxprs,
with values and printed jaxprs recorded from JAX 0.10.2."""
import functools

import numpy as np

import xjax as jax
import xjax.numpy as jnp
from xjax.custom_derivatives import CustomVJPPrimal, SymbolicZero
from xjax.test_util import check_grads


def close(got, want, rtol=1e-6, atol=1e-6):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want, np.float32), rtol=rtol, atol=atol)


# ---- custom_jvp ---------------------------------------------------------------------------------

@jax.custom_jvp
def sin_times(x, y):
    return jnp.sin(x) * y


@sin_times.defjvp
def sin_times_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    return sin_times(x, y), jnp.cos(x) * x_dot * y + jnp.sin(x) * y_dot


def test_custom_jvp_values_jvp_and_grad():
    close(sin_times(2., 3.), 2.7278922)
    y, y_dot = jax.jvp(sin_times, (2., 3.), (1., 0.))
    close(y, 2.7278922)
    close(y_dot, -1.2484405)
    assert repr(jax.grad(sin_times)(2., 3.)) == "Array(-1.2484405, dtype=float32, weak_type=True)"
    close(jax.grad(sin_times, 1)(2., 3.), 0.9092974)


def test_defjvps_gives_the_same_derivatives():
    @jax.custom_jvp
    def f(x, y):
        return jnp.sin(x) * y

    f.defjvps(lambda x_dot, ans, x, y: jnp.cos(x) * x_dot * y, lambda y_dot, ans, x, y: jnp.sin(x) * y_dot)
    close(jax.jvp(f, (2., 3.), (1., 0.))[1], -1.2484405)
    gx, gy = jax.grad(f, (0, 1))(2., 3.)
    close(gx, -1.2484405)
    close(gy, 0.9092974)
    f.defjvps(None, lambda y_dot, ans, x, y: jnp.sin(x) * y_dot)  # None: no dependence on x
    gx, gy = jax.grad(f, (0, 1))(2., 3.)
    close(gx, 0.)
    close(gy, 0.9092974)


@jax.custom_jvp
def log1pexp(x):
    return jnp.log(1. + jnp.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    x, = primals
    x_dot, = tangents
    return log1pexp(x), (1 - 1 / (1 + jnp.exp(x))) * x_dot


def test_log1pexp_is_stable_where_autodiff_gives_nan():
    plain = lambda x: jnp.log(1. + jnp.exp(x))  # noqa: E731
    assert np.isnan(np.asarray(jax.grad(plain)(100.)))
    close(jax.grad(log1pexp)(100.), 1.)
    for x, want in zip([-2., 0., 3., 100.], [0.11920297, 0.5, 0.95257413, 1.]):
        close(jax.jit(jax.grad(log1pexp))(x), want)
    close(jax.jit(log1pexp)(3.), 3.0485873)


def test_rule_is_differentiated_for_higher_orders():
    close(jax.grad(jax.grad(log1pexp))(3.), 0.04517666)
    close(jax.jacfwd(jax.grad(log1pexp))(3.), 0.04517666)
    close(jax.linearize(log1pexp, 3.)[1](2.), 1.9051483)
    check_grads(log1pexp, (np.array([-1.5, 0.2, 2.0], np.float32),), order=2)
    check_grads(sin_times, (0.7, -1.3), order=2)


def test_enforcing_a_convention_at_a_singular_point():
    @jax.custom_jvp
    def f(x):
        return x / (1 + jnp.sqrt(x))

    @f.defjvp
    def f_jvp(primals, tangents):
        x, = primals
        x_dot, = tangents
        return f(x), ((jnp.sqrt(x) + 2) / (2 * (jnp.sqrt(x) + 1) ** 2)) * x_dot

    close(jax.grad(f)(0.), 1.)


def test_python_control_flow_on_values_works_under_grad():
    # The function and its rule run on concrete values under grad: they are not traced abstractly.
    @jax.custom_jvp
    def f(x):
        return jnp.sin(x) if x > 0 else jnp.cos(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        x, = primals
        x_dot, = tangents
        return f(x), (2 * x_dot if x > 0 else 3 * x_dot)

    close(jax.grad(f)(1.), 2.)
    close(jax.grad(f)(-1.), 3.)


def test_printed_jaxprs_match_jax():
    assert str(jax.make_jaxpr(sin_times)(2., 3.)) == """\
{ lambda ; a:f32[] b:f32[]. let
    c:f32[] = custom_jvp_call[
      name=sin_times
      call_jaxpr={ lambda ; d:f32[] e:f32[]. let
          f:f32[] = sin d
          g:f32[] = mul f e
        in (g,) }
      jvp=sin_times_jvp
      symbolic_zeros=False
    ] a b
  in (c,) }"""
    assert str(jax.make_jaxpr(jax.grad(sin_times))(2., 3.)) == """\
{ lambda ; a:f32[] b:f32[]. let
    _:f32[] = custom_jvp_call[
      name=sin_times
      call_jaxpr={ lambda ; c:f32[] d:f32[]. let
          e:f32[] = sin c
          f:f32[] = mul e d
        in (f,) }
      jvp=sin_times_jvp
      symbolic_zeros=False
    ] a b
    g:f32[] = cos a
    h:f32[] = sin a
    _:f32[] = mul h 0.0:f32[]
    i:f32[] = mul 1.0:f32[] b
    j:f32[] = mul g i
  in (j,) }"""


def test_nesting_with_jit():
    @jax.custom_jvp
    def k(x):
        return jax.jit(jnp.sin)(x) * 2.  # jit inside the custom function

    k.defjvp(lambda p, t: (k(p[0]), 2. * jnp.cos(p[0]) * t[0]))
    for got in (jax.grad(k)(1.), jax.jit(jax.grad(k))(1.), jax.grad(jax.jit(k))(1.)):
        close(got, 1.0806046)
    close(jax.jit(k)(1.), 1.6829419)
    close(jax.grad(jax.grad(jax.jit(k)))(1.), -1.682942)


def test_closure_over_a_jit_tracer_becomes_an_operand():
    def outer(y):
        @jax.custom_jvp
        def c(x):
            return jnp.sin(x) * y

        c.defjvp(lambda p, t: (c(p[0]), jnp.cos(p[0]) * y * t[0]))
        return jax.grad(c)(2.)

    close(jax.jit(outer)(3.), -1.2484405)
    text = str(jax.make_jaxpr(outer)(3.))
    assert "num_consts=1" in text and "] a 2.0:f32[]" in text


def test_closed_over_arrays_are_operands_and_lower_into_jit():
    c = jnp.arange(3.)

    @jax.custom_jvp
    def f(x):
        return jnp.sin(x) * c

    f.defjvp(lambda p, t: (f(p[0]), jnp.cos(p[0]) * c * t[0]))
    text = str(jax.make_jaxpr(f)(1.))
    assert text.startswith("{ lambda a:f32[3]; b:f32[]. let") and "num_consts=1" in text and "] a b" in text
    close(jax.jit(f)(1.), [0., 0.84147096, 1.6829419])
    close(jax.grad(jax.jit(lambda x: jnp.sum(f(x))))(1.), 1.6209068)


def test_nondiff_argnums_with_a_function_argument():
    @functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
    def app(f, x):
        return f(x)

    @app.defjvp
    def app_jvp(f, primals, tangents):
        x, = primals
        x_dot, = tangents
        return f(x), 2. * x_dot

    close(app(lambda y: y ** 2, 4.), 16.)
    close(jax.grad(lambda x: app(lambda y: y ** 2, x))(4.), 2.)


def test_nondiff_argnums_stop_the_gradient_of_arrays():
    @functools.partial(jax.custom_jvp, nondiff_argnums=(0, 2))
    def app2(f, x, y):
        return f(x) * y

    @app2.defjvp
    def app2_jvp(f, y, primals, tangents):
        x, = primals
        x_dot, = tangents
        return app2(f, x, y), 3. * x_dot * y

    gx, gy = jax.grad(lambda x, y: app2(jnp.sin, x, y), (0, 1))(1., 2.)
    close(gx, 6.)
    close(gy, 0.)
    nondiff_by_name = jax.custom_jvp(lambda x, n: x * n, nondiff_argnames=("n",))
    assert nondiff_by_name.nondiff_argnums == (1,)


def test_symbolic_zeros_in_a_jvp_rule():
    seen = []

    @jax.custom_jvp
    def f(x, y):
        return x * y

    @functools.partial(f.defjvp, symbolic_zeros=True)
    def f_jvp(primals, tangents):
        x, y = primals
        x_dot, y_dot = tangents
        seen.append((type(x_dot) is SymbolicZero, type(y_dot) is SymbolicZero))
        out = jnp.zeros_like(x)
        if type(x_dot) is not SymbolicZero:
            out = out + x_dot * y
        if type(y_dot) is not SymbolicZero:
            out = out + x * y_dot
        return f(x, y), out

    close(jax.grad(f)(2., 3.), 3.)
    close(jax.grad(f, 1)(2., 3.), 2.)
    assert seen == [(False, True), (True, False)]
    z = SymbolicZero.from_primal_value(jnp.ones((2, 3)))
    assert (z.shape, z.dtype, repr(z)) == ((2, 3), np.float32, "SymbolicZero")


def test_symbolic_zero_tangent_outputs():
    @jax.custom_jvp
    def two(x):
        return x, x * 2.

    @functools.partial(two.defjvp, symbolic_zeros=True)
    def two_jvp(primals, tangents):
        return two(primals[0]), (tangents[0], SymbolicZero.from_primal_value(primals[0]))

    _, (t0, t1) = jax.jvp(two, (1.,), (1.,))
    close(t0, 1.)
    assert repr(t1) == "Array(0., dtype=float32, weak_type=True)"
    close(jax.grad(lambda x: two(x)[0] + two(x)[1])(1.), 1.)


def test_integer_arguments_get_float0_tangents():
    f = jax.custom_jvp(lambda x, n: x * n)
    kinds = []

    def rule(primals, tangents):
        kinds.append(tangents[1].dtype)
        return primals[0] * primals[1], tangents[0] * primals[1]

    f.defjvp(rule)
    close(jax.grad(f)(2., 3), 3.)
    assert kinds == [np.dtype([("float0", np.void, 0)])]


def test_pytree_arguments_and_outputs():
    @jax.custom_jvp
    def f(d):
        return {"a": d["x"] * 2., "b": (d["y"],)}

    f.defjvp(lambda p, t: (f(p[0]), {"a": t[0]["x"] * 3., "b": (t[0]["y"],)}))
    _, t = jax.jvp(f, ({"x": 1., "y": 2.},), ({"x": 1., "y": 1.},))
    close(t["a"], 3.)
    close(t["b"][0], 1.)
    g = jax.grad(lambda d: f(d)["a"] + f(d)["b"][0])({"x": 1., "y": 2.})
    close(g["x"], 3.)
    close(g["y"], 1.)


def test_keyword_arguments_and_defaults_resolve_to_positions():
    f = jax.custom_jvp(lambda x, y=3.: x * y)
    f.defjvp(lambda p, t: (p[0] * p[1], t[0] * p[1]))
    close(jax.jvp(lambda x: f(x), (1.,), (1.,))[1], 3.)
    close(jax.grad(lambda x: f(x, y=4.))(1.), 4.)


def test_rule_applied_to_tangents_is_transposed():
    @jax.custom_jvp
    def double(x):
        return 2. * x

    double.defjvp(lambda p, t: (double(p[0]), double(t[0])))

    @jax.custom_jvp
    def f(x):
        return jnp.sin(x)

    f.defjvp(lambda p, t: (jnp.sin(p[0]), double(jnp.cos(p[0]) * t[0])))
    close(jax.grad(f)(1.), 1.0806046)
    close(jax.jit(jax.grad(f))(1.), 1.0806046)


def test_custom_rules_inside_scan_and_cond():
    x = jnp.arange(4.0)
    scanned = lambda c: jnp.sum(jax.lax.scan(lambda c, _: (log1pexp(c), None), c, None, length=3)[0])  # noqa: E731
    close(jax.grad(scanned)(x), [0.24999999, 0.4753669, 0.7112346, 0.8700486], rtol=2e-6)
    close(jax.grad(lambda v: jax.lax.cond(v > 0, log1pexp, jnp.sin, v))(1.5), 0.8175745)

    @jax.custom_vjp
    def f(v):
        return jnp.sin(v)

    f.defvjp(lambda v: (jnp.sin(v), jnp.cos(v)), lambda c, g: (c * g * 2.,))
    scanned = lambda c: jnp.sum(jax.lax.scan(lambda c, _: (f(c), None), c, None, length=3)[0])  # noqa: E731
    close(jax.grad(scanned)(x), [8., 2.116066, -1.4407902, -7.7637753])
    close(jax.jit(jax.grad(scanned))(x), [8., 2.116066, -1.4407902, -7.7637753])
    close(jax.grad(lambda v: jax.lax.cond(v > 0, f, jnp.sin, v))(1.5), 0.1414744)


# ---- custom_vjp ---------------------------------------------------------------------------------

@jax.custom_vjp
def sin_times_v(x, y):
    return jnp.sin(x) * y


def sin_times_fwd(x, y):
    return sin_times_v(x, y), (jnp.cos(x), jnp.sin(x), y)


def sin_times_bwd(res, g):
    cos_x, sin_x, y = res
    return cos_x * g * y, sin_x * g


sin_times_v.defvjp(sin_times_fwd, sin_times_bwd)


def test_custom_vjp_values():
    close(sin_times_v(2., 3.), 2.7278922)
    assert repr(jax.grad(sin_times_v)(2., 3.)) == "Array(-1.2484405, dtype=float32, weak_type=True)"
    gx, gy = jax.grad(sin_times_v, (0, 1))(2., 3.)
    close(gx, -1.2484405)
    close(gy, 0.9092974)
    _, vjp_fn = jax.vjp(sin_times_v, 2., 3.)
    close(vjp_fn(1.)[1], 0.9092974)
    close(jax.jit(jax.grad(sin_times_v))(2., 3.), -1.2484405)
    close(jax.grad(jax.jit(sin_times_v))(2., 3.), -1.2484405)
    close(jax.grad(jax.grad(sin_times_v))(2., 3.), -2.7278922)
    check_grads(sin_times_v, (0.4, 1.7), order=2, modes=("rev",))


def test_custom_vjp_printed_jaxprs_match_jax():
    assert str(jax.make_jaxpr(jax.grad(sin_times_v))(2., 3.)) == """\
{ lambda ; a:f32[] b:f32[]. let
    _:f32[] = custom_vjp_call[
      name=sin_times_v
      bwd=sin_times_bwd
      call_jaxpr={ lambda ; c:f32[] d:f32[]. let
          e:f32[] = sin c
          f:f32[] = mul e d
        in (f,) }
      fwd=sin_times_fwd
      symbolic_zeros=False
    ] a b
    g:f32[] = cos a
    h:f32[] = sin a
    i:f32[] = mul g 1.0:f32[]
    j:f32[] = mul i b
    _:f32[] = mul h 1.0:f32[]
  in (j,) }"""
    # linearize records the tangent map as custom_lin (its transpose calls bwd; evaluating it is an error)
    lin = str(jax.make_jaxpr(lambda x: jax.linearize(lambda x: sin_times_v(x, 3.), x)[1](1.))(2.))
    assert """\
    h:f32[] = custom_lin[
      bwd=sin_times_bwd
      in_zeros=[False, True]
      num_res=3
      symbolic_zeros=False
    ] f g 3.0:f32[] 1.0:f32[]""" in lin


def test_safe_norm_gradient_at_zero():
    @jax.custom_vjp
    def safe_norm(x):
        return jnp.sqrt(jnp.sum(x ** 2))

    def fwd(x):
        n = safe_norm(x)
        return n, (x, n)

    def bwd(res, g):
        x, n = res
        return (jnp.where(n == 0, 0., g * x / jnp.where(n == 0, 1., n)),)

    safe_norm.defvjp(fwd, bwd)
    assert np.isnan(np.asarray(jax.grad(lambda x: jnp.sqrt(jnp.sum(x ** 2)))(jnp.zeros(3)))).all()
    close(jax.grad(safe_norm)(jnp.zeros(3)), [0., 0., 0.])
    close(jax.grad(safe_norm)(jnp.array([3., 4., 0.])), [0.6, 0.8, 0.])


@jax.custom_vjp
def clip_gradient(lo, hi, x):
    return x


clip_gradient.defvjp(lambda lo, hi, x: (x, (lo, hi)),
                     lambda res, g: (None, None, jnp.clip(g, res[0], res[1])))  # None: no cotangent


def test_clip_gradient():
    f = jax.grad(lambda x: clip_gradient(-0.75, 0.75, jnp.sin(x) * 3.))
    for x, want in zip([0.1, 1., 2.], [2.2387595, 1.2156801, -0.9363304]):
        close(f(x), want)
    g_lo, g_x = jax.grad(lambda lo, x: clip_gradient(lo, 0.75, jnp.sin(x) * 3.), (0, 1))(-0.75, 0.1)
    close(g_lo, 0.)
    close(g_x, 2.2387595)


def _fixed_point(f, a, x_guess):
    x_prev, x = x_guess, f(a, x_guess)
    while abs(float(x_prev - x)) > 1e-6:  # Python control flow on values: fwd and bwd run concretely
        x_prev, x = x, f(a, x)
    return x


@functools.partial(jax.custom_vjp, nondiff_argnums=(0,))
def fixed_point(f, a, x_guess):
    return _fixed_point(f, a, x_guess)


def _fixed_point_fwd(f, a, x_init):
    x_star = fixed_point(f, a, x_init)
    return x_star, (a, x_star)


def _fixed_point_bwd(f, res, x_star_bar):
    a, x_star = res
    _, vjp_a = jax.vjp(lambda a: f(a, x_star), a)

    def rev_iter(packed, u):
        _, vjp_x = jax.vjp(lambda x: f(a, x), x_star)
        return x_star_bar + vjp_x(u)[0]

    a_bar, = vjp_a(_fixed_point(rev_iter, None, x_star_bar))
    return a_bar, jnp.zeros_like(x_star)


fixed_point.defvjp(_fixed_point_fwd, _fixed_point_bwd)


def test_fixed_point_implicit_differentiation():
    def newton_sqrt(a):
        return fixed_point(lambda a, x: 0.5 * (x + a / x), a, a)

    close(newton_sqrt(2.), 1.4142135)
    close(jax.grad(newton_sqrt)(2.), 0.35355338)
    close(jax.grad(jax.grad(newton_sqrt))(2.), -0.08838835)


def test_custom_vjp_symbolic_zeros():
    seen = []

    @jax.custom_vjp
    def f(x, y):
        return x * y

    def fwd(x, y):
        seen.append((type(x) is CustomVJPPrimal, x.perturbed, y.perturbed))
        return f(x.value, y.value), (x.value, y.value)

    def bwd(res, g):
        seen.append(type(g) is SymbolicZero)
        return g * res[1], None

    f.defvjp(fwd, bwd, symbolic_zeros=True)
    close(jax.grad(f)(2., 3.), 3.)
    assert seen == [(True, True, False), False]
    assert jax.custom_derivatives.custom_vjp_primal_tree_values(
        (CustomVJPPrimal(1, True), [CustomVJPPrimal(2, False)])) == (1, [2])


def test_custom_vjp_integer_argument_and_bwd_none():
    @jax.custom_vjp
    def f(x, n):
        return x * n

    f.defvjp(lambda x, n: (f(x, n), n), lambda n, g: (g * n, None))
    close(jax.grad(f)(2., 3), 3.)


def test_custom_vjp_dict_argument_with_partial_none():
    @jax.custom_vjp
    def f(d):
        return d["a"] * d["b"]

    f.defvjp(lambda d: (f(d), d), lambda d, g: ({"a": g * d["b"], "b": None},))
    g = jax.grad(f)({"a": 2., "b": 3.})
    close(g["a"], 3.)
    close(g["b"], 0.)


def test_forward_over_reverse_when_fwd_avoids_the_function():
    @jax.custom_vjp
    def f(x):
        return jnp.sin(x)

    f.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda c, g: (c * g,))
    close(jax.jacfwd(jax.grad(f))(1.), -0.84147096)
    close(jax.grad(jax.grad(f))(1.), -0.84147096)


def test_custom_vjp_of_a_constant_tangent_in_reverse_mode():
    # A rule returning a zeros array (not a symbolic zero) feeds custom_vjp a tangent that reverse mode
    # already knows: it does not depend on the input, so it contributes nothing (JAX: the same values).
    @jax.custom_jvp
    def floor(x):
        return jnp.floor(x)

    floor.defjvp(lambda p, t: (floor(p[0]), jnp.zeros_like(p[0])))

    @jax.custom_vjp
    def f(x):
        return jnp.sin(x)

    f.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda c, g: (c * g,))
    g = lambda x: f(floor(x)) + x  # noqa: E731
    for got in (jax.grad(g)(1.5), jax.jit(jax.grad(g))(1.5), jax.grad(jax.jit(g))(1.5)):
        close(got, 1.)


# ---- custom_gradient and closure_convert --------------------------------------------------------

def test_custom_gradient():
    @jax.custom_gradient
    def f(x):
        return x ** 2, lambda g: (g * x,)

    close(f(3.), 9.)
    close(jax.grad(f)(3.), 3.)

    @jax.custom_gradient
    def h(x, y):
        return x * y, lambda g: (g * y, g * x)

    gx, gy = jax.grad(h, (0, 1))(3., 4.)
    close(gx, 4.)
    close(gy, 3.)


def test_closure_convert_hoists_only_traced_values():
    def convert(y):
        return jax.closure_convert(lambda x: jnp.sin(x) * y + 2.0 * jnp.ones(3), 1.0)

    fn, consts = convert(2.0)  # concrete closure: nothing to hoist
    assert consts == []
    close(fn(1.0), [3.682942] * 3)

    def traced(y):
        fn, consts = convert(y)
        assert len(consts) == 1
        return fn(1.0, *consts)

    close(jax.jit(traced)(2.0), [3.682942] * 3)
    ints = jax.make_jaxpr(lambda n: len(jax.closure_convert(lambda x: x * n, 1.0)[1]))(3)
    assert str(ints).endswith("in (0:i32[],) }")  # integer values are never differentiated: not hoisted


def test_closure_convert_with_a_custom_vjp_solver():
    @functools.partial(jax.custom_vjp, nondiff_argnums=(0,))
    def solve(f, x0, *args):
        x = x0
        for _ in range(50):
            x = f(x, *args)
        return x

    def solve_fwd(f, x0, *args):
        x = solve(f, x0, *args)
        return x, (x, args)

    def solve_bwd(f, res, g):
        x, args = res
        _, vjp_args = jax.vjp(lambda *a: f(x, *a), *args)
        _, vjp_x = jax.vjp(lambda x: f(x, *args), x)
        u = g
        for _ in range(50):
            u = g + vjp_x(u)[0]
        return (jnp.zeros_like(x), *vjp_args(u))

    solve.defvjp(solve_fwd, solve_bwd)

    def loss(a):
        fn, consts = jax.closure_convert(lambda x: 0.5 * jnp.cos(x) * a, 0.3)
        return solve(fn, 0.3, *consts)

    close(loss(1.0), 0.4501836)
    close(jax.grad(loss)(1.0), 0.36974078)
    close(jax.jit(jax.grad(loss))(1.0), 0.36974078)


def test_stop_gradient():
    f = lambda x: x * jax.lax.stop_gradient(x)  # noqa: E731
    close(jax.grad(f)(3.), 3.)
    want = "{ lambda ; a:f32[]. let b:f32[] = stop_gradient a; c:f32[] = mul a b in (c,) }"
    assert str(jax.make_jaxpr(f)(3.)) == want
    assert repr(jax.lax.stop_gradient(2)) == "Array(2, dtype=int32, weak_type=True)"
