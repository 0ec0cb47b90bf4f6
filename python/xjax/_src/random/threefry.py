"""The threefry2x32 primitive (the core's threefry2x32 op, both result words) and iota_2x32_shape.

threefry2x32(k0, k1, x0, x1) encrypts counters (x0, x1) under keys (k0, k1), all uint32 with lax's
implicit broadcasting, and returns the two uint32 result words. It lowers to the core op, which
yields both words packed in one uint64, followed by the shift and conversions that unpack them:
all elementwise, so the fusion pass puts the cipher, the unpacking and whatever consumes the bits
(uniform's float construction, erf_inv, ...) into one pass over memory, and the packed value is
computed once per element.
"""
import functools
import math

import numpy as np

from xjax._src import core
from xjax._src.backends import cpu
from xjax._src.interpreters import ad, batching
from xjax._src.lax.base import asarray
from xjax._src.lax.elementwise import broadcast_shapes

_U32 = np.dtype(np.uint32)


def _threefry_eval(*avals):
    if any(a.dtype != _U32 for a in avals):
        raise TypeError(f"Arguments to threefry2x32 must have uint32 type, got {list(avals)}")
    aval = core.ShapedArray(broadcast_shapes("threefry2x32", [a.shape for a in avals]), _U32)
    return [aval, aval]


def unpack_words(ctx, packed):
    """(hi, lo) uint32 graph values of a packed uint64 graph value."""
    (c32,) = ctx.op("constant", dtype="uint64", shape=[], value=32)
    (hi64,) = ctx.op("shift_right_logical", packed, c32)
    (hi,) = ctx.op("convert_element_type", hi64, new_dtype="uint32")
    (lo,) = ctx.op("convert_element_type", packed, new_dtype="uint32")
    return [hi, lo]


def _threefry_lowering(ctx, *inputs):
    shape = ctx.avals_out[0].shape
    args = []
    for v, aval in zip(inputs, ctx.avals_in):
        if aval.shape and aval.shape != shape:  # size-1 dims broadcast; 0-d operands the core expands
            (v,) = ctx.op("broadcast_in_dim", v, shape=shape, broadcast_dimensions=list(range(len(shape))))
        args.append(v)
    (packed,) = ctx.op("threefry2x32", *args)
    return unpack_words(ctx, packed)


def _threefry_batch(axis, vals, dims):
    ranks = {core.get_aval(v).ndim for v in vals}
    if len(set(dims)) == 1 and len(ranks) == 1:
        return threefry2x32_p.bind(*vals), [dims[0]] * 2
    return threefry2x32_p.bind(*batching.broadcast_operands(vals, dims)), [0, 0]


threefry2x32_p = core.Primitive("threefry2x32", multiple_results=True)
threefry2x32_p.def_rules(abstract_eval=_threefry_eval, lowering=_threefry_lowering, batch=_threefry_batch)
threefry2x32_p.def_rules(impl=functools.partial(cpu.apply_primitive, threefry2x32_p))
ad.defjvp_zero(threefry2x32_p)  # integer results


def threefry2x32(k0, k1, x0, x1):
    """The Threefry-2x32 hash (20 rounds) of counters (x0, x1) under key (k0, k1): two uint32 arrays."""
    return threefry2x32_p.bind(*(asarray(a) for a in (k0, k1, x0, x1)))


# ---- iota_2x32_shape: the row-major index of each element of `shape`, as (hi, lo) uint32 words ----

def _iota_2x32_eval(*, shape):
    aval = core.ShapedArray(shape, _U32)
    return [aval, aval]


def _iota_2x32_lowering(ctx, *, shape):
    n = math.prod(shape)
    if n <= 2 ** 32:  # the high words are all 0: a splat constant, which fused kernels fill per tile
        (hi,) = ctx.op("constant", dtype="uint32", shape=list(shape), value=0)
        (lo,) = ctx.op("iota", dtype="uint32", shape=[n], dimension=0)
        (lo,) = ctx.op("reshape", lo, new_sizes=list(shape))
        return [hi, lo]
    (idx,) = ctx.op("iota", dtype="uint64", shape=[n], dimension=0)
    (idx,) = ctx.op("reshape", idx, new_sizes=list(shape))
    return unpack_words(ctx, idx)


iota_2x32_shape_p = core.Primitive("iota_2x32_shape", multiple_results=True)
iota_2x32_shape_p.def_rules(abstract_eval=_iota_2x32_eval, lowering=_iota_2x32_lowering)
iota_2x32_shape_p.def_rules(impl=functools.partial(cpu.apply_primitive, iota_2x32_shape_p))
ad.defjvp_zero(iota_2x32_shape_p)


def iota_2x32_shape(shape):
    """(hi, lo): the 64-bit row-major index of each element of `shape` as two uint32 arrays."""
    if not shape:
        zero = asarray(0, _U32)
        return zero, zero
    return iota_2x32_shape_p.bind(shape=tuple(shape))


UINT_DTYPES = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: _U32, 64: np.dtype(np.uint64)}

