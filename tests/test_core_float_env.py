"""The kernels' floating-point environment: float32/float64 (and bfloat16) subnormals flush to zero
as in JAX on CPU, on every kernel thread and in constant folding, while the caller's NumPy keeps
IEEE subnormals."""
import threading

import ml_dtypes
import numpy as np
import pytest

import xjax.numpy as jnp
from core_util import run_op, to_core, to_numpy
from xjax import _core

BF16 = np.dtype(ml_dtypes.bfloat16)
SUB = {"float32": np.float32(1e-40), "float64": np.float64(1e-310), "bfloat16": np.float32(1e-40).astype(BF16)}
TINY = {"float32": np.float32(1e-20), "float64": np.float64(1e-160), "bfloat16": np.float32(1e-20).astype(BF16)}


def numpy_keeps_subnormals():
    return np.float32(1e-20) * np.float32(1e-20) != 0 and np.float64(1e-160) * np.float64(1e-160) != 0


def one(op, *xs, **attrs):
    return run_op(op, *xs, **attrs)[0]


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_flushes_like_jax(dtype):
    # Values recorded from JAX 0.10.2 on CPU (x64 on for float64).
    s = np.array([SUB[dtype], -SUB[dtype]])
    t = np.array([TINY[dtype]] * 2)
    zeros = [0.0, -0.0]
    for got, want in [
        (one("mul", t, t), [0.0, 0.0]),             # a subnormal result becomes 0 (FTZ)
        (one("mul", s, np.ones_like(s)), zeros),   # a subnormal operand reads as 0 (DAZ)
        (one("add", s, np.zeros_like(s)), [0.0, 0.0]),
        (one("sqrt", s), zeros),
        (one("ceil", s), zeros),
        (one("sign", s), zeros),
        (one("log", s), [-np.inf, -np.inf]),       # libm-backed ops see the flushed operand too
        (one("reduce_sum", s, axes=[0]), 0.0),
    ]:
        np.testing.assert_array_equal(got.astype(np.float64), want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_array_equal(one("gt", s, np.zeros_like(s)), [False, False])
    np.testing.assert_array_equal(one("eq", s, np.zeros_like(s)), [True, True])
    # exp(-740) is subnormal in float64: flushed; exp(-100) is normal (its accuracy, within an ulp, is
    # test_vecmath_bits's business).
    got = one("exp", np.array([-100.0, -740.0], dtype)).astype(np.float64)
    np.testing.assert_allclose(got, [0.0, 0.0] if dtype != "float64" else [np.exp(-100.0), 0.0], rtol=2.3e-16, atol=0)


def test_conversions_like_jax():
    f32_sub = np.array([1e-40, -1e-40], np.float32)
    np.testing.assert_array_equal(one("convert_element_type", f32_sub, new_dtype="float64"), [0.0, -0.0])
    np.testing.assert_array_equal(one("convert_element_type", np.array([1e-40, 1e-39]), new_dtype="float32"), [0, 0])
    # float32 -> bfloat16 and back move bits: JAX keeps the subnormal.
    b = one("convert_element_type", f32_sub, new_dtype="bfloat16")
    assert b.astype(np.float64)[0] == pytest.approx(9.183549615799121e-41)
    assert one("convert_element_type", b, new_dtype="float32")[0] == b.astype(np.float32)[0]
    # To bool: a float32 subnormal compares equal to 0; a bfloat16 one is tested on its bits.
    np.testing.assert_array_equal(one("convert_element_type", f32_sub, new_dtype="bool"), [False, False])
    np.testing.assert_array_equal(one("convert_element_type", b, new_dtype="bool"), [True, True])


def test_float16_keeps_subnormals_like_jax():
    # float16 is computed in float32, where its subnormals are normal numbers.
    s = np.array([6e-8, 1e-6], np.float16)
    np.testing.assert_array_equal(one("mul", s, np.ones_like(s)), s)
    got = one("mul", np.array([1e-4], np.float16), np.array([1e-3], np.float16))
    assert got.astype(np.float64)[0] == 1.1920928955078125e-07  # recorded from JAX
    np.testing.assert_array_equal(one("gt", s, np.zeros_like(s)), [True, True])


def test_public_api_flushes_and_numpy_does_not():
    assert float(jnp.float32(1e-20) * jnp.float32(1e-20)) == 0.0  # JAX: 0.0 (NumPy: 1e-40)
    assert numpy_keeps_subnormals()  # the caller's environment came back after the inline run


def _graph(op, dtypes, const_inputs=None):
    g = _core.Graph()
    if const_inputs is None:
        ins = [g.parameter((n,), dt) for n, dt in dtypes]
    else:
        ins = [g.add("constant", [], {"dtype": x.dtype.name, "shape": list(x.shape),
                                      "data": np.ascontiguousarray(x).tobytes()})[0] for x in const_inputs]
    g.set_outputs(g.add(op, ins, {}))
    return g


UNARY = ["neg", "abs", "sign", "square", "floor", "ceil", "round", "exp", "exp2", "log", "log1p", "expm1",
         "tanh", "logistic", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "atanh",
         "sqrt", "rsqrt", "cbrt"]
BINARY = ["add", "sub", "mul", "div", "rem", "pow", "atan2", "max", "min", "eq", "lt", "gt"]


def _same(got, want, dtype, what):
    """Equal up to the last bits of transcendental functions; zeros, signs and NaNs exactly."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    rtol = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 2e-6, "float64": 1e-13}[dtype]
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=what)
    ok = ~np.isnan(want)
    np.testing.assert_allclose(got[ok], want[ok], rtol=rtol, atol=0, err_msg=what)
    np.testing.assert_array_equal(np.signbit(got[ok]), np.signbit(want[ok]), err_msg=what)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
def test_kernels_reference_and_folding_agree_on_subnormals(dtype):
    dt = BF16 if dtype == "bfloat16" else np.dtype(dtype)
    sub = np.float64(SUB.get(dtype, np.float16(6e-8)))
    vals = np.array([sub, -sub, 0.0, -0.0, 1.0, -0.5, 3.0 * sub, np.float64(TINY.get(dtype, 1e-4))])
    x = vals.astype(dt)
    y = x[::-1].copy()
    cases = [(op, [x]) for op in UNARY] + [(op, [x, y]) for op in BINARY]
    for op, args in cases:
        g = _graph(op, [(a.size, dtype) for a in args])
        with np.errstate(all="ignore"):
            (kernel,) = [to_numpy(r) for r in _core.compile(g).run([to_core(a) for a in args])]
            (ref,) = [to_numpy(r) for r in _core.compile(g, reference=True, passes=[]).run([to_core(a) for a in args])]
            folded_exe = _core.compile(_graph(op, None, args))
        assert folded_exe.num_kernels == 0, f"{op} was not folded"
        (folded,) = [to_numpy(r) for r in folded_exe.run([])]
        _same(kernel, ref, dtype, f"{op}: kernel vs reference")
        np.testing.assert_array_equal(folded.view(np.uint8), kernel.view(np.uint8), err_msg=f"{op}: folded vs kernel")
    assert numpy_keeps_subnormals()  # folding ran on this thread: its environment came back


def test_every_pool_thread_flushes():
    # Large enough to be split over the pool's workers (and queued on the stream).
    n = 1 << 22
    x = np.full(n, 1e-20, np.float32)
    got = one("mul", x, x)
    assert not got.any()
    got = to_numpy(_core.compile_op("mul", [((n,), "float32")] * 2, {}).run([to_core(x), to_core(x)])[0])
    assert not got.any()


def test_matmul_flushes_on_blas_threads_too():
    # Products of 1e-21 are subnormal: JAX gives zeros (recorded, 1024x1024). BLAS, when loaded,
    # splits this over its own threads; NumPy's BLAS in the same process still keeps subnormals.
    a = np.full((512, 512), 1e-21, np.float32)
    assert not np.asarray(jnp.asarray(a) @ jnp.asarray(a)).any()
    assert (a @ a).all()


def test_host_callbacks_and_other_threads_keep_numpy_subnormals():
    seen = []
    cb = _core.register_callback(lambda args: seen.append(numpy_keeps_subnormals()))
    try:
        g = _core.Graph()
        p = g.parameter((4,), "float32")
        g.add("host_callback", [p], {"callback_id": cb})
        g.set_outputs(g.add("mul", [p, p], {}))
        exe = _core.compile(g)
        (out,) = exe.run([to_core(np.full(4, 1e-20, np.float32))])
        assert not to_numpy(out).any() and seen == [True]
    finally:
        _core.unregister_callback(cb)
    results = []

    def other():  # a thread that has run kernels keeps its own environment
        one("mul", np.ones(8, np.float32), np.ones(8, np.float32))
        results.append(numpy_keeps_subnormals())
    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert results == [True] and numpy_keeps_subnormals()
