"""Numbers spaced evenly on a log scale: logspace and geomspace (linspace of logarithms)."""
import numpy as np

from xjax._src import dtypes, lax
from xjax._src.numpy import manipulation, ufuncs, util
from xjax._src.numpy.creation import _space_dtypes, linspace


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """base ** linspace(start, stop, num)."""
    dt, cdt = _space_dtypes(start, stop, dtype, "logspace")
    lin = linspace(start, stop, num, endpoint=endpoint, dtype=cdt, axis=axis)
    out = ufuncs.power(util.convert(base, cdt), lin)
    return lax.convert_element_type(out, dt)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Numbers spaced evenly on a log scale from start to stop (same signs), endpoints exact."""
    dt, cdt = _space_dtypes(start, stop, dtype, "geomspace")
    lo, hi = util.convert(start, cdt), util.convert(stop, cdt)
    if dtypes.is_complex(cdt):  # as JAX: start's direction times the log-spaced ratios to it
        unit = ufuncs.sign(lo)
        lin = logspace(ufuncs.log10(ufuncs.true_divide(lo, unit)), ufuncs.log10(ufuncs.true_divide(hi, unit)), num,
                       endpoint=endpoint, dtype=cdt, axis=axis)
        ax = util.canonicalize_axis(axis, lin.aval.ndim)
        return lax.convert_element_type(ufuncs.multiply(manipulation.expand_dims(unit, ax), lin), dt)
    # Both negative: the mirror image of the positive sequence. Otherwise, as in JAX, the logarithm of
    # a zero or negative endpoint makes the whole sequence nan.
    zero = util.convert(0.0, cdt)
    flip = lax.select(ufuncs.logical_and(lax.lt(lo, zero), lax.lt(hi, zero)),
                      util.full(lo.aval.shape, -1.0, cdt), util.full(lo.aval.shape, 1.0, cdt))
    lin = linspace(ufuncs.log10(ufuncs.multiply(lo, flip)), ufuncs.log10(ufuncs.multiply(hi, flip)), num,
                   endpoint=endpoint, dtype=cdt, axis=axis)
    ax = util.canonicalize_axis(axis, lin.aval.ndim)
    sign = manipulation.expand_dims(flip, ax)
    out = ufuncs.multiply(ufuncs.power(util.convert(10.0, cdt), lin), sign)
    if num >= 1:
        # Exact endpoints, as NumPy gives.
        def at_axis(x):
            return manipulation.expand_dims(util.broadcast_to_shape(x, sign.aval.shape[:ax] + sign.aval.shape[ax + 1:]), ax)

        parts = [at_axis(lo)]
        if num > 1:
            parts.append(lax.slice_in_dim(out, 1, num - 1 if endpoint else num, 1, ax))
            if endpoint:
                parts.append(at_axis(hi))
        out = lax.concatenate([lax.convert_element_type(p, cdt) for p in parts], ax)
    valid = manipulation.expand_dims(
        ufuncs.logical_and(lax.gt(ufuncs.multiply(lo, flip), zero), lax.gt(ufuncs.multiply(hi, flip), zero)), ax)
    out = ufuncs.where(valid, out, util.convert(np.nan, cdt))
    return lax.convert_element_type(out, dt)
