"""The GPU plan's library steps: the ops that run through CuPy rather than generated CUDA -- dot_general
(and dot_general_add) on cuBLAS via cupy.matmul, conv_general_dilated as the generated im2col's patches
times the kernel on cuBLAS, sort and top_k on CuPy's (stable) sort, fft on cuFFT (cupy.fft); the
linear-algebra ops (cuda_linalg).

Each takes CuPy arrays of the operands (C-contiguous, in their storage dtype: bfloat16 as its uint16
bits) and the plan's result types; returns C-contiguous results in storage dtypes. CuPy is
gpu_devices.cupy(), so the tests' emulated CuPy stands in for it unchanged.
"""
import numpy as np

from xjax._src import dtypes
from xjax._src.gpu import cuda_linalg, gpu_devices

_BF16 = np.dtype(dtypes.bfloat16)


def _cp():
    return gpu_devices.cupy()


# ---- bfloat16 (CuPy has no such dtype: its bits are uint16) ----

def bf16_to_f32(bits):
    """float32 values of bfloat16 bits (exact)."""
    return (bits.astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16(x):
    """bfloat16 bits of float32 values, rounded to nearest even (NaN stays a quiet NaN)."""
    cp = _cp()
    bits = cp.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    rounded = (bits + (np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1)))) >> 16
    return cp.where(cp.isnan(x), np.uint16(0x7FC0), rounded.astype(np.uint16))


def _compute(x, dtype, work):
    """x (storage of `dtype`) as an array of dtype `work` for arithmetic."""
    if dtype == _BF16:
        x = bf16_to_f32(x)
    return x if x.dtype == work else x.astype(work)


def _work_dtype(dtype):
    """The dtype a product of `dtype` results is computed in: bfloat16 in float32, bool in int32."""
    if dtype == _BF16:
        return np.dtype(np.float32)
    if dtype == np.bool_:
        return np.dtype(np.int32)
    return dtype


def _result(x, dtype):
    """A computed result as `dtype`'s storage, C-contiguous."""
    cp = _cp()
    if dtype == _BF16:
        return cp.ascontiguousarray(f32_to_bf16(x))
    if dtype == np.bool_:
        return cp.ascontiguousarray(x != 0)
    return cp.ascontiguousarray(x, dtype=dtype)


# ---- dot_general ----

def _free(rank, *used):
    return [d for d in range(rank) if not any(d in u for u in used)]


def dot_general(lhs, rhs, attrs, out_shape, out_dtype, in_dtype):
    """lax.dot_general as one batched matmul: each operand transposed to (batch, free, contracting)."""
    cp = _cp()
    lc, rc = list(attrs["lhs_contracting_dimensions"]), list(attrs["rhs_contracting_dimensions"])
    lb, rb = list(attrs.get("lhs_batch_dimensions", ())), list(attrs.get("rhs_batch_dimensions", ()))
    lf, rf = _free(lhs.ndim, lb, lc), _free(rhs.ndim, rb, rc)
    size = lambda x, dims: int(np.prod([x.shape[d] for d in dims], dtype=np.int64))  # noqa: E731
    b, m, k, n = size(lhs, lb), size(lhs, lf), size(lhs, lc), size(rhs, rf)
    work = _work_dtype(out_dtype)
    a = _compute(lhs, in_dtype, work).transpose(lb + lf + lc).reshape(b, m, k)
    c = _compute(rhs, in_dtype, work).transpose(rb + rc + rf).reshape(b, k, n)
    return cp.matmul(a, c).reshape(out_shape), work


def dot(ins, attrs, out_types, in_types):
    (shape, dtype), = out_types
    prod, _ = dot_general(ins[0], ins[1], attrs, shape, dtype, in_types[0][1])
    return [_result(prod, dtype)]


def dot_add(ins, attrs, out_types, in_types):
    """dot_general_add: lhs . rhs + addend (the simplifier's fusion of a product and a sum)."""
    (shape, dtype), = out_types
    prod, work = dot_general(ins[0], ins[1], attrs, shape, dtype, in_types[0][1])
    return [_result(prod + _compute(ins[2], dtype, work), dtype)]


# ---- conv_general_dilated ----

def conv(ins, attrs, out_types, in_types, patches):
    """conv_general_dilated from im2col's patches (G, N*P, C*K): one batched GEMM per group (feature or
    batch groups: each gives its share of the output features) with the kernel in (G, O/G, C*K), then
    the (N, spatial..., O) result put in out_spec's layout."""
    cp = _cp()
    (shape, dtype), = out_types
    rhs = ins[1]
    rhs_spec, out_spec = attrs["rhs_spec"], attrs["out_spec"]
    groups = int(attrs.get("feature_group_count", 1)) * int(attrs.get("batch_group_count", 1))  # one is 1
    ns = len(out_spec) - 2
    n_batch, n_out = shape[out_spec[0]], shape[out_spec[1]]
    spatial = [shape[out_spec[2 + d]] for d in range(ns)]
    work = _work_dtype(dtype)
    w = _compute(rhs, in_types[1][1], work).transpose(rhs_spec)  # (O, I, window...)
    w = w.reshape(groups, n_out // groups, -1)
    p = _compute(patches, in_types[0][1], work)
    r = cp.matmul(p, w.transpose(0, 2, 1))  # (G, N*P, O/G)
    r = r.reshape([groups, n_batch] + spatial + [n_out // groups])
    r = cp.moveaxis(r, 0, -2).reshape([n_batch] + spatial + [n_out])  # (N, spatial..., O)
    perm = [0] * (ns + 2)
    perm[out_spec[0]], perm[out_spec[1]] = 0, ns + 1
    for d in range(ns):
        perm[out_spec[2 + d]] = 1 + d
    return [_result(r.transpose(perm), dtype)]


# ---- sort, top_k ----

def _sort_key(x, dtype):
    """What CuPy sorts for values of `dtype`: bfloat16 as float32, bool as uint8."""
    if dtype == _BF16:
        return bf16_to_f32(x)
    if dtype == np.bool_:
        return x.view(np.uint8)
    return x


def sort(ins, attrs, out_types, in_types):
    """lax.sort: the first num_keys operands are keys, compared lexicographically; every operand is
    permuted alike. Stable sorts by the last key first make the lexicographic order. NaNs sort last."""
    cp = _cp()
    dim = int(attrs["dimension"])
    num_keys = int(attrs.get("num_keys", 1))
    keys = []
    for x, t in zip(ins[:num_keys], in_types):
        # A complex key is its real part, then its imaginary part, each NaN last (JAX's order;
        # CuPy's own complex order puts a NaN in either part last).
        keys += [x.real, x.imag] if dtypes.is_complex(t[1]) else [_sort_key(x, t[1])]
    if len(ins) == 1 and keys[0] is ins[0]:  # values that CuPy sorts as they are
        return [cp.ascontiguousarray(cp.sort(ins[0], axis=dim))]
    perm = None
    for key in reversed(keys):
        k = key if perm is None else cp.take_along_axis(key, perm, dim)
        order = cp.argsort(k, axis=dim)
        perm = order if perm is None else cp.take_along_axis(perm, order, dim)
    return [cp.ascontiguousarray(cp.take_along_axis(x, perm, dim)) for x in ins]


def top_k(ins, attrs, out_types, in_types):
    """lax.top_k along the last axis: the k largest, ties by lower index first (as XLA), NaN largest."""
    cp = _cp()
    x = ins[0]
    k = int(attrs["k"])
    n = x.shape[-1]
    key = _sort_key(x, in_types[0][1])[..., ::-1]
    # Ascending stable order of the reversed row, read backwards: descending, equal values by index.
    order = cp.argsort(key, axis=-1)[..., ::-1][..., :k]
    index = (n - 1 - order).astype(np.int32)
    values = cp.take_along_axis(x, index, -1)
    return [cp.ascontiguousarray(values), cp.ascontiguousarray(index)]


# ---- fft ----

def fft(ins, attrs, out_types, in_types):
    """lax.fft on cuFFT through cupy.fft, over the trailing len(fft_lengths) axes with XLA's semantics:
    the inverse transforms scale by 1 / prod(fft_lengths) (norm "backward"), RFFT keeps the
    non-negative frequencies of the last axis, IRFFT makes fft_lengths[-1] real values from them."""
    cp = _cp()
    (x,), kind = ins, attrs["fft_type"]
    lengths = tuple(int(n) for n in attrs["fft_lengths"])
    axes = tuple(range(x.ndim - len(lengths), x.ndim))
    if kind == "FFT":
        y = cp.fft.fftn(x, axes=axes)
    elif kind == "IFFT":
        y = cp.fft.ifftn(x, axes=axes)
    elif kind == "RFFT":
        y = cp.fft.rfftn(x, s=lengths, axes=axes)
    else:
        y = cp.fft.irfftn(x, s=lengths, axes=axes)
    return [cp.ascontiguousarray(y, dtype=out_types[0][1])]


ROUTES = {"dot_general": dot, "dot_general_add": dot_add, "sort": sort, "top_k": top_k, "fft": fft,
          **cuda_linalg.ROUTES}
