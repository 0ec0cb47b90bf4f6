"""The C++ call path (src/python/fast_call.h): repeated jit calls and Array operators run in C++
when their signature is installed, and every state that the Python path treats differently
routes there. Each test shows which path ran (the hit counters) and that results and errors are
those of the Python path."""
import copy
import gc
import logging
import threading
import weakref

import numpy as np
import pytest
from hypothesis import given, strategies as st

import xjax
import xjax.numpy as jnp
from xjax._src import caches, core, platforms
from xjax._src.array import Array

from isolated import digests_by_thread_count

MUL = Array.__mul__


def _pair(dtype=np.float32, shape=(4,)):
    a = np.arange(1, 1 + int(np.prod(shape))).reshape(shape)
    return (a % 3).astype(dtype), (a.reshape(-1)[::-1].reshape(shape) % 2).astype(dtype)


def _warm(f, *args):
    """Calls f until its signature is installed (the first call compiles, the second installs)."""
    f(*args)
    f(*args)
    return f._fast_hits


# ---- block_until_ready ---------------------------------------------------------------------

def test_block_until_ready_waits_and_returns_the_array():
    # In C++ (fast_call_ready.cpp): a value still queued is waited for, as is every block of a
    # ShardedArray (Array::wait, which rethrows a computation's error); the array itself comes back.
    big = jnp.ones(1 << 23)
    y = xjax.jit(lambda v: jnp.sin(v) * 2)(big)  # (queued: more than runs at once)
    assert y.block_until_ready() is y and y.is_ready()
    np.testing.assert_allclose(np.asarray(y[:3]), 2 * np.sin(1.0), rtol=1e-6)

    s = xjax.pmap(lambda v: v * 2)(jnp.ones((1, 3)))
    assert type(s).__name__ == "ShardedArray" and s.block_until_ready() is s
    with pytest.raises(TypeError, match="expected an xjax.Array, got int"):
        Array.block_until_ready(5)


# ---- jit -------------------------------------------------------------------------------------

def test_jit_hits_and_matches_numpy():
    f = xjax.jit(lambda a, b: a * b + 2.0)
    x, y = _pair()
    a, b = jnp.asarray(x), jnp.asarray(y)
    hits = _warm(f, a, b)
    out = f(a, b)
    assert f._fast_hits == hits + 1
    assert type(out) is Array and out.dtype == np.float32 and not out.weak_type and out.shape == (4,)
    np.testing.assert_array_equal(np.asarray(out), x * y + np.float32(2.0))
    out2 = f(jnp.asarray(y), jnp.asarray(x))  # same avals, other arrays: the same entry
    assert f._fast_hits == hits + 2
    np.testing.assert_array_equal(np.asarray(out2), y * x + np.float32(2.0))


def test_jit_pytrees_and_repeated_outputs():
    def step(params, x):
        y = x @ params["w"] + params["b"]
        return {"y": y, "same": (y, y)}, jnp.sum(y)

    f = xjax.jit(step)
    rng = np.random.default_rng(0)
    w, b, x = (rng.standard_normal(s).astype(np.float32) for s in [(3, 2), (2,), (5, 3)])
    params = {"w": jnp.asarray(w), "b": jnp.asarray(b)}
    slow = f(params, jnp.asarray(x))
    hits = _warm(f, params, jnp.asarray(x))
    fast = f(params, jnp.asarray(x))
    assert f._fast_hits == hits + 1
    assert xjax.tree_util.tree_structure(fast) == xjax.tree_util.tree_structure(slow)
    for s, q in zip(xjax.tree_util.tree_leaves(slow), xjax.tree_util.tree_leaves(fast)):
        assert type(q) is Array and q.aval == s.aval
        np.testing.assert_array_equal(np.asarray(q), np.asarray(s))
    np.testing.assert_allclose(np.asarray(fast[0]["y"]), x.astype(np.float64) @ w + b, rtol=1e-5)


def test_jit_new_shape_misses_then_installs():
    f = xjax.jit(lambda a: a * 2)
    _warm(f, jnp.ones(3))
    hits = f._fast_hits
    out = f(jnp.ones(5))  # a miss: traced and compiled by the Python path
    assert f._fast_hits == hits and out.shape == (5,)
    f(jnp.ones(5))
    f(jnp.ones(5))
    assert f._fast_hits == hits + 1 and f._fast_size == 2


@pytest.mark.parametrize("route", ["kwargs", "python_scalar", "numpy"])
def test_jit_arguments_the_python_path_takes(route):
    f = xjax.jit(lambda a, b: a * b)
    a = jnp.ones(3)
    hits = _warm(f, a, a)
    args, kwargs, want = {
        "kwargs": ((a,), {"b": a}, np.ones(3, np.float32)),
        "python_scalar": ((a, 3.0), {}, np.full(3, 3.0, np.float32)),
        "numpy": ((a, np.full(3, 2.0, np.float32)), {}, np.full(3, 2.0, np.float32)),
    }[route]
    for _ in range(3):
        out = f(*args, **kwargs)
    assert f._fast_hits == hits
    np.testing.assert_array_equal(np.asarray(out), want)


def test_jit_weak_type_is_part_of_the_key():
    f = xjax.jit(lambda a, b: a * b)
    strong = jnp.asarray(np.float32(2.0))
    weak = xjax.jit(lambda x: x)(2.0)
    assert weak.weak_type and not strong.weak_type
    hits = _warm(f, strong, strong)
    out = f(weak, weak)  # a new signature: the Python path
    assert f._fast_hits == hits and out.weak_type
    f(weak, weak)
    out = f(weak, weak)
    assert f._fast_hits == hits + 1 and out.weak_type and f._fast_size == 2
    assert not f(strong, strong).weak_type


def test_jit_wrapper_copies_and_dies():
    f = xjax.jit(lambda a: a + 1)
    _warm(f, jnp.ones(2))
    g = copy.copy(f)
    assert g._fast_size == 0 and g._fun is f._fun
    np.testing.assert_array_equal(np.asarray(g(jnp.ones(2))), [2, 2])
    ref = weakref.ref(f)
    del f, g
    gc.collect()
    assert ref() is None


def test_jit_static_and_donated_arguments_never_install():
    g = xjax.jit(lambda a, n: a * n, static_argnums=1)
    h = xjax.jit(lambda a: a + 1, donate_argnums=0)
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(g(jnp.ones(2), 3)), [3, 3])
        np.testing.assert_array_equal(np.asarray(h(jnp.ones(2))), [2, 2])
    assert g._fast_size == h._fast_size == 0 and g._fast_hits == h._fast_hits == 0


def test_jit_disable_jit_runs_python():
    seen = []

    def fun(a):
        seen.append(type(a))
        return a + 1

    f = xjax.jit(fun)
    a = jnp.ones(2)
    hits = _warm(f, a)
    with xjax.disable_jit():
        out = f(a)
    assert f._fast_hits == hits and seen[-1] is Array  # the function itself ran, not a trace
    np.testing.assert_array_equal(np.asarray(out), [2, 2])


def test_jit_x64_flag_drops_installed_signatures():
    f = xjax.jit(lambda a: a + 1)
    a = jnp.ones(2)
    _warm(f, a)
    assert f._fast_size == 1
    with xjax.enable_x64(True):
        assert f._fast_size == 0
        assert f(jnp.asarray(np.ones(2))).dtype == np.float64
    assert f._fast_size == 0


def test_jit_clear_caches_drop_installed_signatures():
    f = xjax.jit(lambda a: a + 1)
    _warm(f, jnp.ones(2))
    f.clear_cache()
    assert f._fast_size == 0
    _warm(f, jnp.ones(2))
    caches.clear_caches()
    assert f._fast_size == 0


def test_jit_inside_a_trace_binds():
    f = xjax.jit(lambda a: jnp.sin(a) * 2)
    a = jnp.asarray(np.linspace(0, 1, 3, dtype=np.float32))
    hits = _warm(f, a)
    jaxpr = xjax.make_jaxpr(f)(a)
    assert "jit" in str(jaxpr)
    g = xjax.grad(lambda x: jnp.sum(f(x)))(a)
    assert f._fast_hits == hits
    np.testing.assert_allclose(np.asarray(g), 2 * np.cos(np.asarray(a)), rtol=1e-6)


def test_jit_placement_routes_to_python(monkeypatch):
    f = xjax.jit(lambda a: a + 1)
    a = jnp.ones(2)
    hits = _warm(f, a)
    monkeypatch.setattr(platforms, "_placement", platforms._UNSET)  # not known to be the CPU
    np.testing.assert_array_equal(np.asarray(f(a)), [2, 2])
    assert f._fast_hits == hits


def test_jit_under_a_mesh_runs_in_cpp_keyed_on_the_mesh():
    # The signature's key holds the mesh jax.set_mesh set (a trace reads it): a call under the same
    # (or an equal) mesh hits in C++, under another mesh or none it is that mesh's signature.
    traces = []

    def body(a):
        traces.append(1)
        return a * 2 + (0 if xjax.sharding.get_abstract_mesh().empty else 1)

    f = xjax.jit(body)
    a = jnp.ones(3)
    x_mesh, y_mesh = xjax.make_mesh((1,), ("x",)), xjax.make_mesh((1,), ("y",))
    outs = [f(a), f(a)]
    with xjax.set_mesh(x_mesh):
        outs += [f(a), f(a)]
        hits = f._fast_hits
        outs += [f(a)]
        assert f._fast_hits == hits + 1
        with xjax.set_mesh(y_mesh):
            outs += [f(a), f(a), f(a)]
        assert f._fast_hits == hits + 2
        outs += [f(a)]
    with xjax.set_mesh(xjax.make_mesh((1,), ("x",))):  # equal to x_mesh: its signature
        outs += [f(a)]
    outs += [f(a)]
    assert f._fast_hits == hits + 5
    assert len(traces) == 3  # no mesh, x, y
    assert [float(o[0]) for o in outs] == [2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 2]


def _mesh_marking_jit():
    """A jitted a * 2, plus 1 when traced under a mesh (jax.set_mesh), and a call of it on ones(3)
    that returns its first element, under a mesh or not."""
    f = xjax.jit(lambda a: a * 2 + (0 if xjax.sharding.get_abstract_mesh().empty else 1))
    a, mesh = jnp.ones(3), xjax.make_mesh((1,), ("x",))

    def call(under_mesh):
        if under_mesh:
            with xjax.set_mesh(mesh):
                return float(f(a)[0])
        return float(f(a)[0])

    return f, call


def test_jit_reads_each_threads_own_state():
    # The C++ path keeps each thread's dicts of the thread-local states (the trace, the mesh
    # stack), found again for a new Python thread state: threads that come and go, and the host
    # callbacks that the stream's threads run (a thread state per callback), each read their own.
    f, call = _mesh_marking_jit()
    assert [call(False), call(False), call(True), call(True)] == [2, 2, 3, 3]
    hits = f._fast_hits
    for k in range(8):
        out = []
        t = threading.Thread(target=lambda: out.append(call(k % 2 == 1)))
        t.start()
        t.join()
        assert out == [3.0 if k % 2 else 2.0]
    assert f._fast_hits == hits + 8
    g = xjax.jit(lambda x: xjax.pure_callback(lambda v: np.float32(call(int(v) == 1)),
                                              xjax.ShapeDtypeStruct((), np.float32), x))
    assert [float(g(jnp.float32(i))) for i in (0, 1, 0, 1, 0)] == [2, 3, 2, 3, 2]
    assert f._fast_hits == hits + 13


def test_jit_in_one_thread_while_another_traces():
    # One thread calls f inside a trace of grad (it binds) while another calls it plainly (C++).
    f = xjax.jit(lambda a: jnp.sin(a) * 2)
    a = jnp.asarray(np.linspace(0, 1, 3, dtype=np.float32))
    hits = _warm(f, a)
    tracing, plain_done, plain = threading.Event(), threading.Event(), []

    def traced(x):
        tracing.set()
        assert plain_done.wait(30)
        return jnp.sum(f(x))

    def other():
        assert tracing.wait(30)
        plain.append(f(a))
        plain_done.set()

    t = threading.Thread(target=other)
    t.start()
    g = xjax.grad(traced)(a)
    t.join()
    assert f._fast_hits == hits + 1
    np.testing.assert_allclose(np.asarray(plain[0]), 2 * np.sin(np.asarray(a)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(g), 2 * np.cos(np.asarray(a)), rtol=1e-6)


def test_jit_log_compiles_still_logs_misses(caplog):
    f = xjax.jit(lambda a: a - 1)
    _warm(f, jnp.ones(2))
    with xjax.log_compiles(True), caplog.at_level(logging.WARNING, logger="xjax._src.jit"):
        f(jnp.ones(2))
        assert not caplog.records  # a hit compiles nothing on either path
        f(jnp.ones(6))
    assert any("Compiling" in r.getMessage() for r in caplog.records)


def test_jit_errors_of_the_program_are_the_same():
    def check(x):
        if x[0] < 0:
            raise ValueError("negative input")

    def fun(a):
        xjax.debug.callback(check, a)  # (a host callback inside the compiled graph)
        return a * 2

    def error_of(f):
        try:
            f(-jnp.ones(2)).block_until_ready()
        except Exception as err:  # noqa: BLE001 - the comparison is the test
            return type(err), "negative input" in str(err)
        return None

    f = xjax.jit(fun)
    slow = error_of(f)  # the first call: traced and compiled by the Python path
    hits = _warm(f, jnp.ones(2))
    fast = error_of(f)
    assert f._fast_hits == hits + 1
    assert slow == fast and slow[1]


def test_jit_fast_bits_do_not_depend_on_thread_count():
    code = """
import hashlib, numpy as np, xjax, xjax.numpy as jnp
f = xjax.jit(lambda a, b: jnp.tanh(a * b + 2.0) @ b)
a = jnp.asarray(np.random.default_rng(1).standard_normal((64, 64)).astype(np.float32))
for _ in range(3):
    out = f(a, a)
assert f._fast_hits >= 1
print(hashlib.sha1(np.asarray(out).tobytes()).hexdigest())
"""
    d1, d3 = digests_by_thread_count(code)
    assert d1 == d3


# ---- Array operators -------------------------------------------------------------------------

@given(st.sampled_from(["float32", "int32", "float64", "bool"]), st.lists(st.integers(1, 4), max_size=3),
       st.sampled_from(["mul", "add", "sub", "eq", "lt", "and"]))
def test_operator_hits_and_matches_numpy(dtype, shape, name):
    if dtype == "bool" and name in ("sub", "lt"):
        return
    if dtype != "bool" and name == "and" and dtype.startswith("float"):
        return
    with xjax.enable_x64(dtype == "float64"):
        x, y = _pair(np.dtype(dtype), tuple(shape))
        a, b = jnp.asarray(x), jnp.asarray(y)
        op = getattr(Array, f"__{name}__")
        hits = op.hits
        out = op(a, b)
        assert op.hits == hits + 1
        ref = getattr(np, {"sub": "subtract", "mul": "multiply", "eq": "equal", "lt": "less",
                           "and": "bitwise_and"}.get(name, name))(x, y)
        assert type(out) is Array and out.dtype == ref.dtype and out.shape == ref.shape and not out.weak_type
        np.testing.assert_array_equal(np.asarray(out), ref)


def test_operator_is_a_method_with_the_python_names():
    a = jnp.ones(2)
    assert MUL.__name__ == "__mul__" and MUL.__doc__ == jnp.multiply.__doc__
    hits = MUL.hits
    np.testing.assert_array_equal(np.asarray(a.__mul__(a)), [1, 1])  # bound
    np.testing.assert_array_equal(np.asarray(a * a), [1, 1])  # through the type slot
    assert MUL.hits == hits + 2


@pytest.mark.parametrize("case", ["weak", "promotion", "int_div", "complex_lt", "numpy", "int_scalar",
                                  "int_array_float", "bfloat16_float", "float_first"])
def test_operator_cases_the_python_path_takes(case):
    f32 = jnp.asarray(np.array([1.0, 2.0], np.float32))
    i32 = jnp.asarray(np.array([3, 4], np.int32))
    c64 = jnp.asarray(np.array([1 + 1j, 2], np.complex64))
    run, want = {
        "int_scalar": (lambda: f32 * 2, np.array([2.0, 4.0], np.float32)),
        "int_array_float": (lambda: i32 * 0.5, np.array([1.5, 2.0], np.float32)),
        "bfloat16_float": (lambda: f32.astype(jnp.bfloat16) * 0.5, np.array([0.5, 1.0], jnp.bfloat16)),
        "float_first": (lambda: 2.0 * f32, np.array([2.0, 4.0], np.float32)),
        "weak": (lambda: f32 * jnp.asarray(2.0), np.array([2.0, 4.0], np.float32)),
        "promotion": (lambda: f32 * i32, np.array([3.0, 8.0], np.float32)),
        "int_div": (lambda: i32 / i32, np.ones(2, np.float32)),
        "complex_lt": (lambda: c64 < c64, np.array([False, False])),
        "numpy": (lambda: f32 * np.float32(3.0), np.array([3.0, 6.0], np.float32)),
    }[case]
    ops = [Array.__mul__, Array.__truediv__, Array.__lt__]
    before = [op.hits for op in ops]
    for _ in range(2):
        out = run()
    assert [op.hits for op in ops] == before
    assert out.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(out), want)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "truediv", "lt", "eq", "ge"])
def test_operator_with_a_float_matches_the_eager_ops(name):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 3)).astype(np.float32)
    a = jnp.asarray(x)
    fn = {"add": jnp.add, "sub": jnp.subtract, "mul": jnp.multiply, "truediv": jnp.true_divide, "lt": jnp.less,
          "eq": jnp.equal, "ge": jnp.greater_equal}[name]
    op = getattr(Array, f"__{name}__")
    for v in (0.1, -3.0, 1e-30, float(x[1, 2])):
        hits = op.hits
        outs = [op(a, v) for _ in range(3)]
        assert op.hits == hits + 3
        eager = fn(a, v)  # the ufunc: promotion and one op at a time, in Python
        ref = getattr(np, fn.__name__)(x, np.float32(v))
        for out in outs:
            assert out.aval == eager.aval
            np.testing.assert_array_equal(np.asarray(out), np.asarray(eager))
            np.testing.assert_array_equal(np.asarray(out), ref)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "truediv", "lt", "and"])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_operator_over_broadcast_shapes_matches_the_eager_ops(name, dtype):
    # Arrays of one dtype and weak type whose shapes differ (a bias, x - x.mean()) run jit's program
    # for that pair: the bits of the eager broadcast and op, either operand first.
    if (name == "and" and dtype != "int32") or (name == "truediv" and dtype == "int32"):
        return  # (bitwise ops take no floats; int32 true division promotes: the Python path)
    rng = np.random.default_rng(4)
    fn = {"add": jnp.add, "sub": jnp.subtract, "mul": jnp.multiply, "truediv": jnp.true_divide, "lt": jnp.less,
          "and": jnp.bitwise_and}[name]
    op = getattr(Array, f"__{name}__")
    for big, small in [((4, 5), ()), ((4, 5), (5,)), ((4, 5), (4, 1)), ((2, 3, 4), (3, 1))]:
        x = (rng.integers(1, 9, big) if dtype == "int32" else rng.standard_normal(big)).astype(dtype)
        y = (rng.integers(1, 9, small) if dtype == "int32" else rng.standard_normal(small)).astype(dtype)
        a, b = jnp.asarray(x), jnp.asarray(y)
        for lhs, rhs in [(a, b), (b, a)]:
            hits = op.hits
            outs = [op(lhs, rhs) for _ in range(2)]
            assert op.hits == hits + 2, (big, small)
            eager = fn(lhs, rhs)  # the ufunc: broadcast_in_dim, then the op, in Python
            for out in outs:
                assert type(out) is Array and out.aval == eager.aval
                np.testing.assert_array_equal(np.asarray(out), np.asarray(eager))
    with pytest.raises(ValueError, match="broadcast|shapes|Incompatible"):
        op(jnp.ones((2, 3), dtype), jnp.ones((4,), dtype))


def test_operator_with_a_float_keeps_weak_types_and_x64():
    w = xjax.jit(lambda v: v)(2.0)
    assert w.weak_type
    hits = MUL.hits
    out = w * 0.5
    assert MUL.hits == hits + 1 and out.weak_type and out.dtype == np.float32 and float(out) == 1.0
    assert not (jnp.ones(2) * 0.5).weak_type
    with xjax.enable_x64(True):
        a = jnp.asarray(np.array([1.0, 3.0]))
        hits = MUL.hits
        out = a * 0.1
        assert MUL.hits == hits + 1 and out.dtype == np.float64
        np.testing.assert_array_equal(np.asarray(out), np.array([1.0, 3.0]) * 0.1)
        f = jnp.asarray(np.array([1.0, 3.0], np.float32))
        out = f * 0.1  # a float64 weak scalar with a float32 array: the Python path
        assert MUL.hits == hits + 1 and out.dtype == np.float32
        np.testing.assert_array_equal(np.asarray(out), np.array([1.0, 3.0], np.float32) * np.float32(0.1))


def test_operator_with_a_float_logs_no_compile(caplog):
    a = jnp.ones(11)
    with xjax.log_compiles(True), caplog.at_level(logging.WARNING, logger="xjax._src.jit"):
        np.testing.assert_array_equal(np.asarray(a * 3.0), np.full(11, 3.0, np.float32))
    assert not caplog.records


def test_operator_errors_are_the_python_ones():
    a = jnp.ones(2)
    with pytest.raises(TypeError, match="unsupported operand"):
        a * object()
    with pytest.raises(TypeError, match="only integer scalar arrays"):  # (str's repetition asks __index__)
        a * "x"
    with pytest.raises(TypeError):
        a * jnp.ones(3)
    hits = Array.__and__.hits
    with pytest.raises(TypeError, match="Accepted dtypes are subtypes of integer or bool"):
        a & 1.0  # resolve declines (tracing raises); the Python path raises for the call
    assert Array.__and__.hits == hits


def test_operator_under_a_transformation_uses_its_rules():
    x = jnp.asarray(np.array([1.0, 2.0, 3.0], np.float32))
    hits = MUL.hits
    g = xjax.grad(lambda v: jnp.sum(v * v))(x)
    np.testing.assert_allclose(np.asarray(g), 2 * np.asarray(x))
    jaxpr = xjax.make_jaxpr(lambda v: v * v)(x)
    assert "mul" in str(jaxpr)
    assert MUL.hits == hits  # tracers (and concrete values inside a trace) take the Python path


def test_operator_placement_routes_to_python(monkeypatch):
    a = jnp.ones(2)
    hits = MUL.hits
    monkeypatch.setattr(platforms, "_placement", platforms._UNSET)
    np.testing.assert_array_equal(np.asarray(a * a), [1, 1])
    assert MUL.hits == hits


def test_operator_table_follows_cache_clears():
    a = jnp.asarray(np.array([7.0], np.float32))
    a * a
    caches.clear_caches()
    misses = caches.cache_info()["eager_executables"]["misses"]
    hits = MUL.hits
    np.testing.assert_array_equal(np.asarray(a * a), [49.0])  # compiled again through the Python cache
    assert MUL.hits == hits + 1
    assert caches.cache_info()["eager_executables"]["misses"] == misses + 1


def test_tracer_operators_are_python_functions():
    assert not isinstance(core.Tracer.__mul__, type(MUL))
