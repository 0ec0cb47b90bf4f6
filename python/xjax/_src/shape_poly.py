"""Symbolic dimensions (jax.export.symbolic_shape) and jax.eval_shape over them.

xjax's shapes are concrete: a symbolic dimension cannot enter a trace. What xjax supports is the use shape
inference makes of them (Keras builds its models this way): `eval_shape` of a function whose argument
shapes hold symbolic dimensions. It evaluates the function's shapes at sample sizes that satisfy the
constraints and reads each output dimension as an affine function of the symbols (c0 + c1*a + c2*b ...),
checked at one more sample; an output dimension that is not affine (a // 2, a * b) raises
NotImplementedError, and an error the function raises at any sample is raised as it is. Any other use of
a symbolic dimension (jit, make_jaxpr, an array's shape) raises NotImplementedError.
"""
import re

_BASE = 100  # sample sizes sit well above any lower bound and away from one another (see _samples)
_STEP = 3


def _dim(terms, const, scope):
    """An affine expression, or the int it is when no symbol is left in it (b - b is 0)."""
    terms = {name: c for name, c in terms.items() if c}
    return SymbolicDim(terms, const, scope) if terms else const


class SymbolicDim:
    """An affine expression of named symbolic sizes: `const + sum(coeff * symbol)`."""

    __slots__ = ("terms", "const", "scope")

    def __init__(self, terms, const=0, scope=None):
        self.terms = terms
        self.const = const
        self.scope = scope  # the SymbolicScope holding the symbols' lower bounds

    def _combine(self, other, sign):
        if isinstance(other, SymbolicDim):
            terms = dict(self.terms)
            for name, c in other.terms.items():
                terms[name] = terms.get(name, 0) + sign * c
            return _dim(terms, self.const + sign * other.const, self.scope or other.scope)
        if isinstance(other, int):
            return _dim(self.terms, self.const + sign * other, self.scope)
        return NotImplemented

    def __add__(self, other):
        return self._combine(other, 1)

    __radd__ = __add__

    def __sub__(self, other):
        return self._combine(other, -1)

    def __rsub__(self, other):
        return (-self)._combine(other, 1)

    def __neg__(self):
        return SymbolicDim({n: -c for n, c in self.terms.items()}, -self.const, self.scope)

    def __mul__(self, other):
        if not isinstance(other, int):
            return NotImplemented
        return _dim({n: c * other for n, c in self.terms.items()}, self.const * other, self.scope)

    __rmul__ = __mul__

    def __eq__(self, other):
        if isinstance(other, int):
            return not self.terms and self.const == other
        return isinstance(other, SymbolicDim) and (self.terms, self.const) == (other.terms, other.const)

    def __hash__(self):
        return hash((tuple(sorted(self.terms.items())), self.const))

    def _concrete(self, *_):
        raise NotImplementedError(f"symbolic dimension {self}: xjax computes with concrete shapes; symbolic "
                                  f"dimensions are supported by jax.eval_shape only")

    __index__ = __int__ = __lt__ = __le__ = __gt__ = __ge__ = _concrete

    def __repr__(self):  # as JAX prints dimension expressions: "8*b + 1", "- b + 2"
        text = ""
        for name, c in sorted(self.terms.items()):
            text += (" - " if c < 0 else " + ") + (name if abs(c) == 1 else f"{abs(c)}*{name}")
        if self.const or not self.terms:
            text += (" - " if self.const < 0 else " + ") + str(abs(self.const))
        return text[3:] if text.startswith(" + ") else "- " + text[3:]

    __str__ = __repr__


class SymbolicScope:
    """The lower bounds of a set of symbols (a symbolic size is at least 1 unless a constraint says more)."""

    def __init__(self, constraints=()):
        self.lower = {}
        for constraint in constraints:
            self._add(constraint)

    def _add(self, constraint):
        m = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*(>=|>)\s*(-?\d+)\s*", constraint) or \
            re.fullmatch(r"\s*(-?\d+)\s*(<=|<)\s*([A-Za-z_]\w*)\s*", constraint)
        if m is None:
            raise NotImplementedError(f"symbolic_shape: constraint {constraint!r}: xjax supports lower bounds "
                                      f"only ('a >= 2', 'a > 1', '2 <= a')")
        name, op, bound = (m[1], m[2], m[3]) if m[1][0].isalpha() or m[1][0] == "_" else (m[3], m[2], m[1])
        bound = int(bound) + (op in (">", "<"))
        self.lower[name] = max(self.lower.get(name, 1), bound)

    def lower_bound(self, name):
        return self.lower.get(name, 1)


def symbolic_shape(shape_spec, *, constraints=(), scope=None, like=None):
    """The dimensions of `shape_spec` ("(b, 64)", "b, h, w"): ints, or SymbolicDims for names."""
    if like is not None:
        raise NotImplementedError("symbolic_shape(like=...) is not implemented in xjax")
    scope = scope if scope is not None else SymbolicScope()
    for constraint in constraints:
        scope._add(constraint)
    spec = shape_spec.strip()
    if spec.startswith("(") and spec.endswith(")"):
        spec = spec[1:-1]
    dims = []
    for part in filter(None, (p.strip() for p in spec.split(","))):
        if re.fullmatch(r"\d+", part):
            dims.append(int(part))
        elif re.fullmatch(r"[A-Za-z_]\w*", part):
            dims.append(SymbolicDim({part: 1}, 0, scope))
        else:
            raise NotImplementedError(f"symbolic_shape: dimension {part!r} of {shape_spec!r}: xjax supports "
                                      f"integers and symbol names only")
    return tuple(dims)


def is_symbolic_dim(p):
    return isinstance(p, SymbolicDim)


def check_concrete(shape):
    """Refuses a shape with a symbolic dimension where xjax needs sizes (a trace, a compiled program)."""
    for d in shape:
        if is_symbolic_dim(d):
            d._concrete()


def has_symbolic_dims(leaves):
    return any(is_symbolic_dim(d) for leaf in leaves for d in getattr(leaf, "shape", ()) or ())


def _symbols(leaves):
    lower = {}
    for leaf in leaves:
        for d in getattr(leaf, "shape", ()) or ():
            if is_symbolic_dim(d):
                for name in d.terms:
                    lower[name] = d.scope.lower_bound(name) if d.scope is not None else 1
    return lower


def _samples(lower):
    """Sizes for each symbol: a base point, one point per symbol moved by _STEP, and a check point."""
    names = sorted(lower)
    base = {n: max(lower[n], 1) + _BASE + 10 * i for i, n in enumerate(names)}
    moved = [{**base, n: base[n] + _STEP} for n in names]
    check = {n: v + 7 for n, v in base.items()}
    return names, base, moved, check


def _affine(at_base, at_moved, at_check, names, base, check, scope, where):
    """The affine dimension through the sampled sizes (an int when no symbol moves it), checked at `check`."""
    steps = [d - at_base for d in at_moved]
    terms = {name: step // _STEP for name, step in zip(names, steps)}
    const = at_base - sum(c * base[n] for n, c in terms.items())
    if any(step % _STEP for step in steps) or at_check != const + sum(c * check[n] for n, c in terms.items()):
        raise NotImplementedError(f"eval_shape with symbolic dimensions: {where} is not an affine function of the "
                                  f"symbolic sizes")
    return _dim(terms, const, scope)


def _substitute(leaf, env, make_struct):
    shape = getattr(leaf, "shape", None)
    if not shape or not has_symbolic_dims([leaf]):
        return leaf
    dims = [d.const + sum(c * env[n] for n, c in d.terms.items()) if is_symbolic_dim(d) else d for d in shape]
    if any(d < 0 for d in dims):
        raise ValueError(f"eval_shape: shape {shape} is negative for sizes {env}")
    return make_struct(tuple(dims), leaf.dtype, weak_type=getattr(leaf, "weak_type", False))


def eval_shape_symbolic(eval_shape, tree_util, make_struct, fun, args, kwargs):
    """`eval_shape(fun, *args, **kwargs)` where argument shapes hold symbolic dimensions (see the module doc)."""
    leaves, treedef = tree_util.tree_flatten((args, kwargs))
    lower = _symbols(leaves)
    scope = next(d.scope for leaf in leaves for d in getattr(leaf, "shape", ()) or () if is_symbolic_dim(d))
    names, base, moved, check = _samples(lower)

    def at(env):
        a, kw = treedef.unflatten([_substitute(leaf, env, make_struct) for leaf in leaves])
        try:
            out = eval_shape(fun, *a, **kw)
        except Exception as e:
            e.add_note(f"(raised by eval_shape with the symbolic dimensions at the sample sizes {env})")
            raise
        return tree_util.tree_flatten(out)

    (out_base, out_tree), others = at(base), [at(env) for env in moved]
    out_check, check_tree = at(check)
    if any(tree != out_tree for _, tree in others) or check_tree != out_tree:
        raise NotImplementedError(f"eval_shape with symbolic dimensions: the structure of {fun}'s result "
                                  f"depends on the symbolic sizes")
    result = []
    for i, leaf in enumerate(out_base):
        if hasattr(leaf, "shape"):
            leaf = make_struct(tuple(
                _affine(d, [outs[i].shape[k] for outs, _ in others], out_check[i].shape[k], names, base, check,
                        scope, f"dimension {k} of output {i}")
                for k, d in enumerate(leaf.shape)), leaf.dtype, weak_type=leaf.weak_type)
        result.append(leaf)
    return out_tree.unflatten(result)
