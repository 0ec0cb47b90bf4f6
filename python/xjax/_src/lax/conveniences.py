"""lax's convenience functions over other primitives (batch_matmul, broadcast_like, index_take,
dynamic_update_index_in_dim, empty, shape_as_value, the patch and locally connected convolutions,
ragged_dot, the shape helpers of transposed convolutions and windows) and the types lax names in its
signatures (dimension numbers, precision, dot algorithms, RNG algorithms)."""
from collections.abc import Sequence
import enum
import math
from typing import NamedTuple, Union

import numpy as np

from xjax._src import core, dtypes
from xjax._src.lax import elementwise as ew
from xjax._src.lax.base import asarray
from xjax._src.lax.contraction import Precision, dot_general
from xjax._src.lax.convolution import (ConvDimensionNumbers, _conv_transpose_padding, conv_dimension_numbers,
                                       conv_general_dilated, conv_general_permutations)
from xjax._src.lax.indexing import GatherDimensionNumbers, gather
from xjax._src.lax.layout import (broadcast_in_dim, concatenate, dynamic_update_slice_in_dim, expand_dims, full,
                                  reshape, transpose)
from xjax._src.lax.reduction import cumsum, reduce_sum

__all__ = ["AccuracyMode", "ConvGeneralDilatedDimensionNumbers", "DotAlgorithm", "DotAlgorithmPreset",
           "DotDimensionNumbers", "PrecisionLike", "RaggedDotDimensionNumbers", "Tolerance", "batch_matmul",
           "broadcast_like", "conv_general_dilated_local", "conv_general_dilated_patches",
           "conv_transpose_shape_tuple", "dtype", "dynamic_update_index_in_dim", "empty", "index_take", "ragged_dot",
           "ragged_dot_general", "reduce_window_shape_tuple", "shape_as_value"]


# ---- types ------------------------------------------------------------------------------------------

DotDimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]], tuple[Sequence[int], Sequence[int]]]
ConvGeneralDilatedDimensionNumbers = Union[tuple[str, str, str], ConvDimensionNumbers, None]


class DotAlgorithm(NamedTuple):
    """A dot's algorithm: the operands' precision types, the accumulation type and component counts.
    Accepted as `precision`; the CPU core computes at the operands' precision whatever it says."""
    lhs_precision_type: object
    rhs_precision_type: object
    accumulation_type: object
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


class DotAlgorithmPreset(enum.Enum):
    """JAX's named dot algorithms (accepted as `precision`, as DotAlgorithm is)."""
    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __repr__(self):
        return f"{self.__class__.__name__}.{self.name}"

    __str__ = __repr__


PrecisionLike = Union[None, str, Precision, tuple[str, str], tuple[Precision, Precision], DotAlgorithm,
                      DotAlgorithmPreset]


class AccuracyMode(enum.Enum):
    """The accuracy a transcendental function is asked for (JAX's `accuracy=`)."""
    HIGHEST = 1
    DEFAULT = 2


class Tolerance(NamedTuple):
    """An accuracy given as tolerances (JAX's `accuracy=`)."""
    atol: float = 0.0
    rtol: float = 0.0
    ulps: int = 0


class RaggedDotDimensionNumbers(NamedTuple):
    """ragged_dot_general's dimensions: the dot's ((contracting), (batch)) numbers, lhs's ragged
    dimensions and rhs's group dimensions."""
    dot_dimension_numbers: tuple
    lhs_ragged_dimensions: Sequence[int]
    rhs_group_dimensions: Sequence[int]


def dtype(x):
    """JAX's dtype of a value or type: Python scalars and types get the default dtypes, NumPy types and
    arrays their canonical one (64 bits only with x64), xjax arrays and tracers their own."""
    if x is None:
        raise ValueError(f"Invalid argument to dtype: {x}.")
    if isinstance(x, type) and x in (bool, int, float, complex):
        return dtypes.check_user_dtype(x)
    if type(x) in (bool, int, float, complex):
        return dtypes.check_user_dtype(type(x))
    if isinstance(x, core.Tracer) or type(x) in core.ARRAY_TYPES and not isinstance(x, (np.ndarray, np.generic)):
        return core.get_aval(x).dtype
    dt = np.dtype(x) if isinstance(x, (str, np.dtype, type)) else np.result_type(x)
    return dtypes.canonicalize_dtype(dt)


# ---- array helpers ----------------------------------------------------------------------------------

def batch_matmul(lhs, rhs, precision=None):
    """Matrix products over leading batch dimensions (both operands of one rank >= 2)."""
    lhs, rhs = asarray(lhs), asarray(rhs)
    nl, nr = core.get_aval(lhs).ndim, core.get_aval(rhs).ndim
    if min(nl, nr) < 2:
        raise ValueError(f"Arguments to batch_matmul must be at least 2D, got {nl}, {nr}")
    if nl != nr:
        raise ValueError(f"Arguments to batch_matmul must have same ndim, got {nl}, {nr}")
    batch = tuple(range(nl - 2))
    return dot_general(lhs, rhs, (((nl - 1,), (nr - 2,)), (batch, batch)), precision=precision)


def broadcast_like(arr, like_arr):
    """arr broadcast (NumPy's rule) to the shape of like_arr."""
    x = asarray(arr)
    shape, target = core.get_aval(x).shape, tuple(np.shape(like_arr))
    np.broadcast_shapes(shape, target)  # NumPy's error for shapes that do not broadcast
    if len(shape) > len(target) or any(s not in (1, t) for s, t in zip(shape[::-1], target[::-1])):
        raise ValueError(f"broadcast_like: cannot broadcast shape {shape} to {target}")
    lead = len(target) - len(shape)
    kept = [d for d, s in enumerate(shape) if s == target[lead + d]]
    squeezed = reshape(x, tuple(shape[d] for d in kept)) if len(kept) < len(shape) else x
    return broadcast_in_dim(squeezed, target, tuple(lead + d for d in kept))


def index_take(src, idxs, axes):
    """src indexed along `axes` by the integer arrays idxs (one per axis, of one shape; wrapped modulo
    the axis sizes, as JAX's), the other axes kept whole."""
    src = asarray(src)
    shape = core.get_aval(src).shape
    indices = concatenate([expand_dims(asarray(i), (1,)) for i in idxs], 1)
    index_aval = core.get_aval(indices)
    bounds = np.broadcast_to(np.array([shape[ax] for ax in axes], index_aval.dtype), index_aval.shape)
    indices = ew.rem(ew.add(ew.rem(indices, bounds), bounds), bounds)  # a non-negative modulus
    slice_sizes = tuple(1 if d in axes else s for d, s in enumerate(shape))
    dnums = GatherDimensionNumbers(offset_dims=tuple(range(1, len(shape) - len(axes) + 1)),
                                   collapsed_slice_dims=tuple(axes), start_index_map=tuple(axes))
    return gather(src, indices, dimension_numbers=dnums, slice_sizes=slice_sizes)


def dynamic_update_index_in_dim(operand, update, index, axis, *, allow_negative_indices=True):
    """operand with a slice of size 1 along `axis` at `index` replaced by update (which may lack that axis);
    the index is clamped, and a negative one counts from the end unless allow_negative_indices is False."""
    x = asarray(operand)
    u = asarray(update)
    axis = int(axis)
    nd = core.get_aval(x).ndim
    if core.get_aval(u).ndim != nd:
        if core.get_aval(u).ndim + 1 != nd:
            raise TypeError(f"dynamic_update_index_in_dim: update of shape {core.get_aval(u).shape} does not fit "
                            f"operand of shape {core.get_aval(x).shape}")
        u = expand_dims(u, (axis,))
    if not allow_negative_indices:
        index = ew.max(asarray(index), np.array(0, core.get_aval(asarray(index)).dtype))
    return dynamic_update_slice_in_dim(x, u, index, axis)


def empty(shape, dtype, *, out_sharding=None):
    """An array whose values the caller must not read before writing them. JAX's are backend-defined;
    xjax's are zeros, so that no graph can read a freed buffer's bytes through one."""
    del out_sharding
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return full(shape, 0, dtypes.check_user_dtype(dtype))


def shape_as_value(shape):
    """A shape as a 1-D integer array (JAX's int dtype for shapes: int32, or int64 where a size needs it)."""
    shape = tuple(int(d) for d in shape)
    big = any(d > np.iinfo(np.int32).max for d in shape)
    return np.asarray(shape, np.int64 if big else np.int32).reshape((len(shape),))


# ---- convolutions built on conv_general_dilated ------------------------------------------------------

def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
                                 dimension_numbers=None, precision=None, preferred_element_type=None):
    """The patches a convolution with a kernel of `filter_shape` reads, one output feature per
    (input feature, kernel position), in that order: a grouped convolution with an identity kernel."""
    x = asarray(lhs)
    filter_shape = tuple(filter_shape)
    shape = core.get_aval(x).shape
    dnums = conv_dimension_numbers(shape, (1, 1) + filter_shape, dimension_numbers)
    lhs_spec, rhs_spec, _ = dnums
    spatial_size = math.prod(filter_shape)
    channels = shape[lhs_spec[1]]
    eye = np.eye(spatial_size, dtype=core.get_aval(x).dtype)
    kernel = np.broadcast_to(eye, (channels, spatial_size, spatial_size)).reshape(
        (channels * spatial_size, 1, *filter_shape))
    kernel = np.moveaxis(kernel, (0, 1), (rhs_spec[0], rhs_spec[1]))
    return conv_general_dilated(x, kernel, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, dimension_numbers=dnums, feature_group_count=channels,
                                preferred_element_type=preferred_element_type)


def conv_general_dilated_local(lhs, rhs, window_strides, padding, filter_shape, lhs_dilation=None, rhs_dilation=None,
                               dimension_numbers=None, precision=None):
    """A locally connected (unshared) convolution: each output position has its own kernel, rhs of
    shape [in features * prod(filter_shape), *output spatial, out features] laid out by rhs_spec."""
    x = asarray(lhs)
    patches = conv_general_dilated_patches(x, filter_shape, window_strides, padding, lhs_dilation, rhs_dilation,
                                           dimension_numbers)
    _, rhs_spec, out_spec = conv_dimension_numbers(core.get_aval(x).shape, (1, 1) + tuple(filter_shape),
                                                   dimension_numbers)
    lhs_batch, rhs_batch = list(out_spec[2:]), list(rhs_spec[2:])
    order = sorted(range(len(lhs_batch)), key=lambda k: lhs_batch[k])
    dn = (([out_spec[1]], [rhs_spec[1]]), (sorted(lhs_batch), [rhs_batch[i] for i in order]))
    out = dot_general(patches, rhs, dimension_numbers=dn, precision=precision)
    nd = core.get_aval(out).ndim
    dims = list(range(nd - 2))
    for position, source in sorted([(out_spec[0], nd - 2), (out_spec[1], nd - 1)]):
        dims.insert(position, source)
    return transpose(out, tuple(dims))


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    """The output shape of conv_transpose (strides and padding as the forward convolution's)."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    lhs_trans, rhs_trans = np.take(lhs_shape, lhs_perm), np.take(rhs_shape, rhs_perm)
    if isinstance(padding, str):
        padding = [_conv_transpose_padding(k, s, padding) for k, s in zip(rhs_trans[2:], window_strides)]
    padding = [int(np.sum(p)) for p in padding]
    out_space = [(i - 1) * s - k + 2 + p for i, k, s, p in zip(lhs_trans[2:], rhs_trans[2:], window_strides, padding)]
    out_trans = (int(lhs_trans[0]), int(rhs_trans[0])) + tuple(int(d) for d in out_space)
    return tuple(int(d) for d in np.take(out_trans, np.argsort(out_perm)))


def _dilate_shape(shape, dilation):
    return tuple(0 if d == 0 else 1 + r * (d - 1) for d, r in zip(shape, dilation))


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding, base_dilation=None,
                              window_dilation=None):
    """The output shape of reduce_window."""
    if base_dilation is not None:
        operand_shape = _dilate_shape(operand_shape, base_dilation)
    if window_dilation is not None:
        window_dimensions = _dilate_shape(window_dimensions, window_dilation)
    padded = tuple(d + lo + hi for d, (lo, hi) in zip(operand_shape, padding))
    return tuple(0 if d < w else (d - w) // s + 1 for d, w, s in zip(padded, window_dimensions, window_strides))


# ---- ragged dots ------------------------------------------------------------------------------------

def _group_mask(group_sizes, rows, dtype_, group_offset):
    """[g, rows]: 1 where row r belongs to group i (groups are consecutive runs of rows, sizes given;
    rows past their sum belong to none), of the operands' dtype."""
    del group_offset
    sizes = asarray(group_sizes)
    ends = cumsum(sizes, axis=0)
    starts = ew.sub(ends, sizes)
    row = ew.broadcasted_iota(core.get_aval(sizes).dtype, (core.get_aval(sizes).shape[0], rows), 1)
    inside = ew.bitwise_and(ew.ge(row, expand_dims(starts, (1,))), ew.lt(row, expand_dims(ends, (1,))))
    return ew.convert_element_type(inside, dtype_)


def ragged_dot_general(lhs, rhs, group_sizes, ragged_dot_dimension_numbers, precision=None,
                       preferred_element_type=None, group_offset=None):
    """A dot whose lhs ragged dimension falls into consecutive groups of group_sizes ([g]), in JAX's three
    modes: a non-contracting ragged dimension multiplies each group by its own rhs along the rhs group
    dimension; a contracting one gives one product per group (a new leading axis of size g); a batch one
    is the plain dot_general (as JAX's CPU computes it). Computed as masked dot_generals."""
    if group_offset is not None:
        raise NotImplementedError("ragged_dot_general: group_offset is not supported in xjax")
    x, y = asarray(lhs), asarray(rhs)
    dn = ragged_dot_dimension_numbers
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dn.dot_dimension_numbers
    lhs_contract, rhs_contract, lhs_batch, rhs_batch = (tuple(int(d) for d in ds) for ds in
                                                       (lhs_contract, rhs_contract, lhs_batch, rhs_batch))
    ragged, groups = tuple(dn.lhs_ragged_dimensions), tuple(dn.rhs_group_dimensions)
    xs, ys = core.get_aval(x).shape, core.get_aval(y).shape
    sizes_shape = core.get_aval(asarray(group_sizes)).shape
    if len(ragged) != 1 or len(groups) > 1 or len(sizes_shape) != 1:
        raise NotImplementedError("ragged_dot_general: xjax supports one lhs ragged dimension, at most one rhs group "
                                  f"dimension and 1-D group_sizes; got {dn} and group_sizes of shape {sizes_shape}")
    ragged_dim, g = ragged[0], sizes_shape[0]
    kw = dict(precision=precision, preferred_element_type=preferred_element_type)
    if ragged_dim in lhs_batch:
        return dot_general(x, y, ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)), **kw)
    if ragged_dim in lhs_contract:
        if groups:
            raise TypeError("ragged_dot_general: rhs has no group dimension when the ragged dimension contracts")
        # lhs masked per group: a new leading free axis of size g, moved to the front of the output
        mask = _group_mask(group_sizes, xs[ragged_dim], core.get_aval(x).dtype, None)
        masked = ew.mul(broadcast_in_dim(x, (g,) + tuple(xs), tuple(range(1, len(xs) + 1))),
                        broadcast_in_dim(mask, (g,) + tuple(xs), (0, 1 + ragged_dim)))
        shifted = ((tuple(c + 1 for c in lhs_contract), rhs_contract), (tuple(b + 1 for b in lhs_batch), rhs_batch))
        out = dot_general(masked, y, shifted, **kw)
        nb = len(lhs_batch)
        order = (nb,) + tuple(d for d in range(core.get_aval(out).ndim) if d != nb)
        return transpose(out, order)
    if len(groups) != 1:
        raise TypeError("ragged_dot_general: a non-contracting ragged dimension needs one rhs group dimension")
    group_dim = groups[0]
    if ys[group_dim] != g:
        raise TypeError(f"ragged_dot_general: group_sizes must have shape ({ys[group_dim]},), got {sizes_shape}")
    # rhs's group dimension becomes a batch dimension of the dot with a broadcast lhs
    x_b = broadcast_in_dim(x, (g,) + tuple(xs), tuple(range(1, len(xs) + 1)))
    dn_b = ((tuple(c + 1 for c in lhs_contract), rhs_contract),
            ((0,) + tuple(b + 1 for b in lhs_batch), (group_dim,) + rhs_batch))
    products = dot_general(x_b, y, dn_b, **kw)
    # products: [g, *batch, lhs free dims (in order), rhs free dims]; the ragged dim's position there
    lhs_free = [d for d in range(len(xs)) if d not in lhs_contract and d not in lhs_batch]
    position = 1 + len(lhs_batch) + lhs_free.index(ragged_dim)
    mask = _group_mask(group_sizes, xs[ragged_dim], core.get_aval(products).dtype, None)
    mask = broadcast_in_dim(mask, core.get_aval(products).shape, (0, position))
    return reduce_sum(ew.mul(products, mask), (0,))


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None, group_offset=None):
    """lhs [m, k] split into consecutive row groups of group_sizes [g], group i times rhs[i] ([g, k, n]):
    [m, n] (rows past sum(group_sizes) are zero)."""
    dn = RaggedDotDimensionNumbers(dot_dimension_numbers=(([1], [1]), ([], [])), lhs_ragged_dimensions=[0],
                                   rhs_group_dimensions=[0])
    return ragged_dot_general(lhs, rhs, group_sizes, dn, precision, preferred_element_type, group_offset)
