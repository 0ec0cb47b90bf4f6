"""The frame of jax.example_libraries.optimizers: an optimizer is an Optimizer(init_fn, update_fn,
params_fn) triple; the `optimizer` decorator lifts a triple written for one array to pytrees of
parameters, keeping the state as an OptimizerState (a pytree, so it passes through jit, grad and
vmap). Also the pytree helpers l2_norm and clip_grads, and unpack_optimizer_state /
pack_optimizer_state for saving a state."""
import collections
import functools
from typing import Any, Callable, NamedTuple

import xjax.numpy as jnp
from xjax._src import tree_util

# The state of every parameter array, flattened, with the structures to rebuild it: packed_state
# holds one list of leaves per parameter (its only pytree children), tree_def the parameters'
# structure and subtree_defs each parameter state's structure (static aux data).
OptimizerState = collections.namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
tree_util.register_pytree_node(
    OptimizerState,
    lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], aux[0], aux[1]))

Step = int
Schedule = Callable[[Step], float]


class Optimizer(NamedTuple):
    """(init_fn(params) -> state, update_fn(step, grads, state) -> state, params_fn(state) -> params)."""
    init_fn: Callable[[Any], Any]
    update_fn: Callable[[Step, Any, Any], Any]
    params_fn: Callable[[Any], Any]


def _flatten_each(states):
    pairs = [tree_util.tree_flatten(s) for s in states]
    return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)


def _unflatten_each(subtree_defs, states_flat):
    if len(subtree_defs) != len(states_flat):
        raise ValueError(f"optimizer state holds {len(states_flat)} parameter states for {len(subtree_defs)} "
                         "parameters: it was not made by this optimizer's init function.")
    return [tree_util.tree_unflatten(d, s) for d, s in zip(subtree_defs, states_flat)]


def _as_state(name, opt_state):
    if not isinstance(opt_state, OptimizerState):
        raise TypeError(f"{name}: expected an OptimizerState (what the optimizer's init function returns), got "
                        f"{type(opt_state).__name__}.")
    return opt_state


def optimizer(opt_maker):
    """Decorator: turns `opt_maker(*args) -> (init, update, get_params)`, written for one array,
    into a function returning an Optimizer over pytrees of arrays whose state is an OptimizerState."""
    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree):
            x0_flat, tree = tree_util.tree_flatten(x0_tree)
            states_flat, subtrees = _flatten_each([init(x0) for x0 in x0_flat])
            return OptimizerState(states_flat, tree, subtrees)

        @functools.wraps(update)
        def tree_update(i, grad_tree, opt_state):
            states_flat, tree, subtrees = _as_state("optimizer update function", opt_state)
            grad_flat, grad_def = tree_util.tree_flatten(grad_tree)
            if grad_def != tree:
                raise TypeError("optimizer update function was passed a gradient tree that did not match the "
                                f"parameter tree structure with which it was initialized: parameter tree {tree} "
                                f"and grad tree {grad_def}.")
            states = _unflatten_each(subtrees, states_flat)
            new_flat, new_subtrees = _flatten_each([update(i, g, s) for g, s in zip(grad_flat, states)])
            for before, after in zip(subtrees, new_subtrees):
                if before != after:
                    raise TypeError("optimizer update function produced an output structure that did not match "
                                    f"its input structure: input {before} and output {after}.")
            return OptimizerState(new_flat, tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state):
            states_flat, tree, subtrees = _as_state("optimizer get_params function", opt_state)
            params = [get_params(s) for s in _unflatten_each(subtrees, states_flat)]
            return tree_util.tree_unflatten(tree, params)

        return Optimizer(tree_init, tree_update, tree_get_params)

    return tree_opt_maker


def l2_norm(tree):
    """The l2 norm of all the arrays of a pytree together (for weight decay or clipping)."""
    leaves = tree_util.tree_leaves(tree)
    return jnp.sqrt(sum((jnp.vdot(x, x) for x in leaves), 0.0))


def clip_grads(grad_tree, max_norm):
    """The gradients scaled down to l2 norm `max_norm` when their norm is larger, else unchanged."""
    norm = l2_norm(grad_tree)
    return tree_util.tree_map(lambda g: jnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree)


class JoinPoint:
    """A leaf of unpack_optimizer_state's outer tree holding one parameter's state tree."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):
        yield self.subtree


def unpack_optimizer_state(opt_state):
    """The OptimizerState as the parameters' tree with a JoinPoint (holding that parameter's state
    tree) at each leaf: plain Python containers, for serialization."""
    states_flat, tree_def, subtree_defs = _as_state("unpack_optimizer_state", opt_state)
    subtrees = _unflatten_each(subtree_defs, states_flat)
    return tree_util.tree_unflatten(tree_def, [JoinPoint(s) for s in subtrees])


def pack_optimizer_state(marked_pytree):
    """The inverse of unpack_optimizer_state: an OptimizerState from a tree with JoinPoint leaves."""
    sentinels, tree_def = tree_util.tree_flatten(marked_pytree)
    bad = [type(s).__name__ for s in sentinels if not isinstance(s, JoinPoint)]
    if bad:
        raise TypeError(f"pack_optimizer_state: every leaf must be a JoinPoint (as unpack_optimizer_state makes), "
                        f"got leaves of type {sorted(set(bad))}.")
    states_flat, subtree_defs = _flatten_each([s.subtree for s in sentinels])
    return OptimizerState(states_flat, tree_def, subtree_defs)
