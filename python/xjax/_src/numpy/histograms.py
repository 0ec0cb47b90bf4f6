"""Histograms of points in several dimensions: jnp.histogramdd and jnp.histogram2d, as JAX bins them
(edges as histogram_bin_edges gives them, the last bin closed, points outside every bin dropped)."""
import builtins
import math

import numpy as np

from xjax._src.numpy import manipulation, rearrange, reductions, ufuncs, util
from xjax._src.numpy.extras import histogram_bin_edges
from xjax._src.numpy.selection import bincount, ix_, ravel_multi_index
from xjax._src.numpy.sorting import searchsorted


def _bins_per_dimension(bins, d):
    try:
        per_dim = list(bins)
    except TypeError:  # one number of bins for every dimension
        return d * [bins]
    if len(per_dim) != d:
        raise ValueError("should be a bin for each dimension.")
    return per_dim


def histogramdd(sample, bins=10, range=None, weights=None, density=None):  # noqa: A002 - NumPy's name
    """(histogram, [edges per dimension]) of the (N, D) points `sample`; bins an int, or one int
    or edge array per dimension; range one (min, max) pair or None per dimension."""
    if weights is None:
        util.check_arraylike("histogramdd", sample)
        (sample,) = util.promote_dtypes_inexact(util.asarray(sample))
    else:
        util.check_arraylike("histogramdd", sample, weights)
        if np.shape(weights) != np.shape(sample)[:1]:
            raise ValueError("should have one weight for each sample.")
        sample, weights = util.promote_dtypes_inexact(util.asarray(sample), util.asarray(weights))
    if sample.ndim != 2:
        raise ValueError(f"histogramdd: sample must have shape (N, D); got {sample.shape}")
    n, d = sample.shape
    if range is not None and (len(range) != d or any(r is not None and np.shape(r)[0] != 2 for r in range)):
        raise ValueError(f"For sample.shape={(n, d)}, range must be a sequence of {d} pairs or Nones; got {range=}")
    bins_per_dim = _bins_per_dimension(bins, d)
    indices, edges = [], []
    for i in builtins.range(d):
        column = sample[:, i]
        e = histogram_bin_edges(column, bins_per_dim[i], None if range is None else range[i], weights)
        idx = searchsorted(e, column, side="right")
        # The last edge belongs to the last bin.
        indices.append(ufuncs.where(ufuncs.equal(column, e[-1]), idx - 1, idx))
        edges.append(e)
    # Index 0 and len(edges) of each dimension collect the points outside; they are cut off below.
    nbins = tuple(e.shape[0] + 1 for e in edges)
    flat = ravel_multi_index(tuple(indices), nbins, mode="clip")
    hist = manipulation.reshape(bincount(flat, weights, length=math.prod(nbins)), nbins)
    hist = hist[d * (slice(1, -1),)]
    if density:
        hist = hist.astype(sample.dtype)
        hist = ufuncs.true_divide(hist, reductions.sum(hist))
        for widths in ix_(*[rearrange.diff(e) for e in edges]):
            hist = ufuncs.true_divide(hist, widths)
    return hist, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):  # noqa: A002 - NumPy's name
    """(histogram, x edges, y edges) of the points (x[i], y[i]); bins an int, an edge array for
    both, or a pair of those."""
    util.check_arraylike("histogram2d", x, y)
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n != 1 and n != 2:
        edges = util.asarray(bins)
        bins = [edges, edges]
    sample = manipulation.transpose(manipulation.stack(util.promote_dtypes(util.asarray(x), util.asarray(y))))
    hist, edges = histogramdd(sample, bins, range, weights, density)
    return hist, edges[0], edges[1]
