"""The structural compile cache (graph_lowering, jaxpr_key) and the control-flow trace cache:
repeated eager control flow compiles once; jaxprs differing in literals, params, avals or the
functions they call compile apart; consts are run-time inputs; the caches are bounded."""
import math

import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax import lax
from xjax._src import caches
from xjax._src.interpreters import graph_lowering as gl
from xjax._src.interpreters import partial_eval as pe
from xjax._src.jaxpr import _value_key, jaxpr_key
from xjax._src.lax import control_flow_common
from xjax._src.lax.conditionals import cond_p


def compiles():
    return gl.cache_info()["compiles"]


@pytest.fixture
def small_caches():
    info = caches.cache_info()
    yield caches.set_cache_limits
    caches.set_cache_limits(eager_executables=info["eager_executables"]["maxsize"],
                            jaxpr_programs=info["jaxpr_programs"]["maxsize"])


# Each makes its functions anew on every call: only the jaxpr's structure can find the graph.
EAGER_CALLS = {
    "cond": lambda x: lax.cond(x[0] > 0, lambda v: v + 1.0, lambda v: v - 1.0, x),
    "switch": lambda x: lax.switch(1, [lambda v: v * 2.0, lambda v: v * 3.0, jnp.sin], x),
    "while_loop": lambda x: lax.while_loop(lambda c: c[0] < 10.0, lambda c: c * 2.0 + 1.0, x),
    "fori_loop": lambda x: lax.fori_loop(0, 5, lambda i, c: c * 0.5 + i, x),
    "fori_loop_traced_bounds": lambda x: lax.fori_loop(0, jnp.asarray(5), lambda i, c: c * 0.5 + i, x),
    "scan": lambda x: lax.scan(lambda c, r: (c + r, c * r), jnp.zeros(()), x)[1],
    "map": lambda x: lax.map(lambda r: r * 3.0, x),
}


@pytest.mark.parametrize("name", list(EAGER_CALLS))
def test_repeated_eager_control_flow_compiles_once(name):
    f = EAGER_CALLS[name]
    x = jnp.asarray([1.0, 2.0, 3.0])
    want = np.asarray(jax.jit(f)(x))
    np.testing.assert_allclose(np.asarray(f(x)), want)
    n = compiles()
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(f(x)), want)
    assert compiles() == n


def test_cond_graph_found_by_structure():
    # The whole cond (what runs when the index is not known yet) from freshly traced branches.
    x = jnp.ones(3)
    idx = jnp.asarray(1)

    def branches():
        traced = [control_flow_common.trace_fun(fn, (x,), [x.aval], "cond").closed
                  for fn in (lambda v: v - 1.0, lambda v: v + 1.0)]
        return {"branches": tuple(traced)}

    call = gl.equation_call(cond_p, (idx.aval, x.aval), branches())
    n = compiles()
    assert gl.equation_call(cond_p, (idx.aval, x.aval), branches()) is call
    assert compiles() == n
    np.testing.assert_array_equal(np.asarray(call([idx, x])[0]), [2.0, 2.0, 2.0])


def _py_fori(lo, hi, body, c):
    for i in range(lo, hi):
        c = body(i, c)
    return c


def _fori(step, x):
    return lax.fori_loop(0, 3, lambda i, c: c * step + 1.0, x)


def test_literals_are_part_of_the_key():
    x = jnp.ones(2)
    for step in (0.5, 0.25, 0.5):
        np.testing.assert_allclose(np.asarray(_fori(step, x)), [_py_fori(0, 3, lambda i, c: c * step + 1.0, 1.0)] * 2)
    # 0.0 and -0.0 compare equal but divide apart
    for zero, inf in [(0.0, math.inf), (-0.0, -math.inf), (0.0, math.inf)]:
        out = lax.scan(lambda c, r, z=zero: (c, 1.0 / (r * z)), 0.0, jnp.ones(2))[1]
        np.testing.assert_array_equal(np.asarray(out), [inf, inf])
    # NaN literals hit (equal bytes) though NaN != NaN
    g = lambda: lax.fori_loop(0, 1, lambda i, c: c + math.nan, jnp.ones(2))  # noqa: E731
    g()
    n = compiles()
    assert np.isnan(np.asarray(g())).all() and compiles() == n


def test_params_are_part_of_the_key():
    m = jnp.asarray([[1.0, 2.0], [3.0, 4.0]])
    for axis, want in [(0, [[3, 4], [1, 2]]), (1, [[2, 1], [4, 3]]), (0, [[3, 4], [1, 2]])]:
        out = lax.fori_loop(0, 1, lambda i, c, a=axis: jnp.flip(c, axis=a), m)
        np.testing.assert_array_equal(np.asarray(out), want)
    xs = jnp.arange(4.0)
    for reverse, want in [(False, [0, 1, 3, 6]), (True, [6, 6, 5, 3])]:
        ys = lax.scan(lambda c, r: (c + r, c + r), 0.0, xs, reverse=reverse)[1]
        np.testing.assert_array_equal(np.asarray(ys), want)


def test_avals_are_part_of_the_key():
    f = EAGER_CALLS["fori_loop"]
    want = _py_fori(0, 5, lambda i, c: c * 0.5 + i, 1.0)
    np.testing.assert_allclose(np.asarray(f(jnp.ones(2))), [want] * 2)
    np.testing.assert_allclose(np.asarray(f(jnp.ones(3))), [want] * 3)
    out = lax.fori_loop(0, 3, lambda i, c: c * 2 + i, jnp.ones(2, dtype=jnp.int32))
    assert out.dtype == jnp.int32
    np.testing.assert_array_equal(np.asarray(out), [_py_fori(0, 3, lambda i, c: c * 2 + i, 1)] * 2)


def test_consts_are_run_time_inputs():
    def run(w):
        return lax.scan(lambda c, r: (c + w, c), jnp.zeros(3), jnp.ones(2))[0]

    np.testing.assert_array_equal(np.asarray(run(jnp.ones(3))), [2, 2, 2])
    n = compiles()
    np.testing.assert_array_equal(np.asarray(run(jnp.asarray(np.full(3, 5.0, np.float32)))), [10, 10, 10])
    assert compiles() == n


def test_called_functions_are_part_of_the_key():
    seen = {"a": [], "b": []}

    def loop(name):
        def body(i, c):
            jax.debug.callback(lambda v: seen[name].append(int(v)), i)
            return c + 1.0

        return lax.fori_loop(0, 2, body, jnp.zeros(()))

    loop("a")
    loop("b")
    assert seen == {"a": [0, 1], "b": [0, 1]}


def test_program_cache_is_bounded(small_caches):
    small_caches(jaxpr_programs=2)
    before = gl.cache_info()
    outs = [_fori(step, jnp.ones(2)) for step in (2.0, 3.0, 4.0)]
    info = gl.cache_info()
    assert info["size"] == 2 and info["evictions"] > before["evictions"]
    n = compiles()
    np.testing.assert_array_equal(np.asarray(_fori(2.0, jnp.ones(2))), np.asarray(outs[0]))  # evicted: again
    assert compiles() == n + 1
    np.testing.assert_array_equal(np.asarray(outs[2]), [_py_fori(0, 3, lambda i, c: c * 4.0 + 1.0, 1.0)] * 2)


def test_eager_executable_cache_is_bounded(small_caches):
    small_caches(eager_executables=3)
    x = jnp.arange(4.0)
    outs = [np.asarray(x + k) for k in range(1, 6)] + [np.asarray(op(x)) for op in (jnp.sin, jnp.cos, jnp.exp)]
    info = caches.cache_info()["eager_executables"]
    assert info["size"] == 3 and info["maxsize"] == 3
    np.testing.assert_allclose(outs[-1], np.exp(np.arange(4.0)), rtol=1e-6)


def test_clear_caches():
    f = EAGER_CALLS["while_loop"]
    x = jnp.ones(3)
    want = np.asarray(f(x))
    jax.clear_caches()
    assert caches.cache_info()["jaxpr_programs"]["size"] == 0
    n = compiles()
    np.testing.assert_array_equal(np.asarray(f(x)), want)
    assert compiles() == n + 1


# ---- the trace cache: as in JAX, a function object given to control flow is traced once ----

def test_same_function_traced_once_as_in_jax():
    traces = []

    def yes(v):
        traces.append("yes")
        return v + 1.0

    def no(v):
        traces.append("no")
        return v - 1.0

    def body(i, c):
        traces.append("body")
        return c * 0.5 + i

    x = jnp.ones(2)
    for _ in range(3):
        lax.cond(x[0] > 0, yes, no, x)
        lax.fori_loop(0, 3, body, x)
        lax.scan(lambda c, r: (c, r), 0.0, x)  # a new lambda each time: traced each time, compiled once
    assert traces == ["yes", "no", "body"]  # recorded from JAX: each traced once
    lax.fori_loop(0, 3, body, jnp.ones(3))  # other types: traced again
    assert traces[-1] == "body" and len(traces) == 4


def test_traces_over_enclosing_tracers_are_not_kept():
    box = {}

    def branch(v):
        return v * box["w"]

    def f(x, w):
        box["w"] = w
        return lax.cond(True, branch, branch, x)

    first = str(jax.make_jaxpr(f)(jnp.ones(2), jnp.ones(2)))
    assert str(jax.make_jaxpr(f)(jnp.ones(2), jnp.ones(2))) == first  # no tracer of the first trace leaks in
    np.testing.assert_array_equal(np.asarray(jax.jit(f)(jnp.ones(2), jnp.full(2, 3.0))), [3.0, 3.0])


def test_config_change_forgets_traces():
    lax.cond(True, jnp.sin, jnp.cos, jnp.ones(2))
    assert caches.cache_info()["control_flow_traces"]["size"] > 0
    jax.config.update("jax_enable_x64", jax.config.jax_enable_x64)
    assert caches.cache_info()["control_flow_traces"]["size"] == 0


# ---- jaxpr_key ------------------------------------------------------------------------------

def _trace(fn, *avals):
    return pe.trace_to_jaxpr(lambda *a: [fn(*a)], list(avals)).jaxpr


def test_jaxpr_key_ignores_variable_identity_only():
    a = jnp.ones(3).aval
    k1 = jaxpr_key(_trace(lambda x: jnp.sin(x) * 2.0, a))
    assert jaxpr_key(_trace(lambda x: jnp.sin(x) * 2.0, a)) == k1
    assert jaxpr_key(_trace(lambda x: jnp.sin(x) * 3.0, a)) != k1
    assert jaxpr_key(_trace(lambda x: jnp.cos(x) * 2.0, a)) != k1
    assert jaxpr_key(_trace(lambda x: jnp.sin(x) * 2.0, jnp.ones(4).aval)) != k1
    assert jaxpr_key(_trace(lambda x, y: x - y, a, a)) != jaxpr_key(_trace(lambda x, y: y - x, a, a))


def test_value_keys_keep_types_and_bits():
    assert _value_key(True) != _value_key(1) != _value_key(1.0)
    assert _value_key(0.0) != _value_key(-0.0)
    assert _value_key(math.nan) == _value_key(math.nan)
    assert _value_key((1, 2)) != _value_key([1, 2])
    assert _value_key(np.float32(1.5)) != _value_key(np.float64(1.5))


def test_a_jitted_function_keeps_no_more_programs_than_the_limit(small_caches):
    import gc

    def live_programs():
        gc.collect()
        return sum(type(o) is gl.GraphProgram for o in gc.get_objects())

    small_caches(jaxpr_programs=8)
    before = live_programs()  # (other tests' programs, kept by their functions)
    f = jax.jit(lambda x: jnp.sin(x) * 2)
    for n in range(1, 61):
        np.testing.assert_allclose(f(jnp.ones(n)), np.full(n, 2 * np.sin(np.float32(1))), rtol=1e-6)
    added = live_programs() - before
    assert f._cache_size() <= 8 and added <= 8, (f._cache_size(), added)
    np.testing.assert_allclose(f(jnp.ones(3)), np.full(3, 2 * np.sin(np.float32(1))), rtol=1e-6)  # traced again


def test_a_pmapped_function_keeps_no_more_programs_than_the_limit(small_caches):
    import gc

    from xjax._src import pmap_program

    def live_programs():
        gc.collect()
        return sum(type(o) is pmap_program.Program for o in gc.get_objects())

    small_caches(jaxpr_programs=8)
    before = live_programs()
    f = jax.pmap(lambda x: jnp.sin(x) * 2)
    for n in range(1, 41):
        np.testing.assert_allclose(f(jnp.ones((1, n))), np.full((1, n), 2 * np.sin(np.float32(1))), rtol=1e-6)
    added = live_programs() - before
    assert added <= 8, added
    np.testing.assert_allclose(f(jnp.ones((1, 3))), np.full((1, 3), 2 * np.sin(np.float32(1))), rtol=1e-6)
