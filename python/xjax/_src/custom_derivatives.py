"""custom_jvp and custom_vjp: user-defined differentiation rules.

The decorators flatten the arguments, wrap the function and its rules as functions on flat leaves
(checking what the rules return, in JAX's words) and bind custom_calls' primitives.
"""
import dataclasses
import functools
import inspect

import numpy as np

from xjax._src import core, data_leaves, errors, tree_util
from xjax._src.custom_calls import FlatFun, SymbolicZero, custom_jvp_call_p, custom_vjp_call_p
from xjax._src.interpreters import ad, partial_eval as pe
from xjax._src.lax.base import asarray
from xjax._src.lax.stop_gradient import bind_stop_gradient

_flatten = data_leaves.flatten  # keys as their data


def zero_from_primal(val, symbolic_zeros=False):
    """A zero tangent for each leaf of val: SymbolicZeros, or zeros arrays."""
    def zero(x):
        aval = ad.tangent_aval(core.get_aval(x))
        return SymbolicZero(aval) if symbolic_zeros else ad.instantiate(ad.Zero(aval))

    return tree_util.tree_map(zero, val)


@dataclasses.dataclass
class CustomVJPPrimal:
    """What a custom_vjp fwd rule defined with symbolic_zeros=True receives for each input leaf."""

    value: object
    perturbed: bool


def custom_vjp_primal_tree_values(tree):
    """The values of a tree of CustomVJPPrimal leaves (a symbolic_zeros fwd rule's arguments)."""
    def value(leaf):
        if type(leaf) is not CustomVJPPrimal:
            raise TypeError(f"unexpected leaf type {type(leaf)}")
        return leaf.value

    return tree_util.tree_map(value, tree)


# ---- helpers ------------------------------------------------------------------------------------

class _OutType:
    """The output structure and types of the function, recorded by whichever of it and its rule runs first."""

    __slots__ = ("tree", "avals")

    def __init__(self):
        self.tree = None
        self.avals = None


def _is_jax_value(x):
    return (isinstance(x, (core.Tracer, bool, int, float, np.ndarray, np.generic))
            or type(x) in core.ARRAY_TYPES)


def _check_leaves(leaves, primitive=None):
    """Leaves must be arrays or scalars; JAX words the error for custom_jvp's arguments differently."""
    for i, x in enumerate(leaves):
        if not _is_jax_value(x):
            if primitive is not None:
                raise TypeError(f"Error interpreting argument to {primitive} as a JAX value. The problematic value is "
                                f"of type {type(x)} and was passed to {primitive} at position {i}.")
            raise TypeError(f"Argument {x!r} of type {type(x)} is not a valid JAX type")


def _aval_str(aval):
    return f"float0[{','.join(map(str, aval.shape))}]" if aval.dtype == ad.float0 else errors.long_str(aval)


def _type_tree(tree, avals):
    return str(tree.unflatten([_aval_str(a) for a in avals])).replace("'", "")


def _typematch(a, b):
    return a.shape == b.shape and a.dtype == b.dtype


def _argnums_of_names(fun, names):
    if not names:
        return ()
    params = list(inspect.signature(fun).parameters)
    return tuple(params.index(n) for n in names if n in params)


def _resolve_kwargs(fun, args, kwargs, kind, name):
    """The arguments as positional ones (defaults applied), or JAX's TypeError."""
    try:
        if isinstance(fun, functools.partial):
            sig = inspect.signature(lambda *a, **k: None)
        else:
            sig = inspect.signature(fun)
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        passed = [k for k in bound.kwargs if k in kwargs]
        if passed:
            raise TypeError(f"The following keyword arguments could not be resolved to positions: {', '.join(passed)}")
        return bound.args
    except TypeError as e:
        raise TypeError(f"The input arguments to the {kind}-decorated function {name} could not be resolved to "
                        f"positional-only arguments. Binding failed with the error:\n{e}") from e
    except ValueError:  # no signature (builtins): positional only
        if kwargs:
            raise
        return args


def _split_nondiff(args, nondiff):
    """(the nondiff args in order, the others, a function merging given others back into place)."""
    static = [args[i] for i in sorted(nondiff)]
    dyn = [a for i, a in enumerate(args) if i not in nondiff]

    def merge(dyn_vals):
        it_s, it_d = iter(static), iter(dyn_vals)
        return [next(it_s) if i in nondiff else next(it_d) for i in range(len(args))]

    return static, dyn, merge


def _flat_fun(fun, in_tree, out_type):
    def flat(*leaves):
        out_leaves, tree = _flatten(fun(*in_tree.unflatten(leaves)))
        _check_leaves(out_leaves)
        out_type.tree, out_type.avals = tree, [core.get_aval(x) for x in out_leaves]
        return list(out_leaves)

    return flat


def _check_primal_out(out_type, tree, avals, prefix, clauses, kind, decorator, name):
    """The rule's primal output against the function's (when the function ran first), in JAX's words.

    prefix + clauses[0] (structure) or clauses[1] (types) opens the message; kind names the rule.
    """
    if out_type.tree is None:
        out_type.tree, out_type.avals = tree, avals
        return
    got, want = _type_tree(tree, avals), _type_tree(out_type.tree, out_type.avals)
    if tree != out_type.tree:
        raise TypeError(f"{prefix}{clauses[0]}, but instead the {kind} output's first element had container/pytree "
                        f"structure:\n    {got}\nwhile the {decorator}-decorated function {name} had output "
                        f"container/pytree structure:\n    {want}.")
    if not all(_typematch(a, b) for a, b in zip(avals, out_type.avals)):
        raise TypeError(f"{prefix}{clauses[1]}, but instead the {kind} output's first element had shapes/dtypes "
                        f"of:\n    {got}\nwhile the {decorator}-decorated function {name} had output shapes/dtypes "
                        f"of:\n    {want}")


# ---- custom_jvp ---------------------------------------------------------------------------------

class custom_jvp:  # noqa: N801 - JAX's name
    """A function whose JVP (and, by transposing it, its VJP) is given by a rule: `f.defjvp(rule)`.

    The rule takes (primals, tangents) tuples and returns (primal_out, tangent_out); its tangent
    computation must be linear in the tangents for reverse mode, which transposes it.
    """

    def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(sorted(set(nondiff_argnums) | set(_argnums_of_names(fun, nondiff_argnames))))
        self.jvp = None
        self.symbolic_zeros = False

    def defjvp(self, jvp, symbolic_zeros=False):
        """Sets the JVP rule jvp(primals, tangents) -> (primal_out, tangent_out); returns it (a decorator)."""
        self.jvp = jvp
        self.symbolic_zeros = symbolic_zeros
        return jvp

    def defjvps(self, *jvps):
        """Sets one rule per argument, jvp_i(tangent_i, primal_out, *primals) (None: no dependence)."""
        if self.nondiff_argnums:
            raise TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.")

        def jvp(primals, tangents):
            primal_out = self(*primals)
            zeros = tree_util.tree_map(lambda x: ad.Zero(ad.tangent_aval(core.get_aval(x))), primal_out)
            parts = [rule(t, primal_out, *primals) if rule else zeros for t, rule in zip(tangents, jvps)]
            return primal_out, tree_util.tree_map(_sum_tangents, primal_out, *parts)

        self.defjvp(jvp)

    def __call__(self, *args, **kwargs):
        name = pe.fun_name(self.fun)
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function {name} using defjvp.")
        args = _resolve_kwargs(self.fun, args, kwargs, "custom_jvp", name)
        fun, rule = self.fun, self.jvp
        if self.nondiff_argnums:
            nondiff = set(self.nondiff_argnums)
            args = [data_leaves.tree_map(_stop_tracer_gradient, a) if i in nondiff else a for i, a in enumerate(args)]
            static, args, merge = _split_nondiff(args, nondiff)
            fun = lambda *dyn: self.fun(*merge(dyn))  # noqa: E731
            rule = lambda primals, tangents: self.jvp(*static, primals, tangents)  # noqa: E731
        leaves, in_tree = _flatten(tuple(args))
        _check_leaves(leaves, "custom_jvp_call")
        out_type = _OutType()
        rule_name = pe.fun_name(self.jvp)
        flat_jvp = _flat_jvp(rule, in_tree, out_type, self.symbolic_zeros, name, rule_name)
        flat_fun = FlatFun(_flat_fun(fun, in_tree, out_type), self.fun, "custom_jvp fun")
        outs = custom_jvp_call_p.bind(*leaves, fun=flat_fun, jvp=FlatFun(flat_jvp, self.jvp),
                                      symbolic_zeros=self.symbolic_zeros, name=name)
        return out_type.tree.unflatten(outs)


def _stop_tracer_gradient(x):
    return bind_stop_gradient(x) if isinstance(x, core.Tracer) else x


def _sum_tangents(_, x, *xs):
    return functools.reduce(ad.add_tangents, xs, x)


def _flat_jvp(rule, in_tree, out_type, symbolic_zeros, name, rule_name):
    def flat(primals, tangents):
        if symbolic_zeros:
            tangents = [SymbolicZero(t.aval) if type(t) is ad.Zero else t for t in tangents]
        else:
            tangents = [ad.instantiate(t) for t in tangents]
        pair = rule(in_tree.unflatten(primals), in_tree.unflatten(tangents))
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise TypeError(f"Custom JVP rule {rule_name} for function {name} must produce a pair (list or tuple of "
                            f"length two) representing primal and tangent outputs, but got {pair}.")
        p_out, p_tree = _flatten(pair[0])
        t_out, t_tree = tree_util.tree_flatten(pair[1])  # (a key's tangent is a float0 array of its shape)
        user_tree = data_leaves.user_structure(p_tree)
        if user_tree != t_tree:
            raise TypeError(f"Custom JVP rule {rule_name} for function {name} must produce primal and tangent outputs "
                            f"with equal container (pytree) structures, but got {user_tree} and {t_tree} respectively.")
        _check_leaves(p_out)
        p_avals = [core.get_aval(x) for x in p_out]
        prefix = (f"Custom JVP rule {rule_name} for function {name} must produce a pair (list or tuple of length "
                  "two) where the first element represents the primal output (equal in value to the output of the "
                  f"custom_jvp-decorated function {name}, and in particular ")
        _check_primal_out(out_type, p_tree, p_avals, prefix, ("of the same container/pytree structure)",
                                                              "with leaves of the same shape/dtype)"),
                          "JVP rule", "custom_jvp", name)
        user_shapes = [np.shape(x) for x in tree_util.tree_leaves(pair[0])]
        return list(p_out), _rule_tangents_out(p_avals, t_out, user_shapes)

    return flat


def _rule_tangents_out(p_avals, t_out, user_shapes):
    """The tangents a JVP rule returned, checked against its primal outputs, as tangents (Zero for zeros).
    `user_shapes`: the outputs' shapes as users see them (a key's float0 tangent has the key's shape)."""
    want = [ad.tangent_aval(a.update(weak_type=False)) for a in p_avals]
    want = [w.update(shape=s) if w.dtype == ad.float0 else w for w, s in zip(want, user_shapes)]
    got = []
    for t in t_out:
        if type(t) in (SymbolicZero, ad.Zero):
            got.append(t.aval.update(weak_type=False))
        elif getattr(t, "dtype", None) == ad.float0:  # (an integer's or a key's tangent)
            got.append(core.ShapedArray(np.shape(t), ad.float0))
        else:
            _check_leaves([t])
            got.append(core.get_aval(t).update(weak_type=False))
    bad = [(p, w, g) for p, w, g in zip(p_avals, want, got) if not _typematch(w, g)]
    if bad:
        if len(want) == 1:
            (p, w, g), = bad
            raise TypeError("Custom JVP rule must produce primal and tangent outputs with corresponding shapes and "
                            f"dtypes. Expected {_aval_str(w)} (tangent type of {_aval_str(p)}) but got {_aval_str(g)}.")
        lines = "\n".join(f"  primal {_aval_str(p)} with tangent {_aval_str(g)}, expecting tangent {_aval_str(w)}"
                          for p, w, g in bad)
        raise TypeError("Custom JVP rule must produce primal and tangent outputs with corresponding shapes and "
                        f"dtypes, but got:\n{lines}")
    out = []
    for t, w, p in zip(t_out, want, p_avals):
        if w.dtype == ad.float0:
            out.append(ad.Zero(ad.tangent_aval(p.update(weak_type=False))))
        elif type(t) in (SymbolicZero, ad.Zero):
            out.append(ad.Zero(t.aval))
        else:
            out.append(t if isinstance(t, core.Tracer) or type(t) in core.ARRAY_TYPES else as_array(t, w.dtype))
    return out


def as_array(x, dtype=None):
    return asarray(x, dtype)


# ---- custom_vjp ---------------------------------------------------------------------------------

def _check_for_tracers(x):
    for leaf in tree_util.tree_leaves(x):
        if isinstance(leaf, core.Tracer):
            raise errors.UnexpectedTracerError(
                "Found a JAX Tracer object passed as an argument to a custom_vjp function in a position indicated by "
                "nondiff_argnums as non-differentiable. Tracers cannot be passed as non-differentiable arguments to "
                "custom_vjp functions; instead, nondiff_argnums should only be used for arguments that can't be or "
                "contain JAX tracers, e.g. function-valued arguments. In particular, array-valued arguments should "
                "typically not be indicated as nondiff_argnums.")


class custom_vjp:  # noqa: N801 - JAX's name
    """A function whose VJP is given by rules: `f.defvjp(fwd, bwd)`. Forward mode (jvp) is not defined.

    fwd takes the function's arguments and returns (output, residuals); bwd takes (residuals,
    output cotangent) and returns a tuple with one cotangent (or None for zero) per argument.
    """

    def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(sorted(set(nondiff_argnums) | set(_argnums_of_names(fun, nondiff_argnames))))
        self.fwd = None
        self.bwd = None
        self.symbolic_zeros = False
        self.optimize_remat = False

    def defvjp(self, fwd, bwd, symbolic_zeros=False, optimize_remat=False):
        """Sets the forward rule fwd(*args) -> (output, residuals) and backward rule bwd(residuals, ct)."""
        self.fwd = fwd
        self.bwd = bwd
        self.symbolic_zeros = symbolic_zeros
        self.optimize_remat = optimize_remat
        if symbolic_zeros and optimize_remat:
            raise NotImplementedError("remat optimization for custom_vjp does not support symbolic zeros")

    def __call__(self, *args, **kwargs):
        name = pe.fun_name(self.fun)
        if self.fwd is None or self.bwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {name} using defvjp.")
        args = _resolve_kwargs(self.fun, args, kwargs, "custom_vjp", name)
        fun, fwd, bwd = self.fun, self.fwd, self.bwd
        if self.nondiff_argnums:
            for i in self.nondiff_argnums:
                _check_for_tracers(args[i])
            static, args, merge = _split_nondiff(args, set(self.nondiff_argnums))
            fun = lambda *dyn: self.fun(*merge(dyn))  # noqa: E731
            fwd = lambda *dyn: self.fwd(*merge(dyn))  # noqa: E731
            bwd = lambda res, ct: self.bwd(*static, res, ct)  # noqa: E731
        leaves, in_tree = _flatten(tuple(args))
        _check_leaves(leaves)
        out_type = _OutType()
        in_avals = [core.get_aval(x) for x in leaves]
        fwd_name = pe.fun_name(self.fwd)
        outs = custom_vjp_call_p.bind(
            *leaves, fun=FlatFun(_flat_fun(fun, in_tree, out_type), self.fun, "custom_vjp fun"),
            fwd=FlatFun(_flat_fwd(fwd, in_tree, out_type, self.symbolic_zeros, name, fwd_name), self.fwd),
            bwd=FlatFun(_flat_bwd(bwd, in_tree, in_avals, out_type), self.bwd), symbolic_zeros=self.symbolic_zeros,
            name=name)
        return out_type.tree.unflatten(outs)


def _flat_fwd(fwd, in_tree, out_type, symbolic_zeros, name, fwd_name):
    def flat(primals, nonzeros):
        args = [CustomVJPPrimal(p, nz) for p, nz in zip(primals, nonzeros)] if symbolic_zeros else primals
        pair = fwd(*in_tree.unflatten(args))
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise TypeError(f"Custom VJP fwd rule {fwd_name} for function {name} must produce a pair (list or tuple "
                            "of length two) where the first element represents the primal output (equal to those of "
                            f"the custom_vjp-decorated function {name}) and the second element represents residuals "
                            "(i.e. values stored from the forward pass for use on the backward pass), but instead of "
                            f"a pair the fwd rule {fwd_name} produced {pair}.")
        out, out_tree = _flatten(pair[0])
        _check_leaves(out)
        avals = [core.get_aval(x) for x in out]
        clause = (f"to the output of the custom_vjp-decorated function {name}) and the second element represents "
                  "residuals (i.e. values stored from the forward pass for use on the backward pass)")
        _check_primal_out(out_type, out_tree, avals, f"Custom VJP fwd rule {fwd_name} for function {name} must "
                          "produce a pair (list or tuple of length two) where the first element represents the primal "
                          "output (equal ", (clause, clause), "fwd rule", "custom_vjp", name)
        res, res_tree = _flatten(pair[1])
        _check_leaves(res)
        return list(out), list(res), res_tree

    return flat


def _flat_bwd(bwd, in_tree, in_avals, out_type):
    def flat(res_tree, res, cts):
        cts_in = bwd(res_tree.unflatten(res), out_type.tree.unflatten(cts))
        n_args = len(tree_util.treedef_children(in_tree))
        if isinstance(cts_in, list) and len(cts_in) == n_args:
            cts_in = tuple(cts_in)
        return _bwd_cotangents(cts_in, in_tree, in_avals)

    return flat


_NONE = object()  # marks an argument whose bwd cotangent was None


def _bwd_cotangents(cts_in, in_tree, in_avals):
    """bwd's result, checked against the arguments' structure and types, as flat cotangents (Zero for none)."""
    dummy = in_tree.unflatten([object()] * in_tree.num_leaves)
    paths = [p for p, _ in tree_util.tree_flatten_with_path(dummy)[0]]
    flat = []

    def add(x, d):
        n = len(_flatten(d)[0])
        flat.extend([_NONE if x is None else x] * n)

    try:
        if not isinstance(cts_in, tuple):
            raise ValueError
        tree_util.tree_map(add, cts_in, dummy, is_leaf=lambda x: x is None)
    except ValueError:
        raise TypeError("Custom VJP bwd rule must produce an output with the same container (pytree) structure as "
                        "the args tuple of the primal function, and in particular must produce a tuple of length "
                        "equal to the number of arguments to the primal function, but got bwd output structure "
                        f"{_flatten(cts_in)[1]} for primal input structure {in_tree}.") from None
    out = []
    for path, aval, ct in zip(paths, in_avals, flat):
        want = ad.tangent_aval(aval)
        where = tree_util.keystr(path)
        if ct is _NONE or want.dtype == ad.float0:
            out.append(ad.Zero(want))
        elif type(ct) is SymbolicZero:
            if not _typematch(want, ct.aval):
                raise ValueError("Custom VJP bwd rule produced a SymbolicZero with a shape/dtype that does not match "
                                 f"the corresponding input tangent shape/dtype: at output{where} the SymbolicZero had "
                                 f"shape/dtype {_aval_str(ct.aval)} while the corresponding input had shape/dtype "
                                 f"{_aval_str(aval)}. Consider just returning a None here instead of a SymbolicZero "
                                 "object.")
            out.append(ad.Zero(ct.aval))
        else:
            _check_leaves([ct])
            got = core.get_aval(ct)
            # Like JAX, a float cotangent of another float dtype is let through; shapes must match.
            if got.shape != want.shape or (got.dtype != want.dtype and not np.issubdtype(want.dtype, np.inexact)):
                extra = ", so the shapes do not match" if got.shape != want.shape else ""
                raise ValueError("Custom VJP bwd rule must produce an output with the same type as the args tuple of "
                                 f"the primal function, but at output{where} the bwd rule produced an output of type "
                                 f"{_aval_str(got)} corresponding to an input of type {_aval_str(aval)}{extra}")
            out.append(ct if isinstance(ct, core.Tracer) or type(ct) in core.ARRAY_TYPES else as_array(ct, got.dtype))
    return out
