"""JAX primitives that xjax computes as compositions of lax operations (composite.py's mechanism):
tile, mulhi, scatter_sub, reduce_precision, and approx_max_k/approx_min_k (exact top-k, as JAX's CPU
backend computes them)."""
import math
import operator

import numpy as np

from xjax._src import core, dtypes
from xjax._src.interpreters import ad
from xjax._src.lax import elementwise as ew
from xjax._src.lax.base import asarray, scalars_like
from xjax._src.lax.composite import define_composed_primitive
from xjax._src.lax.indexing import scatter_add
from xjax._src.lax.layout import broadcast_in_dim, reshape, transpose
from xjax._src.lax.loops import fori_loop
from xjax._src.lax.reduction import reduce_max
from xjax._src.lax.sorting import top_k

__all__ = ["approx_max_k", "approx_min_k", "approx_top_k_p", "mulhi", "mulhi_p", "reduce_precision",
           "reduce_precision_p", "scatter_apply", "scatter_sub", "scatter_sub_p", "tile", "tile_p"]


def _const(x, value):
    return np.array(value, core.get_aval(x).dtype)


# ---- tile -------------------------------------------------------------------------------------------

def _tile(x, *, reps):
    shape = core.get_aval(x).shape
    if len(reps) != len(shape):
        raise ValueError(f"tile: len(reps) must equal the operand's rank, got reps={reps} for shape {shape}")
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: reps must be non-negative, got {reps}")
    # [r0, d0, r1, d1, ...] with each operand dim after its repetition count, then merged pairwise
    interleaved = tuple(v for pair in zip(reps, shape) for v in pair)
    out = broadcast_in_dim(x, interleaved, tuple(range(1, 2 * len(shape), 2)))
    return reshape(out, tuple(r * d for r, d in zip(reps, shape)))


tile_p = define_composed_primitive("tile", _tile)


def tile(operand, reps):
    """operand repeated reps[i] times along each axis i (len(reps) == operand.ndim)."""
    return tile_p.bind(asarray(operand), reps=tuple(operator.index(r) for r in reps))


# ---- mulhi ------------------------------------------------------------------------------------------

def _mulhi(x, y):
    """The high half of the double-width product of two integers of one type. Types of up to 16 bits
    widen to 32; 32- and 64-bit ones split into halves (no wider type is needed, so int32 works with
    x64 off): the unsigned high word from the four partial products, then the signed correction
    hi(x y) = hi_u(x y) - (x < 0 ? y : 0) - (y < 0 ? x : 0)."""
    dtype = core.get_aval(x).dtype
    bits = np.iinfo(dtype).bits
    signed = dtype.kind == "i"
    if bits <= 16:
        wide = np.dtype(np.int32 if signed else np.uint32)
        product = ew.mul(ew.convert_element_type(x, wide), ew.convert_element_type(y, wide))
        shifted = (ew.shift_right_arithmetic if signed else ew.shift_right_logical)(product, np.array(bits, wide))
        return ew.convert_element_type(shifted, dtype)
    unsigned = np.dtype(f"uint{bits}")
    half, mask = bits // 2, (1 << (bits // 2)) - 1
    xu, yu = ew.bitcast_convert_type(x, unsigned), ew.bitcast_convert_type(y, unsigned)
    mask_c, half_c = np.array(mask, unsigned), np.array(half, unsigned)
    x_lo, x_hi = ew.bitwise_and(xu, mask_c), ew.shift_right_logical(xu, half_c)
    y_lo, y_hi = ew.bitwise_and(yu, mask_c), ew.shift_right_logical(yu, half_c)
    lo_lo, lo_hi, hi_lo, hi_hi = ew.mul(x_lo, y_lo), ew.mul(x_lo, y_hi), ew.mul(x_hi, y_lo), ew.mul(x_hi, y_hi)
    cross = ew.add(ew.add(ew.bitwise_and(lo_hi, mask_c), ew.bitwise_and(hi_lo, mask_c)),
                   ew.shift_right_logical(lo_lo, half_c))
    high = ew.add(hi_hi, ew.add(ew.shift_right_logical(lo_hi, half_c),
                                ew.add(ew.shift_right_logical(hi_lo, half_c), ew.shift_right_logical(cross, half_c))))
    high = ew.bitcast_convert_type(high, dtype)
    if signed:
        x_sign = ew.shift_right_arithmetic(x, np.array(bits - 1, dtype))  # -1 where x < 0, else 0
        y_sign = ew.shift_right_arithmetic(y, np.array(bits - 1, dtype))
        high = ew.add(high, ew.add(ew.mul(x_sign, y), ew.mul(y_sign, x)))
    return high


def _mulhi_checked(x, y):
    ax, ay = core.get_aval(x), core.get_aval(y)
    if ax.dtype != ay.dtype or not np.issubdtype(ax.dtype, np.integer):
        raise TypeError(f"mulhi requires two integer operands of one dtype, got {ax.dtype.name} and {ay.dtype.name}")
    if ax.shape != ay.shape:
        raise TypeError(f"mulhi requires operands of one shape, got {ax.shape} and {ay.shape}")
    return _mulhi(x, y)


mulhi_p = define_composed_primitive("mulhi", _mulhi_checked)
ad.defjvp_zero(mulhi_p)


def mulhi(x, y, /):
    """The high half of the product x * y computed at twice the integer width."""
    x, y = scalars_like((x, y))
    return mulhi_p.bind(asarray(x), asarray(y))


# ---- scatter_sub ------------------------------------------------------------------------------------

def _scatter_sub(operand, indices, updates, **params):
    """operand with updates subtracted at the scattered windows: scatter_add of 0 - updates, which wraps
    for unsigned integers as subtraction does."""
    return scatter_add(operand, indices, ew.sub(_const(updates, 0), updates), **params)


scatter_sub_p = define_composed_primitive("scatter-sub", _scatter_sub)


def scatter_sub(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
                unique_indices=False, mode=None):
    """XLA scatter with subtraction: operand[windows] -= updates."""
    x, u = scalars_like((operand, updates))
    return scatter_sub_p.bind(asarray(x), asarray(scatter_indices), asarray(u), dimension_numbers=dimension_numbers,
                              indices_are_sorted=bool(indices_are_sorted), unique_indices=bool(unique_indices),
                              mode=mode)


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(), indices_are_sorted=False,
                  unique_indices=False, mode=None):
    """operand with the elementwise `func` applied at the windows the indices select, once per time an
    element is selected (XLA's scatter with the update computation func(x)). How often each element is hit
    is a scatter_add of ones of update_shape (the same windows, the same out-of-bounds mode); func is then
    applied while any count is left, where one is."""
    x = asarray(operand)
    shape = core.get_aval(x).shape
    counts = scatter_add(np.zeros(shape, np.int32), asarray(scatter_indices), np.ones(tuple(update_shape), np.int32),
                         dimension_numbers, indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                         mode=mode)

    def body(i, value):
        return ew.select(ew.lt(broadcast_in_dim(i, shape, ()), counts), func(value), value)

    return fori_loop(np.int32(0), reduce_max(counts, tuple(range(len(shape)))), body, x)


# ---- reduce_precision -------------------------------------------------------------------------------

def _reduce_precision(x, *, exponent_bits, mantissa_bits):
    """XLA's ReducePrecision on the bits: round the mantissa to nearest even at `mantissa_bits`, then
    send exponents beyond the reduced range to signed infinity (above) or signed zero (at or below its
    smallest normal exponent). NaNs are returned as they are (JAX's CPU results keep them, even with no
    mantissa bit left)."""
    dtype = core.get_aval(x).dtype
    info = dtypes.finfo(dtype)
    nbits, src_exponent, src_mantissa = info.bits, info.nexp, info.nmant
    uint = np.dtype(f"uint{nbits}")
    c = lambda v: np.array(v, uint)  # noqa: E731
    bits = ew.bitcast_convert_type(x, uint)
    if mantissa_bits < src_mantissa:
        shift = src_mantissa - mantissa_bits
        last_bit = 1 << shift
        bias = ew.add(ew.shift_right_logical(ew.bitwise_and(bits, c(last_bit)), c(shift)), c((last_bit >> 1) - 1))
        bits = ew.bitwise_and(ew.add(bits, bias), c(~(last_bit - 1) & ((1 << nbits) - 1)))
    if exponent_bits < src_exponent:
        exponent_mask = ((1 << src_exponent) - 1) << src_mantissa
        bias, reduced_bias = (1 << (src_exponent - 1)) - 1, (1 << (exponent_bits - 1)) - 1
        exponent = ew.bitwise_and(bits, c(exponent_mask))
        overflows = ew.gt(exponent, c((bias + reduced_bias) << src_mantissa))
        underflows = ew.le(exponent, c((bias - reduced_bias) << src_mantissa))
        signed_zero = ew.bitwise_and(bits, c(1 << (nbits - 1)))
        signed_inf = ew.bitwise_or(signed_zero, c(exponent_mask))
        bits = ew.select(overflows, signed_inf, ew.select(underflows, signed_zero, bits))
    return ew.select(ew.ne(x, x), x, ew.bitcast_convert_type(bits, dtype))


reduce_precision_p = define_composed_primitive("reduce_precision", _reduce_precision)
# Linear as JAX defines it: tangents and cotangents are rounded the same way.
ad.deflinear(reduce_precision_p, lambda ct, x, **params: [None if type(ct) is ad.Zero
                                                           else reduce_precision_p.bind(ct, **params)])


def reduce_precision(operand, exponent_bits, mantissa_bits):
    """operand rounded as if stored in a float with `exponent_bits` and `mantissa_bits` (bfloat16: 8, 7)."""
    exponent_bits, mantissa_bits = operator.index(exponent_bits), operator.index(mantissa_bits)
    x = asarray(operand)
    dtype = core.get_aval(x).dtype
    if not np.issubdtype(dtype, np.floating) and dtype not in dtypes.FLOATING:
        raise TypeError(f"reduce_precision requires a floating-point operand, got {dtype.name}")
    if exponent_bits < 1 or mantissa_bits < 0:
        raise ValueError(f"reduce_precision: exponent_bits must be >= 1 and mantissa_bits >= 0, got "
                         f"{exponent_bits} and {mantissa_bits}")
    return reduce_precision_p.bind(x, exponent_bits=exponent_bits, mantissa_bits=mantissa_bits)


# ---- approx_max_k / approx_min_k --------------------------------------------------------------------

def approx_top_k_output_size(input_size, rank, k, recall_target, aggregate_to_topk, input_size_override=-1):
    """XLA's ApproxTopKReductionOutputSize: how many candidates the (TPU) algorithm keeps along the
    reduced axis. With M windows the expected recall is (1 - 1/M)^(k - 1), so M >= (1 - k) / log(recall);
    the input is folded by the largest power of two that keeps M windows, never
    below one tile (1024 lanes for rank 1, 128 otherwise)."""
    if aggregate_to_topk:
        return k
    tiling = 1024 if rank == 1 else 128
    if input_size <= tiling:
        return input_size
    if input_size_override >= 0 and input_size > input_size_override:
        raise ValueError(f"reduction_input_size_override: {input_size_override} should be greater equals to "
                         f"operands[reduction_dim]: {input_size}")
    if k == 1:  # one tile of running maxima
        return tiling
    logical_size = input_size_override if input_size_override >= 0 else input_size
    if recall_target == 1.0:
        return input_size
    if not 0.0 < recall_target < 1.0:
        raise ValueError(f"recall_target should range in (0,1], got {recall_target}")
    windows = min(max(int((1.0 - k) / math.log(recall_target)), tiling), logical_size)
    log2_reduction = max(logical_size // windows, 1).bit_length() - 1
    if log2_reduction == 0:
        return input_size
    log2_reduction = min(log2_reduction, max(input_size // tiling - 1, 0).bit_length())  # not below one tile
    return _ceil_div(_ceil_div(input_size, tiling), 1 << log2_reduction) * tiling


def _ceil_div(a, b):
    return -(-a // b)


def _approx_top_k(x, *, k, reduction_dimension, recall_target, is_max_k, reduction_input_size_override,
                  aggregate_to_topk):
    """The exact top (or bottom) `size` entries along the axis, sorted, where size is what XLA's
    approximate algorithm would return (k when aggregated)."""
    aval = core.get_aval(x)
    axis = reduction_dimension % aval.ndim
    size = approx_top_k_output_size(aval.shape[axis], aval.ndim, k, recall_target, aggregate_to_topk,
                                    reduction_input_size_override)
    perm = tuple(i for i in range(aval.ndim) if i != axis) + (axis,)
    moved = transpose(x, perm)
    values, indices = top_k(moved if is_max_k else ew.neg(moved), size)
    if not is_max_k:
        values = ew.neg(values)
    inverse = tuple(int(i) for i in np.argsort(perm))
    return transpose(values, inverse), transpose(indices, inverse)


approx_top_k_p = define_composed_primitive("approx_top_k", _approx_top_k, multiple_results=True)


def _approx_k(name, operand, k, reduction_dimension, recall_target, reduction_input_size_override,
              aggregate_to_topk, is_max_k):
    x = asarray(operand)
    aval = core.get_aval(x)
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")
    if aval.ndim == 0:
        raise TypeError(f"approx_top_k operand must have >= 1 dimension, got {aval.shape}")
    if aval.shape[reduction_dimension] < k:
        raise ValueError(f"k must be smaller than the size of reduction_dim {aval.shape[reduction_dimension]}, got {k}")
    if not np.issubdtype(aval.dtype, np.floating) and aval.dtype not in dtypes.FLOATING:
        raise ValueError(f"{name}: operand must be a floating type, got {aval.dtype.name}")
    return list(approx_top_k_p.bind(x, k=int(k), reduction_dimension=int(reduction_dimension),
                                    recall_target=float(recall_target), is_max_k=is_max_k,
                                    reduction_input_size_override=int(reduction_input_size_override),
                                    aggregate_to_topk=bool(aggregate_to_topk)))


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1,
                 aggregate_to_topk=True):
    """The k largest values along an axis and their indices; computed exactly (JAX's CPU fallback)."""
    return _approx_k("approx_max_k", operand, k, reduction_dimension, recall_target, reduction_input_size_override,
                     aggregate_to_topk, True)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1,
                 aggregate_to_topk=True):
    """The k smallest values along an axis and their indices; computed exactly (JAX's CPU fallback)."""
    return _approx_k("approx_min_k", operand, k, reduction_dimension, recall_target, reduction_input_size_override,
                     aggregate_to_topk, False)

