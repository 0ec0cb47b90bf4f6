"""Tests of the C++ core's dot_general (shape rule and CPU kernels) against NumPy.

The module runs with BLAS loaded; test_other_configurations runs it again in subprocesses: with
XJAX_DISABLE_BLAS=1 (the built-in kernels, also in their AVX2 and generic builds through
XJAX_CONTRACTION_ISA) and with XJAX_GEMM=blas (BLAS for every float matrix product, which on
CPUs where the built-in AVX-512 kernel is preferred would otherwise go untested).
"""
import os
import string
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from core_util import ALL_DTYPES, INT_DTYPES, to_numpy
from xjax import _core
from xjax._src.blas import find_blas_library

BLAS_DISABLED = os.environ.get("XJAX_DISABLE_BLAS", "0") not in ("", "0")
_core.load_blas(find_blas_library() or "")

NP = {name: (np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)) for name in ALL_DTYPES}


def to_core(x):
    # core_util.to_core turns 0-d arrays into shape (1,) (np.ascontiguousarray is at least 1-d).
    x = np.asarray(x)
    flat = np.ascontiguousarray(x.reshape(-1))
    return _core.Array.from_buffer(flat.view(np.uint8), x.shape, x.dtype.name)


def dot_general(lhs, rhs, lc, rc, lb=(), rb=(), preferred=None):
    attrs = dict(lhs_contracting_dimensions=list(lc), rhs_contracting_dimensions=list(rc),
                 lhs_batch_dimensions=list(lb), rhs_batch_dimensions=list(rb))
    if preferred is not None:
        attrs["preferred_element_type"] = preferred
    arrays = [to_core(lhs), to_core(rhs)]
    exe = _core.compile_op("dot_general", [(a.shape, a.dtype) for a in arrays], attrs)
    return to_numpy(exe.run(arrays)[0])


def subscripts(lhs_ndim, rhs_ndim, lc, rc, lb, rb):
    letters = iter(string.ascii_letters)
    ls = [None] * lhs_ndim
    rs = [None] * rhs_ndim
    for a, b in zip(lb, rb):
        ls[a] = rs[b] = next(letters)
    for a, b in zip(lc, rc):
        ls[a] = rs[b] = next(letters)
    for i in range(lhs_ndim):
        ls[i] = ls[i] or next(letters)
    for i in range(rhs_ndim):
        rs[i] = rs[i] or next(letters)
    out = [ls[d] for d in lb]
    out += [ls[d] for d in range(lhs_ndim) if d not in lb and d not in lc]
    out += [rs[d] for d in range(rhs_ndim) if d not in rb and d not in rc]
    return "".join(ls) + "," + "".join(rs) + "->" + "".join(out)


def reference(lhs, rhs, lc, rc, lb=(), rb=(), out_dtype=None):
    """The exact (integers, modulo 2^n) or float64 result of dot_general."""
    out_dtype = np.dtype(out_dtype or lhs.dtype)
    spec = subscripts(lhs.ndim, rhs.ndim, lc, rc, lb, rb)
    if out_dtype == bool:
        return np.einsum(spec, lhs.astype(np.int64), rhs.astype(np.int64)) > 0
    if out_dtype.kind in "iu":  # int64/uint64 arithmetic wraps modulo 2^64, then narrow
        wide = np.uint64 if out_dtype == np.uint64 else np.int64
        return np.einsum(spec, lhs.astype(wide), rhs.astype(wide)).astype(out_dtype)
    return np.einsum(spec, lhs.astype(np.float64), rhs.astype(np.float64))


def random(shape, dtype, rng, low=-3, high=4):
    dtype = NP[dtype] if isinstance(dtype, str) else np.dtype(dtype)
    if dtype == bool:
        return rng.random(shape) < 0.3
    if dtype.kind == "u":
        return rng.integers(0, high, size=shape).astype(dtype)
    if dtype.kind == "i":
        return rng.integers(low, high, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def check(lhs, rhs, lc, rc, lb=(), rb=(), preferred=None):
    out = dot_general(lhs, rhs, lc, rc, lb, rb, preferred)
    out_dtype = NP[preferred] if preferred else lhs.dtype
    ref = reference(lhs, rhs, lc, rc, lb, rb, out_dtype)
    assert out.dtype == out_dtype and out.shape == ref.shape
    if out_dtype.kind in "biu":
        np.testing.assert_array_equal(out, ref)
        return
    k = int(np.prod([lhs.shape[d] for d in lc], dtype=np.int64))
    scale = np.einsum(subscripts(lhs.ndim, rhs.ndim, lc, rc, lb, rb),
                      np.abs(lhs.astype(np.float64)), np.abs(rhs.astype(np.float64)))
    computed = np.float64 if np.float64 in (lhs.dtype, out_dtype) else np.float32
    eps = np.finfo(computed).eps * max(k, 1) + float(ml_dtypes.finfo(out_dtype).eps)
    assert np.all(np.abs(out.astype(np.float64) - ref) <= eps * scale + 1e-30), (out, ref)


# The layouts: (lhs shape, rhs shape, lc, rc, lb, rb).
CASES = {
    "vec_vec": ((7,), (7,), [0], [0], [], []),
    "mat_vec": ((5, 7), (7,), [1], [0], [], []),
    "matT_vec": ((7, 5), (7,), [0], [0], [], []),
    "vec_mat": ((7,), (7, 6), [0], [0], [], []),
    "vec_matT": ((7,), (6, 7), [0], [1], [], []),
    "mat_mat": ((5, 7), (7, 6), [1], [0], [], []),
    "matT_mat": ((7, 5), (7, 6), [0], [0], [], []),
    "mat_matT": ((5, 7), (6, 7), [1], [1], [], []),
    "matT_matT": ((7, 5), (6, 7), [0], [1], [], []),
    "batched": ((3, 5, 7), (3, 7, 6), [2], [1], [0], [0]),
    "batch_middle": ((5, 3, 7), (7, 6, 3), [2], [0], [1], [2]),
    "attention": ((2, 5, 3, 4), (2, 6, 3, 4), [3], [3], [0, 2], [0, 2]),
    "two_batch_dims": ((2, 3, 4, 5), (3, 2, 5, 4), [3], [2], [0, 1], [1, 0]),
    "multi_contract": ((2, 3, 4, 5), (4, 3, 6), [1, 2], [1, 0], [], []),
    "contract_reordered": ((3, 4, 5), (5, 4, 2), [1, 2], [1, 0], [], []),
    "free_split": ((3, 4, 5), (4, 6), [1], [0], [], []),
    "batched_vec": ((4, 9), (4, 9), [1], [1], [0], [0]),
    "batched_matvec": ((4, 3, 9), (9, 4), [2], [0], [0], [1]),
    "outer": ((3,), (4,), [], [], [], []),
    "outer_mat": ((2, 3), (4,), [], [], [], []),
    "scalars": ((), (), [], [], [], []),
    "scalar_mat": ((), (3, 4), [], [], [], []),
    "only_batch": ((5, 3), (5, 3), [], [], [0, 1], [0, 1]),
    "size_one_dims": ((1, 5, 1, 7), (7, 1, 6), [3], [0], [], []),
    "blocked": ((130, 300), (300, 70), [1], [0], [], []),
    "blocked_T": ((300, 131), (67, 300), [0], [1], [], []),
    "long_k": ((3, 20000), (20000, 2), [1], [0], [], []),
    "gram": ((3, 40000), (4, 40000), [1], [1], [], []),
    "many_rows": ((3000, 40), (40,), [1], [0], [], []),
    "many_cols_T": ((40, 3000), (40,), [0], [0], [], []),
    "many_small": ((200, 4, 5), (200, 5, 3), [2], [1], [0], [0]),
    "big_batched": ((3, 130, 140), (3, 140, 120), [2], [1], [0], [0]),
    "big_vec": ((300001,), (300001,), [0], [0], [], []),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_layouts_float(case, dtype):
    ls, rs, lc, rc, lb, rb = CASES[case]
    rng = np.random.default_rng(0)
    check(random(ls, dtype, rng), random(rs, dtype, rng), lc, rc, lb, rb)


@pytest.mark.parametrize("case", ["vec_vec", "mat_vec", "vec_matT", "mat_matT", "matT_mat", "attention",
                                  "multi_contract", "blocked_T", "many_small", "gram", "big_vec", "scalars"])
@pytest.mark.parametrize("dtype", [d for d in ALL_DTYPES if d not in ("float32", "float64")])
def test_layouts_other_dtypes(case, dtype):
    ls, rs, lc, rc, lb, rb = CASES[case]
    rng = np.random.default_rng(1)
    check(random(ls, dtype, rng), random(rs, dtype, rng), lc, rc, lb, rb)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integers_wrap_around(dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(2)
    lhs = rng.integers(info.max // 2, info.max, size=(6, 50), endpoint=True, dtype=dtype)
    rhs = rng.integers(info.max // 2, info.max, size=(50, 5), endpoint=True, dtype=dtype)
    if info.min < 0:
        lhs[::2] = info.min  # products of extremes
    check(lhs, rhs, [1], [0])
    check(lhs[0], rhs[:, 0], [0], [0])


def test_large_int32_dot_is_exact():
    rng = np.random.default_rng(3)
    a = rng.integers(-2**31, 2**31, size=1_000_003, dtype=np.int64).astype(np.int32)
    b = rng.integers(-2**31, 2**31, size=1_000_003, dtype=np.int64).astype(np.int32)
    check(a, b, [0], [0])


def test_bool_is_any_product():
    lhs = np.array([[True, False, True], [False, False, False], [True, True, False]])
    rhs = np.array([[False, True], [True, True], [False, True]])
    out = dot_general(lhs, rhs, [1], [0])
    np.testing.assert_array_equal(out, [[False, True], [False, False], [True, True]])
    check(random((40, 300), bool, np.random.default_rng(4)), random((300, 9), bool, np.random.default_rng(5)),
          [1], [0])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_nan_and_inf_propagate(dtype):
    lhs = np.ones((4, 5), NP[dtype])
    rhs = np.ones((5, 3), NP[dtype])
    lhs[1, 2] = np.nan
    lhs[2, 0] = np.inf
    rhs[0, 1] = 0  # inf * 0 -> nan
    out = dot_general(lhs, rhs, [1], [0]).astype(np.float64)
    assert np.isnan(out[1]).all()
    np.testing.assert_array_equal(out[2], [np.inf, np.nan, np.inf])
    np.testing.assert_array_equal(out[[0, 3]], 5.0 * np.ones((2, 3)) - [[0, 1, 0]])
    vec = dot_general(lhs[1], rhs[:, 0], [0], [0])
    assert np.isnan(vec)


PREFERRED = [
    ("int8", "int32"), ("int8", "int16"), ("uint8", "uint32"), ("uint8", "int32"), ("int16", "int64"),
    ("int32", "int64"), ("uint32", "uint64"), ("int32", "float32"), ("int8", "float32"), ("uint16", "float64"),
    ("int64", "float64"), ("bool", "int32"), ("bool", "float32"), ("float16", "float32"),
    ("bfloat16", "float32"), ("float32", "float64"), ("float32", "bfloat16"), ("float64", "float32"),
    ("float16", "float64"), ("float32", "float32"),
]


@pytest.mark.parametrize("dtype,preferred", PREFERRED)
def test_preferred_element_type(dtype, preferred):
    rng = np.random.default_rng(6)
    check(random((3, 4, 70), dtype, rng), random((3, 70, 5), dtype, rng), [2], [1], [0], [0], preferred)
    check(random((70,), dtype, rng), random((70,), dtype, rng), [0], [0], preferred=preferred)


def test_preferred_accumulates_wide():
    lhs = np.full((2, 300), 100, np.int8)
    rhs = np.full((300, 2), 100, np.int8)
    np.testing.assert_array_equal(dot_general(lhs, rhs, [1], [0], preferred="int32"), np.full((2, 2), 3_000_000))
    big = np.full((4096,), 2048, np.float16)  # each product is 2^22 > float16 max
    assert dot_general(big, big, [0], [0], preferred="float32") == 4096 * 2048.0 ** 2
    assert np.isinf(dot_general(big, big, [0], [0]))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_empty_contraction_gives_zeros(dtype):
    out = dot_general(np.zeros((3, 0), NP[dtype]), np.zeros((0, 4), NP[dtype]), [1], [0])
    assert out.shape == (3, 4) and out.dtype == NP[dtype]
    assert not out.astype(np.float64).any()
    out = dot_general(np.zeros((2, 3, 0), NP[dtype]), np.zeros((2, 0), NP[dtype]), [2], [1], [0], [0])
    assert out.shape == (2, 3) and not out.astype(np.float64).any()


@pytest.mark.parametrize("ls,rs,lc,rc,lb,rb,shape", [
    ((0, 4), (4, 5), [1], [0], [], [], (0, 5)),
    ((3, 4), (4, 0), [1], [0], [], [], (3, 0)),
    ((0, 3, 4), (0, 4, 5), [2], [1], [0], [0], (0, 3, 5)),
    ((0,), (0,), [0], [0], [], [], ()),
])
def test_empty_shapes(ls, rs, lc, rc, lb, rb, shape):
    for dtype in ["float32", "int32", "bool", "float16"]:
        out = dot_general(np.ones(ls, NP[dtype]), np.ones(rs, NP[dtype]), lc, rc, lb, rb)
        assert out.shape == shape and out.dtype == NP[dtype]
        assert not out.astype(np.float64).any()


@st.composite
def dot_problems(draw):
    nb = draw(st.integers(0, 2))
    nc = draw(st.integers(0, 2))
    nl = draw(st.integers(0, 2))
    nr = draw(st.integers(0, 2))
    size = st.integers(1, 6)
    batch = [draw(size) for _ in range(nb)]
    contract = [draw(size) for _ in range(nc)]
    lhs_order = draw(st.permutations(range(nb + nc + nl)))
    rhs_order = draw(st.permutations(range(nb + nc + nr)))
    lhs_free = [draw(size) for _ in range(nl)]
    rhs_free = [draw(size) for _ in range(nr)]
    # Logical dims (batch, contract, free) placed at the positions given by the permutations.
    lhs_shape = [0] * len(lhs_order)
    rhs_shape = [0] * len(rhs_order)
    for logical, pos in enumerate(lhs_order):
        lhs_shape[pos] = (batch + contract + lhs_free)[logical]
    for logical, pos in enumerate(rhs_order):
        rhs_shape[pos] = (batch + contract + rhs_free)[logical]
    lb = [lhs_order[i] for i in range(nb)]
    rb = [rhs_order[i] for i in range(nb)]
    lc = [lhs_order[nb + i] for i in range(nc)]
    rc = [rhs_order[nb + i] for i in range(nc)]
    dtype = draw(st.sampled_from(["float32", "float64", "int32", "bfloat16", "uint8", "bool"]))
    return tuple(lhs_shape), tuple(rhs_shape), lc, rc, lb, rb, dtype


@settings(max_examples=60, deadline=None)
@given(dot_problems(), st.integers(0, 2**32 - 1))
def test_random_dimension_numbers(problem, seed):
    ls, rs, lc, rc, lb, rb, dtype = problem
    rng = np.random.default_rng(seed)
    check(random(ls, dtype, rng), random(rs, dtype, rng), lc, rc, lb, rb)


def test_infer():
    types = _core.infer("dot_general", [((2, 3, 4), "float32"), ((4, 2, 5), "float32")],
                        dict(lhs_contracting_dimensions=[2], rhs_contracting_dimensions=[0],
                             lhs_batch_dimensions=[0], rhs_batch_dimensions=[1]))
    assert types == [((2, 3, 5), "float32")]
    types = _core.infer("dot_general", [((3,), "int8"), ((3,), "int8")],
                        dict(lhs_contracting_dimensions=[0], rhs_contracting_dimensions=[0],
                             preferred_element_type="int32"))
    assert types == [((), "int32")]


def infer(lhs, rhs, **attrs):
    attrs.setdefault("lhs_contracting_dimensions", [])
    attrs.setdefault("rhs_contracting_dimensions", [])
    return _core.infer("dot_general", [lhs, rhs], attrs)


F32_23 = ((2, 3), "float32")
F32_34 = ((3, 4), "float32")


@pytest.mark.parametrize("lhs,rhs,attrs,match", [
    (((2, 3), "float32"), ((3, 4), "int32"), dict(lhs_contracting_dimensions=[1], rhs_contracting_dimensions=[0]),
     r"\[dot_general\].*same dtype.*float32 and int32"),
    (F32_23, ((4, 4), "float32"), dict(lhs_contracting_dimensions=[1], rhs_contracting_dimensions=[0]),
     r"\[dot_general\].*contracting dimensions to have the same shape, got \(3,\) and \(4,\)"),
    (F32_23, F32_34, dict(lhs_contracting_dimensions=[2], rhs_contracting_dimensions=[0]),
     r"\[dot_general\].*nonnegative and less than the rank of the lhs"),
    (F32_23, F32_34, dict(lhs_contracting_dimensions=[-1], rhs_contracting_dimensions=[0]),
     r"\[dot_general\].*nonnegative"),
    (F32_23, F32_34, dict(lhs_contracting_dimensions=[1], rhs_contracting_dimensions=[5]),
     r"\[dot_general\].*rank of the rhs"),
    (((3, 3), "float32"), ((3, 3), "float32"),
     dict(lhs_contracting_dimensions=[1, 1], rhs_contracting_dimensions=[0, 1]),
     r"\[dot_general\].*lhs contracting dimensions to be distinct"),
    (((3, 3), "float32"), ((3, 3), "float32"),
     dict(lhs_contracting_dimensions=[1], rhs_contracting_dimensions=[0], lhs_batch_dimensions=[0, 0],
          rhs_batch_dimensions=[1, 1]), r"\[dot_general\].*batch dimensions to be distinct"),
    (((3, 3), "float32"), ((3, 3), "float32"),
     dict(lhs_contracting_dimensions=[0], rhs_contracting_dimensions=[0], lhs_batch_dimensions=[0],
          rhs_batch_dimensions=[1]), r"\[dot_general\].*disjoint"),
    (F32_23, F32_34, dict(lhs_contracting_dimensions=[1], rhs_contracting_dimensions=[]),
     r"\[dot_general\].*equal numbers of lhs and rhs contracting"),
    (((2, 3), "float32"), ((2, 3), "float32"),
     dict(lhs_contracting_dimensions=[1], rhs_contracting_dimensions=[1], lhs_batch_dimensions=[0],
          rhs_batch_dimensions=[]), r"\[dot_general\].*equal numbers of lhs_batch and rhs_batch"),
    (((2, 3), "float32"), ((4, 3), "float32"),
     dict(lhs_contracting_dimensions=[1], rhs_contracting_dimensions=[1], lhs_batch_dimensions=[0],
          rhs_batch_dimensions=[0]),
     r"\[dot_general\].*batch dimensions to have the same shape, got \(2,\) and \(4,\)"),
    (((3,), "int32"), ((3,), "int32"), dict(lhs_contracting_dimensions=[0], rhs_contracting_dimensions=[0],
                                           preferred_element_type="int16"), r"\[dot_general\].*narrower"),
    (((3,), "int32"), ((3,), "int32"), dict(lhs_contracting_dimensions=[0], rhs_contracting_dimensions=[0],
                                           preferred_element_type="uint32"), r"\[dot_general\].*signedness"),
    (((3,), "float32"), ((3,), "float32"), dict(lhs_contracting_dimensions=[0], rhs_contracting_dimensions=[0],
                                               preferred_element_type="int32"), r"\[dot_general\].*incompatible"),
    (((3,), "float32"), ((3,), "float32"), dict(lhs_contracting_dimensions=[0], rhs_contracting_dimensions=[0],
                                               preferred_element_type="complex32"), r"\[dot_general\].*unknown"),
])
def test_bad_input_raises_type_error(lhs, rhs, attrs, match):
    with pytest.raises(TypeError, match=match):
        _core.infer("dot_general", [lhs, rhs], attrs)
    with pytest.raises(TypeError, match=match):
        _core.compile_op("dot_general", [lhs, rhs], attrs)


def test_missing_attribute_raises_value_error():
    with pytest.raises(ValueError, match=r"\[dot_general\].*missing attribute 'rhs_contracting_dimensions'"):
        _core.infer("dot_general", [F32_23, F32_34], dict(lhs_contracting_dimensions=[1]))
    with pytest.raises(ValueError, match=r"\[dot_general\].*expects 2 operands"):
        _core.infer("dot_general", [F32_23], dict(lhs_contracting_dimensions=[1], rhs_contracting_dimensions=[0]))


@pytest.mark.skipif(not BLAS_DISABLED, reason="a property of the built-in kernels (the builtin configurations)")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("k, n", [(5, 7), (64, 64), (33, 70), (400, 32)])
def test_layouts_float_a_row_does_not_depend_on_the_row_count(dtype, k, n):
    # Every row must be the same sum in the same order whatever the number of rows: small products
    # read A and B in place (gemm_small), large ones pack them, and a panel's last rows run on a
    # narrower tile (a third or two of its rows); transposed A (columns contiguous) included.
    rng = np.random.default_rng(k * n)
    a, b = random((2000, k), dtype, rng), random((k, n), dtype, rng)
    whole, whole_t = dot_general(a, b, [1], [0]), dot_general(np.ascontiguousarray(a.T), b, [0], [0])
    eps = np.finfo(dtype).eps
    scale = k * np.abs(a).max() * np.abs(b).max()
    np.testing.assert_allclose(whole, a.astype(np.float64) @ b, rtol=0, atol=4 * eps * scale)
    for m in list(range(2, 40)) + [97, 200]:
        assert np.array_equal(dot_general(a[:m], b, [1], [0]), whole[:m]), m
        assert np.array_equal(dot_general(np.ascontiguousarray(a[:m].T), b, [0], [0]), whole_t[:m]), m


def test_blas_state():
    path = find_blas_library()
    assert path is None or (os.path.isfile(path) and "openblas" in os.path.basename(path))
    assert _core.blas_loaded() == (not BLAS_DISABLED and path is not None)
    assert not _core.load_blas("/nonexistent/libnothing.so") or _core.blas_loaded()


SUBSET = "layouts_float or other_dtypes and (float16 or int8 or uint64) or random or wrap or nan or preferred"
CONFIGURATIONS = {
    "builtin": (dict(XJAX_DISABLE_BLAS="1"), ""),  # the whole module, built-in kernels for this CPU
    "builtin-avx2": (dict(XJAX_DISABLE_BLAS="1", XJAX_CONTRACTION_ISA="avx2"), SUBSET),
    "builtin-generic": (dict(XJAX_DISABLE_BLAS="1", XJAX_CONTRACTION_ISA="generic"), SUBSET),
    "blas-gemm": (dict(XJAX_GEMM="blas"), SUBSET),  # every float matrix product on BLAS
}
_children = {}


def _start_children():
    """Starts every configuration's run at once (they overlap their start-up costs)."""
    for name, (env, select) in CONFIGURATIONS.items():
        cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", __file__]
        if select:
            cmd += ["-k", select]
        env = dict(os.environ, XJAX_CONTRACTION_TEST_CHILD="1", **env)
        _children[name] = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                           text=True)


@pytest.mark.skipif("XJAX_CONTRACTION_TEST_CHILD" in os.environ, reason="already a configuration run")
@pytest.mark.parametrize("name", list(CONFIGURATIONS))
def test_other_configurations(name):
    """Runs this module again in a process configured otherwise, so that each kernel passes."""
    if not _children:
        _start_children()
    output, _ = _children[name].communicate(timeout=120)
    assert _children[name].returncode == 0, output[-6000:]


_HASH_SCRIPT = """
import hashlib, sys
import numpy as np
sys.path[:0] = {paths!r}
import test_core_contraction as t
rng = np.random.default_rng(5)
h = hashlib.sha1()
for case in ["blocked", "gram", "many_rows", "many_cols_T", "big_vec", "many_small", "big_batched"]:
    ls, rs, lc, rc, lb, rb = t.CASES[case]
    for dt in ["float32", "float64"]:
        h.update(t.dot_general(t.random(ls, dt, rng), t.random(rs, dt, rng), lc, rc, lb, rb).tobytes())
print(h.hexdigest())
"""


@pytest.mark.skipif("XJAX_CONTRACTION_TEST_CHILD" in os.environ, reason="already a configuration run")
def test_builtin_results_do_not_depend_on_thread_count():
    script = _HASH_SCRIPT.format(paths=sys.path[:])
    procs = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, env=dict(os.environ, XJAX_DISABLE_BLAS="1", XJAX_NUM_THREADS=str(n),
                                                  XJAX_CONTRACTION_TEST_CHILD="1"))
             for n in (1, 3)]
    outputs = [p.communicate(timeout=120)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    assert outputs[0] == outputs[1]
