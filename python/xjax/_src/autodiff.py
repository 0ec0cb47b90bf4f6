"""The differentiation API: jvp, linearize, vjp, grad, value_and_grad, jacfwd, jacrev, hessian.

Each works on pytrees of arrays and is a thin layer over interpreters.ad: forward mode pushes
tangents through a JVPTrace; reverse mode linearises (primal work runs now, tangent work is
recorded into a linear jaxpr) and transposes the linear jaxpr.
"""
import functools

import numpy as np

from xjax._src import core, data_leaves, dtypes, tree_util
from xjax._src.lax.sharding_ops import reshard_p
from xjax._src.interpreters import ad, partial_eval as pe
from xjax._src.jaxpr import eval_jaxpr
from xjax._src.placement import asarray
from xjax._src.remat import dce_jaxpr

float0 = ad.float0


def _as_operand(x):
    """A pytree leaf as an operand: arrays and tracers stay, Python and NumPy values are placed."""
    if isinstance(x, core.Tracer) or type(x) in core.ARRAY_TYPES:
        return x
    if isinstance(x, (list, tuple)):
        raise TypeError(f"Argument {x!r} of type {type(x)} is not a valid JAX type")
    return asarray(x)


# ---- the flat cores ----------------------------------------------------------------------------

jvp_flat = ad.jvp_flat


class LinearFunction:
    """The linear map of a linearisation: a linear jaxpr (residuals as consts) and its zero pattern."""

    def __init__(self, closed, in_zero, out_zero, in_avals, out_avals):
        self.closed = closed
        self.in_zero = in_zero  # inputs with a symbolic zero tangent (no invar)
        self.out_zero = out_zero  # outputs whose tangent is a symbolic zero (no outvar)
        self.in_avals = in_avals  # tangent avals
        self.out_avals = out_avals
        self.live = None  # closed without dead equations, for jvp

    def jvp(self, tangents):
        if self.live is None:  # as JAX: an equation whose result nobody reads does not run (custom_lin would raise)
            self.live = dce_jaxpr(self.closed)
        ins = [t for t, z in zip(tangents, self.in_zero) if not z]
        outs = iter(eval_jaxpr(self.live.jaxpr, self.live.consts, *ins))
        return [ad.Zero(a) if z else next(outs) for a, z in zip(self.out_avals, self.out_zero)]

    def transpose(self, cts, consts=None):
        """The input cotangents of output cotangents `cts` (with other values for the residuals: consts)."""
        cts = [c for c, z in zip(cts, self.out_zero) if not z]
        consts = self.closed.consts if consts is None else consts
        got = iter(ad.backward_pass(self.closed.jaxpr, consts, cts))
        return [ad.Zero(a) if z else next(got) for a, z in zip(self.in_avals, self.in_zero)]


def linearize_flat(fun, primals):
    """(output primals, LinearFunction) of fun at primals: primal work runs now, in the current trace."""
    lin = pe.LinearizeTrace(None, core.current_trace())
    trace = ad.JVPTrace(lin)
    in_avals = [ad.tangent_aval(getattr(p, "traced_aval", None) or core.get_aval(p)) for p in primals]  # (typed)
    in_zero = [a.dtype == float0 for a in in_avals]
    tangents = [ad.Zero(a) if z else lin.new_arg(a) for a, z in zip(in_avals, in_zero)]
    with core.new_trace(lin):
        ins = [ad.JVPTracer(trace, p, t) for p, t in zip(primals, tangents)]
        with core.new_trace(trace):
            outs = fun(*ins)
            pairs = [trace.lift(o) for o in outs]
        out_primals = [p for p, _ in pairs]
        out_zero = [type(t) is ad.Zero for _, t in pairs]
        closed = lin.to_closed_jaxpr([t for _, t in pairs if type(t) is not ad.Zero])
    out_avals = [ad.tangent_aval(core.get_aval(p)) for p in out_primals]
    return out_primals, LinearFunction(closed, in_zero, out_zero, in_avals, out_avals)


# ---- argument handling -------------------------------------------------------------------------

def _argnums_tuple(argnums):
    if isinstance(argnums, int):
        return (argnums,), True
    return tuple(argnums), False


def _check_argnums(name, argnums, nargs):
    """argnums as indices into the positional args, with JAX's errors: grad and value_and_grad first
    ask for enough positional args (TypeError); any index outside [-nargs, nargs) is a ValueError."""
    if name in ("grad", "value_and_grad") and argnums and max(argnums) >= nargs:
        shown = argnums if len(argnums) > 1 else argnums[0]
        raise TypeError(f"differentiating with respect to argnums={shown} requires at least {max(argnums) + 1} "
                        f"positional arguments to be passed by the caller, but got only {nargs} positional arguments.")
    for i in argnums:
        if not -nargs <= i < nargs:
            raise ValueError("Positional argument indices, e.g. for `static_argnums`, must have value greater than or "
                             f"equal to -len(args) and less than len(args), but got value {i} for len(args) == {nargs}.")
    idx = tuple(i % nargs for i in argnums)
    if len(set(idx)) != len(idx):  # JAX fails on these with an internal TypeError; say what is wrong
        raise TypeError(f"{name}: argnums={argnums} names the same positional argument more than once.")
    return idx


def _check_input_dtype(name, x, allow_int, holomorphic):
    dtype = core.get_aval(x).dtype
    if holomorphic and not dtypes.is_complex(dtype):
        raise TypeError(f"{name} with holomorphic=True requires inputs with complex dtype, but got {dtype.name}.")
    if not allow_int and (dtypes.is_extended(dtype) or not (dtypes.is_float(dtype) or dtypes.is_complex(dtype))):
        raise TypeError(f"{name} requires real- or complex-valued inputs (input dtype that is a sub-dtype of "
                        f"np.inexact), but got {dtype.name}. If you want to use Boolean- or integer-valued inputs, "
                        "use vjp or set allow_int to True.")


def _check_scalar_output(name, out, holomorphic=False):
    if not (isinstance(out, core.Tracer) or type(out) in core.ARRAY_TYPES
            or isinstance(out, (bool, int, float, np.ndarray, np.generic))):
        raise TypeError(f"Gradient only defined for scalar-output functions. Output was {out!r}.")
    aval = core.get_aval(out)
    if aval.shape:
        raise TypeError(f"Gradient only defined for scalar-output functions. Output had shape: {aval.shape}.")
    if holomorphic:
        if not dtypes.is_complex(aval.dtype):
            raise TypeError(f"{name} with holomorphic=True requires outputs with complex dtype, but got "
                            f"{aval.dtype.name}.")
    elif dtypes.is_complex(aval.dtype):
        raise TypeError(f"{name} requires real-valued outputs (output dtype that is a sub-dtype of np.floating), "
                        f"but got {aval.dtype.name}. For holomorphic differentiation, pass holomorphic=True. For "
                        "differentiation of non-holomorphic functions involving complex outputs, use jax.vjp "
                        "directly.")
    elif not dtypes.is_float(aval.dtype):
        raise TypeError(f"{name} requires real-valued outputs (output dtype that is a sub-dtype of np.floating), "
                        f"but got {aval.dtype.name}. For differentiation of functions with integer outputs, use "
                        "jax.vjp directly.")


def _split_aux(out):
    """(output, aux) of a has_aux function; aux leaves are not differentiated (their primals are kept)."""
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError("expected function with aux output to return a two-element tuple, but got type "
                        f"{type(out)} with value {out!r}")
    trace = core.current_trace()
    return out[0], data_leaves.tree_map(lambda x: trace.lift(x)[0], out[1])


def _dynamic_args(name, fun, nums, args, kwargs, allow_int, holomorphic):
    """(fun of the differentiated args only, those args), dtypes checked as `name` words it."""
    idx = _check_argnums(name, nums, len(args))
    dyn = tuple(args[i] for i in idx)
    for x in tree_util.tree_leaves(dyn):
        _check_input_dtype(name, x, allow_int, holomorphic)

    def f_of_dyn(*d):
        full = list(args)
        for i, v in zip(idx, d):
            full[i] = v
        return fun(*full, **kwargs)

    return f_of_dyn, dyn


# ---- public API --------------------------------------------------------------------------------

def jvp(fun, primals, tangents, has_aux=False):
    """(fun(*primals), the directional derivative of fun at primals along tangents)."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("primal and tangent arguments to jax.jvp must be tuples or lists; found "
                        f"{type(primals).__name__} and {type(tangents).__name__}.")
    user_tree = tree_util.tree_structure(tuple(primals))
    t_leaves, t_tree = tree_util.tree_flatten(tuple(tangents))  # (a key's tangent is a float0 array)
    if user_tree != t_tree:
        raise TypeError("primal and tangent arguments to jax.jvp must have the same tree structure; primals have "
                        f"tree structure {user_tree} whereas tangents have tree structure {t_tree}.")
    p_leaves, p_tree = data_leaves.flatten(tuple(primals))
    p_leaves = [_as_operand(p) for p in p_leaves]
    t_ops = []
    for p, t in zip(p_leaves, t_leaves):
        pa = core.get_aval(p)
        want = ad.tangent_aval(pa)
        t_dtype = np.asarray(t).dtype if not hasattr(t, "dtype") else np.dtype(t.dtype)
        if want.dtype == float0:
            if t_dtype != float0:
                raise _jvp_dtype_error(pa.dtype, want.dtype, t_dtype)
            t_ops.append(ad.Zero(want))
            continue
        t = _as_operand(t)
        ta = core.get_aval(t)
        if ta.dtype != want.dtype:
            raise _jvp_dtype_error(pa.dtype, want.dtype, ta.dtype)
        if ta.shape != pa.shape:
            raise ValueError("jvp called with different primal and tangent shapes;Got primal shape "
                             f"{pa.shape} and tangent shape as {ta.shape}")
        t_ops.append(t)
    out_trees = []

    def flat_fun(*args):
        out = fun(*p_tree.unflatten(args))
        if has_aux:
            out, aux = _split_aux(out)
            out_trees.append(aux)
        leaves, tree = data_leaves.flatten(out)
        out_trees.insert(0, tree)
        return [_as_operand(x) for x in leaves]

    outs, out_tangents = jvp_flat(flat_fun, p_leaves, t_ops)
    tree = out_trees[0]
    result = tree.unflatten(outs), tree.unflatten([ad.instantiate(t) for t in out_tangents])
    if has_aux:
        return (*result, out_trees[1])
    return result


def _jvp_dtype_error(primal, want, got):
    return TypeError("primal and tangent arguments to jax.jvp do not match; dtypes must be equal, or in case of "
                     f"int/bool primal dtype the tangent dtype must be float0.Got primal dtype {primal.name} and so "
                     f"expected tangent dtype {want if want == float0 else want.name}, but got tangent dtype "
                     f"{got if got == float0 else got.name} instead.")


def _flat_fun_of(fun, in_tree, out_trees, has_aux):
    def flat_fun(*args):
        out = fun(*in_tree.unflatten(args))
        if has_aux:
            out, aux = _split_aux(out)
            out_trees.append(("aux", aux))
        leaves, tree = data_leaves.flatten(out)
        out_trees.insert(0, tree)
        return [_as_operand(x) for x in leaves]

    return flat_fun


def _linearize_tree(fun, primals, has_aux):
    """linearize_flat on pytrees: (input leaves, input tree, outputs, LinearFunction, output tree, aux)."""
    leaves, in_tree = data_leaves.flatten(primals)
    leaves = [_as_operand(x) for x in leaves]
    out_trees = []
    outs, lin = linearize_flat(_flat_fun_of(fun, in_tree, out_trees, has_aux), leaves)
    return leaves, in_tree, outs, lin, out_trees[0], out_trees[1][1] if has_aux else None


def linearize(fun, *primals, has_aux=False):
    """(fun(*primals), f_jvp) where f_jvp(*tangents) is the linear map at primals (evaluated lazily)."""
    leaves, in_tree, outs, lin, out_tree, aux = _linearize_tree(fun, primals, has_aux)
    user_in_tree = data_leaves.user_structure(in_tree)

    def f_jvp(*tangents):
        t_leaves, t_tree = tree_util.tree_flatten(tangents)
        if t_tree != user_in_tree:
            raise TypeError(f"linearized function called on tangent values inconsistent with the original primal "
                            f"values: tree structure {t_tree} where {user_in_tree} was expected")
        ts = [_as_operand(t) if not z else None for t, z in zip(t_leaves, lin.in_zero)]
        return out_tree.unflatten([ad.instantiate(t) for t in lin.jvp(ts)])

    result = (out_tree.unflatten(outs), f_jvp)
    return (*result, aux) if has_aux else result


def vjp(fun, *primals, has_aux=False):
    """(fun(*primals), vjp_fn) where vjp_fn(cotangent) pulls an output cotangent back to the inputs.

    vjp_fn is a pytree, as in JAX (a tree_util.Partial whose leaves are the residuals): it can be
    passed to jit or returned as a custom_vjp residual."""
    leaves, in_tree, outs, lin, out_tree, aux = _linearize_tree(fun, primals, has_aux)
    in_avals = [core.get_aval(x) for x in leaves]
    pullback = functools.partial(_vjp_pullback, lin, in_tree, out_tree, data_leaves.user_structure(out_tree),
                                 tuple(in_avals))
    vjp_fn = tree_util.Partial(pullback, list(lin.closed.consts))
    result = (out_tree.unflatten(outs), vjp_fn)
    return (*result, aux) if has_aux else result


def _vjp_pullback(lin, in_tree, out_tree, user_out_tree, in_avals, residuals, ct):
    """vjp's function: the output cotangent `ct` pulled back through `lin` with these residuals
    (a key output's cotangent is a float0 array: ct is flattened as users see it)."""
    ct_leaves, ct_tree = tree_util.tree_flatten(ct)
    if ct_tree != user_out_tree:
        raise ValueError(f"unexpected tree structure of argument to vjp function: got {ct_tree}, but expected "
                         f"to match {user_out_tree}")
    cts = []
    for c, a in zip(ct_leaves, lin.out_avals):
        if a.dtype == float0:
            cts.append(ad.Zero(a))
            continue
        c = _as_operand(c)
        ca = core.get_aval(c)
        if ca.shape != a.shape or ca.dtype != a.dtype:
            raise ValueError(f"unexpected JAX type (e.g. shape/dtype) for argument to VJP function: got "
                             f"{ca.str_short()}, but expected {a.str_short()} because the corresponding output "
                             f"of the differentiated function had JAX type {a.str_short()}")
        cts.append(c)
    got = lin.transpose(cts, residuals)
    got = [_cotangent_of(g, a) for g, a in zip(got, in_avals)]
    return tuple(in_tree.unflatten(got))


def _cotangent_of(ct, primal_aval):
    """A cotangent for an input: zeros materialised, float0 for integer inputs, dtype of the primal."""
    if type(ct) is ad.Zero:
        return ad.instantiate(ad.Zero(ad.tangent_aval(primal_aval)))
    return ct


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
    """A function returning (fun(*args), the gradient of fun with respect to the args in argnums)."""
    return _value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, "value_and_grad")


def _value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, name):
    nums, single = _argnums_tuple(argnums)

    @functools.wraps(fun)
    def value_and_grad_f(*args, **kwargs):
        f_of_dyn, dyn = _dynamic_args(name, fun, nums, args, kwargs, allow_int, holomorphic)
        if has_aux:
            out, vjp_fn, aux = vjp(f_of_dyn, *dyn, has_aux=True)
        else:
            out, vjp_fn = vjp(f_of_dyn, *dyn)
        _check_scalar_output(name, out, holomorphic)
        aval = core.get_aval(out)
        seed = asarray(1.0, aval.dtype, aval.weak_type)  # the seed has the output's weak type, as in JAX
        if getattr(aval, "_sharding", None) is not None:  # and its mesh (JAX's _one: a reshard equation)
            seed = reshard_p.bind(seed, dst_sharding=aval._sharding, concrete_mesh=None)
        g = vjp_fn(seed)
        g = g[0] if single else tuple(g)
        return ((out, aux), g) if has_aux else (out, g)

    return value_and_grad_f


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
    """A function returning the gradient of scalar-valued fun with respect to the args in argnums."""
    vg = _value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, "grad")

    @functools.wraps(fun)
    def grad_f(*args, **kwargs):
        out, g = vg(*args, **kwargs)
        return (g, out[1]) if has_aux else g

    return grad_f
