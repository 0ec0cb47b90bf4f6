"""jax.scipy.ndimage.map_coordinates: nearest (order 0) and linear (order 1) interpolation of an
array at arbitrary coordinates, with JAX's boundary modes (its 'constant' and 'wrap' are SciPy's
'grid-constant' and 'grid-wrap')."""
import functools
import itertools
import operator

import numpy as np

from xjax._src import dtypes, lax
from xjax._src.jit import jit
import xjax.numpy as jnp


def _mirror_index(index, size):
    # A triangular wave of half-period size - 1: ... 2 1 0 1 2 ... size-1 size-2 ...
    period = size - 1
    if period == 0:
        return jnp.zeros_like(index)
    return jnp.abs((index + period) % (2 * period) - period)


def _reflect_index(index, size):
    # The mirror of the half-integer grid: ... 1 0 0 1 ... size-1 size-1 size-2 ...
    return jnp.floor_divide(_mirror_index(2 * index + 1, 2 * size + 1) - 1, 2)


_INDEX_FIXERS = {
    "constant": lambda index, size: index,
    "nearest": lambda index, size: jnp.clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror_index,
    "reflect": _reflect_index,
}


def _round_half_away(a):
    return a if dtypes.issubdtype(a.dtype, np.integer) else lax.round(a)


def _nearest_nodes(coordinate):
    """[(index, weight)] of order 0: the nearest grid point, halves rounded away from zero."""
    return [(_round_half_away(coordinate).astype(np.int32), None)]


def _linear_nodes(coordinate):
    """[(index, weight)] of order 1: the grid points either side, weighted by proximity."""
    lower = jnp.floor(coordinate)
    upper_weight = coordinate - lower
    index = lower.astype(np.int32)
    return [(index, 1 - upper_weight), (index + 1, upper_weight)]


@functools.partial(jit, static_argnums=(2, 3, 4))
def _map_coordinates(input, coordinates, order, mode, cval):
    input = jnp.asarray(input)
    coordinates = [jnp.asarray(c) for c in coordinates]
    cval = jnp.asarray(cval, input.dtype)
    if len(coordinates) != input.ndim:
        raise ValueError("coordinates must be a sequence of length input.ndim, but "
                         f"{len(coordinates)} != {input.ndim}")
    fixer = _INDEX_FIXERS.get(mode)
    if fixer is None:
        raise NotImplementedError(f"jax.scipy.ndimage.map_coordinates does not yet support mode {mode}. "
                                  f"Currently supported modes are {set(_INDEX_FIXERS)}.")
    if order == 0:
        nodes_of = _nearest_nodes
    elif order == 1:
        nodes_of = _linear_nodes
    else:
        raise NotImplementedError("jax.scipy.ndimage.map_coordinates currently requires order<=1")

    per_axis = []
    for coordinate, size in zip(coordinates, input.shape):
        axis_nodes = []
        for index, weight in nodes_of(coordinate):
            valid = ((index >= 0) & (index < size)) if mode == "constant" else None
            axis_nodes.append((fixer(index, size), valid, weight))
        per_axis.append(axis_nodes)

    terms = []
    for corner in itertools.product(*per_axis):
        indices = tuple(node[0] for node in corner)
        value = input[indices]
        valid = [node[1] for node in corner if node[1] is not None]
        if valid:
            value = jnp.where(functools.reduce(operator.and_, valid), value, cval)
        weights = [node[2] for node in corner if node[2] is not None]
        if weights:
            value = functools.reduce(operator.mul, weights) * value
        terms.append(value)
    result = functools.reduce(operator.add, terms)
    if dtypes.issubdtype(input.dtype, np.integer):
        result = _round_half_away(result)
    return result.astype(input.dtype)


def map_coordinates(input, coordinates, order, mode="constant", cval=0.0):
    """The values of `input` at `coordinates` (one array per axis of input, broadcast together),
    interpolated with the given order (0: nearest, 1: linear); points outside are filled as
    `mode` says ('constant' with cval, 'nearest', 'wrap', 'mirror', 'reflect')."""
    return _map_coordinates(input, coordinates, order, mode, cval)
