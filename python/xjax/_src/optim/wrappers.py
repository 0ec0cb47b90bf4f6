"""Transformations that wrap others: masked, multi_transform (partition) and apply_if_finite."""
from typing import Any, Mapping, NamedTuple

from xjax._src import lax, tree_util
from xjax._src.optim import base
from xjax._src.optim.tree_math import safe_increment, tree_zeros_like
import xjax.numpy as jnp


class MaskedNode(NamedTuple):
    """Stands in for a masked-out subtree: a pytree node with no leaves, so inner transforms skip it."""


class MaskedState(NamedTuple):
    inner_state: Any


def _mask_is_callable(mask):
    leaves = tree_util.tree_leaves(tree_util.tree_map(callable, mask))
    return len(leaves) > 0 and all(leaves)


def masked(inner, mask, *, mask_compatible_extra_args=False):
    """Applies `inner` only where `mask` (a pytree of bools, or a function of the params giving one) is True.

    Masked-out updates pass through unchanged and get no state in `inner`.
    """
    inner = base.with_extra_args_support(inner)

    def mask_tree(pytree, m):
        return tree_util.tree_map(lambda keep, p: p if keep else MaskedNode(), m, pytree)

    def mask_extra_args(extra_args, reference, m):
        structure = tree_util.tree_structure(reference)

        def maybe(v):
            if mask_compatible_extra_args and tree_util.tree_structure(v) == structure:
                return mask_tree(v, m)
            return v

        return {k: maybe(v) for k, v in extra_args.items()}

    def init_fn(params):
        m = mask(params) if _mask_is_callable(mask) else mask
        return MaskedState(inner_state=inner.init(mask_tree(params, m)))

    def update_fn(updates, state, params=None, **extra_args):
        m = mask(updates) if _mask_is_callable(mask) else mask
        masked_params = None if params is None else mask_tree(params, m)
        new_masked, inner_state = inner.update(mask_tree(updates, m), state.inner_state, masked_params,
                                               **mask_extra_args(extra_args, updates, m))
        new_updates = tree_util.tree_map(lambda keep, new, old: new if keep else old, m, new_masked, updates)
        return new_updates, MaskedState(inner_state=inner_state)

    return base.GradientTransformationExtraArgs(init_fn, update_fn)


class PartitionState(NamedTuple):
    inner_states: Mapping[Any, Any]


MultiTransformState = PartitionState


def partition(transforms, param_labels, *, mask_compatible_extra_args=False):
    """Applies transforms[label] to the parameters labelled `label` by param_labels (a pytree or a function)."""
    transforms = {k: base.with_extra_args_support(v) for k, v in transforms.items()}

    def group_mask(labels, group):
        return tree_util.tree_map(lambda label: label == group, labels)

    def group_tx(tx, labels, group):
        return masked(tx, group_mask(labels, group), mask_compatible_extra_args=mask_compatible_extra_args)

    def init_fn(params):
        labels = param_labels(params) if callable(param_labels) else param_labels
        label_set = set(tree_util.tree_leaves(labels))
        if not label_set.issubset(transforms.keys()):
            raise ValueError(f"Some parameters have no corresponding transformation.\nParameter labels: "
                             f"{list(sorted(label_set))} \nTransforms keys: {list(sorted(transforms.keys()))} \n")
        return PartitionState({g: group_tx(tx, labels, g).init(params) for g, tx in transforms.items()})

    def update_fn(updates, state, params=None, **extra_args):
        labels = param_labels(updates) if callable(param_labels) else param_labels
        new_states = {}
        for group, tx in transforms.items():
            updates, new_states[group] = group_tx(tx, labels, group).update(
                updates, state.inner_states[group], params, **extra_args)
        return updates, PartitionState(new_states)

    return base.GradientTransformationExtraArgs(init_fn, update_fn)


multi_transform = partition


class ApplyIfFiniteState(NamedTuple):
    notfinite_count: Any
    last_finite: Any
    total_notfinite: Any
    inner_state: Any


def apply_if_finite(inner, max_consecutive_errors):
    """Skips an update (zero updates, state unchanged) when any update is NaN or infinite.

    After more than max_consecutive_errors skipped steps in a row, the update is applied anyway.
    """
    inner = base.with_extra_args_support(inner)

    def init_fn(params):
        return ApplyIfFiniteState(notfinite_count=jnp.zeros([], jnp.int32), last_finite=jnp.array(True, jnp.bool_),
                                  total_notfinite=jnp.zeros([], jnp.int32), inner_state=inner.init(params))

    def update_fn(updates, state, params=None, **extra_args):
        leaves = tree_util.tree_leaves(updates)
        finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(p)) for p in leaves])) if leaves else jnp.array(True)
        notfinite_count = jnp.where(finite, jnp.zeros([], jnp.int32), safe_increment(state.notfinite_count))

        def do_update(_):
            return inner.update(updates, state.inner_state, params, **extra_args)

        def reject_update(_):
            return tree_zeros_like(updates), state.inner_state

        new_updates, inner_state = lax.cond(jnp.logical_or(finite, notfinite_count > max_consecutive_errors),
                                            do_update, reject_update, None)
        total = jnp.where(finite, state.total_notfinite, safe_increment(state.total_notfinite))
        return new_updates, ApplyIfFiniteState(notfinite_count=notfinite_count, last_finite=finite,
                                               total_notfinite=total, inner_state=inner_state)

    return base.GradientTransformationExtraArgs(init_fn, update_fn)
