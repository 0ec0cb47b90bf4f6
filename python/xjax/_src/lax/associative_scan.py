"""lax.associative_scan: a parallel prefix scan of an associative function, as lax ops.

The scan of n elements combines neighbouring pairs (n/2 applications of fn), scans those
recursively, then fills in the even positions with one more application: O(log n) depth, every
step a whole-array call of fn over strided slices, so fn sees batches as JAX's does.
"""
from xjax._src import core, tree_util
from xjax._src.lax import layout


def associative_scan(fn, elems, reverse=False, axis=0):
    """The prefix combination of elems along `axis` by the associative fn (a pytree of arrays with
    equal sizes along axis); reverse=True scans from the end."""
    leaves, tree = tree_util.tree_flatten(elems)
    if not leaves:
        return elems
    ndims = {core.get_aval(x).ndim for x in leaves}
    if any(axis >= d or axis < -d for d in ndims):
        raise ValueError(f"associative_scan: axis {axis} is out of bounds for arrays of rank {min(ndims)}")
    axes = [axis % core.get_aval(x).ndim for x in leaves]
    lengths = {core.get_aval(x).shape[a] for x, a in zip(leaves, axes)}
    if len(lengths) != 1:
        raise ValueError(f"Array inputs to associative_scan must have the same first dimension. (saw: "
                         f"{[core.get_aval(x).shape for x in leaves]})")
    if reverse:
        leaves = [layout.rev(x, (a,)) for x, a in zip(leaves, axes)]

    def combine(a, b):
        out = fn(tree.unflatten(a), tree.unflatten(b))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        if out_tree != tree:
            raise ValueError(f"associative_scan: fn returned a result of structure {out_tree}, "
                             f"expected {tree}")
        for o, x in zip(out_leaves, a):
            if core.get_aval(o).shape != core.get_aval(x).shape:
                raise ValueError(f"associative_scan: fn must map arrays of shape {core.get_aval(x).shape} "
                                 f"elementwise, got a result of shape {core.get_aval(o).shape}")
        return out_leaves

    def strided(xs, start, stop=None):
        return [layout.slice_in_dim(x, start, core.get_aval(x).shape[a] if stop is None else stop, 2, a)
                for x, a in zip(xs, axes)]

    def scan(xs):
        n = core.get_aval(xs[0]).shape[axes[0]]
        if n < 2:
            return xs
        odd = scan(combine(strided(xs, 0, n - 1), strided(xs, 1)))  # positions 1, 3, 5, ...
        rest = strided(xs, 2)  # positions 2, 4, ...
        prev = [layout.slice_in_dim(o, 0, core.get_aval(r).shape[a], 1, a) for o, r, a in zip(odd, rest, axes)]
        even = combine(prev, rest) if core.get_aval(rest[0]).shape[axes[0]] else rest
        even = [layout.concatenate([layout.slice_in_dim(x, 0, 1, 1, a), e], a) for x, e, a in zip(xs, even, axes)]
        return [_interleave(e, o, a, n) for e, o, a in zip(even, odd, axes)]

    out = scan(leaves)
    if reverse:
        out = [layout.rev(x, (a,)) for x, a in zip(out, axes)]
    return tree.unflatten(out)


def _interleave(even, odd, axis, n):
    """e0 o0 e1 o1 ... along axis (n elements; even has one more than odd when n is odd)."""
    if n % 2:
        odd = layout.concatenate([odd, layout.slice_in_dim(even, 0, 1, 1, axis)], axis)
    shape = core.get_aval(even).shape
    pair = (*shape[:axis], shape[axis], 1, *shape[axis + 1:])
    both = layout.concatenate([layout.reshape(even, pair), layout.reshape(odd, pair)], axis + 1)
    merged = layout.reshape(both, (*shape[:axis], 2 * shape[axis], *shape[axis + 1:]))
    return layout.slice_in_dim(merged, 0, n, 1, axis) if n % 2 else merged
