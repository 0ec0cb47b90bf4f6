"""Shape arithmetic for stax's init functions: what a convolution, transposed convolution or
pooling layer outputs for an input shape, computed from the shape alone (a leading -1 batch size
passes through), with the checks that give a bad layer a clear error before anything runs."""
import operator

from xjax._src.lax.convolution import PaddingError, _conv_transpose_padding, padtype_to_pads

_PADDINGS = ("VALID", "SAME", "SAME_LOWER")


def as_shape(layer, input_shape):
    """`input_shape` as a tuple of ints, or a TypeError naming the layer."""
    try:
        return tuple(operator.index(d) for d in input_shape)
    except TypeError as e:
        raise TypeError(f"{layer}: input_shape must be a sequence of ints, got {input_shape!r}.") from e


def check_rank(layer, shape, rank, layout):
    """A ValueError unless `shape` has `rank` dimensions (`layout` names them)."""
    if len(shape) != rank:
        raise ValueError(f"{layer}: expected an input of rank {rank} (layout {layout}), got shape {tuple(shape)}.")


def check_padding(layer, padding, n, explicit=True, names=_PADDINGS):
    """One of the padding strings `names` (any case; returned upper-case) or, when `explicit`, n
    (low, high) pairs (returned as a tuple of pairs)."""
    expected = " or ".join(repr(p) for p in names)
    if isinstance(padding, str):
        if padding.upper() not in names:
            raise PaddingError(f"{layer}: unknown padding {padding!r}; expected {expected}"
                               + (f" or {n} (low, high) pairs." if explicit else "."))
        return padding.upper()
    if not explicit:
        raise TypeError(f"{layer}: padding must be {expected}, got {padding!r}.")
    try:
        pads = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{layer}: padding must be a string or {n} (low, high) pairs of ints, got {padding!r}.") from e
    if len(pads) != n:
        raise ValueError(f"{layer}: padding needs {n} (low, high) pairs, one per spatial dimension, got {pads}.")
    return pads


def window_tuple(layer, name, values, n):
    """`values` as n positive ints (filter_shape, strides, window_shape)."""
    try:
        t = tuple(operator.index(v) for v in values)
    except TypeError as e:
        raise TypeError(f"{layer}: {name} must be a sequence of ints, got {values!r}.") from e
    if len(t) != n or any(v < 1 for v in t):
        raise ValueError(f"{layer}: {name} must be {n} positive ints, got {t}.")
    return t


def _strided(size, window, stride):
    """Windows that fit in `size` (after padding) at this stride; never negative."""
    return max((size - window) // stride + 1, 0)


def conv_out_shape(input_shape, kernel_shape, strides, padding, dimension_numbers):
    """Output shape of conv_general_dilated in the layout ("NHWC", "HWIO", "NHWC") style
    `dimension_numbers`; strides and explicit pads follow the kernel's spatial order."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    spatial = [c for c in rhs_spec if c not in "OI"]
    sizes = [input_shape[lhs_spec.index(c)] for c in spatial]
    window = [kernel_shape[rhs_spec.index(c)] for c in spatial]
    pads = padtype_to_pads(sizes, window, strides, padding) if isinstance(padding, str) else padding
    out = {c: _strided(n + lo + hi, k, s) for c, n, k, s, (lo, hi) in zip(spatial, sizes, window, strides, pads)}
    out["N"] = input_shape[lhs_spec.index("N")]
    out["C"] = kernel_shape[rhs_spec.index("O")]
    return tuple(out[c] for c in out_spec)


def conv_transpose_out_shape(input_shape, kernel_shape, strides, padding, dimension_numbers):
    """Output shape of lax.conv_transpose: each spatial size i becomes (i - 1) * s + 2 - k plus the
    transposed convolution's total padding ("SAME"/"VALID" name the forward convolution's padding;
    explicit pairs are the transposed convolution's own)."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    spatial = [c for c in rhs_spec if c not in "OI"]
    pads = [padding] * len(spatial) if isinstance(padding, str) else padding
    out = {}
    for c, s, p in zip(spatial, strides, pads):
        i, k = input_shape[lhs_spec.index(c)], kernel_shape[rhs_spec.index(c)]
        total = sum(_conv_transpose_padding(k, s, p)) if isinstance(p, str) else sum(p)
        out[c] = (i - 1) * s + 2 - k + total
    out["N"] = input_shape[lhs_spec.index("N")]
    out["C"] = kernel_shape[rhs_spec.index("O")]
    return tuple(out[c] for c in out_spec)


def pool_out_shape(input_shape, window, strides, padding, non_spatial):
    """Output shape of a pooling layer: windows over every axis but the batch and feature axes
    `non_spatial`, which pass through unchanged (so a -1 batch size stays -1)."""
    spatial = [i for i in range(len(input_shape)) if i not in non_spatial]
    sizes = [input_shape[i] for i in spatial]
    pads = padtype_to_pads(sizes, window, strides, padding)
    out = list(input_shape)
    for i, n, k, s, (lo, hi) in zip(spatial, sizes, window, strides, pads):
        out[i] = _strided(n + lo + hi, k, s)
    return tuple(out)
