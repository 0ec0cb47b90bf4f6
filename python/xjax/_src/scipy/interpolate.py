"""jax.scipy.interpolate.RegularGridInterpolator: linear and nearest interpolation on a rectilinear
grid whose axes are strictly increasing, registered as a pytree (grid, values and fill_value are
its leaves) as JAX registers it."""
import itertools

import numpy as np

from xjax._src.numpy.dtype_api import can_cast
from xjax._src.numpy.util import check_arraylike, promote_dtypes_inexact
from xjax._src.tree_util import register_pytree_node
import xjax.numpy as jnp

_METHODS = ("linear", "nearest")


def _check_method(method):
    if method not in _METHODS:
        raise ValueError(f"method {method!r} is not defined")


def _points_array(xi, ndim):
    """The query points as one (..., ndim) array: a tuple of coordinate arrays is broadcast and
    stacked (in the default float dtype, as JAX), a 1-d array is read as points of ndim values."""
    if isinstance(xi, tuple) and len(xi) == 1:
        xi = xi[0]
    if isinstance(xi, tuple):
        check_arraylike("RegularGridInterpolator", *xi)
        parts = jnp.broadcast_arrays(*xi)
        return jnp.stack([jnp.asarray(p, dtype=float) for p in parts], axis=-1)
    check_arraylike("RegularGridInterpolator", xi)
    xi = jnp.asarray(xi)
    return xi.reshape(-1, ndim) if xi.ndim == 1 else xi


class RegularGridInterpolator:
    """Interpolates `values` given on the grid `points` (one strictly increasing 1-d array per
    leading axis of values) at query points, by `method` ('linear' or 'nearest'); points outside
    the grid get `fill_value` (NaN by default; None extrapolates)."""

    def __init__(self, points, values, method="linear", bounds_error=False, fill_value=np.nan):
        _check_method(method)
        self.method = method
        self.bounds_error = bounds_error
        if bounds_error:
            raise NotImplementedError("`bounds_error` takes no effect under JIT")
        check_arraylike("RegularGridInterpolator", values)
        if len(points) > values.ndim:
            raise ValueError(f"there are {len(points)} point arrays, but values has {values.ndim} dimensions")
        (values,) = promote_dtypes_inexact(values)
        if fill_value is not None:
            check_arraylike("RegularGridInterpolator", fill_value)
            fill_value = jnp.asarray(fill_value)
            if not can_cast(fill_value.dtype, values.dtype, casting="same_kind"):
                raise ValueError("fill_value must be either 'None' or of a type compatible with values")
        self.fill_value = fill_value
        check_arraylike("RegularGridInterpolator", *points)
        self.grid = tuple(jnp.asarray(p) for p in points)
        self.values = values

    def __call__(self, xi, method=None):
        method = self.method if method is None else method
        _check_method(method)
        ndim = len(self.grid)
        xi = _points_array(xi, ndim)
        if xi.shape[-1] != ndim:
            raise ValueError(f"the requested sample points xi have dimension {xi.shape[-1]}, but this "
                             f"RegularGridInterpolator has dimension {ndim}")
        xi_shape = xi.shape
        xi = xi.reshape(-1, ndim)
        indices, distances, outside = self._find_indices(xi.T)
        if method == "linear":
            result = self._evaluate_linear(indices, distances)
        else:
            result = self._evaluate_nearest(indices, distances)
        if self.fill_value is not None:
            outside = outside.reshape(outside.shape + (1,) * (result.ndim - 1))
            result = jnp.where(outside, self.fill_value, result)
        return result.reshape(xi_shape[:-1] + self.values.shape[ndim:])

    def _find_indices(self, xi):
        """Per axis the cell's lower index (clipped to the grid's cells), the distance from its
        lower edge in units of the cell, and whether any coordinate lies outside the grid."""
        indices, distances = [], []
        outside = jnp.zeros(xi.shape[1], dtype=bool)
        for x, g in zip(xi, self.grid):
            i = jnp.clip(jnp.searchsorted(g, x) - 1, 0, g.size - 2)
            indices.append(i)
            distances.append((x - g[i]) / (g[i + 1] - g[i]))
            outside = outside | (x < g[0]) | (x > g[-1])
        return indices, distances, outside

    def _evaluate_linear(self, indices, distances):
        trailing = (slice(None),) + (None,) * (self.values.ndim - len(indices))
        result = None
        for corner in itertools.product(*[(0, 1)] * len(indices)):
            weight = None
            for upper, y in zip(corner, distances):
                w = y if upper else 1 - y
                weight = w if weight is None else weight * w
            term = self.values[tuple(i + upper for i, upper in zip(indices, corner))] * weight[trailing]
            result = term if result is None else result + term
        return result

    def _evaluate_nearest(self, indices, distances):
        return self.values[tuple(jnp.where(y <= 0.5, i, i + 1) for i, y in zip(indices, distances))]


def _unflatten(aux, children):
    # The leaves were checked when the interpolator was made; transformations hand back tracers
    # or placeholders in their place, which must not be checked again.
    obj = object.__new__(RegularGridInterpolator)
    obj.method, obj.bounds_error = aux
    obj.grid, obj.values, obj.fill_value = children
    return obj


register_pytree_node(RegularGridInterpolator,
                     lambda obj: ((obj.grid, obj.values, obj.fill_value), (obj.method, obj.bounds_error)),
                     _unflatten)
