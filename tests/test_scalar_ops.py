"""The scalar op definitions (src/core/ops/scalar_ops.h and companions, scalar_special.h) and their
generator-facing table (scalar_names.h): the headers' text compiles standalone as host C++ (-Wall
-Werror) and with nvcc for sm_80; expressions the table gives, compiled into a host program after
that text, compute what the CPU kernels compute (the special functions bit for bit: one
definition); the scalar float16/bfloat16 conversions give F16C's bits.
Compiler tests skip where there is no C++ compiler or nvcc."""
import pathlib
import platform
import shutil
import subprocess

import numpy as np
import pytest

from core_util import ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, _NP_DTYPES, to_core, to_numpy
from xjax import _core

ROOT = pathlib.Path(__file__).resolve().parents[1]
HEADERS = ["scalar_portable.h", "scalar_math.h", "scalar_ops.h", "scalar_xla_math.h", "scalar_convert.h",
           "scalar_complex.h"]
ALL_OPS_SOURCE = ROOT / "tests" / "cpp" / "scalar_ops_all.cpp"


def _cxx():
    cxx = next((c for c in ("c++", "g++", "clang++") if shutil.which(c)), None)
    if cxx is None:
        pytest.skip("no C++ compiler")
    return cxx


def _run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert proc.returncode == 0, " ".join(map(str, cmd)) + "\n" + proc.stdout[-4000:] + proc.stderr[-4000:]
    return proc


def test_embedded_text_is_the_headers():
    text = "".join((ROOT / "src" / "core" / "ops" / h).read_text() for h in HEADERS)
    assert _core.scalar_source() == text
    assert _core.scalar_special_source() == (ROOT / "src" / "core" / "ops" / "scalar_special.h").read_text()


def _all_text():
    """Both texts, as a source that computes a special function has them."""
    return _core.scalar_source() + _core.scalar_special_source()


@pytest.mark.parametrize("soft_ftz", [False, True])
def test_text_compiles_standalone_as_host_cpp(tmp_path, soft_ftz):
    src = tmp_path / "all.cpp"
    src.write_text(_all_text() + ALL_OPS_SOURCE.read_text())
    flags = ["-DXJAX_SCALAR_SOFT_FTZ"] if soft_ftz else []
    # No include path: the text must need nothing from the project.
    _run([_cxx(), "-std=c++17", "-Wall", "-Wextra", "-Werror", *flags, "-c", str(src), "-o", str(tmp_path / "all.o")])


@pytest.mark.parametrize("soft_ftz", [False, True])
def test_text_compiles_with_nvcc(tmp_path, soft_ftz):
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("no nvcc")
    src = tmp_path / "all.cu"
    src.write_text(_all_text() + ALL_OPS_SOURCE.read_text())
    flags = ["-DXJAX_SCALAR_SOFT_FTZ"] if soft_ftz else []
    out = tmp_path / "all.cubin"
    _run([nvcc, "-std=c++17", "--cubin", "-arch=sm_80", "-Werror", "all-warnings", *flags, str(src), "-o", str(out)],
         timeout=600)
    assert out.stat().st_size > 0


# ---- the expression table against the CPU kernels ---------------------------------------------

N = 48
HALF = ("float16", "bfloat16")
UNARY = ["neg", "sign", "floor", "ceil", "is_finite", "exp", "exp2", "log", "log1p", "expm1", "tanh", "logistic",
         "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "sqrt", "rsqrt", "cbrt",
         "abs", "bitwise_not", "erf", "erfc", "erf_inv", "square", "population_count", "clz", "copy", "lgamma",
         "digamma", "bessel_i0e", "bessel_i1e"]
BINARY = ["add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2", "nextafter", "bitwise_and", "bitwise_or",
          "bitwise_xor", "eq", "ne", "lt", "le", "gt", "ge", "shift_left", "shift_right_logical",
          "shift_right_arithmetic", "igamma", "igammac", "igamma_grad_a", "polygamma", "zeta"]


def _values(dtype, seed):
    """N values of dtype with the edge cases first (NaN, inf, signed zeros, subnormals, extremes)."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(N) < 0.5
    if dtype in INT_DTYPES:
        info = np.iinfo(dtype)
        edge = [0, 1, info.max, info.min, 2, 3, 7, 8, 15, 16, 31, 32, 63, 64, 100]
        if info.min < 0:
            edge += [-1, -2, -8, -33]
        rest = rng.integers(info.min, info.max, N - len(edge), dtype=dtype, endpoint=True)
        return np.concatenate([np.array(edge, dtype=dtype), rest])
    dt = _NP_DTYPES[dtype]
    edge = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 3.0, np.inf, -np.inf, np.nan, 1e-40, -3e-39, 6e-8, 65504.0,
            70000.0, 1e30, -1e-310, 0.99, 1e-5, 300.0]
    rest = rng.standard_normal(N - len(edge)) * rng.choice([1e-3, 1.0, 1e3], N - len(edge))
    with np.errstate(all="ignore"):
        return np.concatenate([np.array(edge), rest]).astype(dt)


def _cases():
    """(op, in dtypes, out dtype, attrs) for every elementwise op and dtype combination."""
    cases = []
    for dt in ALL_DTYPES:
        cases += [(op, [dt], dt, {}) for op in UNARY]
        cases += [(op, [dt, dt], dt, {}) for op in BINARY]
        cases += [("clamp", [dt] * 3, dt, {}), ("fma", [dt] * 3, dt, {}), ("regularized_incomplete_beta", [dt] * 3, dt, {})]
        cases += [("integer_pow", [dt], dt, {"y": y}) for y in (-2, 0, 1, 3, 13)]
        cases += [("round", [dt], dt, {"rounding_method": m}) for m in (0, 1)]
        cases += [("select_n", ["bool", dt, dt], dt, {}), ("select_n", ["int32", dt, dt, dt], dt, {})]
        cases += [("convert_element_type", [dt], to, {"new_dtype": to}) for to in ALL_DTYPES]
        cases += [("bitcast_convert_type", [dt], to, {"new_dtype": to}) for to in ALL_DTYPES
                  if _NP_DTYPES[to].itemsize == _NP_DTYPES[dt].itemsize]
    cases.append(("threefry2x32", ["uint32"] * 4, "uint64", {}))
    return cases


def _out_dtype(op, ins, out, attrs):
    comparison = op in ("eq", "ne", "lt", "le", "gt", "ge", "is_finite")
    return "bool" if comparison else out


def _valid(op, ins, attrs):
    try:
        _core.infer(op, [((N,), d) for d in ins], attrs)
        return True
    except Exception:
        return False


def _program(cases):
    lines = ["#include <cstdio>", "#include <cstring>", "#include <xmmintrin.h>", _all_text()]
    for k, (op, ins, out, attrs, expr) in enumerate(cases):
        loads = []
        lines.append(f"static void case_{k}(const unsigned char*& p, FILE* f) {{")
        for j, d in enumerate(ins):
            storage, _ = _core.scalar_types(d)
            lines.append(f"  {storage} x{j}[{N}]; std::memcpy(x{j}, p, sizeof x{j}); p += sizeof x{j};")
            loads.append(_core.scalar_load(d, f"x{j}[i]"))
        expr = _core.scalar_expression(op, ins, out, attrs, loads)
        storage, _ = _core.scalar_types(out)
        lines.append(f"  for (int i = 0; i < {N}; ++i) {{ {storage} r = {_core.scalar_store(out, expr)};"
                     " std::fwrite(&r, sizeof r, 1, f); }")
        lines.append("}")
    lines.append("int main(int argc, char** argv) {")
    lines.append("  _mm_setcsr(_mm_getcsr() | 0x8040);  // FTZ and DAZ, as the kernels run")
    lines.append("  FILE* in = std::fopen(argv[1], \"rb\"); std::fseek(in, 0, SEEK_END); long size = std::ftell(in);")
    lines.append("  std::fseek(in, 0, SEEK_SET); unsigned char* blob = new unsigned char[size];")
    lines.append("  if (std::fread(blob, 1, size, in) != size_t(size)) return 1;")
    lines.append("  const unsigned char* p = blob; FILE* out = std::fopen(argv[2], \"wb\");")
    lines += [f"  case_{k}(p, out);" for k in range(len(cases))]
    lines.append("  std::fclose(out); return argc == 3 ? 0 : 1;\n}")
    return "\n".join(lines)


def _same(got, want, op, dtype):
    """Bit for bit (every function, transcendental ones included: the kernels compute our own
    code of scalar_math.h or one scalar libm call per element, as the expressions do), but NaNs
    (any sign and payload: compilers order a NaN's operands freely)."""
    what = f"{op} -> {dtype}"
    if dtype in FLOAT_DTYPES:
        with np.errstate(invalid="ignore"):
            nan, got_nan = np.isnan(want.astype(np.float64)), np.isnan(got.astype(np.float64))
        np.testing.assert_array_equal(got_nan, nan, err_msg=what)
        got, want = got[~nan], want[~nan]
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8), err_msg=what)


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="sets FTZ/DAZ through MXCSR")
def test_expressions_compute_what_the_kernels_compute(tmp_path):
    cxx = _cxx()
    cases, blob = [], []
    for op, ins, out, attrs in _cases():
        out = _out_dtype(op, ins, out, attrs)
        args = [f"a{j}" for j in range(len(ins))]
        expr = _core.scalar_expression(op, ins, out, attrs, args)
        valid = _valid(op, ins, attrs)
        if not valid:
            assert expr == "", (op, ins)
            continue
        assert expr, f"no expression for {op} {ins} -> {out}"
        inputs = [_values(d, seed=j) for j, d in enumerate(ins)]
        if op == "select_n" and ins[0] == "int32":
            inputs[0] = np.arange(N, dtype=np.int32) % 6 - 1  # -1 .. 4: outside [0, 3) too
        cases.append((op, ins, out, attrs, expr, inputs))
        blob += [np.ascontiguousarray(x).tobytes() for x in inputs]
    src = tmp_path / "exprs.cpp"
    src.write_text(_program([c[:5] for c in cases]))
    exe = tmp_path / "exprs"
    _run([cxx, "-std=c++17", "-O1", "-ffp-contract=off", "-w", str(src), "-o", str(exe)], timeout=900)
    (tmp_path / "in.bin").write_bytes(b"".join(blob))
    _run([str(exe), str(tmp_path / "in.bin"), str(tmp_path / "out.bin")])
    got_all = (tmp_path / "out.bin").read_bytes()
    offset = 0
    for op, ins, out, attrs, _, inputs in cases:
        size = N * _NP_DTYPES[out].itemsize
        got = np.frombuffer(got_all[offset:offset + size], _NP_DTYPES[out])
        offset += size
        arrays = [to_core(x) for x in inputs]
        (want,) = [to_numpy(r) for r in _core.compile_op(op, [(a.shape, a.dtype) for a in arrays], attrs).run(arrays)]
        _same(got, want, op, out)
    assert offset == len(got_all)


# ---- float16 / bfloat16 conversions: the scalar code (the reference interpreter's) and the CPU's
# array path (F16C where the CPU has it) ----------------------------------------------------------

def _float32_patterns():
    """Every sign/exponent/top-mantissa combination with the low bits that decide rounding."""
    high = np.arange(1 << 19, dtype=np.uint32) << 13
    low = np.array([0, 1, 0xfff, 0x1000, 0x1001, 0x1fff, 0x7fff, 0x8000, 0x8001, 0xffff], np.uint32)
    bits = (high[:, None] | (low[None, :] & 0x1fff)).ravel()
    bits16 = (bits & 0xffff0000) | low[np.arange(bits.size) % low.size]  # bfloat16 rounds at bit 16
    return np.concatenate([bits, bits16]).view(np.float32)


def _convert(src_dtype, dst_dtype, x, reference):
    g = _core.Graph()
    p = g.parameter(x.shape, src_dtype)
    g.set_outputs(g.add("convert_element_type", [p], {"new_dtype": dst_dtype}))
    exe = _core.compile(g, reference=reference, passes=[])
    (r,) = exe.run([to_core(x)])
    return to_numpy(r)


@pytest.mark.parametrize("dst", HALF)
def test_scalar_half_rounding_is_the_array_paths(dst):
    x = _float32_patterns()
    kernel = _convert("float32", dst, x, reference=False)
    ref = _convert("float32", dst, x, reference=True)
    np.testing.assert_array_equal(ref.view(np.uint16), kernel.view(np.uint16))
    with np.errstate(invalid="ignore", over="ignore"):
        want = x.astype(_NP_DTYPES[dst])  # NumPy / ml_dtypes: nearest even
    nan = np.isnan(x)
    assert np.isnan(kernel[nan].astype(np.float32)).all()
    np.testing.assert_array_equal(kernel[~nan].view(np.uint16), want[~nan].view(np.uint16))


@pytest.mark.parametrize("src", HALF)
def test_scalar_half_widening_is_the_array_paths(src):
    x = np.arange(1 << 16, dtype=np.uint16).view(_NP_DTYPES[src])
    kernel = _convert(src, "float32", x, reference=False)
    ref = _convert(src, "float32", x, reference=True)
    np.testing.assert_array_equal(ref.view(np.uint32), kernel.view(np.uint32))


# ---- coverage: the GPU fuses whatever the CPU accepts -------------------------------------------

def _elementwise_ops():
    """(name, arity) of every Elementwise op in the catalogue (arity -1: variadic)."""
    import re
    text = (ROOT / "src" / "core" / "ops" / "op_list.h").read_text()
    return [(m[0], int(m[1])) for m in re.findall(r"X\((\w+), Elementwise, (-?\d+)\)", text)]


def _accepted_combinations(op, arity):
    """(in dtypes, out dtype, attrs) of every operand dtype combination op's shape rule accepts (select_n: up
    to 4 cases of one dtype), with each attribute variant that changes the types."""
    import itertools
    variants = {"integer_pow": [{"y": 3}, {"y": -2}], "round": [{"rounding_method": 0}, {"rounding_method": 1}]}
    arities = [arity] if arity > 0 else [2, 3, 4, 5]
    for n in arities:
        for ins in itertools.product(ALL_DTYPES, repeat=n):
            if op == "select_n" and len(set(ins[1:])) > 1:
                continue
            for attrs in variants.get(op, [{}]):
                targets = ALL_DTYPES if op in ("convert_element_type", "bitcast_convert_type") else [None]
                for to in targets:
                    a = dict(attrs, new_dtype=to) if to else attrs
                    try:
                        ((_, out),) = _core.infer(op, [((N,), d) for d in ins], a)
                    except Exception:  # the shape rule refuses these operands
                        continue
                    yield list(ins), out, a


def test_every_accepted_dtype_combination_has_an_expression():
    """Mixed dtypes included (select_n's predicate, convert, bitcast): an empty expression is an op the
    CPU runs and the GPU plan refuses (cuda_can_fuse asks scalar_expression)."""
    missing, count = [], 0
    for op, arity in _elementwise_ops():
        if op == "iota":
            continue
        for ins, out, attrs in _accepted_combinations(op, arity):
            expression = _core.scalar_expression(op, ins, out, attrs, [f"x{k}" for k in range(len(ins))])
            count += 1
            if not expression:
                missing.append((op, ins, out, attrs))
    assert count > 700 and not missing, missing[:20]
