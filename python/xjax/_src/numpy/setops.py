"""Set operations on flattened arrays: isin, union1d, intersect1d, setdiff1d, setxor1d.

Each sorts its operands stably once, marks where each value first appears (NaNs count as one value,
as jnp.unique counts them) and tests membership by binary search in the other sorted operand (a NaN
is in nothing). The result is then the marked values in order: all of them for concrete inputs, or the
first `size` padded with fill_value, which works under jit. The fill by default is the smallest
result (0 for an empty one; always 0 for setdiff1d), as in JAX.
"""
import numpy as np

from xjax._src import dtypes, lax
from xjax._src.numpy import util
from xjax._src.numpy.manipulation import concatenate
from xjax._src.numpy.nonzero import _flat, _true_positions
from xjax._src.numpy.selection import kept
from xjax._src.numpy.sorting import argsort, searchsorted, unique
from xjax._src.numpy.take import take
from xjax._src.numpy.ufuncs import isnan


def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
    """True where element is in test_elements (every pair compared, JAX's 'auto' on every backend)."""
    e, t = util.promote_dtypes(util.operand("isin", element), util.operand("isin", test_elements))
    t = _flat(t)
    m = t.aval.shape[0]
    es = e.aval.shape
    if m == 0:
        res = util.full(es, False, dtypes.bool_)
    else:
        shape = es + (m,)
        eq = lax.eq(lax.broadcast_in_dim(e, shape, tuple(range(len(es)))),
                    lax.broadcast_in_dim(t, shape, (len(es),)))
        res = lax.reduce_or(eq, (len(es),))
    return lax.bitwise_not(res) if invert else res


def in1d(ar1, ar2, assume_unique=False, invert=False):
    """isin of the flattened ar1."""
    return isin(_flat(util.operand("in1d", ar1)), ar2, invert=invert)


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """The sorted unique values in either array."""
    return unique(concatenate([_flat(util.operand("union1d", ar1)), _flat(util.operand("union1d", ar2))]), size=size,
                  fill_value=fill_value)


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None, fill_value=None):
    """The sorted unique values in both arrays; with return_indices, also where each first appears in
    each flattened array (past the results: the arrays' sizes)."""
    a, b = _operands("intersect1d", ar1, ar2)
    sa, order_a, first_a = _sorted(a, assume_unique)
    sb, order_b, _ = _sorted(b, assume_unique)
    at_b = _position_in(sb, sa)
    keep = lax.bitwise_and(first_a, _found(sb, sa, at_b))
    values = kept(sa, keep, size, _default_fill(sa, keep, size, fill_value))
    if not return_indices:
        return values
    index_a = kept(order_a, keep, size, a.aval.shape[0])
    at_b_original = take(order_b, at_b, mode="clip") if b.aval.shape[0] else at_b  # (nothing kept if b is empty)
    index_b = kept(at_b_original, keep, size, b.aval.shape[0])
    return values, index_a, index_b


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted unique values of ar1 that are not in ar2 (with assume_unique: ar1's values in their
    own order)."""
    a, b = _operands("setdiff1d", ar1, ar2)
    sb, _, _ = _sorted(b, True)
    if assume_unique:
        keep = lax.bitwise_not(_found(sb, a, _position_in(sb, a)))
        return kept(a, keep, size, 0 if fill_value is None else fill_value)
    sa, _, first_a = _sorted(a, False)
    keep = lax.bitwise_and(first_a, lax.bitwise_not(_found(sb, sa, _position_in(sb, sa))))
    return kept(sa, keep, size, 0 if fill_value is None else fill_value)


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted unique values in exactly one of the arrays."""
    a, b = _operands("setxor1d", ar1, ar2)
    sa, _, first_a = _sorted(a, assume_unique)
    sb, _, first_b = _sorted(b, assume_unique)
    only_a = lax.bitwise_and(first_a, lax.bitwise_not(_found(sb, sa, _position_in(sb, sa))))
    only_b = lax.bitwise_and(first_b, lax.bitwise_not(_found(sa, sb, _position_in(sa, sb))))
    both, keep = concatenate([sa, sb]), concatenate([only_a, only_b])
    if both.aval.shape[0]:
        both, keep = lax.sort((both, keep), dimension=0, is_stable=True, num_keys=1)
    return kept(both, keep, size, _default_fill(both, keep, size, fill_value))


def _operands(name, ar1, ar2):
    util.check_arraylike(name, ar1, ar2)
    a, b = util.promote_dtypes(ar1, ar2)
    return _flat(a), _flat(b)


def _sorted(x, assume_unique):
    """x sorted stably, the permutation that sorts it, and where each value first appears (everywhere
    if x is assumed unique)."""
    order = argsort(x, stable=True)
    s = take(x, order, mode="clip")
    n = s.aval.shape[0]
    if assume_unique or n < 2:
        return s, order, util.full((n,), True, dtypes.bool_)
    prev, cur = lax.slice(s, (0,), (n - 1,)), lax.slice(s, (1,), (n,))
    same = lax.eq(prev, cur)
    if dtypes.issubdtype(s.aval.dtype, np.inexact):
        same = lax.bitwise_or(same, lax.bitwise_and(isnan(prev), isnan(cur)))
    return s, order, concatenate([util.full((1,), True, dtypes.bool_), lax.bitwise_not(same)])


def _position_in(sorted_values, x):
    """Where each element of x would go in sorted_values (the first of equal values)."""
    return searchsorted(sorted_values, x, side="left")


def _found(sorted_values, x, at):
    """Whether each element of x equals the value at its position `at` in sorted_values."""
    if not sorted_values.aval.shape[0]:
        return util.full(x.aval.shape, False, dtypes.bool_)
    return lax.eq(take(sorted_values, at, mode="clip"), x)


def _default_fill(values, keep, size, fill_value):
    """JAX's fill: the smallest kept value (values are sorted), or 0 when nothing is kept."""
    if fill_value is not None or size is None or not values.aval.shape[0]:
        return 0 if fill_value is None else fill_value
    pos, count = _true_positions(keep, 1, None)
    smallest = take(values, pos, mode="clip")[0]
    return lax.select(lax.gt(count, util.full((), 0, count.aval.dtype)), smallest,
                      util.full((), 0, values.aval.dtype))
