"""The Threefry PRNG's key operations on raw key data: uint32 arrays of shape (*batch, 2).

random_seed, random_split, random_fold_in and random_bits are primitives (as in JAX, so jaxprs show
them and vmap batches them by moving the key batch to the leading dims they already accept). Each
is written once below in lax operations over keys with any leading dims; its lowering traces that
function into the graph, so eager calls run one cached executable and jit fuses it with the rest.

Two derivation schemes, chosen by `jax_threefry_partitionable` when the primitive is bound (the
choice is a param, so no cache can confuse them):
  - partitionable (JAX's default since 0.5): element i of a result of shape S hashes the counter
    (hi, lo) = the 64-bit row-major index i, and 32-bit bits are the xor of both result words;
  - original: counters 0..n-1 are split into two halves hashed pairwise (`threefry_2x32`), the
    outputs concatenated.
"""
import functools
import math

import numpy as np

from xjax._src import core, dtypes
from xjax._src.backends import cpu
from xjax._src.config import config
from xjax._src.interpreters import ad, batching, partial_eval as pe
from xjax._src.interpreters.graph_lowering import GraphLowerer
from xjax._src.jaxpr import params_printer
from xjax._src.lax import elementwise as ew, layout
from xjax._src.lax.base import asarray
from xjax._src.random.threefry import UINT_DTYPES, iota_2x32_shape, threefry2x32

_U32 = np.dtype(np.uint32)


# ---- lowering a lax implementation into the graph ------------------------------------------------

def _lower_fun(impl):
    """A lowering rule that traces impl(*operands, **params) and lowers its equations inline."""
    traces = {}

    def lower(ctx, *inputs, **params):
        key = (tuple(ctx.avals_in), tuple(sorted(params.items())), config.x64_enabled)
        closed = traces.get(key)
        if closed is None:
            closed = pe.trace_to_jaxpr(lambda *xs: [impl(*xs, **params)], list(ctx.avals_in))
            if len(traces) >= 256:
                traces.clear()
            traces[key] = closed
        lowerer = GraphLowerer(ctx.graph, {})
        return lowerer.lower_jaxpr(closed.jaxpr, [lowerer.const_ref(c) for c in closed.consts], list(inputs))

    return lower


def _define(name, abstract_eval, impl, batch=None, hidden=()):
    """A primitive over raw key data; without a batch rule, keys' leading dims take the batch axis."""
    prim = core.Primitive(name)
    prim.def_rules(abstract_eval=abstract_eval, impl=functools.partial(cpu.apply_primitive, prim),
                   lowering=_lower_fun(impl), batch=batch or _vectorized_batch(prim))
    if hidden:
        prim.def_rules(pp_params=params_printer(drop=hidden))
    ad.defjvp_zero(prim)  # integer results
    return prim


def _vectorized_batch(prim):
    def rule(axis, vals, dims, **params):
        (x,), (d,) = vals, dims
        return prim.bind(batching.moveaxis(x, d, 0), **params), 0

    return rule


# ---- helpers over keys with leading dims -----------------------------------------------------------

def _shape(x):
    return core.get_aval(x).shape


def _words(keys):
    """(k0, k1): the key words, of the keys' leading shape."""
    lead = _shape(keys)[:-1]
    n = len(lead)
    return [layout.reshape(layout.slice(keys, (0,) * n + (j,), lead + (j + 1,)), lead) for j in (0, 1)]


def _spread(x, lead, shape):
    """x (of shape `shape`) broadcast to lead + shape; kept as it is without leading dims."""
    if not lead:
        return x
    full = tuple(lead) + tuple(shape)
    return layout.broadcast_in_dim(x, full, tuple(range(len(lead), len(full))))


def _lead(k, lead, shape):
    """A per-key value (of shape `lead`) broadcast to lead + shape; a 0-d one stays 0-d."""
    if not lead:
        return k
    full = tuple(lead) + tuple(shape)
    return layout.broadcast_in_dim(k, full, tuple(range(len(lead))))


def _hash(keys, x0, x1):
    """threefry2x32 of counters (x0, x1) (shape C) under every key: two arrays of shape lead + C."""
    lead, counts = _shape(keys)[:-1], _shape(x0)
    k0, k1 = _words(keys)
    return threefry2x32(_lead(k0, lead, counts), _lead(k1, lead, counts), _spread(x0, lead, counts),
                        _spread(x1, lead, counts))


def _stack_words(a, b):
    nd = len(_shape(a))
    return layout.concatenate([layout.expand_dims(a, (nd,)), layout.expand_dims(b, (nd,))], nd)


def _iota(n, start=0):
    x = ew.iota(_U32, n)
    return ew.add(x, asarray(start, _U32)) if start else x


def threefry_2x32(keys, count_len):
    """JAX's original hash of the counters 0..count_len-1: they are padded to an even number with a
    0, split in halves hashed pairwise, and the two result words concatenated (shape lead + (n,))."""
    half = (count_len + 1) // 2
    x0, x1 = _iota(half), _iota(half, half)
    if count_len % 2:  # the padding counter is 0, not count_len
        x1 = ew.select(ew.eq(_iota(half), asarray(half - 1, _U32)), asarray(np.zeros(half, _U32)), x1)
    y0, y1 = _hash(keys, x0, x1)
    out = layout.concatenate([y0, y1], len(_shape(y0)) - 1)
    if count_len % 2:
        lead = _shape(out)[:-1]
        out = layout.slice(out, (0,) * len(_shape(out)), lead + (count_len,))
    return out


# ---- seed -----------------------------------------------------------------------------------------

def _seed_impl(seeds):
    """Key data of integer seeds: the seed's 64 bits as (hi, lo) words (hi = 0 for narrower types)."""
    dt = core.get_aval(seeds).dtype
    lo = ew.convert_element_type(seeds, _U32)
    if dt.itemsize == 8:
        hi = ew.convert_element_type(ew.shift_right_logical(seeds, asarray(32, dt)), _U32)
    else:
        hi = ew.sub(lo, lo)  # zeros of lo's shape
    return _stack_words(hi, lo)


def _seed_eval(seeds):
    if not dtypes.is_int(seeds.dtype):
        raise TypeError(f"PRNG key seed must be an integer; got {seeds}")
    return core.ShapedArray(seeds.shape + (2,), _U32)


random_seed_p = _define("random_seed", _seed_eval, _seed_impl)


def random_seed(seeds):
    """Raw key data (uint32[..., 2]) of integer seeds."""
    return random_seed_p.bind(seeds)


# ---- split -------------------------------------------------------------------------------------------

def _split_impl(keys, *, shape, partitionable):
    lead = _shape(keys)[:-1]
    if partitionable:
        hi, lo = iota_2x32_shape(shape)
        return _stack_words(*_hash(keys, hi, lo))
    num = math.prod(shape)
    out = threefry_2x32(keys, 2 * num)
    return layout.reshape(out, lead + tuple(shape) + (2,))


def _split_eval(keys, *, shape, partitionable):
    return core.ShapedArray(keys.shape[:-1] + tuple(shape) + (2,), _U32)


random_split_p = _define("random_split", _split_eval, _split_impl, hidden=("partitionable",))


def random_split(keys, shape):
    """New keys of shape (*keys' leading shape, *shape) from raw key data."""
    return random_split_p.bind(keys, shape=tuple(shape), partitionable=config._values["jax_threefry_partitionable"])


# ---- fold_in -------------------------------------------------------------------------------------------

def _fold_in_impl(keys, msgs):
    lead = _shape(keys)[:-1] or _shape(msgs)
    k0, k1 = _words(keys)
    if _shape(keys)[:-1] != lead:
        k0, k1 = (layout.broadcast_in_dim(k, lead, ()) for k in (k0, k1))
    if _shape(msgs) != lead:
        msgs = layout.broadcast_in_dim(msgs, lead, ())
    y0, y1 = threefry2x32(k0, k1, ew.sub(msgs, msgs), msgs)  # counter (0, data): threefry_seed(data)
    return _stack_words(y0, y1)


def _fold_in_eval(keys, msgs):
    lead = keys.shape[:-1]
    if lead and msgs.shape and lead != msgs.shape:
        raise TypeError(f"random_fold_in got incompatible shapes: keys {keys.shape}, data {msgs.shape}")
    return core.ShapedArray((lead or msgs.shape) + (2,), _U32)


def _fold_in_batch(axis, vals, dims):
    (keys, msgs), (kd, md) = vals, dims
    keys = batching.bdim_at_front(keys, kd, axis.size)
    msgs = batching.bdim_at_front(msgs, md, axis.size)
    k_lead, m_shape = _shape(keys)[:-1], _shape(msgs)
    if k_lead != m_shape:  # one of them has per-example dims the other lacks: spread it
        full = k_lead if len(k_lead) > len(m_shape) else m_shape
        if len(k_lead) < len(full):
            keys = layout.broadcast_in_dim(keys, full + (2,), (0, len(full)))
        else:
            msgs = layout.broadcast_in_dim(msgs, full, (0,))
    return random_fold_in_p.bind(keys, msgs), 0


random_fold_in_p = _define("random_fold_in", _fold_in_eval, _fold_in_impl, _fold_in_batch)


def random_fold_in(keys, msgs):
    return random_fold_in_p.bind(keys, msgs)


# ---- bits ----------------------------------------------------------------------------------------------

def _to_width(b1, b2, bit_width):
    """The bits of one element from its two hash words."""
    dt = UINT_DTYPES[bit_width]
    if bit_width == 64:
        hi, lo = (ew.convert_element_type(b, dt) for b in (b1, b2))
        return ew.bitwise_or(ew.shift_left(hi, asarray(32, dt)), lo)
    bits = ew.bitwise_xor(b1, b2)
    return bits if bit_width == 32 else ew.convert_element_type(bits, dt)


def _bits_original(keys, bit_width, shape):
    lead = _shape(keys)[:-1]
    size = math.prod(shape)
    max_count = -(-bit_width * size // 32)
    if max_count >= 2 ** 32 - 1:
        raise NotImplementedError("random bits of more than 2**32 - 1 words with jax_threefry_partitionable=False")
    words = threefry_2x32(keys, max_count)  # lead + (max_count,)
    nd = len(lead)
    dt = UINT_DTYPES[bit_width]
    if bit_width == 64:
        hi = layout.slice(words, (0,) * (nd + 1), lead + (size,))
        lo = layout.slice(words, (0,) * nd + (size,), lead + (2 * size,))
        bits = _to_width(hi, lo, 64)
    elif bit_width == 32:
        bits = words
    else:  # each word gives 32 / bit_width values, its low bits first
        per = 32 // bit_width
        spread = layout.broadcast_in_dim(words, lead + (max_count, per), tuple(range(nd + 1)))
        shifts = layout.broadcast_in_dim(ew.mul(_iota(per), asarray(bit_width, _U32)), lead + (max_count, per), (nd + 1,))
        parts = ew.bitwise_and(ew.shift_right_logical(spread, shifts), asarray(2 ** bit_width - 1, _U32))
        parts = layout.reshape(parts, lead + (max_count * per,))
        bits = ew.convert_element_type(layout.slice(parts, (0,) * (nd + 1), lead + (size,)), dt)
    return layout.reshape(bits, lead + tuple(shape))


def _bits_impl(keys, *, bit_width, shape, partitionable):
    if not partitionable:
        return _bits_original(keys, bit_width, shape)
    if math.prod(shape) > 2 ** 64:
        raise NotImplementedError("random bits array of size exceeding 2 ** 64")
    hi, lo = iota_2x32_shape(shape)
    b1, b2 = _hash(keys, hi, lo)
    return _to_width(b1, b2, bit_width)


def _bits_eval(keys, *, bit_width, shape, partitionable):
    return core.ShapedArray(keys.shape[:-1] + tuple(shape), UINT_DTYPES[bit_width])


random_bits_p = _define("random_bits", _bits_eval, _bits_impl, hidden=("partitionable",))


def random_bits(keys, bit_width, shape):
    """Uniform random bits (uint{bit_width}) of shape (*keys' leading shape, *shape)."""
    return random_bits_p.bind(keys, bit_width=int(bit_width), shape=tuple(shape),
                              partitionable=config._values["jax_threefry_partitionable"])


# ---- taking keys apart ---------------------------------------------------------------------------------

def unstack(x, axis=0):
    """The slices of x along `axis` (one op, which batches by moving the batch axis in front)."""
    return layout.unstack(x, axis)


def split_keys(keys, num):
    """`num` raw keys from one: JAX's `k1, k2, ... = split(key, num)`."""
    return unstack(random_split(keys, (num,)), axis=len(_shape(keys)) - 1)
