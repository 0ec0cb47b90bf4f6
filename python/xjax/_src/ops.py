"""Segment reductions (jax.ops): data rows combined by segment id, as one scatter each (the C++ core's
scatter-add, -mul, -min or -max into an array filled with the combination's identity)."""
import numpy as np

from xjax import lax
from xjax._src import core, dtypes
from xjax._src.lax.indexing import GatherScatterMode, ScatterDimensionNumbers
from xjax._src.numpy import util


def _identity(kind, dtype):
    if kind == "add":
        return 0
    if kind == "mul":
        return 1
    if dtype == np.bool_:
        return kind == "min"
    if dtypes.is_int(dtype):
        info = dtypes.iinfo(dtype)
        return info.max if kind == "min" else info.min
    return float("inf") if kind == "min" else float("-inf")


_SCATTER = {"add": lax.scatter_add, "mul": lax.scatter_mul, "min": lax.scatter_min, "max": lax.scatter_max}
_REDUCE = {"add": lax.reduce_sum, "mul": lax.reduce_prod, "min": lax.reduce_min, "max": lax.reduce_max}


def _segment(name, kind, data, segment_ids, num_segments, indices_are_sorted, unique_indices, bucket_size, mode):
    util.check_arraylike(name, data, segment_ids)
    data, segment_ids = util.asarray(data), util.asarray(segment_ids)
    if not dtypes.is_int(segment_ids.dtype):
        raise TypeError(f"{name}: segment_ids must have an integer dtype, got {segment_ids.dtype}")
    if segment_ids.ndim != 1 or data.ndim < 1 or data.shape[0] != segment_ids.shape[0]:
        raise ValueError(f"{name}: segment_ids must be a vector with one id per row of data; got segment_ids of "
                         f"shape {segment_ids.shape} and data of shape {data.shape}")
    if num_segments is None:
        ids = core.to_concrete_value(segment_ids)
        if ids is None:
            raise core.ConcretizationError(f"{name}: num_segments must be given (a static int) when segment_ids "
                                           f"is traced, as in a jitted function")
        num_segments = int(np.max(np.asarray(ids))) + 1 if ids.size else 0
    num_segments = _static_int(num_segments, name)
    if num_segments < 0:
        raise ValueError("num_segments must be non-negative.")
    mode = GatherScatterMode.FILL_OR_DROP if mode is None else GatherScatterMode.from_any(mode)
    dtype = data.dtype
    fill = _identity(kind, dtype)
    rows = data.shape[1:]
    window_dims = tuple(range(1, data.ndim))
    if bucket_size is None:
        # Ids outside [0, num_segments), negative ones included, are dropped rather than wrapped.
        dnums = ScatterDimensionNumbers(window_dims, (0,), (0,))
        out = lax.full((num_segments,) + rows, fill, dtype)
        return _SCATTER[kind](out, lax.expand_dims(segment_ids, (1,)), data, dnums,
                              indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode)
    # Buckets of bucket_size consecutive rows are combined apart, then the buckets (for accuracy).
    num_buckets = -(-segment_ids.shape[0] // bucket_size)
    bucket = lax.div(lax.iota(segment_ids.dtype, segment_ids.shape[0]), lax.full((), bucket_size, segment_ids.dtype))
    idx = lax.concatenate([lax.expand_dims(bucket, (1,)), lax.expand_dims(segment_ids, (1,))], 1)
    dnums = ScatterDimensionNumbers(window_dims, (0, 1), (0, 1))
    out = lax.full((num_buckets, num_segments) + rows, fill, dtype)
    out = _SCATTER[kind](out, idx, data, dnums, indices_are_sorted=indices_are_sorted,
                         unique_indices=unique_indices, mode=mode)
    return lax.convert_element_type(_REDUCE[kind](out, (0,)), dtype)


def _static_int(n, name):
    value = core.to_concrete_value(n)
    if value is None:
        raise core.ConcretizationError(f"{name}: num_segments must be a static int, got a traced value")
    return int(value)


def _segment_fn(name, kind, doc):
    def fn(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False, bucket_size=None,
           mode=None):
        return _segment(name, kind, data, segment_ids, num_segments, indices_are_sorted, unique_indices,
                        bucket_size, mode)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"The {doc} of the rows of `data` in each segment: out[i] combines data[j] for every j with "
                  f"segment_ids[j] == i; an empty segment holds the identity. num_segments defaults to "
                  f"max(segment_ids) + 1; ids out of range are dropped (mode FILL_OR_DROP).")
    return fn


segment_sum = _segment_fn("segment_sum", "add", "sum")
segment_prod = _segment_fn("segment_prod", "mul", "product")
segment_max = _segment_fn("segment_max", "max", "maximum")
segment_min = _segment_fn("segment_min", "min", "minimum")
