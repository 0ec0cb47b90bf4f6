"""jax.nn.dot_product_attention: the reference (XLA-style) implementation in einsums and a softmax.

Shapes follow JAX: query (B, T, N, H), key and value (B, S, K, H) with N a multiple of K (grouped
query attention); a leading batch dimension may be left out. Heads are handled by splitting N
into (K, G) groups, so no per-head loop is needed.
"""
import numpy as np

from xjax._src import dtypes, lax
from xjax._src.numpy import util
from xjax._src.nn.normalize import logsumexp, softmax
import xjax.numpy as jnp


def _ensure_4d(t):
    t = jnp.asarray(t)
    return jnp.expand_dims(t, tuple(range(4 - t.ndim))) if t.ndim < 4 else t


def _check(t, shape, dtype, name):
    if t is None:
        return
    if t.ndim != len(shape):
        raise ValueError(f"{name} ndim should be {len(shape)}, but got {t.ndim}")
    if dtype is not None and t.dtype != dtype:
        raise ValueError(f"{name} dtype should be {dtype}, but got {t.dtype}")
    if any(want != -1 and got != want for got, want in zip(t.shape, shape)):
        raise ValueError(f"{name} shape should be {list(shape)}: but got {t.shape}")


def _grouped(t, K, G):
    """A (B|1, N|1, T|1, S|1) bias or mask in the (B, K, G, T, S) layout of the logits."""
    if t is None:
        return None
    b, n, tt, s = t.shape
    if n == 1:
        return t[:, :, None, :, :]
    return jnp.reshape(t, (b, K, G, tt, s))


def _large_negative(dtype):
    # Finite even after the softmax's cast to float32, so a fully masked row stays uniform, not NaN.
    big = min(float(dtypes.finfo(dtype).max), float(np.finfo(np.float32).max))
    return util.scalar(-0.7 * big, dtype, False)


def _mask(T, S, mask, is_causal, q_seqlen, kv_seqlen, window):
    """The boolean mask of allowed (query, key) pairs, broadcastable to (B, K, G, T, S); None if all are."""
    combined = mask
    q_pos = lax.broadcasted_iota(np.int32, (T, S), 0)
    k_pos = lax.broadcasted_iota(np.int32, (T, S), 1)
    extra = []
    if is_causal:
        extra.append(k_pos <= q_pos)
    if window is not None:
        left, right = window
        extra.append((q_pos <= k_pos + left) & (q_pos >= k_pos - right))
    for m in extra:
        m = m[None, None, None]
        combined = m if combined is None else combined & m
    if q_seqlen is not None or kv_seqlen is not None:
        pad = True
        if q_seqlen is not None:
            pad = jnp.arange(T)[None, :, None] < q_seqlen[:, None, None]
        if kv_seqlen is not None:
            pad = pad & (jnp.arange(S)[None, None, :] < kv_seqlen[:, None, None])
        pad = pad[:, None, None]
        combined = pad if combined is None else combined & pad
    return combined


def _attention(query, key, value, bias, mask, is_causal, scale, q_seqlen, kv_seqlen, window, return_residual):
    B, T, N, H = query.shape
    _, S, K, _ = key.shape
    G = N // K
    logits_dtype = jnp.promote_types(query.dtype, np.float32)
    q = jnp.reshape(query, (B, T, K, G, H))
    logits = jnp.einsum("btkgh,bskh->bkgts", q, key, preferred_element_type=logits_dtype)
    logits = logits * util.scalar(float(scale), logits_dtype, False)
    if bias is not None:
        logits = (logits + _grouped(bias, K, G)).astype(logits_dtype)
    allowed = _mask(T, S, _grouped(mask, K, G), is_causal, q_seqlen, kv_seqlen, window)
    if allowed is not None:
        logits = jnp.where(allowed, logits, _large_negative(logits_dtype))
    logits = logits.astype(np.float32)  # the softmax always runs in float32, as in JAX
    probs = softmax(logits, axis=-1).astype(key.dtype)
    encoded = jnp.einsum("bkgts,bskh->btkgh", probs, value)
    if q_seqlen is not None:
        valid = jnp.arange(T)[None, :] < q_seqlen[:, None]
        encoded = encoded * valid[:, :, None, None, None].astype(encoded.dtype)
    encoded = jnp.reshape(encoded, (B, T, N, H))
    if not return_residual:
        return encoded
    lse = logsumexp(logits, axis=-1).astype(key.dtype)  # (B, K, G, T)
    lse = jnp.reshape(jnp.transpose(lse, (0, 3, 1, 2)), (B, T, N))
    return encoded, lax.stop_gradient(lse)


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None, is_causal=False,
                          query_seq_lengths=None, key_value_seq_lengths=None, local_window_size=None,
                          implementation=None, return_residual=False):
    """softmax(Q K^T * scale + bias, masked) V per head (jax.nn.dot_product_attention, reference version).

    query: (B, T, N, H) or (T, N, H); key, value: (B, S, K, H) or (S, K, H), N a multiple of K.
    bias and mask (boolean, True = attend) broadcast to (B, N, T, S). scale defaults to 1/sqrt(H).
    """
    if implementation not in (None, "xla"):
        raise ValueError(f"Unsupported implementation option: {implementation}"
                         if implementation != "cudnn" else "dot_product_attention: implementation='cudnn' "
                         "needs cuDNN, which xjax does not use; use implementation=None or 'xla'")
    out_shape = jnp.shape(query)
    q, k, v = _ensure_4d(query), _ensure_4d(key), _ensure_4d(value)
    bias = None if bias is None else _ensure_4d(bias)
    mask = None if mask is None else _ensure_4d(mask)
    q_seqlen = None if query_seq_lengths is None else jnp.asarray(query_seq_lengths)
    kv_seqlen = None if key_value_seq_lengths is None else jnp.asarray(key_value_seq_lengths)
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)
    B, S, K, H = k.shape
    _check(v, [B, S, K, H], k.dtype, "value")
    _check(q, [B, -1, -1, H], k.dtype, "query")
    _check(mask, [-1] * 4, np.dtype(bool), "mask")
    _check(bias, [-1] * 4, None, "bias")
    _check(q_seqlen, [B], np.dtype(np.int32), "query_seq_lengths")
    _check(kv_seqlen, [B], np.dtype(np.int32), "key_value_seq_lengths")
    if q.shape[2] % K:
        raise ValueError("The number of query heads must be a multiple of key/value heads, but got "
                         f"{q.shape[2]} vs {K}")
    scale = 1.0 / np.sqrt(H) if scale is None else scale
    out = _attention(q, k, v, bias, mask, is_causal, scale, q_seqlen, kv_seqlen, local_window_size, return_residual)
    if return_residual:
        encoded, lse = out
        return jnp.reshape(encoded, out_shape), jnp.reshape(lse, out_shape[:-1])
    return jnp.reshape(out, out_shape)
