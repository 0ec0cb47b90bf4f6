"""The C++ path of Primitive.bind (src/python/fast_call_bind.cpp): an eager bind on xjax.Arrays
of a known (primitive, params, avals) runs eager dispatch's executable in C++; every state the
Python path treats differently goes there. Each test shows which path ran (the hit counter) and
that results and errors are those of the Python path."""
import functools
import gc
import weakref

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax._src import caches, core, platforms
from xjax._src.array import Array
from xjax._src.backends import cpu
from xjax._src.lax import base

from isolated import digests_by_thread_count

BIND = core.Primitive.bind
UNSTACK = next(p for p in core.all_primitives() if p.name == "unstack")


def _hits():
    return BIND.hits


def _counted(f, *args):
    """f(*args) called twice (the first may resolve); returns the second result and the hits it made."""
    f(*args)
    before = _hits()
    out = f(*args)
    return out, _hits() - before


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["float32", "float64", "int32", "bool"]), st.lists(st.integers(1, 4), max_size=3))
def test_unary_and_reduction_hit_and_match_numpy(dtype, shape):
    x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) - 2
    with xjax.enable_x64(dtype == "float64"):
        a = jnp.asarray(x.astype(dtype))
        if dtype in ("float32", "float64"):
            out, hits = _counted(jnp.sin, a)
            assert hits == 1 and type(out) is Array and out.dtype == dtype and out.shape == tuple(shape)
            np.testing.assert_allclose(np.asarray(out), np.sin(x), rtol=1e-6 if dtype == "float32" else 1e-15)
        out, hits = _counted(lambda v: v.sum(), a)
        assert hits >= 1
        np.testing.assert_array_equal(np.asarray(out), x.astype(dtype).sum(dtype=out.dtype))


def test_multiple_results_are_a_list():
    a = jnp.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    out, hits = _counted(lambda v: UNSTACK.bind(v, axis=0), a)
    assert hits == 1 and type(out) is list and len(out) == 2 and all(type(o) is Array for o in out)
    np.testing.assert_array_equal(np.asarray(out[1]), [3, 4, 5])
    assert [tuple(o.shape) for o in out] == [(3,), (3,)]


def test_params_and_avals_are_the_key():
    a = jnp.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    s0, h0 = _counted(lambda v: v.sum(axis=0), a)
    s1, h1 = _counted(lambda v: v.sum(axis=1), a)
    assert h0 == h1 == 1
    np.testing.assert_array_equal(np.asarray(s0), [3, 5, 7])
    np.testing.assert_array_equal(np.asarray(s1), [3, 12])
    i, hits = _counted(lambda v: lax.reduce_sum_p.bind(v, axes=(1,)), a.astype(jnp.int32))
    assert hits == 1 and i.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(i), [3, 12])
    w = lax.sin(jnp.asarray(2.0))  # weak: another entry than the strong scalar's
    s = lax.sin(jnp.asarray(np.float32(2.0)))
    assert w.weak_type and not s.weak_type


def test_float_params_take_the_python_path():
    p = base.define_core_primitive("mul")  # (its float parameter c is unused: the key is the point)
    a = jnp.asarray(np.float32([1, 2]))
    for c in (0.0, -0.0, float("nan"), 1.5):
        out, hits = _counted(lambda x: p.bind(x, x, c=c), a)
        assert hits == 0
        np.testing.assert_array_equal(np.asarray(out), [1, 4])
    out, hits = _counted(lambda x: p.bind(x, x, c=1), a)  # an int: part of the key as it is
    assert hits == 1


def test_cases_the_python_path_takes(monkeypatch):
    a = jnp.asarray(np.float32([0.5, 1.0]))
    want = np.sin(np.float32([0.5, 1.0]))
    lax.sin(a)
    before = _hits()
    np.testing.assert_allclose(np.asarray(lax.sin_p.bind(np.float32([0.5, 1.0]))), want, rtol=1e-6)  # a NumPy operand
    assert "sin" in str(xjax.make_jaxpr(lax.sin)(a))  # a tracer
    with monkeypatch.context() as m:
        m.setattr(platforms, "_placement", platforms._UNSET)  # not known to be the CPU
        np.testing.assert_allclose(np.asarray(lax.sin(a)), want, rtol=1e-6)
    assert _hits() == before
    g = xjax.grad(lambda v: jnp.sum(jnp.sin(v)))(a)  # JVP tracers: the rules run (their eager ops may hit)
    np.testing.assert_allclose(np.asarray(g), np.cos(np.float32([0.5, 1.0])), rtol=1e-6)
    before = _hits()
    lax.sin(a)
    assert _hits() == before + 1


def test_a_primitive_with_an_impl_of_its_own_runs_it():
    p = base.define_core_primitive("mul")
    calls = []
    a = jnp.asarray(np.float32([3]))
    _counted(lambda x: p.bind(x, x), a)

    def impl(*args, **params):
        calls.append(params)
        return cpu.apply_primitive(p, *args, **params)

    p.def_impl(impl)  # set after the signature was cached: the new impl runs
    out, hits = _counted(lambda x: p.bind(x, x), a)
    assert hits == 0 and len(calls) == 2
    np.testing.assert_array_equal(np.asarray(out), [9])
    p.def_impl(functools.partial(cpu.apply_primitive, p))
    _, hits = _counted(lambda x: p.bind(x, x), a)
    assert hits == 1


def test_errors_are_the_python_ones():
    a = jnp.ones((2, 3))

    def error_of(f):
        with pytest.raises(Exception) as info:
            f()
        return type(info.value), str(info.value)

    bad = lambda: lax.add_p.bind(a, jnp.ones((3, 2)))  # noqa: E731
    assert error_of(bad) == error_of(bad)
    before = _hits()
    assert error_of(lambda: lax.reduce_sum_p.bind(a, axes=(5,))) == error_of(lambda: lax.reduce_sum_p.bind(a, axes=(5,)))
    assert _hits() == before


def test_table_follows_cache_clears():
    a = jnp.asarray(np.float32([7.0]))
    lax.sin(a)
    caches.clear_caches()
    misses = caches.cache_info()["eager_executables"]["misses"]
    before = _hits()
    np.testing.assert_allclose(np.asarray(lax.sin(a)), np.sin(np.float32([7.0])), rtol=1e-6)
    assert _hits() == before + 1  # resolved again, through the Python cache
    assert caches.cache_info()["eager_executables"]["misses"] == misses + 1


def test_tables_keep_no_primitive_alive():
    p = base.define_core_primitive("mul")
    a = jnp.asarray(np.float32([2]))
    _counted(p.bind, a, a)
    ref = weakref.ref(p)
    del p
    cpu._executables.clear()  # (the Python cache's keys hold it; the C++ tables must not)
    gc.collect()
    assert ref() is None


def test_bind_is_still_a_method():
    assert "bind" in (BIND.__name__, getattr(BIND, "__qualname__", ""))
    a = jnp.asarray(np.float32([1, 2]))
    np.testing.assert_array_equal(np.asarray(core.Primitive.bind(lax.mul_p, a, a)), [1, 4])

    class Sub(core.Primitive):
        def bind(self, *args, **params):
            return super().bind(*args, **params)

    s = Sub("sub_mul", impl=functools.partial(cpu.apply_primitive, lax.mul_p))
    np.testing.assert_array_equal(np.asarray(s.bind(a, a)), [1, 4])


def test_random_loop_hits_and_matches_recorded_values():
    key = xjax.random.PRNGKey(0)
    for _ in range(3):
        key, sub = xjax.random.split(key)
    before = _hits()
    key, sub = xjax.random.split(key)
    assert _hits() - before == 2  # the split and the unpacking
    # (JAX 0.10.2: the 4th split of PRNGKey(0), then normal(sub, (3,)))
    x = xjax.random.normal(sub, (3,))
    np.testing.assert_array_equal(np.asarray(key), np.uint32([1113701576, 1346130448]))
    np.testing.assert_array_equal(np.asarray(x), np.float32([-2.3022663593292236, 0.0527779757976532,
                                                             1.684571385383606]))


def test_bits_do_not_depend_on_thread_count():
    code = """
import hashlib, numpy as np, xjax, xjax.numpy as jnp
from xjax._src import core
a = jnp.asarray(np.random.default_rng(1).standard_normal((300, 300)).astype(np.float32))
for _ in range(3):
    out = jnp.tanh(a).sum(axis=0)
assert core.Primitive.bind.hits >= 2
print(hashlib.sha1(np.asarray(out).tobytes()).hexdigest())
"""
    d1, d3 = digests_by_thread_count(code)
    assert d1 == d3
