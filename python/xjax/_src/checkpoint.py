"""jax.checkpoint (jax.remat), its policies and checkpoint_name: choose what reverse mode saves.

A checkpointed function is traced once per signature (cached, as JAX caches it) and bound as one
remat equation; remat.py holds the primitive and its rules. A policy decides, per primitive
application on the forward pass, whether its outputs may be saved as residuals; everything else
the backward pass needs is recomputed from the saved values and the function's inputs.
"""
import dataclasses
import functools
import types

from xjax._src import core, data_leaves, errors, tree_util
from xjax._src.interpreters import batching, partial_eval as pe
from xjax._src.lax.base import asarray
from xjax._src.lax.contraction import dot_general_p
from xjax._src.remat import remat_p

# ---- naming values (what the name policies refer to) ----------------------------------------------

name_p = core.Primitive("name")
name_p.def_rules(abstract_eval=lambda aval, name: aval, impl=lambda x, name: x,
                 lowering=lambda ctx, x, name: [x])


def _name_jvp(primals, tangents, name):
    (x,), (t,) = primals, tangents
    return name_p.bind(x, name=name), t  # the tangent is not named


name_p.def_rules(jvp=_name_jvp)
batching.defvectorized(name_p)  # batching (vmap): a name holds per element


def checkpoint_name(x, name):
    """x (a pytree) with its leaves named `name`, for save_only_these_names and the other name policies."""
    return data_leaves.tree_map(lambda leaf: name_p.bind(asarray(leaf), name=name), x)


# ---- policies -----------------------------------------------------------------------------------

def everything_saveable(*_, **__):
    """Save every value (as if there were no checkpoint)."""
    return True


def nothing_saveable(*_, **__):
    """Save nothing but the inputs: recompute everything (checkpoint's default)."""
    return False


@dataclasses.dataclass(frozen=True)
class DotsSaveable:
    """Save the results of matrix products (dot_general), optionally only those without batch dimensions."""

    only_if_no_batch_dims: bool

    def __call__(self, prim, *_, **params):
        if prim is not dot_general_p:
            return False
        if not self.only_if_no_batch_dims:
            return True
        (_, _), (lhs_batch, rhs_batch) = params["dimension_numbers"]
        return not lhs_batch and not rhs_batch


dots_saveable = checkpoint_dots = DotsSaveable(False)
dots_with_no_batch_dims_saveable = checkpoint_dots_with_no_batch_dims = DotsSaveable(True)


@dataclasses.dataclass(frozen=True)
class SaveOnlyTheseNames:
    """Save only values named (checkpoint_name) with one of these names."""

    saveable_names: frozenset

    def __call__(self, prim, *_, **params):
        return prim is name_p and params["name"] in self.saveable_names


@dataclasses.dataclass(frozen=True)
class SaveAnyNamesButThese:
    """Save only named values, except those with these names."""

    names: frozenset

    def __call__(self, prim, *_, **params):
        return prim is name_p and params["name"] not in self.names


@dataclasses.dataclass(frozen=True)
class SaveAnythingExceptTheseNames:
    """Save every value except those named with one of these names (and what computes them)."""

    names_not_to_save: frozenset

    def __call__(self, prim, *_, **params):
        return not (prim is name_p and params["name"] in self.names_not_to_save)

    def unsaved_inputs(self, prim, params):
        return prim is name_p and params["name"] in self.names_not_to_save


def save_only_these_names(*names):
    return SaveOnlyTheseNames(frozenset(names))


def save_any_names_but_these(*names):
    return SaveAnyNamesButThese(frozenset(names))


def save_anything_except_these_names(*names):
    return SaveAnythingExceptTheseNames(frozenset(names))


def save_from_both_policies(policy_1, policy_2):
    """A value is saved when either policy saves it."""
    def policy(prim, *args, **params):
        out1, out2 = policy_1(prim, *args, **params), policy_2(prim, *args, **params)
        if not (isinstance(out1, bool) and isinstance(out2, bool)):
            raise ValueError("The return value of the policies should be a boolean. Got: "
                             f"{out1} and {out2}. Please write a custom policy function directly, rather than using "
                             "this helper function.")
        return out1 or out2

    return policy


checkpoint_policies = types.SimpleNamespace(
    everything_saveable=everything_saveable, nothing_saveable=nothing_saveable, dots_saveable=dots_saveable,
    checkpoint_dots=checkpoint_dots, dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=checkpoint_dots_with_no_batch_dims,
    save_anything_except_these_names=save_anything_except_these_names,
    save_any_names_but_these=save_any_names_but_these, save_only_these_names=save_only_these_names,
    save_from_both_policies=save_from_both_policies)


# ---- checkpoint ---------------------------------------------------------------------------------

_UNSET = object()
_STATIC_HINT = ("\n\nConsider using the `static_argnums` parameter for `jax.remat` or `jax.checkpoint`. See the "
                "`jax.checkpoint` docstring and its example involving `static_argnums`:\n"
                "https://docs.jax.dev/en/latest/_autosummary/jax.checkpoint.html\n")


def checkpoint(fun, *, prevent_cse=True, policy=None, static_argnums=(), concrete=_UNSET):
    """`fun`, changed so that reverse mode recomputes its intermediate values instead of storing them.

    policy (one of checkpoint_policies, or policy(primitive, *avals, **params) -> bool) says which
    values may be saved; by default only the inputs are. static_argnums marks arguments that are
    Python values (each new one retraces). prevent_cse is accepted for compatibility: the graph
    compiler has no optimisation barrier yet, so inside one jit CSE may merge a recomputation.
    """
    if concrete is not _UNSET:
        raise NotImplementedError(
            "The `concrete` option to `jax.checkpoint` was deprecated in JAX v0.8.2, and removed in JAX v0.10.0. In "
            "its place please use `static_argnums`; for details refer to "
            "https://docs.jax.dev/en/latest/jep/11830-new-remat-checkpoint.html.")
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    if isinstance(prevent_cse, (list, tuple)):
        prevent_cse = tuple(prevent_cse)
    if not isinstance(prevent_cse, (tuple, bool)):
        raise TypeError(f"prevent_cse must be a bool or tuple of bools, got type(prevent_cse)={type(prevent_cse)}")
    cache = {}

    @functools.wraps(fun)
    def fun_remat(*args, **kwargs):
        statics = _static_positions(static_argnums, len(args))
        dyn_args = tuple(a for i, a in enumerate(args) if i not in statics)
        leaves, in_tree = data_leaves.flatten((dyn_args, kwargs))
        leaves = [_operand(x) for x in leaves]
        closed, out_tree, consts = _traced(fun, cache, args, kwargs, statics, leaves, in_tree)
        if isinstance(prevent_cse, tuple):
            cse_args = (dyn_args, kwargs) if kwargs else dyn_args
            flags = tree_util.tree_leaves(tree_util.tree_broadcast(prevent_cse, cse_args))
            cse = (False,) * len(consts) + tuple(bool(f) for f in flags)
        else:
            cse = prevent_cse
        outs = remat_p.bind(*consts, *leaves, jaxpr=closed, prevent_cse=cse, differentiated=False, policy=policy)
        return out_tree.unflatten(outs)

    return fun_remat


def remat(fun, *, prevent_cse=True, policy=None, static_argnums=(), concrete=_UNSET):
    """Alias of checkpoint."""
    return checkpoint(fun, prevent_cse=prevent_cse, policy=policy, static_argnums=static_argnums, concrete=concrete)


def _operand(x):
    if isinstance(x, core.Tracer) or type(x) in core.ARRAY_TYPES:
        return x
    if isinstance(x, (str, bytes)) or callable(x) or x is None:
        raise TypeError(f"Value {x!r} of type {type(x)} is not a valid JAX type")
    return asarray(x)


def _static_positions(static_argnums, nargs):
    if not (type(static_argnums) is tuple and all(type(d) is int for d in static_argnums)):
        raise TypeError("the `static_argnums` argument to `jax.checkpoint` / `jax.remat` must be an int, tuple of "
                        f"ints or, bool, but got value {static_argnums}")
    if not all(-nargs <= d < nargs for d in static_argnums):
        raise ValueError("the `static_argnums` argument to `jax.checkpoint` / `jax.remat` can only take integer "
                         "values greater than or equal to `-len(args)` and less than `len(args)`, but got "
                         f"{static_argnums}, while `len(args)` = {nargs}")
    return frozenset(d % nargs for d in static_argnums)


def _traced(fun, cache, args, kwargs, statics, leaves, in_tree):
    """(jaxpr taking the values fun closes over as leading arguments, output tree, those values) of fun on
    these arguments. As in JAX, they are operands of the remat equation, so partial evaluation never
    moves constants into an enclosing jaxpr. Cached per signature when none is a tracer (JAX caches too)."""
    avals = [core.get_aval(x) for x in leaves]
    key = (in_tree, tuple((i, args[i]) for i in sorted(statics)), *avals)
    try:
        entry = cache.get(key)
    except TypeError:  # an unhashable static argument: trace every time
        key, entry = None, None
    if entry is not None:
        return entry
    out_trees = []

    def flat_fun(*tracers):
        dyn, kw = in_tree.unflatten(tracers)
        it = iter(dyn)
        full = [args[i] if i in statics else next(it) for i in range(len(args))]
        out, tree = data_leaves.flatten(fun(*full, **kw))
        out_trees.append(tree)
        return out

    def names_fn():
        return pe.arg_names_of(fun, args, kwargs, statics)

    try:
        closed = pe.trace_to_jaxpr(flat_fun, avals, pe.DebugInfo("checkpoint / remat", fun, names_fn=names_fn),
                                   what=f"function {pe.func_src_info(fun)} traced for checkpoint / remat")
    except errors.ConcretizationTypeError as e:
        if "for checkpoint" in str(e) and e.args:
            e.args = (e.args[0] + _STATIC_HINT, *e.args[1:])
        raise
    closed, consts = pe.convert_constvars(closed)
    entry = (closed, out_trees[0], consts)
    if key is not None and not any(isinstance(c, core.Tracer) for c in consts):
        cache[key] = entry
    return entry

