"""The CUDA executor (gpu/cuda.py) end to end: jit and eager primitives on GPU arrays run the GPU
plan -- generated CUDA, CuPy library calls, control flow, callbacks -- and give GPU arrays equal to
what the CPU computes from the same inputs.

Runs on the emulated runtime (tests/emulated_cupy.py: the generated CUDA compiled as host C++ under
the emulation header) everywhere, and again on a real GPU where there is one (see gpu_runtime).
"""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax._src.gpu.gpu_array import GpuArray
from gpu_runtime import gpu, to_gpu  # noqa: F401 - the fixture

RNG = np.random.default_rng(7)


def _leaves(tree):
    return xjax.tree_util.tree_leaves(tree)


def check(fun, *args, gpu, rtol=2e-6, atol=1e-6):
    """fun on GPU copies of args gives GPU arrays on gpu matching fun on the CPU; returns the GPU results."""
    want = fun(*args)
    got = fun(*xjax.tree_util.tree_map(lambda a: to_gpu(a, gpu), args))
    assert xjax.tree_util.tree_structure(got) == xjax.tree_util.tree_structure(want)
    for g, w in zip(_leaves(got), _leaves(want)):
        assert type(g) is GpuArray and g.device is gpu, type(g)
        assert (g.dtype, g.shape, g.weak_type) == (w.dtype, w.shape, w.weak_type)
        gv, wv = np.asarray(g), np.asarray(w)
        if np.issubdtype(wv.dtype, np.inexact) or wv.dtype.name == "bfloat16":
            np.testing.assert_allclose(gv.astype(np.float64), wv.astype(np.float64), rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(gv, wv)
    return got


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def test_elementwise_and_reductions(gpu):
    @xjax.jit
    def f(x, y):
        z = jnp.sin(x) * y + 1.0
        return (jnp.sum(z, axis=1), jnp.max(x, axis=0), jnp.mean(x * x), (x > 0.5).astype(jnp.int32),
                jnp.exp(x) - y[:, :1], jnp.sum(x, axis=(0, 2)), jnp.argmax(x, axis=1))

    check(f, f32(5, 7, 3), f32(5, 7, 3), gpu=gpu)


def test_integers_and_16_bit_floats(gpu):
    @xjax.jit
    def f(a, h, b):
        return a // 3, a % 5, a << 2, h * 2 + 1, jnp.sum(h), b * b - 1, jnp.max(b), a.astype(jnp.float16)

    a = RNG.integers(-50, 50, (4, 9)).astype(np.int32)
    h = f32(4, 9).astype(np.float16)
    b = f32(4, 9).astype(jnp.bfloat16)
    check(f, a, h, b, gpu=gpu, rtol=1e-2, atol=1e-2)


def test_while_loop_and_fori_loop(gpu):
    @xjax.jit
    def f(x, n):
        def body(c):
            i, v = c
            return i + 1, v * 0.5 + jnp.cos(v)
        _, v = lax.while_loop(lambda c: c[0] < n, body, (0, x))
        s = lax.fori_loop(0, 4, lambda i, acc: acc + i * x, jnp.zeros_like(x))
        c, ys = lax.scan(lambda c, t: (c * 0.9 + t, c * 2), x[:2], x.reshape(3, 2))  # (stacks into `empty`)
        return v, s, c, ys

    check(f, f32(6), np.int32(5), gpu=gpu)


def test_cond_and_switch(gpu):
    @xjax.jit
    def f(p, k, x):
        a = lax.cond(p, lambda t: jnp.sin(t) + 1, lambda t: t * 3, x)
        b = lax.switch(k, [lambda t: t - 1, lambda t: t * t, lambda t: -t], x)
        return a, b

    x = f32(3, 4)
    for p, k in [(True, 0), (False, 1), (True, 7)]:
        check(f, np.bool_(p), np.int32(k), x, gpu=gpu)


def test_matmul_and_dot_general(gpu):
    @xjax.jit
    def f(x, w, a, b, i, j):
        return (x @ w, jnp.einsum("bij,bjk->bik", a, b), jnp.einsum("bij,bkj->kib", a, a), i @ j,
                jnp.dot(x.astype(jnp.bfloat16), w.astype(jnp.bfloat16)), x @ w[:, 0])

    i = RNG.integers(-9, 9, (3, 4)).astype(np.int32)
    j = RNG.integers(-9, 9, (4, 2)).astype(np.int32)
    check(f, f32(5, 6), f32(6, 3), f32(2, 3, 4), f32(2, 4, 5), i, j, gpu=gpu, rtol=1e-2, atol=1e-2)
    got = xjax.jit(lambda x, w: x @ w)(to_gpu(f32(5, 6), gpu), to_gpu(f32(6, 3), gpu))
    assert got.shape == (5, 3) and type(got) is GpuArray


def _mlp_loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    out = h @ params["w2"] + params["b2"]
    return jnp.mean((out - y) ** 2)


def test_mlp_grad_step(gpu):
    @xjax.jit
    def step(params, x, y):
        loss, grads = xjax.value_and_grad(_mlp_loss)(params, x, y)
        return loss, xjax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)

    params = {"w1": f32(4, 8), "b1": f32(8), "w2": f32(8, 2), "b2": f32(2)}
    check(step, params, f32(16, 4), f32(16, 2), gpu=gpu, rtol=1e-5, atol=1e-5)


def test_training_step_as_in_seed_004(gpu):
    """seed_004's train step (value_and_grad with has_aux, log_softmax, argmax accuracy, adam) on the GPU."""
    from xjax import optim

    def model(params, x):
        for layer in params[:-1]:
            x = xjax.nn.relu(x @ layer["w"] + layer["b"])
        return x @ params[-1]["w"] + params[-1]["b"]

    def loss_and_metric(params, metric, x, y):
        logits = model(params, x)
        loss = -jnp.mean(jnp.sum(y * xjax.nn.log_softmax(logits), axis=-1))
        hits = jnp.sum(jnp.argmax(logits, axis=-1) == jnp.argmax(y, axis=-1))
        return loss, (metric[0] + hits, metric[1] + y.shape[0])

    optimizer = optim.adam(learning_rate=1e-3)

    @xjax.jit
    def train_step(state, x, y):
        params, opt_state, metric = state
        (loss, metric), grads = xjax.value_and_grad(loss_and_metric, has_aux=True)(params, metric, x, y)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return loss, (optim.apply_updates(params, updates), opt_state, metric)

    params = [{"w": f32(12, 16) * 0.3, "b": np.zeros(16, np.float32)}, {"w": f32(16, 5) * 0.3, "b": f32(5)}]
    state = xjax.tree_util.tree_map(np.asarray, (params, optimizer.init(params), (np.int32(0), np.int32(0))))
    y = np.eye(5, dtype=np.float32)[RNG.integers(0, 5, 8)]
    check(train_step, state, f32(8, 12), y, gpu=gpu, rtol=1e-5, atol=1e-6)


def test_closed_over_gpu_arrays_take_the_program_to_the_gpu(gpu):
    w = to_gpu(f32(3, 2), gpu)
    x = f32(4, 3)
    out = xjax.jit(lambda t: jnp.tanh(t @ w))(x)
    assert type(out) is GpuArray and out.device is gpu
    np.testing.assert_allclose(np.asarray(out), np.tanh(x @ np.asarray(w)), rtol=1e-5, atol=1e-6)


def test_eager_grad_on_gpu_arrays(gpu):
    x = to_gpu(np.linspace(-1, 1, 5).astype(np.float32), gpu)
    g = xjax.grad(lambda t: jnp.sum(jnp.sin(t) * t))(x)
    assert type(g) is GpuArray
    xs = np.linspace(-1, 1, 5).astype(np.float32)
    np.testing.assert_allclose(np.asarray(g), np.cos(xs) * xs + np.sin(xs), rtol=1e-5, atol=1e-6)


def test_random_bits(gpu):
    @xjax.jit
    def f(key):
        k1, k2 = xjax.random.split(key)
        return xjax.random.normal(k1, (8,)), xjax.random.bits(k2, (5,)), xjax.random.uniform(key, (3, 2))

    check(f, np.asarray(xjax.random.PRNGKey(42)), gpu=gpu)


def test_layout_and_indexing(gpu):
    @xjax.jit
    def f(x, idx, v):
        y = jnp.concatenate([x.T, x.T[::-1]], axis=0)
        return (y, jnp.pad(x, ((1, 0), (2, 1))), x[idx], x.at[idx].add(v), jnp.cumsum(x, axis=1),
                lax.dynamic_slice(x, (idx[0], 1), (2, 2)), jnp.transpose(x[None], (2, 0, 1)))

    idx = np.array([2, 0, 2], np.int32)
    check(f, f32(4, 3), idx, f32(3, 3), gpu=gpu)


def test_sort_and_top_k(gpu):
    @xjax.jit
    def f(x, k):
        return jnp.sort(x, axis=1), jnp.argsort(x, axis=0), lax.top_k(x, 2), lax.sort((k, x), num_keys=1)

    x = f32(5, 4)
    x[1, 2] = np.nan
    k = RNG.integers(0, 3, (5, 4)).astype(np.int32)
    check(f, x, k, gpu=gpu)


def test_convolution(gpu):
    @xjax.jit
    def f(x, w, g):
        a = lax.conv_general_dilated(x, w, (1, 2), "SAME", rhs_dilation=(1, 1))
        b = lax.conv_general_dilated(x, g, (1, 1), "VALID", feature_group_count=2)
        nhwc = lax.conv_general_dilated(x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0), (1, 1), [(1, 1), (0, 0)],
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return a, b, nhwc

    check(f, f32(2, 4, 5, 6), f32(3, 4, 3, 2), f32(6, 2, 2, 2), gpu=gpu, rtol=1e-5, atol=1e-5)


def test_bitcast_across_widths_round_trip(gpu):
    """float32 -> uint8[..., 4] -> float32 and float32 -> int16[..., 2]: the core's integer ops, fused."""
    @xjax.jit
    def f(x):
        b = lax.bitcast_convert_type(x, jnp.uint8)
        h = lax.bitcast_convert_type(x * 2, jnp.int16)
        return b, lax.bitcast_convert_type(b, jnp.float32) + 1, h, lax.bitcast_convert_type(h[..., ::-1], jnp.float32)

    x = f32(3, 5)
    b, back, h, swapped = check(f, x, gpu=gpu, rtol=0, atol=0)
    np.testing.assert_array_equal(np.asarray(b), x.view(np.uint8).reshape(3, 5, 4))
    np.testing.assert_array_equal(np.asarray(h), (x * 2).view(np.int16).reshape(3, 5, 2))


def test_long_scans(gpu):
    """One long line: the block scan's three launches and scratch, through the executor."""
    x = RNG.integers(-5, 6, 9000).astype(np.int32)
    check(xjax.jit(lambda v: (jnp.cumsum(v), lax.cummax(v, reverse=True))), x, gpu=gpu)
    check(xjax.jit(jnp.cumsum), f32(2, 5000), gpu=gpu, rtol=1e-5, atol=1e-3)


def test_depthwise_conv_grad_step(gpu):
    """The weight gradient of a grouped convolution is a conv with batch_group_count (im2col's batch groups)."""
    def loss(w, x):
        y = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                     feature_group_count=4)
        return jnp.mean(jnp.tanh(y) ** 2)

    @xjax.jit
    def step(w, x):
        value, g = xjax.value_and_grad(loss)(w, x)
        return value, w - 0.5 * g

    step_jaxpr = str(xjax.make_jaxpr(xjax.grad(loss))(f32(3, 3, 1, 8), f32(2, 6, 5, 4)))
    assert "batch_group_count=4" in step_jaxpr
    check(step, f32(3, 3, 1, 8), f32(2, 6, 5, 4), gpu=gpu, rtol=1e-5, atol=1e-5)


def test_eager_primitives_on_gpu_arrays(gpu):
    x = to_gpu(np.arange(6, dtype=np.float32).reshape(2, 3), gpu)
    y = x + 1
    assert type(y) is GpuArray and y.device is gpu and y.dtype == np.float32 and not y.weak_type
    np.testing.assert_array_equal(np.asarray(y), np.arange(1, 7, dtype=np.float32).reshape(2, 3))
    s = jnp.sum(jnp.sin(x))
    assert type(s) is GpuArray
    np.testing.assert_allclose(float(s), np.sin(np.arange(6.0)).sum(), rtol=1e-6)
    mixed = x * jnp.ones((2, 3))  # a CPU array goes to the GPU array's device, as an uncommitted one in JAX
    assert type(mixed) is GpuArray and mixed.device is gpu
    np.testing.assert_array_equal(np.asarray(x[1]), [3, 4, 5])
    b = lax.bitcast_convert_type(x, jnp.uint8)  # across widths: a lowering of several core ops
    assert type(b) is GpuArray and b.shape == (2, 3, 4)
    np.testing.assert_array_equal(np.asarray(b), np.arange(6, dtype=np.float32).reshape(2, 3).view(np.uint8)
                                  .reshape(2, 3, 4))


def test_host_callbacks_see_the_values(gpu, capsys):
    @xjax.jit
    def f(x):
        xjax.debug.print("x = {}", x * 2)
        return x + 1

    out = f(to_gpu(np.array([1.0, 2.0], np.float32), gpu))
    out.block_until_ready()
    np.testing.assert_array_equal(np.asarray(out), [2.0, 3.0])
    assert "x = [2. 4.]" in capsys.readouterr().out


def test_an_op_without_a_gpu_route_is_an_error_at_compile_time(gpu):
    from test_cuda_plan import all_reduce_graph
    from xjax._src.gpu import cuda

    with pytest.raises(NotImplementedError, match=r"\[cuda\] no GPU kernel for op 'all_reduce'"):
        cuda.compile_graph(all_reduce_graph(), gpu)


def test_special_functions(gpu):
    """The special functions (core/ops/scalar_special.h) in fused kernels, jitted and eager."""
    @xjax.jit
    def f(x, y, p):
        sp = xjax.scipy.special
        return (jnp.sum(sp.gammaln(x) * y, axis=0), sp.digamma(x), lax.igamma(x, y), lax.igammac(x, y),
                lax.igamma_grad_a(x, y), sp.polygamma(2, x), sp.zeta(x + 1, y), sp.i0e(y), sp.i1e(-y),
                sp.betainc(x, y, p))

    x = np.abs(f32(6, 5)) * 3 + 0.1
    y = np.abs(f32(6, 5)) * 3 + 0.1
    p = RNG.random((6, 5)).astype(np.float32)
    check(f, x, y, p, gpu=gpu, rtol=1e-5, atol=1e-6)
    check(lambda v: (xjax.scipy.special.gammaln(v), lax.lgamma(v.astype(jnp.bfloat16))), x, gpu=gpu, rtol=1e-5)


def test_arguments_on_two_gpus_are_refused(gpu):
    from xjax._src.gpu import gpu_devices

    other = gpu_devices.GpuDevice(1, {"name": b"other", "major": 9, "minor": 0})
    if gpu.platform != "gpu" or gpu_devices.cupy().__name__ != "emulated_cupy":
        pytest.skip("a second device is made on the emulated runtime only")
    with pytest.raises(ValueError, match="different GPUs"):
        to_gpu(np.ones(2, np.float32), gpu) + to_gpu(np.ones(2, np.float32), other)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_the_sources_programs_generate_compile_with_nvcc(gpu, arch, tmp_path):
    """What the executor hands to NVRTC for the programs above (the MLP step, convolutions, sorts, loops),
    compiled by nvcc with the same include path, as one translation unit."""
    import subprocess

    import cuda_emulation
    import emulated_cupy

    from xjax._src.gpu import gpu_devices

    if gpu_devices.cupy() is not emulated_cupy:
        pytest.skip("the emulated runtime collects the sources")
    if not cuda_emulation.nvcc_path():
        pytest.skip("nvcc is not installed")
    for test in (test_mlp_grad_step, test_convolution, test_depthwise_conv_grad_step,
                 test_bitcast_across_widths_round_trip, test_sort_and_top_k, test_while_loop_and_fori_loop,
                 test_layout_and_indexing, test_random_bits):
        test(gpu)
    hoisted, bodies = emulated_cupy.hoist(list(dict.fromkeys(emulated_cupy.sources)))
    text = hoisted + "".join(
        cuda_emulation._namespaced(k, {"source": body, "launches": [{"name": n} for n, _ in
                                                                    emulated_cupy._KERNEL.findall(body)]})
        for k, body in enumerate(bodies))
    (tmp_path / "k.cu").write_text(text)
    res = subprocess.run([cuda_emulation.nvcc_path(), "--cubin", f"-arch={arch}", "-w", "-std=c++17",
                          f"-I{cuda_emulation.ROOT / 'src'}", "-o", str(tmp_path / "k.cubin"), str(tmp_path / "k.cu")],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-4000:]
    assert len(bodies) >= 20


SEEDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "seed-programs")  # beside the clone


def test_the_sources_programs_generate_compile_with_nvrtc(gpu):
    """What the executor hands to RawModule for the programs above, each source compiled on its own by
    NVRTC (what CuPy runs on the GPU machine) with the executor's options, for sm_80 and sm_90."""
    import emulated_cupy
    import nvrtc

    from xjax._src.gpu import cuda, gpu_devices

    if gpu_devices.cupy() is not emulated_cupy:
        pytest.skip("the emulated runtime collects the sources")
    if not nvrtc.available():
        pytest.skip("NVRTC is not installed")
    for test in (test_mlp_grad_step, test_convolution, test_depthwise_conv_grad_step, test_special_functions,
                 test_bitcast_across_widths_round_trip, test_sort_and_top_k, test_while_loop_and_fori_loop,
                 test_layout_and_indexing, test_random_bits):
        test(gpu)
    sources = list(dict.fromkeys(emulated_cupy.sources))
    assert len(sources) >= 20
    for arch in ("compute_80", "compute_90"):
        assert all(".entry" in p for p in nvrtc.compile_all(sources, cuda._NVRTC_OPTIONS + (f"-arch={arch}",)))


@pytest.mark.skipif(not os.path.exists(SEEDS), reason="the seed programs are not on this machine")
@pytest.mark.parametrize("name, order", [("seed_000_accelerated_numpy", "forward"), ("seed_002_jit", "reverse"),
                                         ("seed_003_vmap", "reverse")])
def test_a_seed_program_on_the_emulated_gpu_prints_what_jax_printed(name, order):
    """A seed program with the emulated GPU as its default device (tests/run_on_emulated_gpu.py): its
    arrays made there, its jitted and eager work run there, blocks and threads in either order
    (emulation.h); against JAX's recorded output. (seed_004 matches too, in both orders; it takes
    minutes under the emulation.)"""
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(xjax.__file__))),
               XJAX_EMULATION_ORDER=order)
    env.pop("JAX_PLATFORMS", None)
    res = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "run_on_emulated_gpu.py"),
                          os.path.join(SEEDS, name + ".py")], capture_output=True, text=True, env=env, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    with open(os.path.join(SEEDS, "expected", name + ".txt")) as f:
        assert res.stdout == f.read()
    launches = int(re.search(r"'launches': (\d+)", res.stderr).group(1))
    assert launches > 40  # (the program's work ran on the GPU)
