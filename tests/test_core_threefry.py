"""The C++ core's threefry2x32 op against a NumPy Threefry-2x32 (20 rounds) and the Random123
known-answer vectors: eager kernel, reference interpreter, and fused with its consumers."""
import numpy as np
import pytest

from core_util import run_op, to_core, to_numpy
from xjax import _core

ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def threefry_np(k0, k1, x0, x1):
    """Threefry-2x32, 20 rounds, on uint32 arrays (broadcasting): returns (y0, y1)."""
    k0, k1, x0, x1 = np.broadcast_arrays(*(np.asarray(a, np.uint32) for a in (k0, k1, x0, x1)))
    ks = [k0, k1, k0 ^ k1 ^ np.uint32(0x1BD11BDA)]
    x0, x1 = x0 + ks[0], x1 + ks[1]
    with np.errstate(over="ignore"):
        for group in range(5):
            for r in ROTATIONS[group % 2]:
                x0 = x0 + x1
                x1 = (x1 << np.uint32(r)) | (x1 >> np.uint32(32 - r))
                x1 = x1 ^ x0
            x0 = x0 + ks[(group + 1) % 3]
            x1 = x1 + ks[(group + 2) % 3] + np.uint32(group + 1)
    return x0, x1


def split_words(packed):
    return (packed >> np.uint64(32)).astype(np.uint32), packed.astype(np.uint32)


# Random123's kat_vectors for threefry2x32_20: (key, counter, result).
KNOWN_ANSWERS = [
    ((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6b200159, 0x99ba4efe)),
    ((0xffffffff, 0xffffffff), (0xffffffff, 0xffffffff), (0x1cb996fc, 0xbb002be7)),
    ((0x13198a2e, 0x03707344), (0x243f6a88, 0x85a308d3), (0xc4923a9c, 0x483df7a0)),
]


@pytest.mark.parametrize("key,counter,want", KNOWN_ANSWERS)
def test_known_answers(key, counter, want):
    assert tuple(int(v) for v in threefry_np(*key, *counter)) == want  # the NumPy model itself
    args = [np.uint32(v) for v in key + counter]
    (packed,) = run_op("threefry2x32", *args)
    assert packed.dtype == np.uint64 and packed.shape == ()
    assert tuple(int(w) for w in split_words(packed)) == want


@pytest.mark.parametrize("n", [0, 1, 7, 1023, 1025, 70_001])
def test_random_inputs_match_numpy(n):
    rng = np.random.default_rng(n)
    k0, k1, x0, x1 = (rng.integers(0, 2**32, n, dtype=np.uint32) for _ in range(4))
    (packed,) = run_op("threefry2x32", k0, k1, x0, x1)
    y0, y1 = split_words(packed)
    w0, w1 = threefry_np(k0, k1, x0, x1)
    np.testing.assert_array_equal(y0, w0)
    np.testing.assert_array_equal(y1, w1)


@pytest.mark.parametrize("shape", [(30, 70), (1,), (63,), (64,), (65,), (127,), (128,), (129,), (3, 131)])
def test_zero_d_keys_broadcast(shape):
    """0-d keys run the loops that encrypt blocks of counters (64, or 128 with AVX-512): lengths
    around the blocks' bounds."""
    rng = np.random.default_rng(1)
    x0, x1 = (rng.integers(0, 2**32, shape, dtype=np.uint32) for _ in range(2))
    k0, k1 = np.uint32(0x12345678), np.uint32(0x9abcdef0)
    (packed,) = run_op("threefry2x32", k0, k1, x0, x1)
    assert packed.shape == shape
    np.testing.assert_array_equal(np.stack(split_words(packed)), np.stack(threefry_np(k0, k1, x0, x1)))


def test_reference_interpreter_agrees():
    rng = np.random.default_rng(2)
    g = _core.Graph()
    ins = [g.parameter((), "uint32"), g.parameter((), "uint32"), g.parameter((500,), "uint32"),
           g.parameter((500,), "uint32")]
    g.set_outputs(g.add("threefry2x32", ins, {}))
    args = [np.uint32(7), np.uint32(0xdeadbeef)] + [rng.integers(0, 2**32, 500, dtype=np.uint32) for _ in range(2)]
    (want,) = [to_numpy(r) for r in _core.compile(g, reference=True, passes=[]).run([to_core(a) for a in args])]
    (got,) = [to_numpy(r) for r in _core.compile(g).run([to_core(a) for a in args])]
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.stack(split_words(want)), np.stack(threefry_np(*args)))


def _words_graph(n):
    """k, counters -> (hi ^ lo) as JAX's 32-bit random_bits computes it, plus hi alone."""
    g = _core.Graph()
    k0, k1 = g.parameter((), "uint32"), g.parameter((), "uint32")
    c0, c1 = g.parameter((n,), "uint32"), g.parameter((n,), "uint32")
    (packed,) = g.add("threefry2x32", [k0, k1, c0, c1], {})
    (sh,) = g.add("constant", [], {"dtype": "uint64", "shape": [], "value": 32})
    (hi64,) = g.add("shift_right_logical", [packed, sh], {})
    (hi,) = g.add("convert_element_type", [hi64], {"new_dtype": "uint32"})
    (lo,) = g.add("convert_element_type", [packed], {"new_dtype": "uint32"})
    (bits,) = g.add("bitwise_xor", [hi, lo], {})
    g.set_outputs([bits, hi])
    return g


def test_fuses_with_its_consumers_and_runs_once_per_element():
    n = 100_000
    rng = np.random.default_rng(3)
    args = [np.uint32(42), np.uint32(7)] + [rng.integers(0, 2**32, n, dtype=np.uint32) for _ in range(2)]
    exe = _core.compile(_words_graph(n))
    bits, hi = (to_numpy(r) for r in exe.run([to_core(a) for a in args]))
    assert exe.num_kernels == 1, exe.plan_text()
    assert exe.plan_text().count("threefry2x32(") == 1, exe.plan_text()  # one step computes both words
    w0, w1 = threefry_np(*args)
    np.testing.assert_array_equal(hi, w0)
    np.testing.assert_array_equal(bits, w0 ^ w1)


def test_fused_with_full_size_keys():
    n = 5000
    rng = np.random.default_rng(4)
    args = [rng.integers(0, 2**32, n, dtype=np.uint32) for _ in range(4)]
    g = _core.Graph()
    ins = [g.parameter((n,), "uint32") for _ in range(4)]
    (packed,) = g.add("threefry2x32", ins, {})
    (lo,) = g.add("convert_element_type", [packed], {"new_dtype": "uint32"})
    g.set_outputs([lo])
    exe = _core.compile(g)
    (lo,) = [to_numpy(r) for r in exe.run([to_core(a) for a in args])]
    assert exe.num_kernels == 1
    np.testing.assert_array_equal(lo, threefry_np(*args)[1])


@pytest.mark.parametrize("types,match", [
    ([((), "int32"), ((), "uint32"), ((3,), "uint32"), ((3,), "uint32")], "operands must be uint32"),
    ([((), "uint32"), ((), "uint32"), ((3,), "uint32"), ((4,), "uint32")], "equal shapes or be 0-d"),
])
def test_bad_operands(types, match):
    with pytest.raises((TypeError, ValueError), match=match):
        _core.infer("threefry2x32", types, {})
    with pytest.raises(ValueError, match="expects 4 operands"):
        _core.infer("threefry2x32", types[:3], {})


def test_bits_only_become_one_step():
    n = 50_000
    g = _core.Graph()
    k0, k1 = g.parameter((), "uint32"), g.parameter((), "uint32")
    c0, c1 = g.parameter((n,), "uint32"), g.parameter((n,), "uint32")
    (packed,) = g.add("threefry2x32", [k0, k1, c0, c1], {})
    (sh,) = g.add("constant", [], {"dtype": "uint64", "shape": [], "value": 32})
    (hi,) = g.add("convert_element_type", [g.add("shift_right_logical", [packed, sh], {})[0]], {"new_dtype": "uint32"})
    (lo,) = g.add("convert_element_type", [packed], {"new_dtype": "uint32"})
    (bits,) = g.add("bitwise_xor", [lo, hi], {})
    (f,) = g.add("convert_element_type", [bits], {"new_dtype": "float32"})
    g.set_outputs([f])
    rng = np.random.default_rng(5)
    args = [np.uint32(1), np.uint32(2)] + [rng.integers(0, 2**32, n, dtype=np.uint32) for _ in range(2)]
    exe = _core.compile(g)
    (got,) = [to_numpy(r) for r in exe.run([to_core(a) for a in args])]
    assert "threefry2x32_xor(" in exe.plan_text() and "shift_right_logical(" not in exe.plan_text(), exe.plan_text()
    w0, w1 = threefry_np(*args)
    np.testing.assert_array_equal(got, (w0 ^ w1).astype(np.float32))
