"""Random composed JAX programs, each built from a seed alone, as source text.

`generate(seed)` returns a `Program`: its `source` defines `main()`, which builds its inputs from
fixed seeds and returns a tuple of arrays. The source is written against the names `jax`, `jnp`,
`lax` and `onp` (NumPy), so the same text runs under JAX and under xjax (`HEADERS`).

A program is a stack of transformations over a generated body:

    f0      the body: a few statements over its parameters (elementwise maths, reductions,
            reshapes, matmuls, int paths, gathers/scatters/dynamic slices/`.at[]` with traced
            indices, cond/switch, scan/fori_loop/while_loop/lax.map with generated sub-bodies,
            collectives over the named axes of the vmaps above it, random keys, custom_jvp /
            custom_vjp helpers, checkpointed and inner-transformed sub-functions)
    f1..fk  each wraps the one below: jit, vmap (in_axes None/int, out_axes, axis_name), grad,
            value_and_grad, jvp, vjp, linearize, jacfwd/jacrev, checkpoint, custom_jvp,
            custom_vjp, lax.map and cond.

Every function returns a flat tuple of arrays; avals (shape, dtype) are tracked so that most
programs are valid, and the ones that are not must fail under xjax as they fail under JAX.
`Program.tags` names the features used (for grouping findings and marking known bugs).
"""
import math
import random

import numpy as np

F, I, K = "float32", "int32", "key"      # K: a raw PRNG key, uint32 with a trailing dimension of 2

HEADERS = {
    "jax": "import numpy as onp\nimport jax\nimport jax.numpy as jnp\nfrom jax import lax\n",
    "xjax": "import numpy as onp\nimport xjax as jax\nimport xjax.numpy as jnp\nfrom xjax import lax\n",
    # JAX in float64: a reference for telling float32 rounding from wrong values (see as_float64)
    "jax64": ("import numpy as onp\nimport jax\njax.config.update('jax_enable_x64', True)\nimport jax.numpy as jnp\n"
              "from jax import lax\n"),
}


def as_float64(source):
    """The program computing in float64 (and int64) throughout, for the jax64 header."""
    return (source.replace('astype("float32")', 'astype("float64")').replace("jnp.float32", "jnp.float64")
            .replace("jnp.int32", "jnp.int64").replace('astype("int32")', 'astype("int64")'))

INPUT_HELPER = '''\
RF, RI = jnp.dtype("float32"), jnp.dtype("int32")   # samplers' dtypes (float32 in the float64 reference too)
def _in(s, shape, kind):
    r = onp.random.RandomState(s)
    if kind == "f":
        return jnp.asarray(r.uniform(-1, 1, shape).astype("float32"))
    if kind == "i":
        return jnp.asarray(r.randint(-1, 4, shape).astype("int32"))
    n = int(onp.prod(shape[:-1]))
    return jax.random.split(jax.random.PRNGKey(s), n).reshape(shape)
'''


class V:
    """A variable of the generated program: its name and aval."""
    __slots__ = ("name", "shape", "dtype")

    def __init__(self, name, shape, dtype):
        self.name, self.shape, self.dtype = name, tuple(shape), dtype

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    def __repr__(self):
        return f"{self.name}:{self.dtype}{list(self.shape)}"


class Program:
    def __init__(self, seed, source, tags, out_avals):
        self.seed, self.source, self.tags, self.out_avals = seed, source, sorted(tags), out_avals

    def text(self, backend="xjax"):
        return HEADERS[backend] + (as_float64(self.source) if backend == "jax64" else self.source)


class Em:
    """Lines with indentation."""

    def __init__(self):
        self.lines, self.ind = [], 0

    def __call__(self, s):
        self.lines.append("    " * self.ind + s)

    def text(self):
        return "\n".join(self.lines) + "\n"


def tup(names):
    return "(" + "".join(n + ", " for n in names) + ")" if len(names) != 1 else f"({names[0]},)"


def shape_str(shape):
    return tup([str(d) for d in shape]) if shape else "()"


class Gen:
    MAX_DEPTH = 2

    def __init__(self, seed, *, known_bugs=True):
        self.seed = seed
        self.r = random.Random(seed)
        self.count = 0
        self.top = Em()           # module-level helpers (custom_jvp/custom_vjp functions, constants)
        self.tags = set()
        self.axes = []            # (name, size) of the named vmaps above the body
        self.known_bugs = known_bugs
        self.helpers = []         # (kind, name)

    # ---- small utilities -------------------------------------------------------------------
    def fresh(self, p="v"):
        self.count += 1
        return f"{p}{self.count}"

    def chance(self, p):
        return self.r.random() < p

    def choice(self, xs):
        return xs[self.r.randrange(len(xs))]

    def wchoice(self, items):
        total = sum(w for _, w in items)
        x = self.r.random() * total
        for it, w in items:
            x -= w
            if x < 0:
                return it
        return items[-1][0]

    def dim(self):
        return self.wchoice([(0, 0.06), (1, 0.2), (2, 0.34), (3, 0.3), (4, 0.1)])

    def shape(self, max_rank=2):
        rank = self.wchoice([(0, 0.25), (1, 0.4), (2, 0.3), (3, 0.05)])
        return tuple(self.dim() for _ in range(min(rank, max_rank + (1 if self.chance(0.05) else 0))))

    def pick(self, scope, pred=lambda v: True, recent=True):
        cands = [v for v in scope if pred(v)]
        if not cands:
            return None
        if recent and self.chance(0.6):
            return cands[-1 - min(int(self.r.expovariate(1.0)), len(cands) - 1)]
        return self.choice(cands)

    def new(self, em, expr, shape, dtype, p="v"):
        v = V(self.fresh(p), shape, dtype)
        em(f"{v.name} = {expr}")
        return v

    # ---- scalar int index expressions ------------------------------------------------------
    def int_scalar(self, em, scope, bound=3):
        """An int32 scalar expression: traced when possible, sometimes out of range or negative."""
        opts = []
        iv = self.pick(scope, lambda v: v.dtype == I and v.ndim == 0)
        if iv is not None:
            opts += [(iv.name, 3), (f"jnp.clip({iv.name}, 0, {bound})", 1), (f"({iv.name} % {bound + 1})", 0.5)]
        fv = self.pick(scope, lambda v: v.dtype == F and v.size > 0)
        if fv is not None:
            opts += [(f"jnp.argmax({fv.name})", 1), (f"(jnp.sum({fv.name}) > 0).astype(jnp.int32) * {bound}", 1),
                     (f"jnp.floor(jnp.sum({fv.name}) * 2.0).astype(jnp.int32)", 0.5)]
        fv0 = self.pick(scope, lambda v: v.dtype == F and v.size == 0)
        if fv0 is not None:
            opts += [(f"jnp.sum({fv0.name} > 0)", 0.3)]
        if self.axes:
            opts += [(f"lax.axis_index('{self.choice(self.axes)[0]}')", 0.7)]
        opts += [(f"jnp.int32({self.r.randint(-1, bound + 1)})", 0.4), (str(self.r.randint(-1, bound + 1)), 0.4)]
        e = self.wchoice(opts)
        if "axis_index" in e:
            self.tags.add("axis_index")
        return e

    def int_array(self, em, scope, length=None):
        """An int32 1-d index array (a V); values may be negative or out of range."""
        n = length if length is not None else self.wchoice([(0, 0.05), (1, 0.2), (2, 0.35), (3, 0.3), (5, 0.1)])
        iv = self.pick(scope, lambda v: v.dtype == I and v.ndim == 1 and (length is None or v.shape[0] == length))
        if iv is not None and self.chance(0.6):
            return iv
        fv = self.pick(scope, lambda v: v.dtype == F and v.ndim == 1 and v.shape[0] == n)
        opts = [(f"jnp.arange({n}, dtype=jnp.int32) % 3", 1), (f"jnp.array({[self.r.randint(-2, 4) for _ in range(n)]}, dtype=jnp.int32)", 1)]
        if fv is not None:
            opts += [(f"jnp.argsort({fv.name})", 1.5), (f"jnp.floor({fv.name} * 3.0).astype(jnp.int32)", 1.5)]
        return self.new(em, self.wchoice(opts), (n,), I, "ix")

    # ---- making a value of a required aval -------------------------------------------------
    def to_aval(self, em, scope, shape, dtype, avoid=()):
        """An expression of exactly (shape, dtype), built from the scope."""
        same = [v for v in scope if v.shape == tuple(shape) and v.dtype == dtype]
        better = [v for v in same if v.name not in avoid]
        if better and self.chance(0.8):
            v = better[-1] if self.chance(0.6) else self.choice(better)
            e = v.name
            if dtype == F and self.chance(0.4):
                e = f"jnp.tanh({e})"
            return e
        if dtype == K:
            kv = self.pick(scope, lambda v: v.dtype == K and v.shape == (2,))
            base = kv.name if kv is not None else f"jax.random.PRNGKey({self.r.randint(0, 99)})"
            if shape == (2,):
                return f"jax.random.fold_in({base}, 1)"
            n = int(np.prod(shape[:-1]))
            return f"jax.random.split({base}, {n}).reshape({shape_str(shape)})"
        src = self.pick(scope, lambda v: v.dtype in (F, I))
        if dtype == F:
            s = "0.5" if src is None else (f"jnp.mean({src.name})" if src.dtype == F and src.size else f"jnp.sum({src.name}).astype(jnp.float32)")
            base = [v for v in same if v.name not in avoid] or same
            if base and self.chance(0.7):
                return f"jnp.tanh({base[-1].name} + {s})"
            return f"jnp.zeros({shape_str(shape)}, jnp.float32) + {s}"
        s = "1" if src is None else (f"jnp.sum({src.name})" if src.dtype == I else f"(jnp.sum({src.name}) > 0).astype(jnp.int32)")
        if same:
            return f"({same[-1].name} + {s}) % 5"
        return f"jnp.zeros({shape_str(shape)}, jnp.int32) + {s}"

    def fold_unused(self, em, new_vars, first_line, exprs, avals):
        """Adds the values this body computed but never used into its first float output, so
        that no statement is dead code."""
        import re
        text = "\n".join(em.lines[first_line:])
        unused = []
        for v in new_vars:
            if v.dtype == K or not self.chance(0.8):
                continue
            if len(re.findall(r"\b%s\b" % v.name, text)) <= 1:
                unused.append(f"jnp.sum({v.name})" if v.dtype == F else f"jnp.sum({v.name}).astype(jnp.float32)")
        fo = [k for k, (s, d) in enumerate(avals) if d == F]
        if not unused or not fo:
            return exprs
        exprs = list(exprs)
        k = fo[0]
        exprs[k] = f"{exprs[k]} + 0.1 * jnp.tanh({' + '.join(unused)})"
        return exprs

    # ---- body ops ---------------------------------------------------------------------------
    def op_unary(self, em, scope, depth):
        v = self.pick(scope, lambda v: v.dtype == F)
        if v is None:
            return None
        f = self.choice(["jnp.sin({0})", "jnp.cos({0})", "jnp.tanh({0})", "({0} * {0})", "(-{0})",
                         "({0} * 0.5 + 0.25)", "jnp.exp(-{0} * {0})", "jnp.log1p({0} * {0})",
                         "jnp.sqrt({0} * {0} + 1.0)", "jnp.abs({0})", "jax.nn.sigmoid({0})",
                         "lax.integer_pow({0}, 3)", "jax.nn.softplus({0})", "jnp.clip({0}, -0.5, 0.5)",
                         "jax.nn.relu({0})", "jnp.square({0})", "lax.stop_gradient({0})", "jnp.sign({0}) * {0}"])
        return [self.new(em, f.format(v.name), v.shape, F)]

    def bshape(self, a, b):
        try:
            return tuple(np.broadcast_shapes(a, b))
        except ValueError:
            return None

    def op_binary(self, em, scope, depth):
        a = self.pick(scope, lambda v: v.dtype == F)
        if a is None:
            return None
        b = self.pick(scope, lambda v: v.dtype in (F, I) and self.bshape(a.shape, v.shape) is not None
                      and (v.dtype == F or self.chance(0.3)))
        if b is None or self.chance(0.1):
            return [self.new(em, f"{a.name} * {self.choice(['2.0', '0.5', '-1.5', '3'])}", a.shape, F)]
        shape = self.bshape(a.shape, b.shape)
        if b.dtype == I:
            self.tags.add("mixed_int_float")
            f = self.choice(["{0} * {1}", "{0} + {1}", "jnp.where({1} > 0, {0}, -{0})"])
        else:
            f = self.choice(["{0} + {1}", "{0} - {1}", "{0} * {1}", "{0} / (1.0 + {1} * {1})", "jnp.maximum({0}, {1})",
                             "jnp.minimum({0}, {1})", "jnp.where({0} > {1}, {0}, {1})", "jnp.arctan2({0}, 1.0 + {1} * {1})",
                             "lax.add({0}, jnp.broadcast_to({1}, {0}.shape))" if self.bshape(a.shape, b.shape) == a.shape else "{0} + {1}"])
        return [self.new(em, f.format(a.name, b.name), shape, F)]

    def op_reduce(self, em, scope, depth):
        v = self.pick(scope, lambda v: v.dtype == F and v.ndim >= 1)
        if v is None:
            return None
        ax = self.r.randrange(v.ndim)
        keep = self.chance(0.2)
        rshape = tuple(d for i, d in enumerate(v.shape) if i != ax) if not keep else tuple(1 if i == ax else d for i, d in enumerate(v.shape))
        nonempty = v.shape[ax] > 0 or self.chance(0.1)
        opts = [("jnp.sum({0}, axis={1}, keepdims={2})", rshape, 3), ("jnp.mean({0}, axis={1}, keepdims={2})", rshape, 1),
                ("jnp.cumsum({0}, axis={1})", v.shape, 1), ("jnp.sort({0}, axis={1})", v.shape, 0.5),
                ("jax.nn.softmax({0}, axis={1})", v.shape, 0.7), ("jnp.flip({0}, axis={1})", v.shape, 0.5),
                ("jnp.roll({0}, 1, axis={1})", v.shape, 0.5), ("jnp.sum({0})", (), 1), ("jnp.var({0}, axis={1})", tuple(d for i, d in enumerate(v.shape) if i != ax), 0.3)]
        if nonempty:
            opts += [("jnp.max({0}, axis={1}, keepdims={2})", rshape, 1), ("jnp.min({0}, axis={1}, keepdims={2})", rshape, 0.5),
                     ("jax.nn.logsumexp({0}, axis={1}, keepdims={2})", rshape, 0.5)]
        f, shape = self.wchoice([((f, s), w) for f, s, w in opts])
        if "max" in f and v.shape[ax] == 0:
            self.tags.add("reduce_empty")
        return [self.new(em, f.format(v.name, ax, keep), shape, F)]

    def op_reshape(self, em, scope, depth):
        v = self.pick(scope, lambda v: v.dtype in (F, I))
        if v is None:
            return None
        opts = [(f"{v.name}.reshape(-1)", (v.size,)) if v.size else (f"{v.name}.reshape(({v.size},))", (v.size,)),
                (f"{v.name}[None]", (1,) + v.shape), (f"jnp.broadcast_to({v.name}, (2,) + {v.name}.shape)", (2,) + v.shape)]
        if v.ndim >= 2:
            perm = list(range(v.ndim))
            self.r.shuffle(perm)
            opts += [(f"{v.name}.T", v.shape[::-1]), (f"jnp.transpose({v.name}, {tuple(perm)})", tuple(v.shape[p] for p in perm)),
                     (f"{v.name}.reshape({v.shape[0]}, -1)" if v.shape[0] else f"{v.name}.reshape(0, {int(np.prod(v.shape[1:]))})", (v.shape[0], int(np.prod(v.shape[1:]))))]
        if v.ndim >= 1:
            opts += [(f"{v.name}[::-1]", v.shape), (f"{v.name}[1:]", (max(v.shape[0] - 1, 0),) + v.shape[1:]),
                     (f"jnp.expand_dims({v.name}, -1)", v.shape + (1,)), (f"{v.name}[..., :2]", v.shape[:-1] + (min(v.shape[-1], 2),))]
            if 1 in v.shape:
                ax = v.shape.index(1)
                opts += [(f"jnp.squeeze({v.name}, axis={ax})", v.shape[:ax] + v.shape[ax + 1:])]
        e, shape = self.choice(opts)
        return [self.new(em, e, shape, v.dtype)]

    def op_matmul(self, em, scope, depth):
        a = self.pick(scope, lambda v: v.dtype == F and 1 <= v.ndim <= 2)
        if a is None:
            return None
        k = a.shape[-1]
        b = self.pick(scope, lambda v: v.dtype == F and 1 <= v.ndim <= 2 and v.shape[0] == k)
        if b is not None and self.chance(0.7):
            shape = a.shape[:-1] + b.shape[1:]
            e = self.choice([f"{a.name} @ {b.name}", f"jnp.dot({a.name}, {b.name})", f"jnp.matmul({a.name}, {b.name})"])
            return [self.new(em, e, shape, F)]
        if a.ndim == 2:
            e, shape = self.choice([(f"{a.name} @ {a.name}.T", (a.shape[0], a.shape[0])),
                                    (f"jnp.einsum('ij,ij->i', {a.name}, jnp.sin({a.name}))", (a.shape[0],)),
                                    (f"jnp.einsum('ij,ik->jk', {a.name}, {a.name})", (a.shape[1], a.shape[1]))])
        else:
            e, shape = self.choice([(f"jnp.dot({a.name}, {a.name})", ()), (f"jnp.outer({a.name}, {a.name})", a.shape * 2)])
        return [self.new(em, e, shape, F)]

    def op_concat(self, em, scope, depth):
        a = self.pick(scope, lambda v: v.dtype == F and v.ndim >= 1)
        if a is None:
            return None
        ax = self.r.randrange(a.ndim)
        b = self.pick(scope, lambda v: v.dtype == F and v.ndim == a.ndim and all(
            d == e for i, (d, e) in enumerate(zip(v.shape, a.shape)) if i != ax))
        if b is None:
            return None
        shape = tuple(d + (b.shape[i] if i == ax else 0) for i, d in enumerate(a.shape))
        if self.chance(0.7):
            return [self.new(em, f"jnp.concatenate([{a.name}, {b.name}], axis={ax})", shape, F)]
        if a.shape == b.shape:
            return [self.new(em, f"jnp.stack([{a.name}, {b.name}], axis={ax})", a.shape[:ax] + (2,) + a.shape[ax:], F)]
        return None

    def op_to_int(self, em, scope, depth):
        v = self.pick(scope, lambda v: v.dtype == F)
        if v is None:
            return None
        opts = [(f"({v.name} > 0).astype(jnp.int32)", v.shape), (f"jnp.floor({v.name} * 3.0).astype(jnp.int32)", v.shape),
                (f"jnp.sum({v.name} > 0)", ()), (f"jnp.round({v.name} * 4.0).astype(jnp.int32)", v.shape)]
        if v.ndim >= 1 and v.shape[-1] > 0:
            opts += [(f"jnp.argmax({v.name}, axis=-1)", v.shape[:-1]), (f"jnp.argsort({v.name}, axis=-1)", v.shape)]
        e, shape = self.choice(opts)
        return [self.new(em, e, shape, I, "i")]

    def op_int_arith(self, em, scope, depth):
        a = self.pick(scope, lambda v: v.dtype == I)
        if a is None:
            return None
        b = self.pick(scope, lambda v: v.dtype == I and self.bshape(a.shape, v.shape) is not None)
        opts = [(f"{a.name} + 1", a.shape), (f"{a.name} * 2", a.shape), (f"jnp.maximum({a.name}, 0)", a.shape),
                (f"{a.name} // 2", a.shape), (f"{a.name} % 3", a.shape), (f"jnp.clip({a.name}, 0, 2)", a.shape),
                (f"-{a.name}", a.shape), (f"jnp.abs({a.name})", a.shape), (f"jnp.sum({a.name})", ()),
                (f"{a.name}.astype(jnp.float32) * 0.5", a.shape), (f"jnp.where({a.name} > 1, {a.name}, 0)", a.shape)]
        if a.ndim >= 1:
            opts += [(f"jnp.cumsum({a.name}, axis=0)", a.shape), (f"jnp.max({a.name}, axis=0)" if a.shape[0] else f"jnp.sum({a.name}, axis=0)", a.shape[1:])]
        if b is not None:
            s = self.bshape(a.shape, b.shape)
            opts += [(f"{a.name} + {b.name}", s), (f"{a.name} * {b.name}", s), (f"jnp.minimum({a.name}, {b.name})", s)]
            if self.chance(0.3):
                # an integer divisor that may be zero (JAX: x // 0 == -1 or the like; x % 0 == x)
                opts += [(f"{a.name} // {b.name}", s), (f"{a.name} % {b.name}", s)]
        e, shape = self.choice(opts)
        if "//" in e or "%" in e:
            if b is not None and (f"// {b.name}" in e or f"% {b.name}" in e):
                self.tags.add("int_div_by_var")
        dtype = F if "float32" in e else I
        return [self.new(em, e, shape, dtype, "i" if dtype == I else "v")]

    # gathers, scatters, dynamic slices
    def op_index(self, em, scope, depth):
        nonempty = self.chance(0.9)  # indexing into an empty axis is mostly an error (JAX's IndexError)
        v = self.pick(scope, lambda v: v.dtype in (F, I) and v.ndim >= 1 and (v.size > 0 or not nonempty))
        if v is None:
            return None
        self.tags.add("index")
        kind = self.choice(["getitem", "getitem2", "take", "dslice", "dslice_in_dim", "dindex", "dus", "at", "at_arr",
                            "at_get", "take_along", "slice_fill"])
        if kind == "getitem":
            i = self.int_scalar(em, scope, max(v.shape[0] - 1, 0))
            return [self.new(em, f"{v.name}[{i}]", v.shape[1:], v.dtype)]
        if kind == "getitem2" and v.ndim >= 2:
            i = self.int_scalar(em, scope, max(v.shape[1] - 1, 0))
            j = self.int_scalar(em, scope, max(v.shape[0] - 1, 0))
            if self.chance(0.5):
                return [self.new(em, f"{v.name}[:, {i}]", v.shape[:1] + v.shape[2:], v.dtype)]
            return [self.new(em, f"{v.name}[{j}, {i}]", v.shape[2:], v.dtype)]
        if kind == "take":
            ix = self.int_array(em, scope)
            ax = self.r.randrange(v.ndim)
            mode = self.choice(["", ", mode='clip'", ", mode='fill'", ", mode='wrap'"])
            if ax == 0 and not mode and self.chance(0.5):
                return [self.new(em, f"{v.name}[{ix.name}]", ix.shape + v.shape[1:], v.dtype)]
            return [self.new(em, f"jnp.take({v.name}, {ix.name}, axis={ax}{mode})", v.shape[:ax] + ix.shape + v.shape[ax + 1:], v.dtype)]
        if kind in ("dslice", "dus"):
            sizes = tuple(self.r.randint(0, d) for d in v.shape)
            starts = [self.int_scalar(em, scope, d) for d in v.shape]
            if kind == "dslice":
                return [self.new(em, f"lax.dynamic_slice({v.name}, {tup(starts)}, {shape_str(sizes)})", sizes, v.dtype)]
            self.tags.add("dynamic_update_slice")
            upd = self.to_aval(em, scope, sizes, v.dtype) if self.chance(0.5) else (
                f"jnp.full({shape_str(sizes)}, {'2.5' if v.dtype == F else '7'}, {'jnp.float32' if v.dtype == F else 'jnp.int32'})")
            return [self.new(em, f"lax.dynamic_update_slice({v.name}, {upd}, {tup(starts)})", v.shape, v.dtype)]
        if kind == "dslice_in_dim":
            ax = self.r.randrange(v.ndim)
            size = self.r.randint(0, v.shape[ax])
            i = self.int_scalar(em, scope, v.shape[ax])
            return [self.new(em, f"lax.dynamic_slice_in_dim({v.name}, {i}, {size}, axis={ax})",
                             v.shape[:ax] + (size,) + v.shape[ax + 1:], v.dtype)]
        if kind == "dindex":
            ax = self.r.randrange(v.ndim)
            i = self.int_scalar(em, scope, v.shape[ax])
            keep = self.chance(0.3)
            shape = v.shape[:ax] + ((1,) if keep else ()) + v.shape[ax + 1:]
            return [self.new(em, f"lax.dynamic_index_in_dim({v.name}, {i}, axis={ax}, keepdims={keep})", shape, v.dtype)]
        if kind == "at":
            i = self.int_scalar(em, scope, v.shape[0])
            meth = self.choice(["set", "add", "mul", "min", "max"] + (["divide"] if v.dtype == F else []))
            if meth == "mul":
                self.tags.add("at_mul")
            val = self.to_aval(em, scope, v.shape[1:], v.dtype) if self.chance(0.6) else ("1.5" if v.dtype == F else "2")
            mode = self.choice(["", "", ", mode='drop'", ", mode='clip'"])
            return [self.new(em, f"{v.name}.at[{i}].{meth}({val}{mode})", v.shape, v.dtype)]
        if kind == "at_arr":
            ix = self.int_array(em, scope)
            meth = self.choice(["set", "add", "add", "mul", "max"])
            if meth == "mul":
                self.tags.add("at_mul")
            val = self.to_aval(em, scope, ix.shape + v.shape[1:], v.dtype) if self.chance(0.5) else ("0.5" if v.dtype == F else "3")
            mode = self.choice(["", ", mode='drop'", ", mode='clip'"])
            return [self.new(em, f"{v.name}.at[{ix.name}].{meth}({val}{mode})", v.shape, v.dtype)]
        if kind == "at_get":
            i = self.int_scalar(em, scope, v.shape[0] + 1)
            fill = "-1.0" if v.dtype == F else "-1"
            return [self.new(em, f"{v.name}.at[{i}].get(mode='fill', fill_value={fill})", v.shape[1:], v.dtype)]
        if kind == "take_along" and v.dtype == F and v.shape[-1] > 0:
            return [self.new(em, f"jnp.take_along_axis({v.name}, jnp.argsort(jnp.sin({v.name}), axis=-1), axis=-1)", v.shape, F)]
        if kind == "slice_fill" and v.ndim >= 1:
            return [self.new(em, f"{v.name}.at[1:].set(0)", v.shape, v.dtype)]
        i = self.int_scalar(em, scope, max(v.shape[0] - 1, 0))
        return [self.new(em, f"{v.name}[{i}]", v.shape[1:], v.dtype)]

    # sub-functions -----------------------------------------------------------------------------
    def sub_function(self, em, name, params, scope, depth, out_avals=None, n_out=1, stmts=None, closure=True,
                     want_float=False):
        """Emits `def name(params): ...`; returns the output avals (a list of (shape, dtype))."""
        em(f"def {name}({', '.join(p.name for p in params)}):")
        em.ind += 1
        inner = (list(scope) if closure and self.chance(0.7) else []) + list(params)
        start, line0 = len(inner), len(em.lines)
        inner = self.body(em, inner, self.r.randint(1, 3) if stmts is None else stmts, depth + 1)
        if out_avals is None:
            new = inner[start:] or list(params) or inner
            if want_float:
                new = [v for v in new if v.dtype == F] or [v for v in inner if v.dtype == F]
            outs = []
            for _ in range(n_out):
                if new:
                    outs.append(new[-1] if self.chance(0.6) else self.choice(new))
            if not outs:
                v = self.new(em, "jnp.float32(1.5)", (), F)
                outs = [v]
            out_avals = [(v.shape, v.dtype) for v in outs]
            exprs = [v.name for v in outs]
        else:
            exprs = [self.to_aval(em, inner, s, d) for s, d in out_avals]
        exprs = self.fold_unused(em, inner[start:], line0, exprs, out_avals)
        em(f"return {tup(exprs)}")
        em.ind -= 1
        return out_avals

    def ret_unpack(self, em, expr, avals, p="c"):
        vs = [V(self.fresh(p), s, d) for s, d in avals]
        em(f"{tup([v.name for v in vs])} = {expr}" if len(vs) != 1 else f"{vs[0].name}, = {expr}")
        return vs

    def op_cond(self, em, scope, depth):
        if depth >= self.MAX_DEPTH:
            return None
        self.tags.add("cond")
        ops = [self.pick(scope, lambda v: True) for _ in range(self.r.randint(0, 2))]
        ops = [o for o in ops if o is not None]
        ops = list({o.name: o for o in ops}.values())
        n_out = self.r.randint(1, 2)
        outs = []
        for _ in range(n_out):
            v = self.pick(scope, lambda v: v.dtype in (F, I) and (v.dtype == F or self.chance(0.3)))
            outs.append((v.shape, v.dtype) if v is not None else ((), F))
        fv = self.pick(scope, lambda v: v.dtype == F)
        iv = self.pick(scope, lambda v: v.dtype == I and v.ndim == 0)
        preds = ["True"]
        if fv is not None:
            preds += [f"jnp.sum({fv.name}) > 0"] * 3
        if iv is not None:
            preds += [f"{iv.name} > 0"] * 2
        if self.axes:
            preds += [f"lax.axis_index('{self.choice(self.axes)[0]}') % 2 == 0"]
        pred = self.choice(preds)
        if self.chance(0.4):
            nb = self.r.randint(1, 3)
            self.tags.add("switch")
            names = []
            for _ in range(nb):
                nm = self.fresh("br")
                params = [V(self.fresh("a"), o.shape, o.dtype) for o in ops]
                self.sub_function(em, nm, params, scope, depth, out_avals=outs)
                names.append(nm)
            idx = self.int_scalar(em, scope, nb - 1)
            expr = f"lax.switch({idx}, [{', '.join(names)}], {', '.join(o.name for o in ops)})"
        else:
            t, f_ = self.fresh("tb"), self.fresh("fb")
            for nm in (t, f_):
                params = [V(self.fresh("a"), o.shape, o.dtype) for o in ops]
                self.sub_function(em, nm, params, scope, depth, out_avals=outs)
            expr = f"lax.cond({pred}, {t}, {f_}{''.join(', ' + o.name for o in ops)})"
        return self.ret_unpack(em, expr, outs)

    def carry_of(self, scope):
        vs = []
        for _ in range(self.r.randint(1, 2)):
            v = self.pick(scope, lambda v: v.dtype == F or self.chance(0.4))
            if v is not None and v.name not in [w.name for w in vs]:
                vs.append(v)
        return vs

    def op_scan(self, em, scope, depth):
        if depth >= self.MAX_DEPTH:
            return None
        self.tags.add("scan")
        carry = self.carry_of(scope)
        if not carry:
            return None
        if any(c.dtype == K for c in carry):
            self.tags.add("key_carry")
        xs = self.pick(scope, lambda v: v.ndim >= 1 and v.dtype in (F, I))
        length = None
        if xs is None or self.chance(0.25):
            xs, length = None, self.wchoice([(0, 0.1), (1, 0.2), (2, 0.3), (3, 0.4)])
        else:
            length = xs.shape[0]
            if xs.dtype == I:
                self.tags.add("scan_int_xs")
        struct = self.choice(["single", "tuple", "dict"]) if len(carry) == 1 else self.choice(["tuple", "dict"])
        body = self.fresh("body")
        cps = [V(self.fresh("c"), c.shape, c.dtype) for c in carry]
        xp = V(self.fresh("x"), xs.shape[1:], xs.dtype) if xs is not None else None
        em(f"def {body}(carry, {xp.name if xp else '_'}):")
        em.ind += 1
        if struct == "single":
            em(f"{cps[0].name} = carry")
        elif struct == "tuple":
            em(f"{tup([c.name for c in cps])} = carry")
        else:
            for k, c in enumerate(cps):
                em(f"{c.name} = carry['k{k}']")
        inner = (list(scope) if self.chance(0.6) else []) + cps + ([xp] if xp else [])
        start, line0 = len(inner), len(em.lines)
        inner = self.body(em, inner, self.r.randint(1, 3), depth + 1)
        newc = [self.to_aval(em, inner, c.shape, c.dtype, avoid={c.name}) for c in cps]
        if self.chance(0.5):
            newc = self.fold_unused(em, inner[start:], line0, newc, [(c.shape, c.dtype) for c in cps])
        if struct == "single":
            cexpr = newc[0]
        elif struct == "tuple":
            cexpr = tup(newc)
        else:
            cexpr = "{" + ", ".join(f"'k{k}': {e}" for k, e in enumerate(newc)) + "}"
        ys = None
        if self.chance(0.7):
            cand = inner[start:] or inner
            y = cand[-1] if self.chance(0.5) else self.choice(cand)
            ys = (y.shape, y.dtype)
            em(f"return {cexpr}, {y.name}")
        else:
            self.tags.add("scan_no_ys")
            em(f"return {cexpr}, None")
        em.ind -= 1
        if struct == "single":
            init = carry[0].name
        elif struct == "tuple":
            init = tup([c.name for c in carry])
        else:
            init = "{" + ", ".join(f"'k{k}': {c.name}" for k, c in enumerate(carry)) + "}"
        kw = ""
        if xs is None or self.chance(0.2):
            kw += f", length={length}"
        if self.chance(0.3):
            kw += ", reverse=True"
        if self.chance(0.15):
            kw += ", unroll=2"
        cout = [V(self.fresh("c"), c.shape, c.dtype) for c in carry]
        yv = V(self.fresh("ys"), (length,) + ys[0], ys[1]) if ys else None
        if struct == "single":
            lhs = cout[0].name
        elif struct == "tuple":
            lhs = tup([c.name for c in cout])
        else:
            lhs = self.fresh("cd")
        em(f"{lhs}, {yv.name if yv else '_'} = lax.scan({body}, {init}, {xs.name if xs is not None else 'None'}{kw})")
        if struct == "dict":
            for k, c in enumerate(cout):
                em(f"{c.name} = {lhs}['k{k}']")
        if length == 0:
            self.tags.add("zero_length_scan")
        return cout + ([yv] if yv else [])

    def op_fori(self, em, scope, depth):
        if depth >= self.MAX_DEPTH:
            return None
        carry = self.carry_of(scope)
        if not carry:
            return None
        traced = self.chance(0.35)
        lo = str(self.r.randint(0, 1))
        hi = str(self.r.randint(0, 4))
        if traced:
            self.tags.add("fori_traced")
            hi = f"jnp.clip({self.int_scalar(em, scope, 3)}, 0, 4)"
        else:
            self.tags.add("fori_static")
        body = self.fresh("fbody")
        ip = V(self.fresh("i"), (), I)
        cps = [V(self.fresh("c"), c.shape, c.dtype) for c in carry]
        em(f"def {body}({ip.name}, carry):")
        em.ind += 1
        em(f"{tup([c.name for c in cps])} = carry")
        inner = (list(scope) if self.chance(0.6) else []) + cps + [ip]
        start, line0 = len(inner), len(em.lines)
        inner = self.body(em, inner, self.r.randint(1, 3), depth + 1)
        newc = [self.to_aval(em, inner, c.shape, c.dtype, avoid={c.name}) for c in cps]
        newc = self.fold_unused(em, inner[start:], line0, newc, [(c.shape, c.dtype) for c in cps])
        em(f"return {tup(newc)}")
        em.ind -= 1
        out = [V(self.fresh("c"), c.shape, c.dtype) for c in carry]
        em(f"{tup([c.name for c in out])} = lax.fori_loop({lo}, {hi}, {body}, {tup([c.name for c in carry])})")
        return out

    def op_while(self, em, scope, depth):
        if depth >= self.MAX_DEPTH:
            return None
        self.tags.add("while")
        carry = self.carry_of(scope)
        if not carry:
            return None
        n = self.int_scalar(em, scope, 3) if self.chance(0.5) else str(self.r.randint(0, 3))
        nv = self.new(em, f"jnp.minimum({n}, 4)", (), I, "n")
        cf, bf = self.fresh("wcond"), self.fresh("wbody")
        em(f"def {cf}(carry):")
        em(f"    return carry[0] < {nv.name}")
        ip = V(self.fresh("k"), (), I)
        cps = [V(self.fresh("c"), c.shape, c.dtype) for c in carry]
        em(f"def {bf}(carry):")
        em.ind += 1
        em(f"{tup([ip.name] + [c.name for c in cps])} = carry")
        inner = (list(scope) if self.chance(0.6) else []) + cps + [ip]
        start, line0 = len(inner), len(em.lines)
        inner = self.body(em, inner, self.r.randint(1, 3), depth + 1)
        newc = [self.to_aval(em, inner, c.shape, c.dtype, avoid={c.name}) for c in cps]
        newc = self.fold_unused(em, inner[start:], line0, newc, [(c.shape, c.dtype) for c in cps])
        em(f"return {tup([ip.name + ' + 1'] + newc)}")
        em.ind -= 1
        out = [V(self.fresh("c"), c.shape, c.dtype) for c in carry]
        em(f"{tup(['_'] + [c.name for c in out])} = lax.while_loop({cf}, {bf}, {tup(['jnp.int32(0)'] + [c.name for c in carry])})")
        return out

    def op_map(self, em, scope, depth):
        if depth >= self.MAX_DEPTH:
            return None
        xs = self.pick(scope, lambda v: v.ndim >= 1 and v.dtype in (F, I))
        if xs is None:
            return None
        self.tags.add("lax_map")
        fn = self.fresh("mfn")
        p = V(self.fresh("r"), xs.shape[1:], xs.dtype)
        outs = self.sub_function(em, fn, [p], scope, depth, n_out=1)
        kw = ""
        if self.chance(0.4):
            kw = f", batch_size={self.r.randint(1, 3)}"
            self.tags.add("lax_map_batch")
            if xs.shape[0] == 0:
                self.tags.add("lax_map_batch_empty")
        return self.ret_unpack(em, f"lax.map({fn}, {xs.name}{kw})", [((xs.shape[0],) + s, d) for s, d in outs], "m")

    def op_collective(self, em, scope, depth):
        if not self.axes:
            return None
        name, size = self.choice(self.axes)
        v = self.pick(scope, lambda v: v.dtype in (F, I))
        if v is None:
            return None
        self.tags.add("collective")
        if depth > 0:
            self.tags.add("collective_nested")
        opts = [("psum", v.shape), ("pmean", v.shape), ("pmax", v.shape), ("pmin", v.shape),
                ("all_gather", (size,) + v.shape), ("ppermute", v.shape), ("axis_index", ())]
        if v.ndim >= 1:
            opts.append(("all_gather_tiled", (size * v.shape[0],) + v.shape[1:]))
        op, shape = self.choice(opts)
        self.tags.add(op)
        dtype = v.dtype
        if op == "pmean" and v.dtype == I:
            dtype = F
        if op == "all_gather_tiled":
            e = f"lax.all_gather({v.name}, '{name}', tiled=True)"
        elif op == "ppermute":
            perm = [(j, (j + 1) % size) for j in range(size)]
            e = f"lax.ppermute({v.name}, '{name}', perm={perm})"
        elif op == "axis_index":
            e, dtype = f"lax.axis_index('{name}')", I
        else:
            e = f"lax.{op}({v.name}, '{name}')"
        return [self.new(em, e, shape, dtype)]

    def key_of(self, em, scope):
        kv = self.pick(scope, lambda v: v.dtype == K and v.shape == (2,))
        if kv is None or self.chance(0.2):
            kv = self.new(em, f"jax.random.PRNGKey({self.r.randint(0, 1000)})", (2,), K, "key")
        return kv

    def op_random(self, em, scope, depth):
        self.tags.add("random")
        kind = self.choice(["split", "fold_in", "normal", "uniform", "randint", "bernoulli", "vmap_keys", "permutation"])
        k = self.key_of(em, scope)
        fv = self.pick(scope, lambda v: v.dtype == F)
        shape = fv.shape if fv is not None and self.chance(0.7) else self.shape()
        if kind == "split":
            if self.chance(0.5):
                a, b = V(self.fresh("key"), (2,), K), V(self.fresh("key"), (2,), K)
                em(f"{a.name}, {b.name} = jax.random.split({k.name})")
                return [a, b]
            n = self.r.randint(0, 3)
            return [self.new(em, f"jax.random.split({k.name}, {n})", (n, 2), K, "keys")]
        if kind == "fold_in":
            self.tags.add("fold_in")
            return [self.new(em, f"jax.random.fold_in({k.name}, {self.int_scalar(em, scope, 10)})", (2,), K, "key")]
        if kind == "normal":
            return [self.new(em, f"jax.random.normal({k.name}, {shape_str(shape)}, dtype=RF)", shape, F)]
        if kind == "uniform":
            return [self.new(em, f"jax.random.uniform({k.name}, {shape_str(shape)}, minval=-1.0, maxval=1.0, dtype=RF)", shape, F)]
        if kind == "randint":
            return [self.new(em, f"jax.random.randint({k.name}, {shape_str(shape)}, 0, 4, dtype=RI)", shape, I, "i")]
        if kind == "bernoulli":
            return [self.new(em, f"jax.random.bernoulli({k.name}, 0.5, {shape_str(shape)}).astype(jnp.float32)", shape, F)]
        if kind == "permutation":
            n = self.r.randint(0, 4)
            return [self.new(em, f"jax.random.permutation({k.name}, {n})", (n,), I, "i")]
        ks = self.pick(scope, lambda v: v.dtype == K and v.ndim == 2)
        if ks is None:
            n = self.r.randint(1, 3)
            ks = self.new(em, f"jax.random.split({k.name}, {n})", (n, 2), K, "keys")
        self.tags.add("vmap_keys")
        return [self.new(em, f"jax.vmap(lambda kk: jax.random.normal(kk, {shape_str(shape)}, dtype=RF))({ks.name})", (ks.shape[0],) + shape, F)]

    def custom_helper(self, kind):
        """A module-level custom_jvp / custom_vjp function of one array (made once per kind)."""
        for k, n in self.helpers:
            if k == kind and self.chance(0.7):
                return n
        name = self.fresh("cj" if kind == "jvp" else "cv")
        t = self.top
        prim = self.choice(["jnp.sin({0}) * 2.0", "jnp.tanh({0}) + {0} * {0}", "{0} * jnp.cos({0})", "jnp.log1p({0} * {0})"])
        closure = self.chance(0.4)
        const = ""
        if closure:
            const = self.fresh("C")
            t(f"{const} = jnp.asarray({self.r.choice([0.5, 1.25, -0.75])}, dtype=jnp.float32)")
            prim = prim + f" + {const}"
            self.tags.add("custom_closure_const")
        if kind == "jvp":
            self.tags.add("custom_jvp_fn")
            t("@jax.custom_jvp")
            t(f"def {name}(x):")
            t(f"    return {prim.format('x')}")
            t(f"@{name}.defjvp")
            t(f"def {name}_jvp(primals, tangents):")
            t("    x, = primals")
            t("    tx, = tangents")
            rule = self.choice(["jnp.cos(x) * tx", "tx * 3.0", "(1.0 + x * x) * tx"]) + (f" * {const}" if closure else "")
            t(f"    return {name}(x), {rule}")
        else:
            self.tags.add("custom_vjp_fn")
            t("@jax.custom_vjp")
            t(f"def {name}(x):")
            t(f"    return {prim.format('x')}")
            t(f"def {name}_fwd(x):")
            t(f"    return {name}(x), (x, jnp.cos(x))")
            t(f"def {name}_bwd(res, g):")
            t("    x, c = res")
            rule = self.choice(["(g * c,)", "(g * 2.0 + x,)", "(g * x * c,)"])
            t(f"    return {rule}")
            t(f"{name}.defvjp({name}_fwd, {name}_bwd)")
        self.helpers.append((kind, name))
        return name

    def op_custom(self, em, scope, depth):
        v = self.pick(scope, lambda v: v.dtype == F)
        if v is None:
            return None
        name = self.custom_helper(self.choice(["jvp", "vjp"]))
        return [self.new(em, f"{name}({v.name})", v.shape, F)]

    def op_checkpoint(self, em, scope, depth):
        if depth >= self.MAX_DEPTH:
            return None
        ps = [self.pick(scope, lambda v: v.dtype == F) for _ in range(self.r.randint(1, 2))]
        ps = list({p.name: p for p in ps if p is not None}.values())
        if not ps:
            return None
        self.tags.add("checkpoint_inner")
        fn = self.fresh("ck")
        params = [V(self.fresh("a"), p.shape, p.dtype) for p in ps]
        outs = self.sub_function(em, fn, params, scope, depth, n_out=1, closure=False)
        kw = self.choice(["", ", prevent_cse=False", ", policy=jax.checkpoint_policies.nothing_saveable",
                          ", policy=jax.checkpoint_policies.dots_saveable"])
        return self.ret_unpack(em, f"jax.checkpoint({fn}{kw})({', '.join(p.name for p in ps)})", outs, "k")

    def op_inner_transform(self, em, scope, depth):
        """A transformation applied inside the body (under control flow and the outer transforms)."""
        if depth >= self.MAX_DEPTH:
            return None
        v = self.pick(scope, lambda v: v.dtype == F)
        if v is None:
            return None
        kind = self.choice(["grad", "vmap", "jvp", "value_and_grad", "jit", "vmap1"])
        if kind == "vmap" and v.ndim == 0 or kind == "vmap1" and v.ndim < 2:
            kind = "grad"
        self.tags.add("inner_" + kind)
        fn = self.fresh("g")
        if kind == "vmap":
            p = V(self.fresh("z"), v.shape[1:], F)
        elif kind == "vmap1":
            p = V(self.fresh("z"), v.shape[:1] + v.shape[2:], F)
        else:
            p = V(self.fresh("z"), v.shape, F)
        (oshape, odt), = self.sub_function(em, fn, [p], scope, depth, n_out=1, want_float=True)
        if odt != F:
            return None
        if kind == "grad":
            return [self.new(em, f"jax.grad(lambda z: jnp.sum({fn}(z)[0]))({v.name})", v.shape, F)]
        if kind == "value_and_grad":
            a, b = V(self.fresh("v"), (), F), V(self.fresh("v"), v.shape, F)
            em(f"{a.name}, {b.name} = jax.value_and_grad(lambda z: jnp.sum(jnp.sin({fn}(z)[0])))({v.name})")
            return [a, b]
        if kind == "jvp":
            return [self.new(em, f"jax.jvp({fn}, ({v.name},), (jnp.ones_like({v.name}),))[1][0]", oshape, F)]
        if kind == "jit":
            return [self.new(em, f"jax.jit({fn})({v.name})[0]", oshape, F)]
        if kind == "vmap":
            return [self.new(em, f"jax.vmap({fn})({v.name})[0]", (v.shape[0],) + oshape, F)]
        return [self.new(em, f"jax.vmap({fn}, in_axes=1, out_axes=-1)({v.name})[0]", oshape + (v.shape[1],), F)]

    def op_assoc_scan(self, em, scope, depth):
        v = self.pick(scope, lambda v: v.dtype in (F, I) and v.ndim >= 1)
        if v is None:
            return None
        self.tags.add("associative_scan")
        ax = self.r.randrange(v.ndim)
        fn = self.choice(["lax.add", "jnp.maximum", "lambda a, b: a + 2 * b" if v.dtype == I else "lambda a, b: a * 0.5 + b"])
        rev = ", reverse=True" if self.chance(0.3) else ""
        return [self.new(em, f"lax.associative_scan({fn}, {v.name}, axis={ax}{rev})", v.shape, v.dtype)]

    OPS = [("op_assoc_scan", 0.25), ("op_unary", 3), ("op_binary", 3), ("op_reduce", 2), ("op_reshape", 1.2), ("op_matmul", 1), ("op_concat", 0.5),
           ("op_to_int", 0.8), ("op_int_arith", 0.8), ("op_index", 3), ("op_cond", 1.2), ("op_scan", 1.2),
           ("op_fori", 0.9), ("op_while", 0.6), ("op_map", 0.5), ("op_collective", 2), ("op_random", 0.7),
           ("op_custom", 0.7), ("op_checkpoint", 0.5), ("op_inner_transform", 0.8)]

    def body(self, em, scope, n, depth):
        scope = list(scope)
        for _ in range(n):
            for _attempt in range(6):
                op = self.wchoice(self.OPS)
                res = getattr(self, op)(em, scope, depth)
                if res:
                    scope.extend(res)
                    break
        return scope

    # ---- the stack of transformations ------------------------------------------------------
    def params(self):
        ps = []
        for _ in range(self.r.randint(1, 3)):
            ps.append(V(self.fresh("x"), self.shape(), F))
        if self.chance(0.3):
            ps.append(V(self.fresh("n"), self.shape(1) if self.chance(0.5) else (), I))
        if self.chance(0.15):
            ps.append(V(self.fresh("key"), (2,), K))
        self.r.shuffle(ps)
        return ps

    LEVELS = [("jit", 3), ("vmap", 3.5), ("grad", 2), ("value_and_grad", 0.8), ("jvp", 1), ("vjp", 1), ("linearize", 0.8),
              ("checkpoint", 0.7), ("custom_jvp", 0.6), ("custom_vjp", 0.6), ("jacfwd", 0.3), ("jacrev", 0.3),
              ("lax_map", 0.5), ("cond", 0.5)]

    def generate(self):
        kinds = [self.wchoice(self.LEVELS) for _ in range(self.wchoice([(1, 0.25), (2, 0.35), (3, 0.3), (4, 0.1)]))]
        plans = []
        for k in kinds:
            if k == "vmap":
                size = self.wchoice([(0, 0.04), (1, 0.16), (2, 0.4), (3, 0.4)])
                name = f"i{len(plans)}" if self.chance(0.65) else None
                if name:
                    self.axes.append((name, size))
                plans.append((k, {"size": size, "name": name}))
            else:
                plans.append((k, {}))
        em = Em()
        params = self.params()
        em(f"def f0({', '.join(p.name for p in params)}):")
        em.ind += 1
        line0 = len(em.lines)
        scope = self.body(em, params, self.r.randint(2, 6), 0)
        new = scope[len(params):] or scope
        outs = []
        for _ in range(self.r.randint(1, 3)):
            v = new[-1] if not outs else self.choice(new)
            if v.name not in [o.name for o in outs]:
                outs.append(v)
        if not any(o.dtype == F for o in outs):
            f = [v for v in scope if v.dtype == F]
            outs.append(f[-1] if f else self.new(em, "jnp.float32(0.25)", (), F))
        exprs = self.fold_unused(em, [v for v in scope[len(params):] if v not in outs], line0, [o.name for o in outs],
                                 [(o.shape, o.dtype) for o in outs])
        em(f"return {tup(exprs)}")
        em.ind -= 1
        sig = [V(p.name, p.shape, p.dtype) for p in params]
        out_avals = [(o.shape, o.dtype) for o in outs]
        fname = "f0"
        for lvl, (kind, opt) in enumerate(plans, 1):
            name = f"f{lvl}"
            res = getattr(self, "lvl_" + kind)(em, name, fname, sig, out_avals, opt)
            if res is None:
                res = self.lvl_jit(em, name, fname, sig, out_avals, {})
            sig, out_avals = res
            fname = name
        # main: build the inputs
        em("def main():")
        em.ind += 1
        args = []
        for k, p in enumerate(sig):
            s = self.seed * 16 + k
            if p.dtype == F and p.shape == () and self.chance(0.1):
                args.append(repr(round(self.r.uniform(-1, 1), 3)))
                self.tags.add("python_scalar_arg")
                continue
            kind = {F: "f", I: "i", K: "k"}[p.dtype]
            em(f"a{k} = _in({s}, {shape_str(p.shape)}, '{kind}')")
            args.append(f"a{k}")
        em(f"return {fname}({', '.join(args)})")
        em.ind -= 1
        src = INPUT_HELPER + self.top.text() + em.text()
        return Program(self.seed, src, self.tags | {"L_" + k for k, _ in plans}, out_avals)

    def lvl_jit(self, em, name, f, sig, outs, opt):
        em(f"{name} = jax.jit({f})")
        return sig, outs

    def lvl_checkpoint(self, em, name, f, sig, outs, opt):
        kw = self.choice(["", ", policy=jax.checkpoint_policies.nothing_saveable", ", prevent_cse=False"])
        em(f"{name} = jax.checkpoint({f}{kw})")
        return sig, outs

    def lvl_vmap(self, em, name, f, sig, outs, opt):
        B = opt["size"]
        axes, nsig = [], []
        for p in sig:
            if self.chance(0.3):
                ax = None
            elif p.dtype == K:
                ax = 0
            else:
                ax = self.wchoice([(0, 0.7), (p.ndim, 0.15), (-1, 0.15)])
                if p.ndim == 0 and ax == -1:
                    ax = 0
            axes.append(ax)
        if all(a is None for a in axes) and not self.chance(0.03):
            axes[self.r.randrange(len(axes))] = 0
        for p, ax in zip(sig, axes):
            if ax is None:
                nsig.append(V(p.name, p.shape, p.dtype))
            else:
                pos = ax if ax >= 0 else p.ndim + 1 + ax
                nsig.append(V(p.name, p.shape[:pos] + (B,) + p.shape[pos:], p.dtype))
        if any(a is None for a in axes) and any(p.dtype == F and p.ndim == 0 for p, a in zip(sig, axes) if a is None):
            pass
        out_axes = 0
        if self.chance(0.2):
            out_axes = -1
        nouts = []
        for s, d in outs:
            pos = out_axes if out_axes >= 0 else len(s) + 1 + out_axes
            nouts.append((s[:pos] + (B,) + s[pos:], d))
        if len(set(axes)) == 1 and self.chance(0.5):
            ia = repr(axes[0])
        else:
            ia = tup([repr(a) for a in axes])
        kw = f", out_axes={out_axes}" if out_axes != 0 or self.chance(0.2) else ""
        if opt["name"]:
            kw += f", axis_name='{opt['name']}'"
            self.tags.add("vmap_axis_name")
        if B == 0:
            self.tags.add("vmap_size0")
        if any(a is None for a in axes):
            self.tags.add("vmap_none")
        em(f"{name} = jax.vmap({f}, in_axes={ia}{kw})")
        return nsig, nouts

    def fidx(self, outs):
        return [k for k, (s, d) in enumerate(outs) if d == F]

    def diff_params(self, sig, at_least_one=True):
        fl = [k for k, p in enumerate(sig) if p.dtype == F]
        if not fl:
            return None
        chosen = [k for k in fl if self.chance(0.7)]
        if not chosen:
            chosen = [self.choice(fl)]
        return chosen

    def loss_expr(self, outs, o="o"):
        terms = []
        for k in self.fidx(outs):
            t = self.choice(["jnp.sum({})", "jnp.sum(jnp.sin({}))", "jnp.mean({}) * 2.0", "jnp.sum({} * {})"])
            terms.append(t.format(f"{o}[{k}]", f"{o}[{k}]"))
        return " + ".join(terms)

    def head(self, em, name, sig):
        em(f"def {name}({', '.join(p.name for p in sig)}):")
        em.ind += 1

    def lvl_grad(self, em, name, f, sig, outs, opt, value=False):
        dp = self.diff_params(sig)
        if dp is None or not self.fidx(outs):
            return None
        self.head(em, name, sig)
        ints = [k for k, (s, d) in enumerate(outs) if d != F]
        aux = bool(ints) and self.chance(0.6)
        em(f"def loss({', '.join(p.name for p in sig)}):")
        em(f"    o = {f}({', '.join(p.name for p in sig)})")
        if aux:
            em(f"    return {self.loss_expr(outs)}, {tup([f'o[{k}]' for k in ints])}")
        else:
            em(f"    return {self.loss_expr(outs)}")
        single = len(dp) == 1 and self.chance(0.5)
        argnums = str(dp[0]) if single else tup([str(k) for k in dp])
        tr = "value_and_grad" if value else "grad"
        call = f"jax.{tr}(loss, argnums={argnums}{', has_aux=True' if aux else ''})({', '.join(p.name for p in sig)})"
        g = "(g,)" if single else "g"
        if value and aux:
            em(f"(val, aux), g = {call}")
            em(f"return (val, *{g}, *aux)")
        elif value:
            em(f"val, g = {call}")
            em(f"return (val, *{g})")
        elif aux:
            em(f"g, aux = {call}")
            em(f"return (*{g}, *aux)")
        else:
            em(f"g = {call}")
            em(f"return {g if not single else '(g,)'}")
        em.ind -= 1
        nouts = ([((), F)] if value else []) + [(sig[k].shape, F) for k in dp] + ([outs[k] for k in ints] if aux else [])
        return sig, nouts

    def lvl_value_and_grad(self, em, name, f, sig, outs, opt):
        return self.lvl_grad(em, name, f, sig, outs, opt, value=True)

    def inner_float_fn(self, em, f, sig, outs, dp):
        """def g(<diff params>): the float outputs of f, the other params closed over."""
        fo = self.fidx(outs)
        em(f"def g({', '.join(sig[k].name for k in dp)}):")
        em(f"    o = {f}({', '.join(p.name for p in sig)})")
        em(f"    return {tup([f'o[{k}]' for k in fo])}")
        return fo

    def tangent(self, p):
        return self.choice([f"jnp.cos({p.name})", f"jnp.ones_like({p.name})", f"{p.name} * 0.5 + 1.0"])

    def lvl_jvp(self, em, name, f, sig, outs, opt):
        dp = self.diff_params(sig)
        if dp is None or not self.fidx(outs):
            return None
        self.head(em, name, sig)
        fo = self.inner_float_fn(em, f, sig, outs, dp)
        em(f"p, t = jax.jvp(g, {tup([sig[k].name for k in dp])}, {tup([self.tangent(sig[k]) for k in dp])})")
        em("return (*p, *t)")
        em.ind -= 1
        return sig, [outs[k] for k in fo] * 2

    def lvl_vjp(self, em, name, f, sig, outs, opt):
        dp = self.diff_params(sig)
        if dp is None or not self.fidx(outs):
            return None
        self.head(em, name, sig)
        fo = self.inner_float_fn(em, f, sig, outs, dp)
        em(f"p, pb = jax.vjp(g, {', '.join(sig[k].name for k in dp)})")
        cts = [self.choice([f"jnp.sin(p[{j}]) + 1.0", f"jnp.ones_like(p[{j}])", f"p[{j}] * 2.0"]) for j in range(len(fo))]
        em(f"ct = pb({tup(cts)})")
        em("return (*p, *ct)")
        em.ind -= 1
        return sig, [outs[k] for k in fo] + [(sig[k].shape, F) for k in dp]

    def lvl_linearize(self, em, name, f, sig, outs, opt):
        dp = self.diff_params(sig)
        if dp is None or not self.fidx(outs):
            return None
        self.head(em, name, sig)
        fo = self.inner_float_fn(em, f, sig, outs, dp)
        em(f"p, lin = jax.linearize(g, {', '.join(sig[k].name for k in dp)})")
        em(f"t = lin({', '.join(self.tangent(sig[k]) for k in dp)})")
        em("return (*p, *t)")
        em.ind -= 1
        return sig, [outs[k] for k in fo] * 2

    def lvl_jac(self, em, name, f, sig, outs, opt, fwd):
        dp = self.diff_params(sig)
        fo = self.fidx(outs)
        if dp is None or not fo:
            return None
        k = self.choice(dp)
        if sum(int(np.prod(outs[j][0])) for j in fo) * max(sig[k].size, 1) > 300:
            return None
        self.head(em, name, sig)
        self.inner_float_fn(em, f, sig, outs, [k])
        em(f"return tuple(jax.{'jacfwd' if fwd else 'jacrev'}(g)({sig[k].name}))")
        em.ind -= 1
        return sig, [(outs[j][0] + sig[k].shape, F) for j in fo]

    def lvl_jacfwd(self, em, name, f, sig, outs, opt):
        return self.lvl_jac(em, name, f, sig, outs, opt, True)

    def lvl_jacrev(self, em, name, f, sig, outs, opt):
        return self.lvl_jac(em, name, f, sig, outs, opt, False)

    def all_params_fn(self, em, f, sig, outs, name="g"):
        """def g(<every param>): the float outputs of f. Custom rules get every parameter explicitly:
        JAX cannot differentiate a custom rule closing over values traced by an enclosing jit or loop."""
        fo = self.fidx(outs)
        em(f"def {name}({', '.join(p.name for p in sig)}):")
        em(f"    o = {f}({', '.join(p.name for p in sig)})")
        em(f"    return {tup([f'o[{k}]' for k in fo])}")
        return fo

    def lvl_custom_jvp(self, em, name, f, sig, outs, opt):
        fo = self.fidx(outs)
        dp = [k for k, p in enumerate(sig) if p.dtype == F]
        if not fo or not dp:
            return None
        self.head(em, name, sig)
        em("@jax.custom_jvp")
        self.all_params_fn(em, f, sig, outs)
        em("@g.defjvp")
        em("def g_jvp(primals, tangents):")
        em.ind += 1
        if self.chance(0.4):
            self.tags.add("custom_jvp_level_true_rule")
            self.all_params_fn(em, f, sig, outs, "h")
            em("return jax.jvp(h, primals, tangents)")
        else:
            em("o = g(*primals)")
            em("s = " + " + ".join(f"jnp.sum(tangents[{j}] * jnp.cos(primals[{j}]))" for j in dp))
            em("return o, tuple(jnp.tanh(v) * s + v * 0.0 for v in o)")
        em.ind -= 1
        em(f"return g({', '.join(p.name for p in sig)})")
        em.ind -= 1
        return sig, [outs[k] for k in fo]

    def lvl_custom_vjp(self, em, name, f, sig, outs, opt):
        fo = self.fidx(outs)
        dp = [k for k, p in enumerate(sig) if p.dtype == F]
        if not fo or not dp:
            return None
        self.head(em, name, sig)
        em("@jax.custom_vjp")
        self.all_params_fn(em, f, sig, outs)
        args = ", ".join(p.name for p in sig)
        if self.chance(0.35):
            self.tags.add("custom_vjp_level_pullback_residual")
            self.all_params_fn(em, f, sig, outs, "h")
            em(f"def g_fwd({args}):")
            em(f"    return jax.vjp(h, {args})")
            em("def g_bwd(pb, ct):")
            em("    return pb(ct)")
            if any(p.dtype != F for p in sig):
                self.tags.add("vjp_int_input")
        else:
            em(f"def g_fwd({args}):")
            em(f"    return g({args}), {tup([p.name for p in sig])}")
            em("def g_bwd(res, ct):")
            em("    s = " + " + ".join(f"jnp.sum(ct[{j}])" for j in range(len(fo))))
            em("    return " + tup([f"jnp.cos(res[{k}]) * s" if p.dtype == F else "None" for k, p in enumerate(sig)]))
        em("g.defvjp(g_fwd, g_bwd)")
        em(f"return g({args})")
        em.ind -= 1
        return sig, [outs[k] for k in fo]

    def lvl_lax_map(self, em, name, f, sig, outs, opt):
        L = self.wchoice([(0, 0.1), (1, 0.2), (2, 0.4), (3, 0.3)])
        kw = f", batch_size={self.r.randint(1, 3)}" if self.chance(0.4) else ""
        if kw:
            self.tags.add("lax_map_batch")
            if L == 0:
                self.tags.add("lax_map_batch_empty")
        self.head(em, name, sig)
        em(f"return lax.map(lambda a: {f}(*a), {tup([p.name for p in sig])}{kw})")
        em.ind -= 1
        return [V(p.name, (L,) + p.shape, p.dtype) for p in sig], [((L,) + s, d) for s, d in outs]

    def lvl_cond(self, em, name, f, sig, outs, opt):
        self.head(em, name, sig)
        fl = [p for p in sig if p.dtype in (F, I)]
        pred = f"jnp.sum({fl[0].name}) > 0" if fl else "True"
        args = ", ".join(p.name for p in sig)
        em(f"def alt({args}):")
        em(f"    o = {f}({args})")
        em("    return " + tup([f"o[{k}] * 0.5" if d == F else (f"o[{k}] + 1" if d == I else f"o[{k}]")
                                 for k, (s, d) in enumerate(outs)]))
        em(f"return lax.cond({pred}, {f}, alt, {args})")
        em.ind -= 1
        self.tags.add("cond_level")
        return sig, outs


def generate(seed):
    return Gen(seed).generate()


if __name__ == "__main__":
    import sys
    for s in sys.argv[1:] or ["0"]:
        p = generate(int(s))
        print(f"# seed {s}  tags: {' '.join(p.tags)}")
        print(p.text("xjax"))
