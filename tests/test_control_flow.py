"""lax control flow (cond, switch, while_loop, fori_loop, scan, map, select) against Python references,
eagerly and under jit, with pytrees, closures and JAX's errors; and debug.print / debug.callback."""
import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax import lax


def both(f):
    """f eagerly and jitted."""
    return [f, jax.jit(f)]


@pytest.mark.parametrize("mode", [0, 1])
def test_cond(mode):
    def f(p, x):
        return lax.cond(p, lambda y: y * 2.0, lambda y: y - 1.0, x)

    g = both(f)[mode]
    x = jnp.arange(3.0)
    np.testing.assert_array_equal(np.asarray(g(True, x)), np.arange(3.0) * 2)
    np.testing.assert_array_equal(np.asarray(g(False, x)), np.arange(3.0) - 1)
    np.testing.assert_array_equal(np.asarray(g(jnp.asarray(0), x)), np.arange(3.0) - 1)


@pytest.mark.parametrize("mode", [0, 1])
def test_cond_pytrees_closures_and_no_operands(mode):
    c = jnp.asarray([10.0, 20.0])

    def f(p, t):
        k = t["b"] * 3

        def yes(t):
            return {"out": t["a"] + c, "n": k}

        def no(t):
            return {"out": t["a"] - c, "n": k * 0}

        return lax.cond(p, yes, no, t)

    g = both(f)[mode]
    t = {"a": jnp.ones(2), "b": 2.0}
    out = g(True, t)
    np.testing.assert_array_equal(np.asarray(out["out"]), [11.0, 21.0])
    assert float(out["n"]) == 6.0
    assert float(g(False, t)["n"]) == 0.0
    assert repr(lax.cond(True, lambda: 1, lambda: 2)) == "Array(1, dtype=int32, weak_type=True)"


@pytest.mark.parametrize("mode", [0, 1])
def test_switch_clamps_index(mode):
    branches = [lambda x: x + 1, lambda x: x * 10, lambda x: -x]
    g = both(lambda i, x: lax.switch(i, branches, x))[mode]
    for i, want in [(-5, 3), (0, 3), (1, 20), (2, -2), (7, -2)]:
        assert int(g(i, 2)) == want


def test_switch_eager_index_wraps_and_traced_index_prints_as_jax():
    branches = [lambda v: v, lambda v: v * 10.0, lambda v: v * 100.0]
    for i, want in [(2 ** 40, 1.0), (2 ** 40 + 1, 10.0), (jnp.uint8(200), 100.0), (jnp.asarray(-1), 1.0)]:
        assert float(lax.switch(i, branches, 1.0)) == want  # recorded from JAX (int32 wrap, then clamp)
    text = str(jax.make_jaxpr(lambda x: lax.switch(1, [jnp.sin, jnp.cos], x))(1.0))
    assert text.splitlines()[1] == "    b:i32[] = clamp 0:i32[] 1:i32[] 1:i32[]"  # as JAX prints it


@pytest.mark.parametrize("mode", [0, 1])
def test_while_loop(mode):
    def collatz_steps(n):
        def body(c):
            n, k = c
            return lax.cond(n % 2 == 0, lambda n: n // 2, lambda n: 3 * n + 1, n), k + 1

        return lax.while_loop(lambda c: c[0] != 1, body, (n, 0))[1]

    g = both(collatz_steps)[mode]

    def ref(n):
        k = 0
        while n != 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            k += 1
        return k

    for n in (1, 6, 27):
        assert int(g(n)) == ref(n)


@pytest.mark.parametrize("mode", [0, 1])
def test_fori_loop_static_and_traced_bounds(mode):
    g = both(lambda lo, hi, x: lax.fori_loop(lo, hi, lambda i, c: c * 2 + i, x))[mode]
    static = both(lambda x: lax.fori_loop(2, 6, lambda i, c: c * 2 + i, x))[mode]

    def ref(lo, hi, x):
        for i in range(lo, hi):
            x = x * 2 + i
        return x

    assert int(g(2, 6, 1)) == ref(2, 6, 1)
    assert int(g(5, 2, 7)) == 7
    assert int(static(1)) == ref(2, 6, 1)
    assert repr(lax.while_loop(lambda c: c < 3, lambda c: c + 1, 0)) == "Array(3, dtype=int32, weak_type=True)"


@pytest.mark.parametrize("mode", [0, 1])
@pytest.mark.parametrize("reverse", [False, True])
def test_scan(mode, reverse):
    def f(c0, xs):
        return lax.scan(lambda c, x: (c + x["a"], {"prod": c * x["a"], "b": x["b"]}), c0, xs, reverse=reverse)

    g = both(f)[mode]
    xs = {"a": jnp.arange(1.0, 5.0), "b": jnp.arange(8).reshape(4, 2)}
    carry, ys = g(jnp.zeros(()), xs)
    c, prods = 0.0, [0.0] * 4
    for t in (reversed(range(4)) if reverse else range(4)):
        prods[t] = c * (t + 1)
        c += t + 1
    assert float(carry) == c
    np.testing.assert_array_equal(np.asarray(ys["prod"]), prods)
    np.testing.assert_array_equal(np.asarray(ys["b"]), np.arange(8).reshape(4, 2))


@pytest.mark.parametrize("mode", [0, 1])
def test_scan_length_only_and_empty(mode):
    g = both(lambda x: lax.scan(lambda c, _: (c * 2, c), x, None, length=4))[mode]
    carry, ys = g(1.0)
    assert float(carry) == 16.0
    np.testing.assert_array_equal(np.asarray(ys), [1.0, 2.0, 4.0, 8.0])
    carry, ys = lax.scan(lambda c, x: (c, x * 2), 0.0, jnp.zeros((0, 3)))
    assert np.asarray(ys).shape == (0, 3)


@pytest.mark.parametrize("mode", [0, 1])
def test_map_and_select(mode):
    g = both(lambda xs: lax.map(lambda x: x ** 2 + 1, xs))[mode]
    np.testing.assert_array_equal(np.asarray(g(jnp.arange(5))), np.arange(5) ** 2 + 1)
    h = both(lambda x: lax.select(x > 0, x, -x))[mode]
    np.testing.assert_array_equal(np.asarray(h(jnp.asarray([-2.0, 3.0]))), [2.0, 3.0])
    b = both(lambda xs: lax.map(lambda x: x * 3, xs, batch_size=2))[mode]
    np.testing.assert_array_equal(np.asarray(b(jnp.arange(5.0))), np.arange(5.0) * 3)


def test_jit_with_control_flow_is_one_graph_when_the_core_has_control_ops():
    from xjax._src.interpreters import graph_lowering

    f = jax.jit(lambda x: lax.fori_loop(0, 3, lambda i, c: lax.cond(i > 1, lambda c: c * 2, lambda c: c + 1, c), x))
    assert float(f(1.0)) == 6.0
    (entry,) = f._cache.values()
    assert type(entry.call).__name__ == ("GraphCall" if graph_lowering.HAS_SUBGRAPHS else "PlanCall")


def test_nested_control_flow_under_jit():
    @jax.jit
    def f(x):
        def outer(i, acc):
            return acc + lax.fori_loop(0, i, lambda j, a: a + j, 0) * x

        return lax.fori_loop(0, 4, outer, jnp.zeros_like(x))

    np.testing.assert_array_equal(np.asarray(f(jnp.ones(2))), [0 + 0 + 1 + 3] * 2)


ERRORS = [
    (lambda: lax.cond(True, lambda x: x, lambda x: x.astype(jnp.int32), 1.0), TypeError,
     "cond branches must have equal output types but they differ."),
    (lambda: lax.cond(True, lambda x: x, lambda x: (x, x), 1.0), TypeError,
     "cond branch outputs must have the same pytree structure, but they differ:"),
    (lambda: lax.cond(jnp.ones(2) > 0, lambda x: x, lambda x: x, 1.0), TypeError,
     "Pred must be a scalar, got [ True  True] of shape (2,)."),
    (lambda: lax.switch(0, [], 1.0), ValueError, "Empty branch sequence"),
    (lambda: lax.while_loop(lambda c: c, lambda c: c + 1, 1.0), TypeError,
     "cond_fun must return a boolean scalar, but got output type(s) [ShapedArray(float32[], weak_type=True)]."),
    (lambda: lax.while_loop(lambda c: c < 3, lambda c: (c, c), 1.0), TypeError,
     "while_loop body function carry input and carry output must have the same pytree structure, but they differ:"),
    (lambda: lax.while_loop(lambda c: c < 3, lambda c: c.astype(jnp.int32), 1.0), TypeError,
     "while_loop body function carry input and carry output must have equal types, but they differ:"),
    (lambda: lax.scan(lambda c, x: (c + x, None), 0.0, jnp.ones((3, 2))), TypeError,
     "scan body function carry input and carry output must have equal types, but they differ:"),
    (lambda: lax.scan(lambda c, x: (c, x), 0.0, (jnp.ones(3), jnp.ones(4))), ValueError,
     "scan got values with different leading axis sizes: 3, 4."),
    (lambda: lax.scan(lambda c, x: (c, x), 0.0, None), ValueError,
     "scan got no values to scan over and `length` not provided."),
    (lambda: lax.scan(lambda c, x: c, 0.0, jnp.ones(3)), TypeError, "scan body output must be a pair, got ~float32[]."),
    (lambda: lax.fori_loop(0, 3.0, lambda i, c: c, 1.0), TypeError,
     "lower and upper arguments to fori_loop must have equal types, got int32 and float32"),
    (lambda: lax.map(lambda x: x, 1.0), ValueError, "scan got value with no leading axis to scan over: 1.0."),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors_first_line(k):
    fn, exc, first = ERRORS[k]
    with pytest.raises(exc) as e:
        fn()
    assert str(e.value).splitlines()[0] == first


def test_carry_type_error_names_the_component():
    with pytest.raises(TypeError) as e:
        lax.fori_loop(0, 3, lambda i, c: c.astype(jnp.int32), 1.0)
    assert ("The input carry component loop_carry[1] has type float32[] but the corresponding output carry "
            "component has type int32[], so the dtypes do not match.") in str(e.value)


def test_debug_print_eager_and_jit(capsys):
    def f(x):
        jax.debug.print("x = {}", x)
        jax.debug.print("y = {y} {z}", y=x * 2, z=3)
        jax.debug.callback(lambda a: print("cb", a), x)
        return x + 1

    assert float(jax.jit(f)(1.0)) == 2.0
    f(2.0)
    assert capsys.readouterr().out == "x = 1.0\ny = 2.0 3\ncb 1.0\nx = 2.0\ny = 4.0 3\ncb 2.0\n"
    jax.jit(lambda x: lax.fori_loop(0, 3, lambda i, c: (jax.debug.print("i={i} c={c}", i=i, c=c), c + i)[1], x))(1)
    assert capsys.readouterr().out == "i=0 c=1\ni=1 c=1\ni=2 c=2\n"
    jax.debug.print("{} {}", jnp.arange(3.0), "hello")
    assert capsys.readouterr().out == "[0. 1. 2.] hello\n"
    assert jax.jit(lambda x: jax.debug.print("only effects {}", x))(1.0) is None
    assert capsys.readouterr().out == "only effects 1.0\n"


def test_debug_print_in_control_flow_whose_results_are_unused(capsys):
    # The print is an effect of the cond or scan that holds it: dead-code elimination keeps the
    # equation though nobody reads its results (JAX prints these too).
    def branch(x):
        jax.debug.print("in branch {}", x)
        return x

    def body(c, _):
        jax.debug.print("in scan {}", c)
        return c + 1.0, c

    assert float(jax.jit(lambda x: (lax.cond(x > 0, branch, lambda x: x * 2, x), x * 3)[1])(1.0)) == 3.0
    assert capsys.readouterr().out == "in branch 1.0\n"
    assert float(jax.jit(lambda x: (lax.scan(body, x, None, length=2), x)[1])(1.0)) == 1.0
    assert capsys.readouterr().out == "in scan 1.0\nin scan 2.0\n"
    jax.grad(lambda x: (lax.cond(x > 0, branch, lambda x: x * 2, x), x * 3)[1])(1.0)
    assert capsys.readouterr().out == "in branch 1.0\n"
