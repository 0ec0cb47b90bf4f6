"""Shape fuzzing, run as a script by test_core_fuzz.py (a crash must fail that test, not kill pytest).

Random shapes (rank 0-20, zero-size, dimensions up to 2^63 - 1) and dtypes go through each op
family, by xjax.numpy / xjax.lax and by _core (Graph, Array.from_buffer, compile, run). Every case
must give a result, checked against NumPy, or a Python exception of the kinds below. Shapes that
are valid but large are only traced and compiled, never run. Fixed seed; prints one line per family.
"""
import sys

import ml_dtypes
import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

import xjax

xjax.config.update("jax_enable_x64", True)
import xjax.numpy as jnp  # noqa: E402
from xjax import _core, lax  # noqa: E402

ERRORS = (ValueError, TypeError, OverflowError, MemoryError, IndexError, NotImplementedError)
HUGE = [2**31 + 1, 2**33, 2**61 + 1, 2**62, 2**62 + 1, 2**63 - 1]
RUN_LIMIT = 4096  # elements: larger valid shapes are traced and compiled, not run
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint32", "uint64", "float16", "bfloat16",
          "float32", "float64"]
EXAMPLES = int(sys.argv[1]) if len(sys.argv) > 1 else 60
FUZZ = settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
                suppress_health_check=list(HealthCheck))


def np_dtype(name):
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def kind(shape, dtype):
    """'invalid' (more than 2^62 bytes, zeros not counted), 'empty', 'small' (runs) or 'large'."""
    span = np_dtype(dtype).itemsize
    for d in shape:
        span *= max(d, 1)
    if span > 2**62:
        return "invalid"
    if 0 in shape:
        return "empty"
    return "small" if span // np_dtype(dtype).itemsize <= RUN_LIMIT else "large"


@st.composite
def shapes(draw, max_rank=20):
    rank = draw(st.integers(0, max_rank))
    dims = [draw(st.sampled_from([1, 1, 2, 3])) for _ in range(rank)]
    while np.prod(dims, dtype=object) > 256:  # small ones stay small whatever the rank
        dims[dims.index(max(dims))] = 1
    form = draw(st.sampled_from(["small", "small", "zero", "zero", "huge", "huge"]))
    if rank and form == "zero":
        dims[draw(st.integers(0, rank - 1))] = 0
    if rank and form in ("zero", "huge"):
        for _ in range(draw(st.integers(1, 2))):
            dims[draw(st.integers(0, rank - 1))] = draw(st.sampled_from(HUGE))
    return tuple(dims)


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 4, shape).astype(np_dtype(dtype))


def check_result(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if got.dtype.kind in "fc" or got.dtype == np_dtype("bfloat16"):
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=2e-2, atol=1e-2)
    else:
        np.testing.assert_array_equal(got, want.astype(got.dtype))


def attempt(fn):
    """fn()'s result, or None when it raised one of ERRORS (anything else propagates: a bug)."""
    try:
        return fn()
    except ERRORS:
        return None


# Op families through xjax.numpy / lax: (name, fn(module, operand, axis), whether NumPy computes it
# too when given np as the module). The axis is a valid axis of a rank >= 1 operand, else 0.
def _outer(m, x, a):
    v = m.reshape(x, (-1,))
    return v[:, None] * v[None, :]


def _gather(m, x, a):
    return m.take(x, m.asarray([0, x.shape[a] - 1]) if x.ndim else 0, axis=a if x.ndim else None)


def _scatter(m, x, a):
    if not x.ndim or not x.shape[0]:
        return x
    if m is np:
        y = x.copy()
        y[0] = 1
        return y
    return x.at[0].set(1)


NUMPY_FAMILIES = [
    ("unary", lambda m, x, a: m.abs(x) * 2, True),
    ("binary_broadcast", lambda m, x, a: x[None] + m.expand_dims(x, 0), True),
    ("reduce", lambda m, x, a: m.sum(x, axis=a if x.ndim else None), True),
    ("argmax", lambda m, x, a: m.argmax(x, axis=a if x.ndim else None), True),
    ("cumsum", lambda m, x, a: m.cumsum(x, axis=a if x.ndim else None), True),
    ("reshape", lambda m, x, a: m.reshape(x, (-1,)), True),
    ("transpose", lambda m, x, a: m.transpose(x), True),
    ("concatenate", lambda m, x, a: m.concatenate([x, x, x], axis=a) if x.ndim else x, True),
    ("pad", lambda m, x, a: m.pad(x, 1), True),
    ("flip", lambda m, x, a: m.flip(x, axis=a if x.ndim else None), True),
    ("slice", lambda m, x, a: x[..., ::2] if x.ndim else x, True),
    ("broadcast_to", lambda m, x, a: m.broadcast_to(x, (3,) + x.shape), True),
    ("gather", _gather, True),
    ("scatter", _scatter, True),
    ("outer", _outer, True),
    ("sort", lambda m, x, a: m.sort(x, axis=a) if x.ndim else x, True),
    ("lax_top_k", lambda m, x, a: lax.top_k(x, 1)[0], False),
    ("lax_pad_huge", lambda m, x, a: lax.pad(x, jnp.zeros((), x.dtype), [(1, 2**61, 0)] * x.ndim), False),
    ("lax_broadcast_huge", lambda m, x, a: lax.broadcast_in_dim(x, (2**62 + 1,) + x.shape,
                                                                 tuple(range(1, x.ndim + 1))), False),
    ("lax_iota", lambda m, x, a: lax.broadcasted_iota("int32", x.shape, a) if x.ndim else x, False),
]


@FUZZ
@given(shape=shapes(), dtype=st.sampled_from(DTYPES), family=st.sampled_from(NUMPY_FAMILIES), data=st.data())
def fuzz_numpy(shape, dtype, family, data):
    name, fn, numpy_too = family
    axis = data.draw(st.integers(0, len(shape) - 1)) if shape else 0
    k = kind(shape, dtype)
    # Creation from a shape alone: a result of that shape or an error, and an error when invalid.
    spec = xjax.ShapeDtypeStruct(shape, np_dtype(dtype))
    made = attempt(lambda: xjax.eval_shape(lambda: jnp.zeros(shape, dtype)))
    assert (made is None) == (k == "invalid") and (made is None or made.shape == shape), (shape, dtype, made)
    if k == "invalid":
        assert attempt(lambda: jnp.broadcast_to(jnp.zeros((), dtype), shape)) is None
        return
    # Traced and compiled (never run) for any valid shape: the result shape or an error.
    out = attempt(lambda: xjax.eval_shape(lambda x: fn(jnp, x, axis), spec))
    if out is not None and k in ("small", "empty") and numpy_too:
        want = attempt(lambda: fn(np, np.zeros(shape, np_dtype(dtype)), axis))
        assert want is None or out.shape == want.shape, (name, shape, out.shape, want.shape)
    attempt(lambda: xjax.jit(lambda x: fn(jnp, x, axis)).lower(spec).compile())
    if k not in ("small", "empty"):
        return
    x = sample(shape, dtype)
    got = attempt(lambda: np.asarray(fn(jnp, jnp.asarray(x), axis)))
    want = attempt(lambda: fn(np, x, axis)) if numpy_too else None
    if got is not None and want is not None:
        check_result(got, want)


# Op families through _core: (name, function of (graph, operand ref, shape, dtype, axis) adding the op).
def _add(g, op, inputs, **attrs):
    return g.add(op, inputs, attrs)


CORE_FAMILIES = [
    ("neg", lambda g, x, s, dt, a: _add(g, "neg", [x])),
    ("add_broadcast", lambda g, x, s, dt, a: _add(g, "add", [x, _add(g, "broadcast_in_dim", [x], shape=list(s),
                                                                      broadcast_dimensions=list(range(len(s))))[0]])),
    ("reduce_sum", lambda g, x, s, dt, a: _add(g, "reduce_sum", [x], axes=[a] if s else [])),
    ("cumsum", lambda g, x, s, dt, a: _add(g, "cumsum", [x], axis=a)),
    ("reshape", lambda g, x, s, dt, a: _add(g, "reshape", [x], new_sizes=[int(np.prod(s, dtype=object))])),
    ("transpose", lambda g, x, s, dt, a: _add(g, "transpose", [x], permutation=list(range(len(s)))[::-1])),
    ("broadcast_huge", lambda g, x, s, dt, a: _add(g, "broadcast_in_dim", [x], shape=[2**62 + 1] + list(s),
                                                   broadcast_dimensions=list(range(1, len(s) + 1)))),
    ("slice", lambda g, x, s, dt, a: _add(g, "slice", [x], start_indices=[0] * len(s), limit_indices=list(s),
                                          strides=[2**63 - 1] * len(s))),
    ("concatenate", lambda g, x, s, dt, a: _add(g, "concatenate", [x, x, x], dimension=a)),
    ("pad", lambda g, x, s, dt, a: _add(g, "pad", [x, _add(g, "constant", [], dtype=dt, value=0)[0]],
                                        padding_config=[1, 2**61, 0] * len(s))),
    ("rev", lambda g, x, s, dt, a: _add(g, "rev", [x], dimensions=[a] if s else [])),
    ("dot_outer", lambda g, x, s, dt, a: _add(g, "dot_general", [x, x], lhs_contracting_dimensions=[],
                                              rhs_contracting_dimensions=[])),
    ("gather", lambda g, x, s, dt, a: _add(g, "gather", [x, _add(g, "constant", [], dtype="int32", shape=[1, 1],
                                                                 value=0)[0]],
                                           offset_dims=list(range(1, len(s))), collapsed_slice_dims=[0],
                                           start_index_map=[0], slice_sizes=[1] + list(s[1:]), mode="clip")),
    ("sort", lambda g, x, s, dt, a: _add(g, "sort", [x], dimension=a, num_keys=1)),
    ("top_k", lambda g, x, s, dt, a: _add(g, "top_k", [x], k=s[-1] if s else 1)),
    ("iota", lambda g, x, s, dt, a: _add(g, "iota", [], dtype="int32", shape=list(s), dimension=a)),
    ("cholesky", lambda g, x, s, dt, a: _add(g, "cholesky", [x])),
    ("lu", lambda g, x, s, dt, a: _add(g, "lu", [x])),
    ("qr", lambda g, x, s, dt, a: _add(g, "qr", [x], full_matrices=a % 2)),
    ("eigh", lambda g, x, s, dt, a: _add(g, "eigh", [x], lower=a % 2)),
    ("svd", lambda g, x, s, dt, a: _add(g, "svd", [x], full_matrices=a % 2, compute_uv=1)),
    ("triangular_solve", lambda g, x, s, dt, a: _add(g, "triangular_solve", [x, x], left_side=a % 2, lower=1)),
    ("lu_pivots_to_permutation", lambda g, x, s, dt, a: _add(g, "lu_pivots_to_permutation", [x],
                                                             permutation_size=s[-1] + a if s else 1)),
]


def to_core(x):
    return _core.Array.from_buffer(np.ascontiguousarray(x).reshape(-1).view(np.uint8), x.shape, x.dtype.name)


@FUZZ
@given(shape=shapes(), dtype=st.sampled_from(DTYPES), family=st.sampled_from(CORE_FAMILIES), data=st.data())
def fuzz_core(shape, dtype, family, data):
    name, add = family
    axis = data.draw(st.integers(0, len(shape) - 1)) if shape else 0
    k = kind(shape, dtype)
    g = _core.Graph()
    x = attempt(lambda: g.parameter(shape, dtype))
    assert (x is None) == (k == "invalid"), (shape, dtype)
    assert attempt(lambda: _core.infer("neg", [(shape, dtype)], {})) is None or k != "invalid"
    # A buffer is taken only when its size matches the shape and dtype exactly.
    nbytes = 0 if k == "invalid" else int(np.prod(shape, dtype=object)) * np_dtype(dtype).itemsize
    given_bytes = data.draw(st.sampled_from([0, 1, 12, nbytes + 1] + ([nbytes] if nbytes <= 1 << 16 else [])))
    a = attempt(lambda: _core.Array.from_buffer(np.zeros(given_bytes, np.uint8), shape, dtype))
    assert (a is not None) == (k != "invalid" and given_bytes == nbytes), (shape, dtype, given_bytes)
    if x is None:
        return
    outs = attempt(lambda: add(g, x, shape, dtype, axis))
    if outs is None:
        return
    g.set_outputs(outs)
    exe = attempt(lambda: _core.compile(g))
    if exe is None or k not in ("small", "empty"):
        return
    results = attempt(lambda: exe.run([to_core(sample(shape, dtype))]))
    if results is not None:
        for r, (s, dt) in zip(results, exe.output_types):
            r.wait()
            assert r.shape == s and r.dtype == dt and len(r.bytes_view()) == r.nbytes


# A fused broadcast-and-add at any rank (the fused gather once stopped at 16 dims), against NumPy.
@FUZZ
@given(rank=st.integers(0, 20), dtype=st.sampled_from(["int8", "int32", "float32", "float64"]), data=st.data())
def fuzz_fused_rank(rank, dtype, data):
    # Alternating broadcast dims keep every dim of the load (adjacent ones of a kind merge).
    alternate = data.draw(st.booleans(), label="alternate")
    xs = [2 if alternate else data.draw(st.sampled_from([1, 2]), label="dim") for _ in range(rank)]
    while np.prod(xs, dtype=np.int64) > 1 << 18:
        xs[xs.index(2)] = 1
    if alternate:
        ys = [d if i % 2 == 0 else 1 for i, d in enumerate(xs)]
    else:
        ys = [d if data.draw(st.booleans(), label="kept") else 1 for d in xs]
    g = _core.Graph()
    x, y = g.parameter(xs, dtype), g.parameter(ys, dtype)
    (yb,) = g.add("broadcast_in_dim", [y], {"shape": xs, "broadcast_dimensions": list(range(rank))})
    (z,) = g.add("add", [x, yb], {})
    g.set_outputs([z])
    a, b = sample(xs, dtype, 1), sample(ys, dtype, 2)
    (out,) = _core.compile(g).run([to_core(a), to_core(b)])
    check_result(out.bytes_view().view(np_dtype(dtype)).reshape(xs), a + b)


if __name__ == "__main__":
    for fuzz in [fuzz_numpy, fuzz_core, fuzz_fused_rank]:
        fuzz()
        print(fuzz.__name__, "ok", flush=True)
