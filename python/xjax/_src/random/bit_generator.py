"""lax.rng_bit_generator and lax.rng_uniform, XLA's RNG operations, on xjax's Threefry-2x32.

rng_bit_generator(key, shape) is XLA's stateless RngBitGenerator: the u32[4] key holds a 64-bit Threefry
key (words 0, 1) and a 64-bit counter (words 2, 3). RNG_THREE_FRY gives XLA's bits exactly: the output
shape is split in half along its first even dimension (or its largest), the counter + the row-major
index of each half-shape element is hashed, and the two output words are laid side by side along a new
axis after the split one; uint64 joins the two words, uint8/uint16 truncate uint32 words (as JAX asks
XLA for uint32 and converts). The returned key is the counter advanced by the number of hashes.
RNG_DEFAULT is the backend's choice in XLA (Philox on CPU): xjax's default is Threefry, so its bits
differ from JAX's CPU bits; RNG_PHILOX raises NotImplementedError.

rng_uniform(a, b, shape) is XLA's stateful RngUniform, whose values JAX leaves to the backend: here a
process-wide Threefry state advanced by every call, drawn through io_callback under jit so that each
call of a compiled function draws anew, as JAX's does."""
import enum
import itertools
import threading

import numpy as np

from xjax._src import core, dtypes
from xjax._src.callbacks import io_callback
from xjax._src.lax import elementwise as ew
from xjax._src.lax.base import asarray
from xjax._src.lax.composite import define_composed_primitive
from xjax._src.lax.layout import broadcast_in_dim, concatenate, reshape, slice as lax_slice
from xjax._src.random.threefry import threefry2x32

__all__ = ["RandomAlgorithm", "rng_bit_generator", "rng_bit_generator_p", "rng_uniform"]


class RandomAlgorithm(enum.IntEnum):
    """The algorithm of rng_bit_generator."""
    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self):
        return self.name


_BIT_DTYPES = {np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.uint32), np.dtype(np.uint64)}


def _split_shape(shape):
    """XLA's SplitShapeIntoHalves: (the dimension split, the half shape with a unit axis after it)."""
    if not shape:
        return None, (1,)
    even = [i for i, d in enumerate(shape) if d % 2 == 0]
    split = even[0] if even else max(range(len(shape)), key=lambda i: (shape[i], -i))
    half = list(shape[:split]) + [-(-shape[split] // 2), 1] + list(shape[split + 1:])
    return split, tuple(half)


def _hash_counters(key, half_shape):
    """Threefry of (counter + row-major index) for each element of half_shape: the two output words
    and the advanced key."""
    k0, k1, lo, hi = (key[i] for i in range(4))
    count = int(np.prod(half_shape))
    if count >= 2**32:
        raise NotImplementedError("rng_bit_generator: more than 2^32 Threefry blocks in one call")
    index = np.arange(count, dtype=np.uint32).reshape(half_shape)
    counter_lo = ew.add(broadcast_in_dim(lo, half_shape, ()), index)
    carry = ew.convert_element_type(ew.lt(counter_lo, broadcast_in_dim(lo, half_shape, ())), np.uint32)
    counter_hi = ew.add(broadcast_in_dim(hi, half_shape, ()), carry)
    x0, x1 = threefry2x32(broadcast_in_dim(k0, half_shape, ()), broadcast_in_dim(k1, half_shape, ()), counter_lo,
                          counter_hi)
    new_lo = ew.add(lo, np.uint32(count & 0xFFFFFFFF))
    new_hi = ew.add(hi, ew.convert_element_type(ew.lt(new_lo, lo), np.uint32))
    new_key = concatenate([reshape(w, (1,)) for w in (k0, k1, new_lo, new_hi)], 0)
    return x0, x1, new_key


def _bits(key, shape, dtype):
    if dtype == np.uint64:
        x0, x1, new_key = _hash_counters(key, shape)
        low, high = (ew.convert_element_type(w, np.uint64) for w in (x0, x1))
        return new_key, ew.bitwise_or(low, ew.shift_left(high, np.uint64(32)))
    split, half = _split_shape(shape)
    x0, x1, new_key = _hash_counters(key, half)
    if split is None:
        words = reshape(x0, ())
    else:
        joined = concatenate([x0, x1], split + 1)
        full = list(shape)
        full[split] = half[split] * 2
        words = reshape(joined, tuple(full))
        if full[split] != shape[split]:
            words = lax_slice(words, (0,) * len(shape), tuple(shape))
    if dtype != np.uint32:
        words = ew.convert_element_type(words, dtype)
    return new_key, words


def _bit_generator(key, *, shape, dtype, algorithm):
    new_key, bits = _bits(key, shape, dtype)
    return [new_key, bits]


rng_bit_generator_p = define_composed_primitive("rng_bit_generator", _bit_generator, multiple_results=True)


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT, *, out_sharding=None):
    """(new key, random bits of `shape` and `dtype`) from a uint32[4] key; see the module's notes on
    which algorithms give JAX's bits."""
    del out_sharding
    shape = tuple(int(d) for d in ((shape,) if isinstance(shape, int) else shape))
    dtype = np.dtype(dtypes.check_user_dtype(dtype))
    if dtype not in _BIT_DTYPES:
        raise TypeError(f"rng_bit_generator: unsupported dtype {dtype}")
    if algorithm == RandomAlgorithm.RNG_PHILOX:
        raise NotImplementedError("rng_bit_generator: RNG_PHILOX is not implemented in xjax (use RNG_THREE_FRY)")
    key = asarray(key)
    aval = core.get_aval(key)
    if aval.shape == (2,) and aval.dtype == np.uint64:  # JAX still takes a u64[2] key
        words = [ew.convert_element_type(ew.shift_right_logical(key[i], np.uint64(s)), np.uint32)
                 for i in range(2) for s in (0, 32)]
        key = concatenate([reshape(w, (1,)) for w in words], 0)
    elif aval.shape != (4,) or aval.dtype != np.uint32:
        raise TypeError(f"rng_bit_generator: the key must be uint32[4], got {aval.dtype.name}{list(aval.shape)}")
    new_key, bits = rng_bit_generator_p.bind(key, shape=shape, dtype=dtype, algorithm=RandomAlgorithm(algorithm))
    return new_key, bits


# ---- rng_uniform ------------------------------------------------------------------------------------

_state = {"counter": itertools.count()}
_state_lock = threading.Lock()


def _draw_uniform(a, b, *, shape):
    """Values in [a, b) from the process-wide state (one fresh Threefry key per call)."""
    with _state_lock:
        call = next(_state["counter"])
    key = np.array([call & 0xFFFFFFFF, 0x5EED ^ (call >> 32), 0, 0], np.uint32)  # a new Threefry key per call
    dtype = core.get_aval(a).dtype
    if np.issubdtype(dtype, np.floating):
        _, bits = rng_bit_generator(key, shape, np.uint32, RandomAlgorithm.RNG_THREE_FRY)
        # 23 random mantissa bits under exponent 0: a float32 in [1, 2), then scaled to [a, b)
        unit = ew.sub(ew.bitcast_convert_type(ew.bitwise_or(ew.shift_right_logical(bits, np.uint32(9)),
                                                            np.uint32(0x3F800000)), np.float32), np.float32(1.0))
        unit = ew.convert_element_type(unit, dtype)
        a, b = broadcast_in_dim(a, shape, ()), broadcast_in_dim(b, shape, ())
        return ew.add(a, ew.mul(ew.sub(b, a), unit))
    wide = np.dtype(np.uint64) if np.iinfo(dtype).bits == 64 else np.dtype(np.uint32)
    _, bits = rng_bit_generator(key, shape, wide, RandomAlgorithm.RNG_THREE_FRY)
    span = ew.convert_element_type(ew.sub(b, a), wide)
    offset = ew.rem(bits, broadcast_in_dim(ew.max(span, np.array(1, wide)), shape, ()))
    return ew.add(broadcast_in_dim(a, shape, ()), ew.convert_element_type(offset, dtype))


def rng_uniform(a, b, shape):
    """Stateful uniform values in [a, b) (scalars of one dtype); every call, eager or of a jitted
    function, draws new values. Which values is backend-defined in JAX: they differ from JAX's."""
    a, b = asarray(a), asarray(b)
    aa, ab = core.get_aval(a), core.get_aval(b)
    if aa.dtype != ab.dtype:
        raise ValueError(f"Arguments to rng_uniform must have identical dtypes, got {aa.dtype} and {ab.dtype}.")
    if aa.shape != () or ab.shape != ():
        raise ValueError(f"Arguments to rng_uniform must be scalars; got shapes {aa.shape} and {ab.shape}.")
    shape = tuple(int(d) for d in shape)
    if type(core.current_trace()) is core.EvalTrace:  # eager: draw now
        return _draw_uniform(a, b, shape=shape)
    result = core.ShapedArray(shape, aa.dtype)
    return io_callback(lambda a, b: _draw_uniform(asarray(a), asarray(b), shape=shape), result, a, b)
