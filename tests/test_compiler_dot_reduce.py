"""The dot_reduce pass: batches of dot products become one fused reduce_sum(mul); every other
dot_general stays a dot_general. Results against NumPy's einsum."""
import numpy as np
import pytest

from core_util import to_core, to_numpy
from xjax import _core

R = np.random.default_rng(0)
LETTERS = "abcdefgh"


def _graph(ls, rs, dn, dtype):
    g = _core.Graph()
    x, y = g.parameter(ls, dtype), g.parameter(rs, dtype)
    (lc, rc), (lb, rb) = dn
    out = g.add("dot_general", [x, y], {"lhs_contracting_dimensions": list(lc), "rhs_contracting_dimensions": list(rc),
                                        "lhs_batch_dimensions": list(lb), "rhs_batch_dimensions": list(rb)})
    g.set_outputs(out)
    return g


def _einsum(ls, rs, dn):
    """The einsum spec of a dot_general: batch, lhs free, rhs free in the output."""
    (lc, rc), (lb, rb) = dn
    lhs, rhs = [None] * len(ls), [None] * len(rs)
    names = iter(LETTERS)
    for a, b in zip(lb, rb):
        lhs[a] = rhs[b] = next(names)
    for a, b in zip(lc, rc):
        lhs[a] = rhs[b] = next(names)
    for i in range(len(ls)):
        lhs[i] = lhs[i] or next(names)
    for i in range(len(rs)):
        rhs[i] = rhs[i] or next(names)
    out = [lhs[a] for a in lb] + [lhs[i] for i in range(len(ls)) if i not in lb and i not in lc] + \
          [rhs[i] for i in range(len(rs)) if i not in rb and i not in rc]
    return f"{''.join(lhs)},{''.join(rhs)}->{''.join(out)}"


CASES = [  # (lhs shape, rhs shape, dimension numbers, reduced?)
    ((4096, 3), (4096, 3), (((1,), (1,)), ((0,), (0,))), True),              # vmap of a dot of vectors
    ((3, 64), (64, 3), (((0,), (1,)), ((1,), (0,))), True),                  # batch dims not in front
    ((5, 1, 7), (7, 5), (((2,), (0,)), ((0,), (1,))), True),                 # size-1 free dim
    ((100,), (100,), (((0,), (0,)), ((), ())), False),                       # one dot: the kernel (JAX's rounding)
    ((1, 100), (1, 100), (((1,), (1,)), ((0,), (0,))), False),               # a batch of one
    ((8, 62, 3), (8, 3, 1), (((2,), (1,)), ((0,), (0,))), False),            # batched matrix-vector: the kernel
    ((8, 3), (8, 62, 3), (((1,), (2,)), ((0,), (0,))), False),               # batched vector-matrix
    ((8, 1, 3), (8, 3, 1, 1), (((2,), (1,)), ((0,), (0,))), True),           # size-1 free dims on both sides
    ((3, 8), (8, 1, 3), (((0,), (2,)), ((1,), (0,))), True),                 # rhs dims in another order
    ((2, 3, 4, 5), (4, 2, 3), (((2, 1), (0, 2)), ((0,), (1,))), False),     # a free dim of 5: matrix-vector
    ((2, 3, 4), (4, 2, 3), (((2, 1), (0, 2)), ((0,), (1,))), True),         # two contracting dims, transposed
    ((6, 1), (6, 1), (((), ()), ((0,), (0,))), True),                       # no contraction: products
    ((6, 1), (6, 4), (((), ()), ((0,), (0,))), False),                      # an outer product
    ((8, 62, 40), (8, 40), (((2,), (1,)), ((0,), (0,))), False),            # matrix-vector, long k: BLAS
    ((16, 16), (16, 16), (((1,), (0,)), ((), ())), False),                  # a matmul
]


@pytest.mark.parametrize("ls,rs,dn,reduced", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dot_reduce_matches_einsum(ls, rs, dn, reduced, dtype):
    g = _graph(ls, rs, dn, dtype)
    ops = g.optimized(["dot_reduce", "simplify", "dce"]).ops()
    assert ("dot_general" not in ops) == reduced, ops
    x, y = R.standard_normal(ls).astype(dtype), R.standard_normal(rs).astype(dtype)
    exe = _core.compile(g)
    (got,) = [to_numpy(r) for r in exe.run([to_core(x), to_core(y)])]
    want = np.einsum(_einsum(ls, rs, dn), x.astype(np.float64), y.astype(np.float64))
    assert got.shape == want.shape and got.dtype == np.dtype(dtype)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    if reduced and len(ls) == len(rs) == 2 and ls == rs:
        assert exe.num_kernels == 1, exe.plan_text()  # one fused pass over both operands


@pytest.mark.parametrize("dtypes", [("int32", "int32"), ("float16", "float16"), ("int8", "int32")])
def test_other_dtypes_keep_the_dot(dtypes):
    # Integer wrap-around, half-precision and mixed-type products keep the contraction kernel's semantics.
    g = _core.Graph()
    x, y = g.parameter((64, 3), dtypes[0]), g.parameter((64, 3), dtypes[0])
    attrs = {"lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [1], "lhs_batch_dimensions": [0],
             "rhs_batch_dimensions": [0]}
    if dtypes[1] != dtypes[0]:
        attrs["preferred_element_type"] = dtypes[1]
    g.set_outputs(g.add("dot_general", [x, y], attrs))
    assert "dot_general" in g.optimized(["dot_reduce"]).ops()
