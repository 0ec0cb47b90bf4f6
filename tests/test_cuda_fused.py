"""Fused groups as CUDA (src/core/cuda/fused*.cpp), tested without a GPU: random fused graphs
(tests/fused_graphs.py) and a one-op graph per elementwise op and dtype are compiled for CUDA
(_core.cuda_fused_kernels); every generated source is compiled as host C++ under the emulation
header (tests/cuda_emulation.py), run on NumPy buffers group by group, and compared with the CPU
core running the same graph. Every source also compiles with nvcc for sm_80 and sm_90."""
import concurrent.futures
import pathlib
import re

import ml_dtypes
import numpy as np
import pytest

import cuda_emulation as emu
import nvrtc
import fused_graphs as fg
from core_util import _NP_DTYPES, ALL_DTYPES, to_core, to_numpy
from xjax import _core

NUM_RANDOM_GRAPHS = 240
ROOT = pathlib.Path(__file__).resolve().parent.parent
class FusedBatch(emu.Batch):
    """A Batch of fused plans: their common prefix (the scalar definitions) goes once at global
    scope ahead of the namespaced sources, where its include guards make each copy a no-op."""

    def host_source(self):
        return emu.global_prefix() + super().host_source()


def nvcc_compile(plans, arch):
    text = emu.global_prefix() + "".join(emu._namespaced(k, p) for k, p in enumerate(plans))

    def compile_cu(src, out):
        cu = src.with_suffix(".cu")
        src.rename(cu)
        try:
            cmd = [emu.nvcc_path(), "--cubin", f"-arch={arch}", "-w", "-o", str(out), str(cu)]
            r = emu.subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode:
                raise AssertionError(f"nvcc -arch={arch} failed:\n{r.stderr[-4000:]}")
        finally:
            cu.rename(src)

    return emu._cached(text + f"// {arch}\n", ".cubin", compile_cu)


# ---- cases: a graph, its inputs, and how to compare each output
class Case:
    def __init__(self, cid, graph, inputs, exact):
        self.cid, self.graph, self.inputs, self.exact = cid, graph, inputs, exact
        self.program = _core.cuda_fused_kernels(graph)


def random_cases():
    cases = []
    for seed in range(NUM_RANDOM_GRAPHS):
        g, inputs, exact = fg.random_graph(seed)
        cases.append(Case(f"graph{seed}", g, inputs, exact))
    return cases


def elementwise_ops():
    """(name, arity) of every Elementwise op in the catalogue."""
    text = (ROOT / "src" / "core" / "ops" / "op_list.h").read_text()
    return [(m[0], int(m[1])) for m in re.findall(r"X\((\w+), Elementwise, (-?\d+)\)", text)]


# Computed by libm (or our own polynomials): last bits may differ between the CPU's vector
# functions and the kernel's scalar ones.
LIBM = {"exp", "exp2", "log", "log1p", "expm1", "tanh", "logistic", "sin", "cos", "tan", "asin", "acos", "atan",
        "sinh", "cosh", "asinh", "acosh", "atanh", "rsqrt", "cbrt", "erf", "erfc", "erf_inv", "pow", "atan2"}
# The special functions (core/ops/scalar_special.h), compared with the libm tolerance too: they are
# built on libm (exp, log, pow, tan, lgamma: CUDA's differ from glibc's in the last bits), and the CPU
# computes their double intermediates with subnormals flushed, which CUDA's float64 does not (nor
# this emulation). That the CPU loops and generated code compute one definition bit for bit, in one
# environment, is tests/test_scalar_ops.py's check.
SPECIAL = {"lgamma", "digamma", "bessel_i0e", "bessel_i1e", "igamma", "igammac", "igamma_grad_a", "polygamma",
           "zeta", "regularized_incomplete_beta"}


def special_sample(rng, dtype, n=64):
    """Values that exercise each op's rules: zeros, infinities, NaN, subnormals, integer extremes."""
    dt = _NP_DTYPES[dtype]
    if dt == np.bool_:
        return rng.integers(0, 2, n).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        x = np.frombuffer(rng.bytes(n * dt.itemsize), dt).copy()
        x[n // 2:] = rng.integers(max(info.min, -9), 10, n - n // 2).astype(dt)  # small: shift amounts, divisors
        specials = [info.min, info.max, 0, 1, info.max if info.min == 0 else -1, 3, info.bits - 1, info.bits,
                    info.bits + 1]
        x[:len(specials)] = np.array([int(v) for v in specials], dtype=object).astype(dt)
        return x
    x = rng.standard_normal(n) * 4
    tiny = 1e-40 if dtype == "float32" else 1e-310 if dtype == "float64" else 1e-6
    specials = [0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -2.5, np.inf, -np.inf, np.nan, tiny, -tiny, 1e4, 0.9, -0.9]
    x[:len(specials)] = specials
    return x.astype(dt)


def one_op_variants(op, arity, dtype):
    """[(inputs dtypes, attrs)] of op over dtype (its first operand's)."""
    if op == "convert_element_type":
        return [([dtype], dict(new_dtype=t)) for t in ALL_DTYPES]
    if op == "bitcast_convert_type":
        return [([dtype], dict(new_dtype=t)) for t in ALL_DTYPES
                if _NP_DTYPES[t].itemsize == _NP_DTYPES[dtype].itemsize and (t == "bool") == (dtype == "bool")]
    if op == "select_n":
        return [(["bool", dtype, dtype], {}), (["int32", dtype, dtype, dtype], {})] if dtype != "bool" else \
            [(["bool", "bool", "bool"], {})]
    if op == "integer_pow":
        return [([dtype], dict(y=3)), ([dtype], dict(y=0)), ([dtype], dict(y=-2))]
    if op == "round":
        return [([dtype], dict(rounding_method=0)), ([dtype], dict(rounding_method=1))]
    return [([dtype] * max(arity, 1), {})]


def accepted(op, types, attrs):
    """Whether the op's shape rule takes these operands, for a result the CUDA backend computes (it has
    no complex numbers yet: test_complex_graphs_are_refused)."""
    try:
        outs = _core.infer(op, [((8,), t) for t in types], attrs)
    except Exception:  # the op's shape rule refuses these operands
        return False
    return not any(d.startswith("complex") for d in list(types) + [t[1] for t in outs])


def one_op_cases():
    rng = np.random.default_rng(7)
    cases = []
    for op, arity in elementwise_ops():
        for dtype in ALL_DTYPES:
            for k, (types, attrs) in enumerate(one_op_variants(op, arity, dtype)):
                if not accepted(op, types, attrs):
                    continue
                g = _core.Graph()
                params = [g.parameter((64,), t) for t in types]
                inputs = [special_sample(rng, t) for t in types]
                if op == "select_n" and types[0] == "int32":
                    inputs[0] = rng.integers(-2, 5, 64).astype(np.int32)  # outside [0, n): the nearest case
                g.set_outputs(g.add(op, params, attrs))
                cases.append(Case(f"{op}-{dtype}-{k}", g, inputs, [op not in LIBM | SPECIAL]))
    return cases


# ---- running a program group by group on the emulator
def group_plan(program, group):
    if group["fused"]:
        return group["plan"]
    types = [program["value_types"][v] for v in group["inputs"]]
    return emu.plan(group["op"], types, group["attrs"])  # a node outside fused groups: its own kernel


def build_batches(cases, parts=2):
    """Compiles every case's plans into `parts` translation units (built in parallel)."""
    batches = [FusedBatch() for _ in range(parts)]
    for i, case in enumerate(cases):
        b = batches[i % parts]
        case.batch = b
        case.plan_ids = [b.add(group_plan(case.program, grp)) for grp in case.program["groups"]]
    with concurrent.futures.ThreadPoolExecutor(parts) as ex:
        list(ex.map(lambda b: b.build(), batches))


def run_emulated(case, order="forward"):
    prog = case.program
    values = dict(zip(prog["parameters"], case.inputs))
    for vid, data in prog["constants"].items():
        shape, dt = prog["value_types"][vid]
        values[vid] = np.frombuffer(data, _NP_DTYPES.get(dt) or np.dtype(dt)).reshape(shape)
    for grp, k in zip(prog["groups"], case.plan_ids):
        outs = case.batch.run(k, [values[v] for v in grp["inputs"]], order)
        values.update(zip(grp["outputs"], outs))
    return [values[v] for v in prog["outputs"]]


def run_cpu(case):
    exe = _core.compile(case.graph)
    return [to_numpy(r) for r in exe.run([to_core(x) for x in case.inputs])]


RTOL = {"float64": 1e-9, "float32": 1e-4, "float16": 3e-2, "bfloat16": 1e-1}


def flush_subnormals(x):
    return np.where(np.abs(x) < np.finfo(x.dtype).tiny, np.copysign(np.zeros_like(x), x), x)


def compare(got, want, exact, what):
    assert got.shape == want.shape and got.dtype == want.dtype, (what, got.shape, got.dtype, want.shape, want.dtype)
    is_float = got.dtype.kind == "f" or got.dtype == np.dtype(ml_dtypes.bfloat16)
    if not is_float:
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    g64, w64 = got.astype(np.float64), want.astype(np.float64)
    nan = np.isnan(w64)
    np.testing.assert_array_equal(np.isnan(g64), nan, err_msg=f"{what}: NaN positions")
    if exact:  # the same bits (zeros' signs included), NaNs aside
        if got.dtype in (np.float32, np.float64):  # a subnormal and a zero are one value under FTZ
            got, want = flush_subnormals(got), flush_subnormals(want)
        bits = np.dtype(f"u{got.dtype.itemsize}")
        np.testing.assert_array_equal(np.where(nan, 0, got.view(bits)), np.where(nan, 0, want.view(bits)), err_msg=what)
        return
    rtol = RTOL[str(want.dtype)]
    finite = w64[np.isfinite(w64)]
    scale = max(1.0, float(np.max(np.abs(finite)))) if finite.size else 1.0
    np.testing.assert_allclose(g64, w64, rtol=rtol, atol=rtol * scale, err_msg=what)


@pytest.fixture(scope="module")
def cases():
    rnd = random_cases()
    ops = one_op_cases()
    build_batches(rnd + ops)
    return {c.cid: c for c in rnd + ops}


RANDOM_IDS = [f"graph{s}" for s in range(NUM_RANDOM_GRAPHS)]


@pytest.mark.parametrize("order", emu.ORDERS)
@pytest.mark.parametrize("cid", RANDOM_IDS)
def test_random_fused_graph(cases, cid, order):
    case = cases[cid]
    got, want = run_emulated(case, order), run_cpu(case)
    assert len(got) == len(want)
    for k, (g, w, exact) in enumerate(zip(got, want, case.exact)):
        compare(g, w, exact, f"{cid} output {k}\n{case.graph.text()}\n" +
                "\n".join(grp.get("spec", grp.get("op", "")) for grp in case.program["groups"]))


def test_random_graphs_make_fused_kernels(cases):
    """Nearly every random graph keeps fused kernels after the passes (a few simplify to nothing),
    many with reductions, some in two stages."""
    programs = [cases[cid].program for cid in RANDOM_IDS]
    plans = [[grp["plan"] for grp in p["groups"] if grp["fused"]] for p in programs]
    assert sum(1 for ps in plans if ps) >= 0.95 * NUM_RANDOM_GRAPHS
    assert sum(1 for ps in plans if any("acc0" in p["source"] for p in ps)) >= NUM_RANDOM_GRAPHS // 3
    assert sum(1 for ps in plans if any(len(p["launches"]) == 2 for p in ps)) >= 10
    assert sum(1 for ps in plans if len(ps) >= 2) >= 10


def test_every_elementwise_op(cases):
    """Every elementwise op, per accepted dtype, as a one-op fused kernel."""
    one_op = [c for cid, c in cases.items() if not cid.startswith("graph")]
    failures = []
    for case in one_op:
        groups = case.program["groups"]
        if not groups:  # an identity (a conversion to the same dtype): simplified away
            assert case.program["outputs"] == case.program["parameters"], case.cid
            continue
        assert len(groups) == 1 and groups[0]["fused"], (case.cid, groups)
        try:
            compare(run_emulated(case)[0], run_cpu(case)[0], case.exact[0], case.cid)
        except AssertionError as e:
            failures.append(str(e)[:1500])
    assert not failures, f"{len(failures)} of {len(one_op)} one-op kernels differ:\n" + "\n".join(failures[:8])
    covered = {c.cid.split("-")[0] for c in one_op}
    complex_only = {"real", "imag", "conj", "complex"}  # (no complex numbers on CUDA yet)
    assert covered >= {op for op, _ in elementwise_ops()} - complex_only


def test_only_sources_with_a_special_function_carry_its_definitions(cases):
    """The special functions' text is long: the sources of the other kernels go without it."""
    special_text = _core.scalar_special_source()
    carried = 0
    for cid, case in cases.items():
        for grp in case.program["groups"]:
            if grp["fused"]:
                uses = any(re.search(rf"\b{op}\b", grp["spec"]) for op in SPECIAL)
                assert (special_text in grp["plan"]["source"]) == uses, (cid, grp["spec"])
                carried += uses
    assert carried >= 4 * len(SPECIAL)  # the one-op kernels at least


@pytest.mark.skipif(emu.nvcc_path() is None, reason="nvcc is not installed")
def test_nvcc_compiles_every_fused_kernel(cases):
    """Every generated fused kernel, as one .cu per architecture (the two compiled at once)."""
    plans = [grp["plan"] for c in cases.values() for grp in c.program["groups"] if grp["fused"]]
    unique = list({p["source"]: p for p in plans if p["launches"]}.values())
    assert len(unique) > 900
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        cubins = list(ex.map(lambda arch: nvcc_compile(unique, arch), ["sm_80", "sm_90"]))
    assert all(c.stat().st_size > 0 for c in cubins)


@pytest.mark.skipif(not nvrtc.available(), reason="NVRTC is not installed")
def test_nvrtc_compiles_the_random_graphs_kernels_as_the_executor_does(cases):
    """Each fused source of the random graphs on its own, as RawModule gets it (self-contained text, the
    executor's options); the one-op kernels differ from these only in their step expression."""
    from xjax._src.gpu import cuda

    sources = [grp["plan"]["source"] for cid, c in cases.items() if cid.startswith("graph")
               for grp in c.program["groups"] if grp["fused"] and grp["plan"]["launches"]]
    ptxs = nvrtc.compile_all(sources, cuda._NVRTC_OPTIONS + ("-arch=compute_80",))
    assert len(ptxs) > 200 and all(".entry" in p for p in ptxs)


# ---- the plan's shape
def program_of(build):
    g = _core.Graph()
    g.set_outputs(build(g))
    return _core.cuda_fused_kernels(g)


def test_reduction_plan_two_stages_and_index_width():
    def build(g, shape, dtype="float32"):
        x = g.parameter(shape, dtype)
        (e,) = g.add("neg", [x], {})
        return g.add("reduce_sum", [e], dict(axes=[1]))

    (grp,) = program_of(lambda g: build(g, (3, 100000)))["groups"]
    p = grp["plan"]
    assert grp["fused"] and [launch["name"] for launch in p["launches"]] == ["xjax_fused", "xjax_fused_finish"]
    assert p["launches"][0]["params"] == ["in0", "out0", "tmp0"] and p["launches"][1]["params"] == ["tmp0", "out0"]
    assert p["scratch"] and p["scratch"][0] % (3 * 4) == 0 and "typedef int ix;" in p["source"]
    (grp,) = program_of(lambda g: build(g, (3, 8)))["groups"]
    assert len(grp["plan"]["launches"]) == 1 and grp["plan"]["scratch"] == []  # short rows: one block each
    (grp,) = program_of(lambda g: build(g, (2, 2 ** 30), "int8"))["groups"]
    assert "typedef long long ix;" in grp["plan"]["source"]


def test_empty_index_space_launches_nothing():
    def build(g):
        x = g.parameter((0, 4), "float32")
        return g.add("sin", [x], {})

    (grp,) = program_of(build)["groups"]
    assert grp["fused"] and grp["plan"]["launches"] == [] and grp["plan"]["outputs"] == [((0, 4), "float32")]


def test_empty_reductions_give_identities():
    """Reductions over an empty axis: every output is the identity (no element reaches the fold)."""
    cases = []
    for op, dt in [("reduce_sum", "float16"), ("reduce_max", "float32"), ("reduce_min", "int8"),
                   ("reduce_prod", "uint32"), ("reduce_and", "bool"), ("reduce_or", "int32"), ("reduce_max", "bool")]:
        g = _core.Graph()
        x = g.parameter((3, 0, 2), dt)
        (y,) = g.add("neg" if dt != "bool" else "bitwise_not", [x], {})
        g.set_outputs(g.add(op, [y], dict(axes=[1])))
        cases.append(Case(f"{op}-{dt}", g, [np.zeros((3, 0, 2), _NP_DTYPES[dt])], [True]))
    build_batches(cases, parts=1)
    for case in cases:
        assert [grp["fused"] for grp in case.program["groups"]] == [True], case.cid
        compare(run_emulated(case)[0], run_cpu(case)[0], True, case.cid)
