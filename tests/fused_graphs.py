"""Random graphs that fuse: chains and DAGs of elementwise ops over several dtypes, read through
broadcasts, reshapes, static slices, iotas and constants, ending in none, one or several
reductions. Each graph comes with its inputs and, per output, whether the CPU and a CUDA kernel
must agree exactly (integer, bool and correctly rounded float work) or within a tolerance (libm
functions and the special functions built on them, whose last bits differ between implementations,
and float sums and products, whose order does)."""
import ml_dtypes
import numpy as np

from xjax import _core

FLOATS = ["float32", "float64", "float16", "bfloat16"]
INTS = ["int32", "int8", "uint8", "uint32"]
DTYPES = FLOATS + INTS + ["bool"]
NP = {"bool": np.dtype(bool), "int8": np.dtype(np.int8), "int32": np.dtype(np.int32), "uint8": np.dtype(np.uint8),
      "uint32": np.dtype(np.uint32), "float16": np.dtype(np.float16), "bfloat16": np.dtype(ml_dtypes.bfloat16),
      "float32": np.dtype(np.float32), "float64": np.dtype(np.float64)}

# Correctly rounded (or exact) on every implementation: the same bits on the CPU and in a kernel.
FLOAT_EXACT_UNARY = ["neg", "abs", "square", "floor", "ceil", "sign", "sqrt"]
FLOAT_LIBM_UNARY = ["exp", "sin", "cos", "tanh", "logistic", "atan", "log1p", "expm1", "erf", "cbrt", "rsqrt"]
FLOAT_EXACT_BINARY = ["add", "sub", "mul", "div", "max", "min", "rem", "nextafter"]
FLOAT_LIBM_BINARY = ["atan2", "pow"]
# The special functions (core/ops/scalar_special.h) and their arities. Operands past the first are
# fresh sources, of moderate size: never two large, nearly equal values, for which igamma's series
# runs millions of terms.
FLOAT_SPECIAL = {"lgamma": 1, "digamma": 1, "bessel_i0e": 1, "bessel_i1e": 1, "igamma": 2, "igammac": 2,
                 "igamma_grad_a": 2, "polygamma": 2, "zeta": 2, "regularized_incomplete_beta": 3}
INT_UNARY = ["neg", "abs", "sign", "bitwise_not", "square", "population_count", "clz"]
INT_BINARY = ["add", "sub", "mul", "div", "rem", "max", "min", "bitwise_and", "bitwise_or", "bitwise_xor",
              "shift_left", "shift_right_logical", "shift_right_arithmetic", "pow"]
BOOL_BINARY = ["bitwise_and", "bitwise_or", "bitwise_xor", "eq", "ne"]
COMPARE = ["eq", "ne", "lt", "le", "gt", "ge"]


class Value:
    def __init__(self, ref, dtype, exact, space=True, dynamic=False):
        self.ref, self.dtype, self.exact, self.dynamic = ref, dtype, exact, dynamic  # dynamic: reads a parameter
        self.space = space  # over the whole index space (not a reduction's result)


def sample(rng, shape, dtype):
    dt = NP[dtype]
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        wide = rng.integers(info.min, int(info.max) + 1, shape, dtype=np.int64)
        small = rng.integers(max(info.min, -9), 10, shape)
        return np.where(rng.random(shape) < 0.5, small, wide).astype(dt)
    x = rng.standard_normal(shape) * 3
    special = rng.random(shape)
    x = np.where(special < 0.03, 0.0, x)
    x = np.where((special > 0.03) & (special < 0.04), -np.inf, x)
    return x.astype(dt)


class Builder:
    """One random graph over the index space `shape`."""

    def __init__(self, rng, shape):
        self.rng, self.shape = rng, tuple(shape)
        self.g = _core.Graph()
        self.inputs = []
        self.values = []

    def add(self, op, args, out_dtype, exact, **attrs):
        (ref,) = self.g.add(op, [a.ref for a in args], attrs)
        v = Value(ref, out_dtype, exact, dynamic=any(a.dynamic for a in args))
        self.values.append(v)
        return v

    def pick(self, pred=lambda v: True):
        cands = [v for v in self.values if v.space and pred(v)]
        return cands[self.rng.integers(len(cands))] if cands else None

    # ---- sources of a value over the index space
    def param(self, dtype):
        x = sample(self.rng, self.shape, dtype)
        self.inputs.append(x)
        v = Value(self.g.parameter(self.shape, dtype), dtype, True, dynamic=True)
        self.values.append(v)
        return v

    def broadcast_param(self, dtype):
        """A parameter with some dims of size 1 (or fewer dims), broadcast to the space."""
        rank = len(self.shape)
        keep = [d for d in range(rank) if self.rng.random() < 0.5]
        small = tuple(self.shape[d] if d in keep else 1 for d in range(rank))
        if self.rng.random() < 0.5:  # drop the size-1 dims: broadcast_dimensions do the work
            dims = [d for d in range(rank) if small[d] != 1]
            small = tuple(small[d] for d in dims)
        else:
            dims = list(range(rank))
        x = sample(self.rng, small, dtype)
        self.inputs.append(x)
        p = self.g.parameter(small, dtype)
        return self.add("broadcast_in_dim", [Value(p, dtype, True, dynamic=True)], dtype, True, shape=list(self.shape),
                        broadcast_dimensions=dims)

    def sliced_param(self, dtype):
        """A static, possibly strided, slice of a larger parameter."""
        starts, limits, strides, big = [], [], [], []
        for n in self.shape:
            s, st = int(self.rng.integers(0, 3)), int(self.rng.integers(1, 3))
            extra = int(self.rng.integers(0, 3))
            big.append(s + (n - 1) * st + 1 + extra)
            starts.append(s), limits.append(s + (n - 1) * st + 1), strides.append(st)
        x = sample(self.rng, tuple(big), dtype)
        self.inputs.append(x)
        p = self.g.parameter(tuple(big), dtype)
        return self.add("slice", [Value(p, dtype, True, dynamic=True)], dtype, True, start_indices=starts,
                        limit_indices=limits, strides=strides)

    def iota(self, dtype):
        d = int(self.rng.integers(len(self.shape)))
        return self.add("iota", [], dtype, True, dtype=dtype, shape=list(self.shape), dimension=d)

    def constant(self, dtype):
        if self.rng.random() < 0.6:  # a splat: filled in the kernel
            v = sample(self.rng, (), dtype).item()
            v = bool(v) if dtype == "bool" else int(v) if NP[dtype].kind in "iu" else float(v)
            return self.add("constant", [], dtype, True, dtype=dtype, shape=list(self.shape), value=v)
        data = sample(self.rng, self.shape, dtype)
        return self.add("constant", [], dtype, True, dtype=dtype, shape=list(self.shape), data=data.tobytes())

    def source(self, dtype):
        kind = self.rng.choice(["param", "param", "broadcast", "slice", "iota", "constant"])
        if kind == "iota" and dtype == "bool":
            kind = "param"
        return getattr(self, {"param": "param", "broadcast": "broadcast_param", "slice": "sliced_param",
                              "iota": "iota", "constant": "constant"}[kind])(dtype)

    # ---- ops
    def operand(self, dtype, exact=False):
        v = self.pick(lambda v: v.dtype == dtype and (v.exact or not exact))
        if v is None or self.rng.random() < 0.25:
            src = self.pick(lambda v: v.exact or not exact) if self.rng.random() < 0.5 else None
            if src is not None and src.dtype != dtype and (src.exact or dtype in FLOATS):
                return self.add("convert_element_type", [src], dtype, src.exact, new_dtype=dtype)
            return self.source(dtype)
        return v

    def step(self):
        rng = self.rng
        dtype = str(rng.choice(DTYPES))
        kind = rng.random()
        if kind < 0.08:  # through a reshape and back: a different view of the same elements
            x = self.operand(dtype)
            n = int(np.prod(self.shape))
            r = self.add("reshape", [x], dtype, x.exact, new_sizes=[n])
            op = "neg" if dtype not in ("bool",) and not dtype.startswith("uint") else "bitwise_not"
            y = self.add(op, [r], dtype, x.exact)
            r.space = y.space = False  # flat: another shape
            return self.add("reshape", [y], dtype, x.exact, new_sizes=list(self.shape))
        if kind < 0.18:
            x = self.operand(dtype, exact=True)
            y = self.operand(dtype, exact=True)
            return self.add(str(rng.choice(COMPARE)), [x, y], "bool", True)
        if kind < 0.26:
            p = self.operand("bool")
            a, b = self.operand(dtype), self.operand(dtype)
            return self.add("select_n", [p, a, b], dtype, p.exact and a.exact and b.exact)
        if kind < 0.32 and dtype != "bool":
            lo, x, hi = self.operand(dtype), self.operand(dtype), self.operand(dtype)
            return self.add("clamp", [lo, x, hi], dtype, lo.exact and x.exact and hi.exact)
        if kind < 0.38 and dtype != "bool":
            x = self.operand(dtype)
            y = int(rng.integers(0, 4)) if dtype not in FLOATS else int(rng.integers(-2, 4))
            return self.add("integer_pow", [x], dtype, x.exact, y=y)
        if dtype == "bool":
            if rng.random() < 0.3:
                return self.add("bitwise_not", [self.operand("bool")], "bool", True)
            a, b = self.operand("bool"), self.operand("bool")
            return self.add(str(rng.choice(BOOL_BINARY)), [a, b], "bool", a.exact and b.exact)
        if dtype in FLOATS:
            r = rng.random()
            if r >= 0.95:
                op = str(rng.choice(sorted(FLOAT_SPECIAL)))
                args = [self.operand(dtype)] + [self.source(dtype) for _ in range(FLOAT_SPECIAL[op] - 1)]
                return self.add(op, args, dtype, False)
            table = (FLOAT_EXACT_UNARY if r < 0.3 else FLOAT_LIBM_UNARY if r < 0.45 else
                     FLOAT_EXACT_BINARY if r < 0.9 else FLOAT_LIBM_BINARY)
            op = str(rng.choice(table))
            libm = table in (FLOAT_LIBM_UNARY, FLOAT_LIBM_BINARY)
        else:
            op = str(rng.choice(INT_UNARY if rng.random() < 0.3 else INT_BINARY))
            libm = False
        unary = op in FLOAT_EXACT_UNARY + FLOAT_LIBM_UNARY + INT_UNARY
        args = [self.operand(dtype)] if unary else [self.operand(dtype), self.operand(dtype)]
        return self.add(op, args, dtype, all(a.exact for a in args) and not libm)

    def reduction(self, x, axes, op=None):
        """A reduction of x over axes (an op that takes x's dtype), with its exactness."""
        dt = x.dtype
        ops = ["reduce_max", "reduce_min"]
        if dt == "bool":
            ops += ["reduce_and", "reduce_or"]
        else:
            ops += ["reduce_sum"]
            if dt in INTS:
                ops += ["reduce_prod", "reduce_and", "reduce_or"]
            elif int(np.prod([self.shape[a] for a in axes])) <= 6:
                ops += ["reduce_prod"]
        op = op if op in ops else str(self.rng.choice(ops))
        exact = x.exact and (dt not in FLOATS or op in ("reduce_max", "reduce_min"))
        v = self.add(op, [x], dt, exact, axes=list(axes))
        v.space = False
        return v


def contiguous_axes(rng, rank):
    lo = int(rng.integers(rank))
    hi = int(rng.integers(lo, rank)) + 1
    return list(range(lo, hi))


SHAPES = [(7,), (33,), (4, 5), (3, 1, 6), (2, 3, 4), (16, 9), (5, 40), (1, 300), (2, 2, 2, 3), (4, 3000),
          (2500, 3), (700, 5)]


def random_graph(seed):
    """(graph, inputs, [exact per output]) for seed."""
    rng = np.random.default_rng(seed)
    shape = SHAPES[seed % len(SHAPES)]
    b = Builder(rng, shape)
    for _ in range(int(rng.integers(1, 3))):
        b.source(str(rng.choice(DTYPES)))
    for _ in range(int(rng.integers(2, 12))):
        b.step()
    last = b.values[-1]
    if not last.dynamic:  # made of constants only, it would fold away: read a parameter into it
        op = "bitwise_xor" if last.dtype == "bool" else "max"
        last = b.add(op, [last, b.param(last.dtype)], last.dtype, last.exact)
    outs = [last]
    if rng.random() < 0.4:
        outs.append(b.pick())
    nred = int(rng.choice([0, 1, 1, 2, 3]))
    axes = contiguous_axes(rng, len(shape))
    reds = []
    for k in range(nred):
        if k and rng.random() < 0.3:
            axes = contiguous_axes(rng, len(shape))  # a second split: another group
        reds.append(b.reduction(b.pick(lambda v: v.dynamic) if k else last, axes))
    if reds and rng.random() < 0.5:
        outs = []  # only reductions: their operands live in the kernel
    outs += reds
    b.g.set_outputs([v.ref for v in outs])
    return b.g, b.inputs, [v.exact for v in outs]
