"""Inputs that once crashed the core: sizes past int64, rank above 16, nested runs that deadlocked.

Each reproducer runs in its own process, so that a regression (a segfault or a hang) fails its
test instead of killing the test run.
"""

import pytest
from isolated import run_isolated

HUGE = "float64(2305843009213693953,) is too large: it needs more than 2^62 bytes"


ARRAYS = """
import numpy as np
from xjax import _core

def arr(x, dtype="float32"):
    x = np.asarray(x, dtype)
    return _core.Array.from_buffer(np.ascontiguousarray(x).reshape(-1).view(np.uint8), x.shape, x.dtype.name)
"""


def test_byte_count_past_int64_raises_through_numpy():
    # 8 x (2^61 + 1) bytes wrapped to 8 in 64 bits: the reduction then read far past its buffer.
    out = run_isolated("""
        import xjax
        xjax.config.update("jax_enable_x64", True)
        import xjax.numpy as jnp
        try:
            jnp.broadcast_to(jnp.float64(1), (2**61 + 1,)).sum()
        except ValueError as e:
            print(e)
        try:
            xjax.jit(lambda x: jnp.broadcast_to(x, (2**61 + 1,)).sum())(jnp.float64(1))
        except ValueError as e:
            print(e)
    """)
    assert out.splitlines() == [f"[broadcast_in_dim] {HUGE}"] * 2


def test_parameter_and_buffer_past_int64_bytes_raise():
    # Graph.parameter([3, 2**62 + 1]) with a 12-byte buffer was accepted; a reduction then segfaulted.
    out = run_isolated(prelude=ARRAYS, code="""
        import numpy as np
        shape = [3, 2**62 + 1]
        for make in [lambda: _core.Graph().parameter(shape, "float32"),
                     lambda: _core.Array.from_buffer(np.zeros(12, np.uint8), shape, "float32"),
                     lambda: _core.compile_op("reduce_sum", [(shape, "float32")], {"axes": [0, 1]}),
                     lambda: _core.infer("neg", [(shape, "float32")], {})]:
            try:
                make()
                print("accepted")
            except ValueError as e:
                print(e)
    """)
    want = "float32(3, 4611686018427387905) is too large: it needs more than 2^62 bytes"
    assert out.splitlines() == [f"[parameter] {want}", f"[Array] {want}", f"[parameter] {want}", f"[neg] {want}"]


def test_constant_data_size_past_int64_raises():
    # 8 x (2^62 + 1) wrapped to 8: eight bytes of data passed for 2^62 + 1 doubles.
    out = run_isolated(prelude=ARRAYS, code="""
        g = _core.Graph()
        for attrs in [{"dtype": "float64", "shape": [2**62 + 1], "data": bytes(8)},
                      {"dtype": "float64", "shape": [2**62 + 1], "value": 1.0},
                      {"dtype": "int8", "shape": [2, 3], "data": bytes(5)}]:
            try:
                g.add("constant", [], attrs)
                print("accepted")
            except ValueError as e:
                print(e)
    """)
    assert out.splitlines() == [
        "[constant] float64(4611686018427387905,) is too large: it needs more than 2^62 bytes",
        "[constant] float64(4611686018427387905,) is too large: it needs more than 2^62 bytes",
        "[constant] attribute 'data' has 5 bytes, int8(2, 3) needs 6"]


def test_result_sizes_past_int64_raise_in_every_shape_rule():
    out = run_isolated(prelude=ARRAYS, code="""
        big = 2**61
        cases = [
            ("concatenate", [((big,), "int8")] * 3, {"dimension": 0}),         # the sum of the dims wrapped
            ("dot_general", [((big,), "int8"), ((4,), "int8")],                # an outer product
             {"lhs_contracting_dimensions": [], "rhs_contracting_dimensions": []}),
            ("iota", [], {"dtype": "int32", "shape": [big], "dimension": 0}),
            ("pad", [((big,), "int8"), ((), "int8")], {"padding_config": [big, big, 0]}),
            ("reshape", [((2,), "int8")], {"new_sizes": [2**62, 2**62, 0]}),   # zeros do not hide overflow
        ]
        for op, types, attrs in cases:
            try:
                _core.infer(op, types, attrs)
                print("accepted")
            except ValueError as e:
                print(e)
        try:
            _core.Graph().parameter([2**64], "int8")
        except ValueError as e:
            print(e)
    """)
    lines = out.splitlines()
    assert lines[0].startswith("[concatenate] result is too large: operands int8(2305843009213693952,)")
    assert lines[1] == "[dot_general] int8(2305843009213693952, 4) is too large: it needs more than 2^62 bytes"
    assert lines[2] == "[iota] int32(2305843009213693952,) is too large: it needs more than 2^62 bytes"
    assert lines[3] == ("[pad] padding_config (2305843009213693952, 2305843009213693952, 0) gives a too large "
                        "result")
    assert lines[4] == ("[reshape] int8(4611686018427387904, 4611686018427387904, 0) is too large: it needs more "
                        "than 2^62 bytes")
    assert lines[5] == "dimension 18446744073709551616 does not fit in int64"


@pytest.mark.parametrize("rank", [17, 20])
def test_fused_broadcast_add_above_rank_16(rank):
    # The fused gather kept its index in `int64_t idx[16]`: rank 17 wrote past it and crashed.
    out = run_isolated(prelude=ARRAYS, code=f"""
        R = {rank}
        xs = [2] * R
        ys = [2 if i % 2 == 0 else 1 for i in range(R)]  # alternating: no two dims merge
        g = _core.Graph()
        x = g.parameter(xs, "float32")
        y = g.parameter(ys, "float32")
        (yb,) = g.add("broadcast_in_dim", [y], {{"shape": xs, "broadcast_dimensions": list(range(R))}})
        (s,) = g.add("add", [x, yb], {{}})
        g.set_outputs([s])
        exe = _core.compile(g)
        assert "gather" in exe.plan_text(), exe.plan_text()
        a = np.arange(2**R, dtype=np.float32).reshape(xs)
        b = -np.arange(2 ** ((R + 1) // 2), dtype=np.float32).reshape(ys) * 3
        (out,) = exe.run([arr(a), arr(b)])
        got = out.bytes_view().view(np.float32).reshape(xs)
        np.testing.assert_array_equal(got, a + b)
        print("ok")
    """)
    assert out.strip() == "ok"


ON_STREAM = ARRAYS + """
import threading

def on_stream(fn):
    \"\"\"Queues a graph whose host callback calls fn() on the stream's thread; returns its result.\"\"\"
    main = threading.get_ident()
    inline = []
    def callback(args):
        if threading.get_ident() == main:
            inline.append(True)  # the stream was idle, so the graph ran on this thread: try again
        else:
            fn()
    cid = _core.register_callback(callback)
    g = _core.Graph()
    p = g.parameter([], "float32")
    g.add("host_callback", [p], {"callback_id": cid})
    (n,) = g.add("neg", [p], {})
    g.set_outputs([n])
    exe = _core.compile(g)
    busy = _core.compile_op("exp", [((1 << 22,), "float32")], {})
    ones = arr(np.ones(1 << 22))
    while True:
        inline.clear()
        busy.run([ones])  # large, so queued: the stream is busy and the callback's graph queues behind it
        (done,) = exe.run([arr(1.0)])
        if not inline:
            return done
"""

NESTED = ON_STREAM + """
neg = _core.compile_op("neg", [((), "float32")], {})
queued_later = {}
stored = threading.Event()
results = []

def from_callback():
    stored.wait()
    (r,) = neg.run([queued_later["z"]])  # z is queued behind the task running this callback
    results.append(r)
    WAIT

done = on_stream(from_callback)
(queued_later["z"],) = neg.run([arr(3.0)])  # queued: the callback's task holds the stream
stored.set()
"""


def test_run_from_a_callback_with_a_queued_input_does_not_deadlock():
    # The nested run ran inline and waited for z, which could only run after it: a hang.
    out = run_isolated(prelude=NESTED.replace("WAIT", ""), code="""
        done.wait()
        _core.synchronize()
        print(results[0].bytes_view().view(np.float32)[0])
    """, timeout=60)
    assert out.strip() == "3.0"


def test_waiting_inside_a_callback_for_a_queued_value_raises():
    out = run_isolated(prelude=NESTED.replace("WAIT", "r.wait()"), code="""
        try:
            done.wait()
        except RuntimeError as e:
            print(str(e).splitlines()[0])
        _core.synchronize()
        print(results[0].bytes_view().view(np.float32)[0])  # still computed once its input is
    """, timeout=60)
    assert out.splitlines() == [
        "[host_callback] RuntimeError: [wait] a value still queued behind the running computation was waited for "
        "from inside it (a host callback): it would wait forever", "3.0"]


def test_synchronize_inside_a_callback_raises():
    out = run_isolated(prelude=ON_STREAM, code="""
        try:
            on_stream(_core.synchronize).wait()
        except RuntimeError as e:
            print(str(e).splitlines()[0])
    """, timeout=60)
    assert out.strip() == ("[host_callback] RuntimeError: [synchronize] called from inside a queued computation "
                           "(a host callback): it would wait for itself")
