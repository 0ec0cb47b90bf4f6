"""Complex values in fused CPU kernels: chains of complex and mixed real/complex elementwise ops, and
reductions of complex values, run as one kernel whose bits are those of the ops run one by one, do not
depend on the thread count, and agree with NumPy's complex128."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xjax as jax
import xjax.numpy as jnp
from isolated import digests_by_thread_count
from xjax import _core

CDTYPES = ["complex64", "complex128"]
PART = {"complex64": "float32", "complex128": "float64"}
# Unary ops kept within moderate values, so that chains of them stay finite.
UNARY = ["neg", "conj", "exp", "log", "sqrt", "sign", "square", "expm1", "log1p", "logistic", "tanh", "sin"]
BINARY = ["add", "sub", "mul", "div"]
NP_FN = {"neg": np.negative, "conj": np.conj, "exp": np.exp, "log": np.log, "sqrt": np.sqrt,
         "sign": lambda z: np.where(z == 0, 0, z / np.where(z == 0, 1, np.abs(z))), "square": np.square,
         "expm1": np.expm1, "log1p": np.log1p, "logistic": lambda z: 1 / (1 + np.exp(-z)), "tanh": np.tanh,
         "sin": np.sin, "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}


def to_core(x):
    x = np.ascontiguousarray(x)
    return _core.Array.from_buffer(x.reshape(-1).view(np.uint8), x.shape, x.dtype.name)


def to_numpy(a):
    return a.bytes_view().view(np.dtype(a.dtype)).reshape(a.shape)


class Graph:
    def __init__(self):
        self.g = _core.Graph()

    def param(self, shape, dtype):
        return self.g.parameter(tuple(shape), dtype)

    def const(self, value, dtype):
        value = np.asarray(value, dtype)
        return self.g.add("constant", [], {"dtype": dtype, "shape": list(value.shape), "data": value.tobytes()})[0]

    def __getattr__(self, op):
        return lambda *inputs, **attrs: self.g.add(op, list(inputs), attrs)[0]

    def bcast(self, x, shape, dims):
        return self.g.add("broadcast_in_dim", [x], {"shape": list(shape), "broadcast_dimensions": list(dims)})[0]


def run_both(b, outs, *args):
    """The outputs fused and op by op (bytes must agree), and the fused executable."""
    b.g.set_outputs(list(outs))
    fused = _core.compile(b.g)
    unfused = _core.compile(b.g, fuse=False)
    r1 = [to_numpy(r) for r in fused.run([to_core(a) for a in args])]
    r2 = [to_numpy(r) for r in unfused.run([to_core(a) for a in args])]
    for x, y in zip(r1, r2):
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes()
    return r1, fused


def crandn(rng, shape, dtype, scale=1.0):
    return ((rng.standard_normal(shape) + 1j * rng.standard_normal(shape)) * scale).astype(dtype)


def close(got, want, dtype, tol=None):
    tol = tol or (2e-5 if dtype in ("complex64", "float32") else 1e-12)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@settings(max_examples=25, deadline=None)
@given(dtype=st.sampled_from(CDTYPES), n=st.integers(1, 3000), seed=st.integers(0, 2**16),
       chain=st.lists(st.tuples(st.sampled_from(UNARY + BINARY), st.integers(0, 2)), min_size=1, max_size=6))
def test_chains_fuse_into_one_kernel_with_the_bits_of_the_ops_alone(dtype, n, seed, chain):
    rng = np.random.default_rng(seed)
    args = [crandn(rng, (n,), dtype, 0.5) for _ in range(3)]
    b = Graph()
    ps = [b.param((n,), dtype) for _ in range(3)]
    vals, steps = list(ps), []  # every step's result is an output, checked against NumPy on its operands
    for op, k in chain:
        operands = [len(vals) - 1] + ([k] if op in BINARY else [])
        vals.append(getattr(b, op)(*(vals[i] for i in operands)))
        steps.append((op, operands))
    outs, exe = run_both(b, vals[3:], *args)
    assert exe.num_kernels <= 1, exe.plan_text()  # (none where the chain simplifies away: neg(neg(x)))
    got = list(args) + outs
    for (op, operands), out in zip(steps, outs):
        assert out.dtype == np.dtype(dtype)
        with np.errstate(all="ignore"):
            ref = NP_FN[op](*(got[i].astype(np.complex128) for i in operands))
        # (where an operand overflowed earlier in the chain, JAX's values, which xjax gives, are not
        # C99's that NumPy gives: exp(-inf + inf j) is nan + nan j in JAX, 0 in NumPy)
        ok = np.isfinite(ref) & (np.abs(ref) < 1e6) & np.all([np.isfinite(got[i]) for i in operands], axis=0)
        tol = 1e-4 if dtype == "complex64" else 1e-12
        np.testing.assert_allclose(out[ok], ref[ok], rtol=tol, atol=tol, err_msg=op)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_mixed_real_and_complex_fuse(dtype):
    """real, imag, abs, complex and converts in both directions, in one kernel with complex arithmetic."""
    part, n = PART[dtype], 2000
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(n).astype(part), rng.standard_normal(n).astype(part)
    z = crandn(rng, (n,), dtype)
    b = Graph()
    px, py, pz = b.param((n,), part), b.param((n,), part), b.param((n,), dtype)
    c = b.mul(b.complex(px, py), pz)                                  # (x + iy) z
    a = b.add(b.abs(c), b.real(c))                                     # |c| + re c, real
    m = b.mul(b.convert_element_type(a, new_dtype=dtype), b.conj(c))   # real -> complex
    r = b.convert_element_type(m, new_dtype="int32")                   # complex -> real keeps re
    i = b.imag(m)
    w = b.convert_element_type(b.exp(c), new_dtype="complex128" if dtype == "complex64" else "complex64")
    (c_, a_, m_, r_, i_, w_), exe = run_both(b, [c, a, m, r, i, w], x, y, z)
    assert exe.num_kernels == 1, exe.plan_text()
    cr = (x + 1j * y).astype(np.complex128) * z
    ar = np.abs(cr) + cr.real
    mr = ar * np.conj(cr)
    close(c_, cr, dtype), close(a_, ar, part), close(m_, mr, dtype)
    np.testing.assert_array_equal(r_, m_.real.astype(np.int32))
    np.testing.assert_array_equal(i_, m_.imag)
    close(w_, np.exp(cr), "complex64")  # (computed or stored in complex64)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_strided_broadcast_and_constant_operands_fuse_as_loads(dtype):
    """Gathered reads of 16- and 8-byte elements (a strided slice, a broadcast row) and a complex constant."""
    rng = np.random.default_rng(2)
    x, row = crandn(rng, (107, 40), dtype), crandn(rng, (37,), dtype)
    k = np.asarray(0.5 - 2j, dtype)
    b = Graph()
    px, prow = b.param((107, 40), dtype), b.param((37,), dtype)
    t = b.slice(px, start_indices=[1, 3], limit_indices=[107, 40], strides=[2, 1])
    v = b.add(b.mul(t, b.bcast(prow, (53, 37), [1])), b.bcast(b.const(k, dtype), (53, 37), []))
    (out,), exe = run_both(b, [b.exp(v)], x, row)
    assert exe.num_kernels == 1, exe.plan_text()
    close(out, np.exp(x[1::2, 3:].astype(np.complex128) * row + complex(k)), dtype)


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("shape,axes", [((70000,), [0]), ((3, 50000), [1]), ((40000, 3), [0]), ((5, 7, 9), [1]),
                                        ((300, 200), [0, 1]), ((0, 4), [0])])
@pytest.mark.parametrize("op", ["reduce_sum", "reduce_prod", "reduce_max"])
def test_reductions_of_fused_values(dtype, shape, axes, op):
    rng = np.random.default_rng(3)
    z = crandn(rng, shape, dtype, 0.5)
    b = Graph()
    pz = b.param(shape, dtype)
    v = b.add(b.exp(b.mul(pz, pz)), pz)  # exp(z^2) + z
    (out, vals), exe = run_both(b, [getattr(b, op)(v, axes=axes), v], z)
    assert exe.num_kernels == 1, exe.plan_text()
    want = vals.astype(np.complex128)
    if op == "reduce_sum":
        close(out, want.sum(axis=tuple(axes)), dtype, 1e-4 if dtype == "complex64" else 1e-10)
    elif op == "reduce_prod":  # |exp(z^2) + z| stays near 1: the product neither overflows nor vanishes
        if shape[axes[0]] < 100:
            close(out, want.prod(axis=tuple(axes)), dtype, 1e-4 if dtype == "complex64" else 1e-10)
    else:  # lexicographic max, as NumPy orders complex numbers
        np.testing.assert_array_equal(out, vals.max(axis=tuple(axes)) if vals.size else out)


def test_jitted_chain_matches_numpy():
    rng = np.random.default_rng(4)
    x = rng.standard_normal(10000).astype(np.float32)
    z, w = crandn(rng, (10000,), "complex64"), crandn(rng, (10000,), "complex64")
    f = jax.jit(lambda x, z, w: jnp.exp(1j * x) * z + w)
    out = np.asarray(f(x, z, w))
    assert out.dtype == np.complex64
    close(out, np.exp(1j * x.astype(np.float64)) * z + w, "complex64")
    g = jax.jit(lambda z: jnp.sum(jnp.abs(z) ** 2 + jnp.real(z * jnp.conj(z))))
    close(np.asarray(g(z)), 2 * np.sum(np.abs(z.astype(np.complex128)) ** 2), "float32", 1e-4)


def test_bits_do_not_depend_on_the_thread_count():
    code = """
        import hashlib
        import numpy as np
        import xjax as jax, xjax.numpy as jnp
        rng = np.random.default_rng(5)
        x = rng.standard_normal(300000).astype(np.float32)
        z = (rng.standard_normal(300000) + 1j * rng.standard_normal(300000)).astype(np.complex64)
        f = jax.jit(lambda x, z: (jnp.exp(1j * x) * z + z, jnp.sum(jnp.exp(1j * x) * z),
                                  jnp.sum((jnp.exp(1j * x) * z).reshape(3, -1), axis=0)))
        out = f(x, z)
        print(hashlib.sha1(b"".join(np.asarray(o).tobytes() for o in out)).hexdigest())
    """
    one, three = digests_by_thread_count(code)
    assert one == three


@pytest.mark.parametrize("dtype", CDTYPES)
def test_a_value_has_the_same_bits_alone_and_inside_an_array(dtype):
    """Vectorised loops and their scalar tails round alike (no vfmaddsub: see src/core/CMakeLists.txt)."""
    rng = np.random.default_rng(6)
    z = crandn(rng, (203,), dtype)
    z[::17] = z[::17].real  # real arguments: exp's own branch
    for op in UNARY + BINARY + ["pow", "abs", "real", "eq"]:
        def run(a, op=op):
            g = Graph()
            q = g.param(a.shape, dtype)
            g.g.set_outputs([getattr(g, op)(q, q) if op in BINARY + ["pow", "eq"] else getattr(g, op)(q)])
            return to_numpy(_core.compile(g.g).run([to_core(a)])[0])
        whole = run(z)
        for start in (1, 5):
            np.testing.assert_array_equal(run(z[start:]).view(np.uint8), whole[start:].view(np.uint8), err_msg=op)
        alone = np.concatenate([run(z[i:i + 1]) for i in range(0, 203, 7)])
        np.testing.assert_array_equal(alone.view(np.uint8), whole[::7].copy().view(np.uint8), err_msg=op)
