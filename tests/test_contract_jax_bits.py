"""Jitted multiply-adds round where JAX's do: XLA's CPU code contracts a multiply read only by an add
or subtract into one fused multiply-add (LLVM's fp-contract=fast), and so does the compiler's
`contract` pass (src/core/compiler/contract.cpp); eager ops, one per program, are not contracted,
in JAX or here. Digests recorded from jax 0.10.2 (`jax.jit(f)` of each case, x64 on for float64)."""
import hashlib

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import _core

# (selu in float64 is left out: float64 exp is ours, not XLA's, and differs in the last bit.)
JAX_DIGESTS = {
    ("a*b+c", "float32"): "c818afe0d36239605073f6b633635a7d4f5d98d1",
    ("c+a*b", "float32"): "c818afe0d36239605073f6b633635a7d4f5d98d1",
    ("a*b-c", "float32"): "47bd7de7f5e73712049e369812ccdf93babebe56",
    ("c-a*b", "float32"): "c8173a39374c1d6a773457e2b006a2118ff9f385",
    ("neg(a*b)+c", "float32"): "c8173a39374c1d6a773457e2b006a2118ff9f385",
    ("neg(a*b)-c", "float32"): "20cb30c44247ab19384a61c68a8b1978d90967b7",
    ("c-neg(a*b)", "float32"): "c818afe0d36239605073f6b633635a7d4f5d98d1",
    ("a*b+c*a", "float32"): "29b272b70553d21d63fc6939b4bc9bb39be00009",
    ("a*b-c*a", "float32"): "3e408343bb7906a4340e02f912209ceaac289947",
    ("(a*b+c)*(a*b)", "float32"): "f3c852a927003509f6d83f00ada9c272b515bab1",
    ("a*b+1.5", "float32"): "f5cec78300b6123855e6f667f1fd54fad1df552d",
    ("selu", "float32"): "9f7aa6ea5f375e51749b90ed6d6a5625e492323c",
    ("a*b+c", "float64"): "e754742d0bdd28492f0c8dddb35d8e0549f8673e",
    ("c+a*b", "float64"): "e754742d0bdd28492f0c8dddb35d8e0549f8673e",
    ("a*b-c", "float64"): "252064d60712b5dd4fb49813c23d691d709e3d42",
    ("c-a*b", "float64"): "2b7099aea201940b7b3e5ef3457d025fe752ffb4",
    ("neg(a*b)+c", "float64"): "2b7099aea201940b7b3e5ef3457d025fe752ffb4",
    ("neg(a*b)-c", "float64"): "1085290f066a1a399a4a8e396eb967e4232830dd",
    ("c-neg(a*b)", "float64"): "e754742d0bdd28492f0c8dddb35d8e0549f8673e",
    ("a*b+c*a", "float64"): "8fde00437c87384ee00765d9f10d07bc4aac38d4",
    ("a*b-c*a", "float64"): "e31a9814a5152e2338a1a10a39a54d9238076643",
    ("(a*b+c)*(a*b)", "float64"): "41a17769c39064ec9894582b2745c55b2c75cabd",
    ("a*b+1.5", "float64"): "ef49e760a81c054cc8ef8430488e5392322550ab",
}
CASES = {
    "a*b+c": lambda a, b, c: a * b + c,
    "c+a*b": lambda a, b, c: c + a * b,
    "a*b-c": lambda a, b, c: a * b - c,
    "c-a*b": lambda a, b, c: c - a * b,
    "neg(a*b)+c": lambda a, b, c: -(a * b) + c,
    "neg(a*b)-c": lambda a, b, c: -(a * b) - c,
    "c-neg(a*b)": lambda a, b, c: c - -(a * b),
    "a*b+c*a": lambda a, b, c: a * b + c * a,  # two candidates: the first operand's
    "a*b-c*a": lambda a, b, c: a * b - c * a,
    "(a*b+c)*(a*b)": lambda a, b, c: (a * b + c) * (a * b),  # a product read twice: not contracted
    "a*b+1.5": lambda a, b, c: a * b + 1.5,
    "selu": lambda a, b, c: 1.05 * jnp.where(a > 0, a, 1.67 * jnp.exp(a) - 1.67),
}


def _operands(dtype):
    rng = np.random.default_rng(11)
    return [rng.standard_normal(4099).astype(dtype) for _ in range(3)]


@pytest.mark.parametrize("name, dtype", sorted(JAX_DIGESTS))
def test_jitted_multiply_adds_round_as_jaxs(name, dtype):
    with xjax.enable_x64(dtype == "float64"):
        out = np.asarray(xjax.jit(CASES[name])(*_operands(dtype)))
    assert out.dtype == dtype and hashlib.sha1(out.tobytes()).hexdigest() == JAX_DIGESTS[name, dtype]


def test_eager_ops_round_each_op():
    a, b, c = _operands("float32")
    got = np.asarray(jnp.asarray(a) * jnp.asarray(b) + jnp.asarray(c))
    np.testing.assert_array_equal(got, (a * b) + c)  # NumPy rounds the product, then the sum
    fused = np.asarray(xjax.jit(CASES["a*b+c"])(a, b, c))
    assert not np.array_equal(got, fused)  # (the operands are such that rounding once differs)


def _ops_after_contract(build):
    g = _core.Graph()
    x, y, z = (g.parameter((5,), build.dtype) for _ in range(3))
    g.set_outputs(list(build(g, x, y, z)))
    return g.optimized(["contract", "dce"]).ops()


def _add(g, op, *inputs):
    return g.add(op, list(inputs), {})[0]


@pytest.mark.parametrize("dtype, contracted", [("float32", True), ("float64", True), ("float16", False),
                                               ("int32", False), ("complex64", False)])
def test_the_pass_contracts_float32_and_float64_only(dtype, contracted):
    def build(g, x, y, z):
        return [_add(g, "add", _add(g, "mul", x, y), z)]
    build.dtype = dtype
    ops = _ops_after_contract(build)
    assert ("fma" in ops and "mul" not in ops) == contracted, ops


def test_a_product_read_elsewhere_stays():
    def twice(g, x, y, z):
        m = _add(g, "mul", x, y)
        return [_add(g, "add", m, z), _add(g, "neg", m)]

    def as_output(g, x, y, z):
        m = _add(g, "mul", x, y)
        return [_add(g, "sub", z, m), m]

    def negation_read_twice(g, x, y, z):
        n = _add(g, "neg", _add(g, "mul", x, y))
        return [_add(g, "add", n, z), n]
    for build in (twice, as_output, negation_read_twice):
        build.dtype = "float32"
        ops = _ops_after_contract(build)
        assert "fma" not in ops and "mul" in ops, (build.__name__, ops)
