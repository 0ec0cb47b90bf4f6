"""Complex values in generated CUDA, without a GPU: fused kernels of complex and mixed real/complex ops
and the element-moving layout kernels, compiled as host C++ under the emulation header and run on
NumPy buffers, give the CPU's bits (both compute ops/scalar_complex.h's definitions); their sources
compile with NVRTC and nvcc; what the GPU cannot do with complex values yet is a NotImplementedError."""
import numpy as np
import pytest

import cuda_emulation as emu
import nvrtc
import test_cuda_fused as tcf
from gpu_runtime import gpu, to_gpu  # noqa: F401 - the fixture
from test_complex_fusion import Graph
from xjax import _core


def crandn(rng, shape, dtype):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def fused_graph(n=300):
    """exp(1j x) z + w and mixed real/complex steps, with complex constants: one fused group."""
    b = Graph()
    x, z, w = b.param((n,), "float32"), b.param((n,), "complex64"), b.param((n,), "complex128")
    j = b.bcast(b.const(np.asarray(1j, np.complex64), "complex64"), (n,), [])
    e = b.add(b.mul(b.exp(b.mul(j, b.convert_element_type(x, new_dtype="complex64"))), z),
              b.convert_element_type(w, new_dtype="complex64"))
    k = b.bcast(b.const(np.asarray(0.5 - 2j, np.complex128), "complex128"), (n,), [])
    outs = [e, b.abs(e), b.real(e), b.complex(b.imag(e), x), b.convert_element_type(e, new_dtype="int32"),
            b.convert_element_type(e, new_dtype="bool"), b.sqrt(b.log(b.mul(w, k))), b.integer_pow(z, y=-3),
            b.div(z, e), b.eq(z, e), b.select_n(b.gt(x, b.bcast(b.const(np.float32(0), "float32"), (n,), [])), z, e),
            b.logistic(b.sign(z)), b.pow(w, b.expm1(w)), b.max(z, e), b.atan2(z, e), b.clamp(z, e, b.neg(z))]
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(n).astype(np.float32), crandn(rng, (n,), np.complex64),
              crandn(rng, (n,), np.complex128)]
    inputs[1][:7] = [0, np.inf, -0.0, 1j * np.inf, np.nan, 2.5, -1]  # special values, and real arguments
    b.g.set_outputs(outs)
    return tcf.Case("complex", b.g, inputs, [True] * len(outs))


def layout_graph():
    b = Graph()
    z, w = b.param((6, 5), "complex64"), b.param((5, 6), "complex128")
    t = b.transpose(w, permutation=[1, 0])
    pad_value = b.const(np.asarray(1 - 2j, np.complex64), "complex64")
    outs = [t, b.slice(z, start_indices=[1, 0], limit_indices=[6, 5], strides=[2, 2]),
            b.pad(z, pad_value, padding_config=[1, 0, 0, 0, 2, 1]), b.concatenate(z, z, dimension=0),
            b.rev(t, dimensions=[0]), b.reshape(w, new_sizes=[3, 10])]
    b.g.set_outputs(outs)
    rng = np.random.default_rng(1)
    return tcf.Case("layout", b.g, [crandn(rng, (6, 5), np.complex64), crandn(rng, (5, 6), np.complex128)],
                    [True] * len(outs))


@pytest.fixture(scope="module")
def cases():
    cs = [fused_graph(), layout_graph()]
    tcf.build_batches(cs, parts=1)
    return {c.cid: c for c in cs}


def test_complex_chains_are_one_fused_kernel(cases):
    assert [grp["fused"] for grp in cases["complex"].program["groups"]] == [True]


@pytest.mark.parametrize("order", emu.ORDERS)
@pytest.mark.parametrize("cid", ["complex", "layout"])
def test_kernels_give_the_cpus_bits(cases, cid, order):
    case = cases[cid]
    got, want = tcf.run_emulated(case, order), tcf.run_cpu(case)
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype and g.shape == w.shape, k
        if g.dtype.kind == "c":  # parts as floats: a NaN's sign and payload are unspecified (scalar_ops.h)
            g, w = g.view(g.real.dtype), w.view(w.real.dtype)
        if g.dtype.kind == "f":
            np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=str(k))
            g, w = np.where(np.isnan(g), 0, g), np.where(np.isnan(w), 0, w)
        assert g.tobytes() == w.tobytes(), (k, g[:8], w[:8])


def _sources(cases):
    return [grp["plan"]["source"] for c in cases.values() for grp in c.program["groups"]
            if grp["fused"] and grp["plan"]["launches"]] + \
           [tcf.group_plan(c.program, grp)["source"] for c in cases.values() for grp in c.program["groups"]
            if not grp["fused"]]


@pytest.mark.skipif(not nvrtc.available(), reason="NVRTC is not installed")
def test_nvrtc_compiles_the_complex_kernels_as_the_executor_does(cases):
    from xjax._src.gpu import cuda

    ptxs = nvrtc.compile_all(_sources(cases), cuda._NVRTC_OPTIONS + ("-arch=compute_80",))
    assert len(ptxs) >= 5 and all(".entry" in p for p in ptxs)


@pytest.mark.skipif(emu.nvcc_path() is None, reason="nvcc is not installed")
def test_nvcc_compiles_the_complex_kernels(cases):
    plans = [grp["plan"] for c in cases.values() for grp in c.program["groups"] if grp["fused"]]
    assert tcf.nvcc_compile(plans, "sm_90").stat().st_size > 0


def _gpu_plan(build):
    b = Graph()
    b.g.set_outputs(build(b))
    return _core.cuda_plan(b.g)


@pytest.mark.parametrize("op", ["sin", "tanh", "acosh"])
def test_host_only_functions_are_refused(op):
    """The trigonometric and hyperbolic families are the C library's (scalar_complex.h): host only."""
    with pytest.raises(NotImplementedError, match=op):
        _gpu_plan(lambda b: [getattr(b, op)(b.param((8,), "complex64"))])


@pytest.mark.parametrize("op", ["reduce_sum", "reduce_prod", "reduce_max"])
def test_complex_reductions_are_refused(op):
    with pytest.raises(NotImplementedError, match="complex"):
        _gpu_plan(lambda b: [getattr(b, op)(b.exp(b.param((8, 3), "complex64")), axes=[1])])
    with pytest.raises(NotImplementedError, match="complex"):
        emu.plan("cumsum", [((8,), "complex64")], {"axis": 0, "reverse": False})


# ---- fft on cuFFT through cupy.fft (the emulated CuPy's: NumPy's, rounded to CuPy's dtypes) ----

@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_fft_runs_on_the_gpu_as_on_the_cpu(gpu, dtype):
    import xjax
    import xjax.numpy as jnp
    from xjax._src.gpu.gpu_array import GpuArray

    if dtype == "complex128" and not xjax.config.jax_enable_x64:
        xjax.config.update("jax_enable_x64", True)
        restore = True
    else:
        restore = False
    try:
        rng = np.random.default_rng(2)
        z = crandn(rng, (3, 8, 6), dtype)
        x = z.real.copy()
        fns = {"fft": lambda a: jnp.fft.fft(a, axis=1), "ifft2": lambda a: jnp.fft.ifft2(a, norm="ortho"),
               "fftn": lambda a: jnp.fft.fftn(a, s=(4, 5), axes=(0, 2)), "rfft": lambda a: jnp.fft.rfft(a.real, n=10),
               "irfftn": lambda a: jnp.fft.irfftn(a, axes=(1, 2)), "jit": xjax.jit(lambda a: jnp.fft.fft(a) * 2)}
        for name, f in fns.items():
            want = np.asarray(f(z))
            got = f(to_gpu(z, gpu))
            assert type(got) is GpuArray and got.dtype == want.dtype and got.shape == want.shape, name
            tol = 1e-5 if dtype == "complex64" else 1e-12
            np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol * np.abs(want).max(), err_msg=name)
        got = jnp.fft.rfft(to_gpu(x, gpu))
        np.testing.assert_allclose(np.asarray(got), np.fft.rfft(x), rtol=1e-5, atol=1e-5)
    finally:
        if restore:
            xjax.config.update("jax_enable_x64", False)


# The trigonometric and hyperbolic families and their inverses: the host's C library (scalar_complex.h).
HOST_ONLY = {"sin", "cos", "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh", "atanh"}


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_every_complex_op_but_the_host_only_ones_has_an_expression(dtype):
    import test_scalar_ops

    accepted, wrong = 0, []
    for op, arity in test_scalar_ops._elementwise_ops():
        n = {"select_n": 3}.get(op, arity)
        ins = ["bool", dtype, dtype] if op == "select_n" else [dtype] * n
        attrs = {"y": 3} if op == "integer_pow" else {"new_dtype": "float32"} if op == "convert_element_type" else {}
        try:
            ((_, out),) = _core.infer(op, [((4,), d) for d in ins], attrs)
        except Exception:  # not an op on complex values
            continue
        accepted += 1
        expression = _core.scalar_expression(op, ins, out, attrs, [f"x{k}" for k in range(len(ins))])
        if bool(expression) != (op not in HOST_ONLY):
            wrong.append((op, expression))
    assert accepted >= 35 and not wrong, wrong
