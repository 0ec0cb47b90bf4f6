"""lax.reduce: reduce operands (a pytree of arrays) over dimensions with any computation.

A computation that is a monoid lax knows (add from 0, mul from 1, max from its identity, min, and
the bitwise ones on booleans) is its reduce_* primitive, as in JAX. Any other computation is applied
pairwise, halving the reduced elements each step (it must be associative and commutative, as XLA
assumes); the init value enters once.
"""
import math

import numpy as np

from xjax._src import core, tree_util
from xjax._src.lax import elementwise as ew
from xjax._src.lax import layout, reduction
from xjax._src.lax.monoids import starts_from_identity
from xjax._src.lax.base import asarray


_MONOIDS = {ew.add: reduction.reduce_sum, ew.mul: reduction.reduce_prod, ew.max: reduction.reduce_max,
            ew.min: reduction.reduce_min, ew.bitwise_or: reduction.reduce_or, ew.bitwise_and: reduction.reduce_and,
            ew.bitwise_xor: reduction.reduce_xor}


def _monoid(computation, x, init):
    reducer = _MONOIDS.get(computation)
    if reducer is None:
        return None
    dtype = core.get_aval(x).dtype
    if computation in (ew.bitwise_or, ew.bitwise_and, ew.bitwise_xor) and dtype != np.bool_:
        return None
    return reducer if starts_from_identity(computation, init, dtype) else None


def reduce(operands, init_values, computation, dimensions):  # noqa: A001 - lax's name
    """operands reduced over `dimensions` by computation(accumulated, next), starting from init_values
    (one scalar per operand, a pytree of the operands' structure)."""
    xs, tree = tree_util.tree_flatten(operands)
    inits, init_tree = tree_util.tree_flatten(init_values)
    if tree != init_tree:
        raise ValueError(f"Operands must have the same tree structure as init_values: {tree} vs. {init_tree}")
    xs = [asarray(x) for x in xs]
    shapes = {core.get_aval(x).shape for x in xs}
    if len(shapes) != 1:
        raise ValueError(f"reduce: operands must have the same shape, got {sorted(shapes)}")
    shape = shapes.pop()
    dims = tuple(sorted(int(d) % len(shape) if shape else int(d) for d in dimensions))
    if len(set(dims)) != len(dims) or any(not 0 <= d < len(shape) for d in dimensions if d >= 0):
        raise ValueError(f"reduce: dimensions {tuple(dimensions)} must be distinct dimensions of {shape}")
    if len(xs) == 1:
        reducer = _monoid(computation, xs[0], inits[0])
        if reducer is not None:
            return tree_util.tree_unflatten(tree, [reducer(xs[0], dims)])
    inits = [asarray(v, core.get_aval(x).dtype) if isinstance(v, (bool, int, float)) else asarray(v)
             for v, x in zip(inits, xs)]
    kept = [d for d in range(len(shape)) if d not in dims]
    kept_shape = tuple(shape[d] for d in kept)
    n = math.prod(shape[d] for d in dims)
    # the reduced elements of each output along one last axis
    xs = [layout.reshape(layout.transpose(x, kept + list(dims)), kept_shape + (n,)) for x in xs]

    def combine(a, b):
        return tree_util.tree_flatten(computation(tree_util.tree_unflatten(tree, a),
                                                  tree_util.tree_unflatten(tree, b)))[0]

    axis = len(kept_shape)
    leftovers = []  # the odd element out of each halving, folded in at the end
    while n > 1:
        if n % 2:
            leftovers.append([layout.reshape(layout.slice_in_dim(x, n - 1, n, axis=axis), kept_shape) for x in xs])
            n -= 1
        half = n // 2
        lo = [layout.slice_in_dim(x, 0, half, axis=axis) for x in xs]
        hi = [layout.slice_in_dim(x, half, n, axis=axis) for x in xs]
        xs, n = combine(lo, hi), half
    acc = [layout.broadcast_in_dim(v, kept_shape, ()) for v in inits]
    for part in ([[layout.reshape(x, kept_shape) for x in xs]] if n == 1 else []) + leftovers:
        acc = combine(acc, part)
    return tree_util.tree_unflatten(tree, acc)
