"""The monoids lax knows: a binary op (lax.add, mul, max, min, bitwise or/and/xor) and its identity.
A reduction given one of them as its computation, starting from its identity, runs as that op's
own primitive (lax.reduce as reduce_*, lax.reduce_window as reduce_window_*)."""
import numpy as np

from xjax._src import core, dtypes
from xjax._src.lax import elementwise as ew


def identity(op, dtype):
    """op's identity element in dtype (max's is the lowest value, min's the highest)."""
    if op is ew.add or op is ew.bitwise_or or op is ew.bitwise_xor:
        return 0
    if op is ew.mul or op is ew.bitwise_and:
        return 1
    if dtype == np.bool_:
        return op is ew.min
    if dtypes.is_float(dtype) or dtypes.is_complex(dtype):  # complex: -inf + 0j and inf + 0j (JAX's)
        return -np.inf if op is ew.max else np.inf
    info = np.iinfo(dtype)
    return info.min if op is ew.max else info.max


def starts_from_identity(op, init, dtype):
    """Whether init is known now, a scalar, and op's identity in dtype."""
    val = core.to_concrete_value(init)
    return val is not None and np.shape(val) == () and bool(np.equal(np.asarray(val), identity(op, dtype)))
