"""Transcendental functions on the CPU (src/core/ops/scalar_math.h, docs/architecture.md): a value's
bits do not depend on where it sits in an array, on the array's length, on the thread split or on
the kernel (eager loop or fused tile); accuracy against NumPy references (float64 for float32,
long double for float64) in ulps; special values; and the AVX-512, AVX2 and baseline compilations
of the functions give the same bits (tests/cpp/vecmath_clones.cpp, compiled here per instruction
set and run on the ones this CPU has)."""
import os
import pathlib
import platform
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.special
from hypothesis import given, settings
from hypothesis import strategies as st

from core_util import to_core, to_numpy
from xjax import _core

ROOT = pathlib.Path(__file__).resolve().parents[1]
TESTS = pathlib.Path(__file__).resolve().parent

# Every float elementwise op that computes a transcendental function or a root: ours, libm's per
# element, or XLA's algorithms (log, log1p, erf_inv). Their bits must not depend on position.
UNARY = ["exp", "exp2", "expm1", "log", "log1p", "tanh", "logistic", "sin", "cos", "tan", "asin", "acos", "atan",
         "sinh", "cosh", "asinh", "acosh", "atanh", "cbrt", "erf", "erfc", "erf_inv", "sqrt", "rsqrt"]
BINARY = ["pow", "atan2"]
DTYPES = ["float32", "float64"]


def _pool(dtype, seed=0, n=97):
    """Operands with the edge cases among them: NaN, infinities, signed zeros, subnormals, the
    overflow and underflow thresholds, arguments where sin/cos leave our main range, and a spread."""
    rng = np.random.default_rng(seed)
    edge = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, 1e-40, -1e-40, 1e-310, 88.72, -87.4,
            89.0, -104.0, 709.7, -745.0, 3e5, -3e5, 1e7, 1.5e6, 0.3466, -0.3466, 0.875, 0.55, 20.0, -30.0, 1e-8]
    rest = rng.standard_normal(n - len(edge)) * rng.choice([0.01, 1.0, 5.0, 100.0], n - len(edge))
    with np.errstate(all="ignore"):
        return np.concatenate([np.array(edge), rest]).astype(dtype)


def _bits(x):
    return np.ascontiguousarray(x).view(np.uint32 if x.dtype == np.float32 else np.uint64)


def _assert_same_bits(got, want, what):
    """Bit for bit; NaNs by NaN-ness only (a NaN's sign and payload are unspecified)."""
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan, err_msg=what)
    bad = np.nonzero((_bits(got) != _bits(want)) & ~nan)[0]
    assert bad.size == 0, f"{what}: {bad.size} elements differ, first at {bad[0]}: {got[bad[0]]!r} != {want[bad[0]]!r}"


class Runner:
    """Runs op eagerly (one kernel: the elementwise loop over the whole array) or fused
    (neg(op(neg(x))) as one fused kernel: the tile loops), executables cached per shape."""

    def __init__(self, op, dtype, fused):
        self.op, self.dtype, self.fused, self.exes = op, dtype, fused, {}

    def __call__(self, *xs):
        n = xs[0].shape[0]
        exe = self.exes.get(n)
        if exe is None:
            exe = self.exes[n] = self._compile(n, len(xs))
        (r,) = exe.run([to_core(x) for x in xs])
        return to_numpy(r)

    def _compile(self, n, arity):
        if not self.fused:
            return _core.compile_op(self.op, [((n,), self.dtype)] * arity, {})
        g = _core.Graph()
        ps = [g.parameter((n,), self.dtype) for _ in range(arity)]
        (neg,) = g.add("neg", [ps[0]], {})
        (y,) = g.add(self.op, [neg] + ps[1:], {})
        (out,) = g.add("neg", [y], {})
        g.set_outputs([out])
        exe = _core.compile(g)
        assert exe.num_kernels == 1 and "fused" in exe.plan_text(), exe.plan_text()
        return exe


@pytest.mark.parametrize("fused", [False, True], ids=["eager", "fused"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", UNARY + BINARY)
def test_bits_do_not_depend_on_position_or_length(op, dtype, fused):
    """Arrays of every length 1..70 (around each vector width: 2, 4, 8, 16 lanes) at several
    offsets into the pool: each element equals the same value computed alone."""
    run = Runner(op, dtype, fused)
    pool = _pool(dtype)
    other = _pool(dtype, seed=1)[::-1].copy()  # pow's, atan2's second operand
    binary = op in BINARY
    with np.errstate(all="ignore"):
        single = np.concatenate([run(pool[i:i + 1], *([other[i:i + 1]] if binary else [])) for i in range(len(pool))])
    for n in range(1, 71):
        for offset in (0, 1, 5, 27):
            idx = (offset + np.arange(n)) % len(pool)
            got = run(pool[idx], *([other[idx]] if binary else []))
            _assert_same_bits(got, single[idx], f"{op} {dtype} n={n} offset={offset}")


@settings(max_examples=60, deadline=None)
@given(data=st.data(), dtype=st.sampled_from(DTYPES), op=st.sampled_from(["exp", "expm1", "exp2", "tanh", "log", "pow",
                                                                            "sin", "cos", "logistic"]))
def test_a_value_alone_and_anywhere_in_an_array(data, dtype, op):
    width = 32 if dtype == "float32" else 64
    floats = st.floats(width=width, allow_nan=True, allow_infinity=True)
    x = data.draw(floats)
    y = data.draw(floats) if op == "pow" else None
    n = data.draw(st.integers(1, 200))
    pos = data.draw(st.integers(0, n - 1))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    arr = (rng.standard_normal(n) * 3).astype(dtype)
    arr[pos] = x
    args = [arr]
    if op == "pow":
        other = (rng.standard_normal(n) * 3).astype(dtype)
        other[pos] = y
        args.append(other)
    run = Runner(op, dtype, fused=False)
    with np.errstate(all="ignore"):
        alone = run(*[a[pos:pos + 1] for a in args])
        full = run(*args)
    _assert_same_bits(full[pos:pos + 1], alone, f"{op}({x!r}{', ' + repr(y) if y is not None else ''}) at {pos} of {n}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["exp", "logistic", "sin", "cos", "tan"])
def test_main_range_code_gives_the_functions_bits(op, dtype):
    """Loops run a function's main-range code over blocks that lie in its range and the whole
    function over other blocks: the same operands, once with a NaN in every block (the whole
    function) and once without (main range), give the same bits."""
    rng = np.random.default_rng(5)
    lim = {"exp": 87.0, "logistic": 87.0}.get(op, 2.0**18 if dtype == "float32" else 2.0**20)
    x = np.concatenate([rng.uniform(-lim, lim, 1 << 15), rng.uniform(-3, 3, 1 << 15), [lim, -lim, 0.0, -0.0],
                        np.exp(rng.uniform(-80, np.log(lim), 1 << 14)) * rng.choice([-1, 1], 1 << 14)]).astype(dtype)
    run = Runner(op, dtype, fused=False)
    clean = run(x)
    with_nan = x.copy()
    with_nan[::100] = np.nan
    mixed = run(with_nan)
    keep = ~np.isnan(with_nan)
    _assert_same_bits(mixed[keep], clean[keep], f"{op} {dtype}")


_THREADS_SCRIPT = textwrap.dedent("""
    import sys
    sys.path[:0] = {paths!r}
    import numpy as np
    from test_vecmath_bits import Runner, _pool, _bits
    n = 100_003  # several chunks per thread and several fused tiles, none a multiple of a vector
    for op in ["exp", "expm1", "tanh", "sin", "cos", "log", "pow", "logistic", "erf"]:
        for dtype in ["float32", "float64"]:
            pool, other = _pool(dtype), _pool(dtype, seed=1)
            idx = (np.arange(n) * 7 + np.arange(n) // 97) % len(pool)  # each value at many positions mod 16
            args = [pool[idx]] + ([other[idx]] if op == "pow" else [])
            for fused in (False, True):
                run = Runner(op, dtype, fused)
                with np.errstate(all="ignore"):
                    single = np.concatenate([run(pool[i:i + 1], *([other[i:i + 1]] if op == "pow" else []))
                                             for i in range(len(pool))])
                    got = run(*args)
                want = single[idx]
                nan = np.isnan(want)
                bad = int(((_bits(got) != _bits(want)) & ~nan).sum() + (np.isnan(got) != nan).sum())
                print(op, dtype, fused, bad)
""")


@pytest.mark.skipif("XJAX_VECMATH_CHILD" in os.environ, reason="already a child")
def test_bits_do_not_depend_on_thread_count():
    script = _THREADS_SCRIPT.format(paths=[str(TESTS)] + sys.path)
    env = dict(os.environ, XJAX_VECMATH_CHILD="1")
    outputs = []
    for threads in (1, 2, 3):
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600,
                              env=dict(env, XJAX_NUM_THREADS=str(threads)))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        lines = proc.stdout.split("\n")
        assert all(line.endswith(" 0") for line in lines if line), f"{threads} threads:\n{proc.stdout}"
        outputs.append(proc.stdout)
    assert outputs[0] == outputs[1] == outputs[2]


# ---- accuracy -----------------------------------------------------------------------------------

def _ulps(got, want, dtype):
    """|got - want| in ulps of the format at want (want: a wider float). Zero where both are the
    same infinity or NaN, or where the exact result is below the smallest normal (flushed); inf
    where only one is NaN."""
    dt = np.dtype(dtype)
    with np.errstate(all="ignore"):
        w = want.astype(dt)
        spacing = np.spacing(np.abs(w)).astype(want.dtype)
        err = np.abs(got.astype(want.dtype) - want) / spacing
    tiny = np.abs(want) < np.finfo(dt).tiny * 1.01
    both_inf = np.isinf(got) & np.isinf(w) & (np.sign(got) == np.sign(w))
    nan_got, nan_want = np.isnan(got), np.isnan(want)
    err = np.where(nan_got != nan_want, np.inf, err)
    return np.where(tiny | both_inf | (nan_got & nan_want), 0, err)


def _reference(op, dtype):
    wide = np.float64 if dtype == "float32" else np.longdouble
    fns = {"exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "tanh": np.tanh, "log": np.log, "sin": np.sin,
           "cos": np.cos, "tan": np.tan, "logistic": lambda x: 1 / (1 + np.exp(-x)), "pow": np.power,
           "atan": np.arctan, "asin": np.arcsin, "acos": np.arccos, "sinh": np.sinh, "cosh": np.cosh,
           "erf": scipy.special.erf, "erfc": scipy.special.erfc}
    return wide, fns[op]


def _samples(op, dtype, n=1 << 18, seed=0):
    rng = np.random.default_rng(seed)
    big = {"float32": (88.7, 103.0, 1e38), "float64": (709.7, 744.0, 1e300)}[dtype]
    ranges = {
        "exp": [(-big[1], big[0]), (-1, 1)], "exp2": [(-big[1] * 1.45, big[0] * 1.45), (-1, 1)],
        "expm1": [(-40, big[0]), (-1, 1)], "tanh": [(-20, 20), (-1, 1)], "logistic": [(-50, 50)],
        "sin": [(-1e5, 1e5), (-4, 4)], "cos": [(-1e5, 1e5), (-4, 4)], "log": [(0, 4)], "tan": [(-1e5, 1e5), (-4, 4)],
        "atan": [(-10, 10), (-1, 1)], "asin": [(-1, 1)], "acos": [(-1, 1)], "sinh": [(-90, 90), (-1, 1)],
        "cosh": [(-90, 90), (-1, 1)], "erf": [(-5, 5), (-1, 1)], "erfc": [(-3, 11), (-1, 1)],
    }[op]
    xs = [rng.uniform(lo, hi, n // 4) for lo, hi in ranges]
    # log-spaced magnitudes: tiny arguments and, for log, atan and sin/cos, huge ones
    hi = big[2] if op in ("log", "sin", "cos", "atan") else 1.0
    lo = 1e-30 if dtype == "float32" else 1e-300
    mags = np.exp(rng.uniform(np.log(lo), np.log(hi), n // 4))
    xs.append(mags if op == "log" else mags * rng.choice([-1, 1], mags.size))
    return np.concatenate(xs).astype(dtype)


# Measured worst cases (over all float32 values for the float32 functions): exp 0.95, exp2 1.10,
# expm1 1.27, tanh 4.38 (XLA's approximation: JAX's values bit for bit, test_transformed_numerics),
# sin/cos 0.5 (0.56 beyond 2^18: glibc's), pow, tan, atan, asin, acos, sinh,
# cosh, erf, erfc 0.5001 (computed in double); float64: exp 1.0, exp2 1.19, expm1 1.36, tanh 1.44,
# log 0.84, sin/cos 0.78. logistic is 1 / (1 + exp(-x)) (three roundings).
ULP_BOUND = {
    ("exp", "float32"): 1.0, ("exp2", "float32"): 1.2, ("expm1", "float32"): 1.35, ("tanh", "float32"): 4.5,
    ("sin", "float32"): 0.6, ("cos", "float32"): 0.6, ("logistic", "float32"): 2.6, ("tan", "float32"): 0.51,
    ("atan", "float32"): 0.51, ("asin", "float32"): 0.51, ("acos", "float32"): 0.51, ("sinh", "float32"): 0.51,
    ("cosh", "float32"): 0.51, ("erf", "float32"): 0.51, ("erfc", "float32"): 0.51,
    ("exp", "float64"): 1.05, ("exp2", "float64"): 1.25, ("expm1", "float64"): 1.45, ("tanh", "float64"): 1.5,
    ("log", "float64"): 0.9, ("sin", "float64"): 0.85, ("cos", "float64"): 0.85, ("logistic", "float64"): 2.6,
}


# Above `start`, a looser bound: float32 exp is XLA's (JAX's bits), whose 2^n stops at 2^127, so
# that from 88.376 to the overflow at 88.7228 its polynomial runs on e^r for r up to ln 2, past the
# half of ln 2 it was fitted on (every float32 there measured: at most 5.51 ulp).
TOP_ULP_BOUND = {("exp", "float32"): (88.3762626647950, 5.6)}


@pytest.mark.parametrize("op, dtype", sorted(ULP_BOUND))
def test_accuracy_in_ulps(op, dtype):
    x = _samples(op, dtype)
    wide, fn = _reference(op, dtype)
    got = Runner(op, dtype, fused=False)(x)
    with np.errstate(all="ignore"):
        want = fn(x.astype(wide))
    err = _ulps(got, want, dtype)
    start, top_bound = TOP_ULP_BOUND.get((op, dtype), (np.inf, None))
    bound = np.where(x > start, top_bound or 0.0, ULP_BOUND[op, dtype])
    i = int(np.argmax(err - bound))
    assert err[i] <= bound[i], f"{op}({x[i]!r}) = {got[i]!r}, exact {want[i]!r}: {err[i]:.3f} ulp"
    if top_bound is not None:
        assert (x > start).sum() > 50  # the samples reach the top range


@pytest.mark.parametrize("dtype", DTYPES)
def test_pow_accuracy(dtype):
    rng = np.random.default_rng(3)
    n = 1 << 17
    x = np.concatenate([rng.uniform(0, 4, n), np.exp(rng.uniform(-30, 30, n))]).astype(dtype)
    y = np.concatenate([rng.uniform(-20, 20, n), rng.uniform(-3, 3, n)]).astype(dtype)
    wide = np.float64 if dtype == "float32" else np.longdouble
    got = Runner("pow", dtype, fused=False)(x, y)
    with np.errstate(all="ignore"):
        want = np.power(x.astype(wide), y.astype(wide))
    err = _ulps(got, want, dtype)
    i = int(np.argmax(err))
    # float32: computed in double, all but correctly rounded; float64: libm's.
    assert err[i] <= (0.51 if dtype == "float32" else 1.0), f"pow({x[i]!r}, {y[i]!r}) = {got[i]!r}: {err[i]:.3f} ulp"


@settings(max_examples=300, deadline=None)
@given(x=st.floats(width=32, allow_nan=False, allow_infinity=False))
def test_float32_functions_of_any_value(x):
    """Any float32 operand: within the bounds above of the float64 result rounded (flushed)."""
    v = np.array([x], np.float32)
    for op in ["exp", "exp2", "expm1", "tanh", "sin", "cos", "atan", "asin", "acos", "sinh", "cosh", "erf", "erfc"]:
        got = Runner(op, "float32", fused=False)(v)
        with np.errstate(all="ignore"):
            want = _reference(op, "float32")[1](v.astype(np.float64))
        if abs(x) < np.finfo(np.float32).tiny:  # a subnormal operand reads as zero
            with np.errstate(all="ignore"):
                want = _reference(op, "float32")[1](np.zeros(1) * np.sign(x))
        bound = ULP_BOUND[op, "float32"] if op not in ("sin", "cos") or abs(x) <= 2**18 else 1.0  # glibc's beyond
        assert _ulps(got, want, "float32")[0] <= bound, (op, x, got, want)


# ---- special values -----------------------------------------------------------------------------

F32_MAX_EXP = np.float32(88.72283)  # the largest float32 whose exp is finite
F64_MAX_EXP = 709.782712893384

SUB = 7.0  # a marker (see SPECIAL)
SPECIAL = {
    # op: [(x, expected), ...]; expected None: NaN. SUB: a subnormal of the dtype (reads as zero).
    "exp": [(np.inf, np.inf), (-np.inf, 0.0), (0.0, 1.0), (-0.0, 1.0), (SUB, 1.0), (-SUB, 1.0), (1e4, np.inf),
            (-1e4, 0.0), (np.nan, None)],
    "exp2": [(np.inf, np.inf), (-np.inf, 0.0), (0.0, 1.0), (-0.0, 1.0), (1.0, 2.0), (10.0, 1024.0), (-3.0, 0.125),
             (1e4, np.inf), (-1e4, 0.0), (np.nan, None)],
    "expm1": [(np.inf, np.inf), (-np.inf, -1.0), (0.0, 0.0), (-0.0, -0.0), (SUB, 0.0), (-SUB, -0.0),
              (1e-30, 1e-30), (-1e4, -1.0), (1e4, np.inf), (np.nan, None)],
    "tanh": [(np.inf, 1.0), (-np.inf, -1.0), (0.0, 0.0), (-0.0, -0.0), (SUB, 0.0), (-SUB, -0.0),
             (1e-30, 1e-30), (-1e-30, -1e-30), (30.0, 1.0), (-30.0, -1.0), (np.nan, None)],
    "logistic": [(np.inf, 1.0), (-np.inf, 0.0), (0.0, 0.5), (-0.0, 0.5), (1e4, 1.0), (-1e4, 0.0), (np.nan, None)],
    "sin": [(np.inf, None), (-np.inf, None), (0.0, 0.0), (-0.0, -0.0), (SUB, 0.0), (-SUB, -0.0),
            (1e-30, 1e-30), (-1e-30, -1e-30), (np.nan, None)],
    "cos": [(np.inf, None), (-np.inf, None), (0.0, 1.0), (-0.0, 1.0), (SUB, 1.0), (np.nan, None)],
    "tan": [(np.inf, None), (-np.inf, None), (0.0, 0.0), (-0.0, -0.0), (SUB, 0.0), (-SUB, -0.0), (np.nan, None)],
    "atan": [(np.inf, np.pi / 2), (-np.inf, -np.pi / 2), (0.0, 0.0), (-0.0, -0.0), (SUB, 0.0), (-SUB, -0.0),
             (1.0, np.pi / 4), (np.nan, None)],
    "asin": [(1.0, np.pi / 2), (-1.0, -np.pi / 2), (0.0, 0.0), (-0.0, -0.0), (2.0, None), (-np.inf, None),
             (np.nan, None)],
    "acos": [(1.0, 0.0), (-1.0, np.pi), (0.0, np.pi / 2), (-0.0, np.pi / 2), (2.0, None), (np.inf, None),
             (np.nan, None)],
    "sinh": [(np.inf, np.inf), (-np.inf, -np.inf), (0.0, 0.0), (-0.0, -0.0), (SUB, 0.0), (-SUB, -0.0),
             (1e4, np.inf), (-1e4, -np.inf), (np.nan, None)],
    "cosh": [(np.inf, np.inf), (-np.inf, np.inf), (0.0, 1.0), (-0.0, 1.0), (SUB, 1.0), (1e4, np.inf), (np.nan, None)],
    "erf": [(np.inf, 1.0), (-np.inf, -1.0), (0.0, 0.0), (-0.0, -0.0), (SUB, 0.0), (-SUB, -0.0), (30.0, 1.0),
            (-30.0, -1.0), (np.nan, None)],
    "erfc": [(np.inf, 0.0), (-np.inf, 2.0), (0.0, 1.0), (-0.0, 1.0), (SUB, 1.0), (30.0, 0.0), (-30.0, 2.0),
             (np.nan, None)],
    "log": [(np.inf, np.inf), (-np.inf, None), (0.0, -np.inf), (-0.0, -np.inf), (SUB, -np.inf), (-SUB, -np.inf), (-1.0, None),
            (1.0, 0.0), (np.nan, None)],
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", sorted(SPECIAL))
def test_special_values(op, dtype):
    cases = SPECIAL[op]
    sub = float(np.finfo(dtype).tiny) / 4
    with np.errstate(all="ignore"):
        x = np.array([sub if c[0] == SUB else -sub if c[0] == -SUB else c[0] for c in cases], dtype)
    got = Runner(op, dtype, fused=False)(x)
    for (xi, want), g in zip(cases, got):
        if want is None:
            assert np.isnan(g), (op, xi, g)
        else:
            w = np.array(want, dtype)
            assert g == w and np.signbit(g) == np.signbit(w), (op, xi, g, w)


@pytest.mark.parametrize("dtype", DTYPES)
def test_overflow_and_underflow_thresholds(dtype):
    dt = np.dtype(dtype)
    top = F32_MAX_EXP if dtype == "float32" else dt.type(F64_MAX_EXP)
    x = np.array([top, np.nextafter(top, dt.type(np.inf))], dt)
    got = Runner("exp", dtype, fused=False)(x)
    assert np.isfinite(got[0]) and got[0] > np.finfo(dt).max / 2 and np.isinf(got[1]), got
    got = Runner("expm1", dtype, fused=False)(x)
    assert np.isfinite(got[0]) and np.isinf(got[1]), got
    # Results below the smallest normal number are flushed to zero, those above are not.
    tiny = np.finfo(dt).tiny
    x = np.log(np.array([tiny * 1.001, tiny * 0.999], np.float64)).astype(dt)
    got = Runner("exp", dtype, fused=False)(x)
    assert got[0] >= tiny and got[1] == 0, got


@pytest.mark.parametrize("dtype", DTYPES)
def test_atan2_special_values(dtype):
    v = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.0, 1e30, -1e-30], dtype)
    a, b = (m.ravel() for m in np.meshgrid(v, v))
    got = Runner("atan2", dtype, fused=False)(a, b)
    with np.errstate(all="ignore"):
        want = np.arctan2(a.astype(np.float64), b.astype(np.float64)).astype(dtype)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got[ok]), np.signbit(want[ok]))
    np.testing.assert_allclose(got[ok], want[ok], rtol=np.finfo(dtype).eps, atol=0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_atan2_accuracy(dtype):
    rng = np.random.default_rng(4)
    n = 1 << 17
    y = (rng.standard_normal(n) * np.exp(rng.uniform(-20, 20, n))).astype(dtype)
    x = (rng.standard_normal(n) * np.exp(rng.uniform(-20, 20, n))).astype(dtype)
    wide = np.float64 if dtype == "float32" else np.longdouble
    got = Runner("atan2", dtype, fused=False)(y, x)
    want = np.arctan2(y.astype(wide), x.astype(wide))
    err = _ulps(got, want, dtype)
    i = int(np.argmax(err))
    assert err[i] <= (0.51 if dtype == "float32" else 1.0), f"atan2({y[i]!r}, {x[i]!r}) = {got[i]!r}: {err[i]:.3f} ulp"


@pytest.mark.parametrize("dtype", DTYPES)
def test_pow_special_values(dtype):
    v = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 2.5, -2.5, 1e30,
                  -1e30], dtype)
    a, b = (m.ravel() for m in np.meshgrid(v, v))
    got = Runner("pow", dtype, fused=False)(a, b)
    with np.errstate(all="ignore"):
        want = np.power(a, b)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got[ok]), np.signbit(want[ok]))
    np.testing.assert_allclose(got[ok], want[ok], rtol=np.finfo(dtype).eps, atol=0)


# ---- the instruction-set clones ------------------------------------------------------------------

@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64") or shutil.which("g++") is None,
                    reason="x86-64 clones, built with GCC")
def test_instruction_set_clones_give_the_same_bits(tmp_path):
    """tests/cpp/vecmath_clones.cpp: the functions in loops compiled for AVX-512 (with FMA), AVX2
    (without), AVX2 + FMA and baseline x86-64, as the library's target clones are, vectorised and
    one element at a time; every compilation this CPU can run must give the same bits."""
    exe = tmp_path / "vecmath_clones"
    cmd = ["g++", "-std=gnu++17", "-O3", "-fno-math-errno", "-fno-trapping-math", "-ffp-contract=off",
           f"-I{ROOT / 'src'}", f"-I{ROOT / 'include'}", str(TESTS / "cpp" / "vecmath_clones.cpp"), "-o", str(exe)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert "compared" in proc.stdout, proc.stdout
