"""conv_general_dilated: N-d convolution (im2col blocks into the GEMM in the core), the helpers
around it (conv, conv_with_general_padding, conv_transpose, conv_dimension_numbers,
padtype_to_pads) and its differentiation and batching rules."""
import operator
from typing import NamedTuple

import numpy as np

from xjax._src import core, dtypes
from xjax._src.lax.base import define_core_primitive, scalars_like
from xjax._src.lax.elementwise import convert_element_type
from xjax._src.lax.layout import reshape, rev, transpose
# (underscored: lax star-exports this module)
from xjax._src.lax.sharding_ops import bind_with_out_sharding as _bind_with_out_sharding
from xjax._src.lax.sharding_ops import out_sharding_of as _out_sharding_of

__all__ = ["ConvDimensionNumbers", "conv", "conv_dimension_numbers", "conv_general_dilated",
           "conv_general_dilated_p", "conv_general_permutations", "conv_general_shape_tuple", "conv_shape_tuple",
           "conv_transpose", "conv_with_general_padding", "padtype_to_pads"]


class ConvDimensionNumbers(NamedTuple):
    """Positions of (batch, feature, spatial...) in lhs and out, of (out feature, in feature,
    spatial...) in rhs; spatial dimensions are listed in the order rhs_spec gives them."""
    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


class PaddingError(ValueError, RuntimeError):
    """An unknown padding string (JAX raises RuntimeError; a ValueError is what callers expect)."""


def _conv_attrs(window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers, feature_group_count,
                batch_group_count, precision=None, preferred_element_type=None, out_sharding=None):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    return dict(lhs_spec=lhs_spec, rhs_spec=rhs_spec, out_spec=out_spec, window_strides=window_strides,
                padding=[int(p) for pair in padding for p in pair], lhs_dilation=lhs_dilation,
                rhs_dilation=rhs_dilation, feature_group_count=feature_group_count,
                batch_group_count=batch_group_count, preferred_element_type=preferred_element_type)


conv_general_dilated_p = define_core_primitive("conv_general_dilated", attrs=_conv_attrs,
                                               weak=lambda avals: all(a.weak_type for a in avals))


# ---- dimension numbers and padding ----------------------------------------------------------

def conv_general_permutations(dimension_numbers):
    """The (lhs, rhs, out) permutations of spec strings such as ("NHWC", "HWIO", "NHWC")."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (a, b) in enumerate(pairs):
        spec = dimension_numbers[i]
        if not spec.count(a) == spec.count(b) == 1:
            raise TypeError(f"convolution dimension_numbers[{i}] must contain the characters '{a}' and '{b}' "
                            f"exactly once, got {spec}.")
        if len(spec) != len(set(spec)):
            raise TypeError(f"convolution dimension_numbers[{i}] cannot have duplicate characters, got {spec}.")
    spatial = [set(s) - set(p) for s, p in zip(dimension_numbers, pairs)]
    if not spatial[0] == spatial[1] == spatial[2]:
        raise TypeError("convolution dimension_numbers elements must each have the same set of spatial "
                        f"characters, got {tuple(dimension_numbers)}.")

    def perm(spec, pair):
        sp = [i for i, c in enumerate(spec) if c not in pair]
        if spec is not rhs_spec:
            sp.sort(key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1])) + tuple(sp)

    return tuple(perm(s, p) for s, p in zip(dimension_numbers, pairs))


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers):
    """`dimension_numbers` (None, a (lhs, rhs, out) triple of spec strings, or a
    ConvDimensionNumbers) as a ConvDimensionNumbers."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(f"convolution requires lhs and rhs ndim to be equal, got {len(lhs_shape)} and "
                        f"{len(rhs_shape)}.")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if not isinstance(dimension_numbers, (list, tuple)):
        raise TypeError(f"convolution dimension_numbers must be tuple/list or None, got {type(dimension_numbers)}.")
    if len(dimension_numbers) != 3:
        raise TypeError(f"convolution dimension_numbers list/tuple must be length 3, got {len(dimension_numbers)}.")
    if not all(isinstance(s, str) for s in dimension_numbers):
        raise TypeError("convolution dimension_numbers elements must be strings, got "
                        f"{tuple(map(type, dimension_numbers))}.")
    for i, s in enumerate(dimension_numbers):
        if len(s) != len(lhs_shape):
            raise TypeError(f"convolution dimension_numbers[{i}] must have len equal to the ndim of lhs and rhs, "
                            f"got {len(s)} for lhs and rhs shapes {tuple(lhs_shape)} and {tuple(rhs_shape)}.")
    return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))


def _check_spec(dn, ndim):
    for name, spec in zip(("lhs_spec", "rhs_spec", "out_spec"), dn):
        if sorted(int(d) for d in spec) != list(range(ndim)):
            raise TypeError(f"convolution dimension_numbers.{name} {tuple(spec)} must be a permutation of the "
                            f"{ndim} operand dimensions.")
    return ConvDimensionNumbers(*(tuple(int(d) for d in s) for s in dn))


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """(low, high) pads per dimension for padding "VALID", "SAME" or "SAME_LOWER" (as XLA)."""
    if isinstance(padding, str):
        kind = padding.upper()
        if kind not in ("VALID", "SAME", "SAME_LOWER"):
            raise PaddingError(f"Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', got "
                               f"{padding}.")
    else:
        raise TypeError(f"Unknown padding type: {padding}.")
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    pads = []
    for n, w, s in zip(in_shape, window_shape, window_strides):
        out = -(-n // s)
        total = max((out - 1) * s + w - n, 0)
        pads.append((total // 2, total - total // 2) if kind == "SAME" else (total - total // 2, total // 2))
    return pads


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
    """The output shape of a convolution of operands in canonical order (N, C, spatial...), (O, I, spatial...)."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(f"Wrong number of explicit pads for convolution: expected {len(lhs_shape) - 2}, got "
                        f"{len(pads)}.")
    padded = np.add(lhs_shape[2:], np.sum(np.array(pads).reshape(-1, 2), axis=1))
    if np.any(padded < 0):
        raise ValueError(f"Negative padding is larger than the size of the corresponding dimension: got "
                         f"padding={pads} for lhs_shape[2:]={lhs_shape[2:]}")
    # a window of size w stepping by s fits (n - w) // s + 1 times in n (none when w > n)
    space = tuple(0 if n < w else (n - w) // s + 1 for n, w, s in zip(padded, rhs_shape[2:], strides))
    if batch_group_count > 1 and lhs_shape[0] % batch_group_count:
        raise ValueError(f"batch_group_count {batch_group_count} must divide the batch size {lhs_shape[0]}")
    return (lhs_shape[0] // batch_group_count, rhs_shape[0]) + space


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    """The output shape of conv_general_dilated (without dilation) for operands laid out as
    `dimension_numbers` (spec strings such as ("NHWC", "HWIO", "NHWC")) says."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    out = conv_shape_tuple(np.take(lhs_shape, lhs_perm), np.take(rhs_shape, rhs_perm), window_strides, padding)
    return tuple(np.take(out, np.argsort(out_perm)))


def _dilate_shape(shape, dilation):
    return tuple(0 if d == 0 else 1 + r * (d - 1) for d, r in zip(shape, dilation))


def _explicit_pads(padding, n, name="conv_general_dilated"):
    try:
        pads = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    except (ValueError, TypeError) as e:
        raise ValueError(f"padding argument to {name} should be a string or a sequence of (low, high) pairs, "
                         f"got {padding}") from e
    if len(pads) != n:
        raise TypeError(f"Wrong number of explicit pads for convolution: expected {n}, got {len(pads)}.")
    return pads


def _int_tuple(name, values, n):
    try:
        t = tuple(operator.index(v) for v in values)
    except TypeError as e:
        raise TypeError(f"conv_general_dilated {name} must be a sequence of ints, got {values!r}") from e
    if len(t) != n:
        raise ValueError(f"conv_general_dilated window and {name} must have the same number of dimensions, "
                         f"but got {n} and {len(t)}")
    if any(v < 1 for v in t):
        raise ValueError(f"conv_general_dilated {name} must be positive integers, got {t}")
    return t


# ---- the public functions -------------------------------------------------------------------

def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
                         dimension_numbers=None, feature_group_count=1, batch_group_count=1, precision=None,
                         preferred_element_type=None, out_sharding=None):
    """General N-d convolution with strides, padding, lhs (input) and rhs (kernel) dilation,
    feature and batch groups, in any layout (`dimension_numbers`), as XLA's ConvGeneralDilated.
    out_sharding: the sharding of the result's type, as JAX's."""
    x, w = scalars_like((lhs, rhs))
    xs, ws = core.get_aval(x).shape, core.get_aval(w).shape
    dn = conv_dimension_numbers(xs, ws, dimension_numbers)
    if len(xs) != len(ws):
        raise ValueError(f"conv_general_dilated lhs and rhs must have the same number of dimensions, but got "
                         f"{xs} and {ws}.")
    if len(xs) < 2:
        raise ValueError(f"conv_general_dilated needs operands with a batch and a feature dimension (rank at least "
                         f"2), got shapes {xs} and {ws}.")
    dn = _check_spec(dn, len(xs))
    n = len(xs) - 2
    window_strides = _int_tuple("window_strides", window_strides, n)
    lhs_dilation = (1,) * n if lhs_dilation is None else _int_tuple("lhs_dilation", lhs_dilation, n)
    rhs_dilation = (1,) * n if rhs_dilation is None else _int_tuple("rhs_dilation", rhs_dilation, n)
    if isinstance(padding, str):
        if any(d != 1 for d in lhs_dilation):
            raise ValueError("String padding is not implemented for transposed convolution using this op. Please "
                             "either exactly specify the required padding or use conv_transpose.")
        window = _dilate_shape([ws[d] for d in dn.rhs_spec[2:]], rhs_dilation)
        padding = padtype_to_pads([xs[d] for d in dn.lhs_spec[2:]], window, window_strides, padding)
    pads = _explicit_pads(padding, n)
    pet = None if preferred_element_type is None else dtypes.canonicalize_dtype(preferred_element_type)
    typed = _out_sharding_of(out_sharding, len(xs), "conv_general_dilated", (x, w))
    return _bind_with_out_sharding(
        conv_general_dilated_p, (x, w), out_sharding, typed, window_strides=window_strides, padding=pads,
        lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation, dimension_numbers=dn,
        feature_group_count=operator.index(feature_group_count), batch_group_count=operator.index(batch_group_count),
        precision=None, preferred_element_type=pet)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """NCHW x OIHW convolution with strides and padding ("SAME", "VALID" or explicit pairs)."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, precision=None,
                              preferred_element_type=None):
    """NCHW x OIHW convolution with strides, padding and lhs/rhs dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def _conv_transpose_padding(k, s, padding):
    """(before, after) padding of the transposed convolution along one dim, for a (dilated) kernel
    of size k, stride s and the forward convolution's padding ("SAME", "VALID" or a (lo, hi) pair)."""
    if padding == "SAME":
        pad_len = k + s - 2
        pad_a = k - 1 if s > k - 1 else -(-pad_len // 2)
    elif padding == "VALID":
        pad_len = k + s - 2 + max(k - s, 0)
        pad_a = k - 1
    elif isinstance(padding, tuple):
        pads = tuple(k - p - 1 for p in padding)
        pad_a, pad_len = pads[0], sum(pads)
    else:
        raise PaddingError(f"Invalid padding mode: {padding}")
    return pad_a, pad_len - pad_a


_TRANSPOSE_LAYOUTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"), 4: ("NHWC", "HWIO", "NHWC"),
                      5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None, transpose_kernel=False,
                   precision=None, preferred_element_type=None, use_consistent_padding=False):
    """The "transposed" (fractionally strided) convolution: a convolution of the lhs dilated by
    `strides`. "SAME" and "VALID" name the forward convolution's padding; explicit pairs are the
    transposed convolution's own, or the forward one's with use_consistent_padding (as PyTorch).
    `transpose_kernel` flips the kernel spatially and swaps its in and out features (the gradient
    of a strided convolution). Default layouts are NHWC x HWIO (and their 1-d and 3-d analogues)."""
    x, w = scalars_like((lhs, rhs))
    xs, ws = core.get_aval(x).shape, core.get_aval(w).shape
    ndim = len(xs)
    if ndim != len(ws) or ndim < 2:
        raise ValueError(f"conv_transpose requires lhs and rhs of the same rank, at least 2, got shapes {xs} and {ws}")
    if dimension_numbers is None:
        if ndim not in _TRANSPOSE_LAYOUTS:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = _TRANSPOSE_LAYOUTS[ndim]
    dn = _check_spec(conv_dimension_numbers(xs, ws, dimension_numbers), ndim)
    n = ndim - 2
    strides = _int_tuple("strides", strides, n)
    rhs_dilation = (1,) * n if rhs_dilation is None else _int_tuple("rhs_dilation", rhs_dilation, n)
    if use_consistent_padding or (isinstance(padding, str) and padding in ("SAME", "VALID")):
        k_dilated = _dilate_shape([ws[d] for d in dn.rhs_spec[2:]], rhs_dilation)
        per_dim = [padding] * n if isinstance(padding, str) else [tuple(p) for p in padding]
        pads = [_conv_transpose_padding(k, s, p) for k, s, p in zip(k_dilated, strides, per_dim)]
    else:
        pads = padding
    if transpose_kernel:
        w = rev(w, tuple(dn.rhs_spec[2:]))
        perm = list(range(ndim))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = perm[dn.rhs_spec[1]], perm[dn.rhs_spec[0]]
        w = transpose(w, perm)
    return conv_general_dilated(x, w, (1,) * n, pads, strides, rhs_dilation, dn, precision=precision,
                                preferred_element_type=preferred_element_type)


# ---- differentiation: conv is bilinear; each transpose is a convolution ----------------------
# In matrix terms (spatial dims aside, m batch, j in features, k out features) the forward is
# [m, j] [j, k] -> [m, k]; the lhs cotangent [m, k] [k, j] -> [m, j] convolves the cotangent with
# the spatially reversed kernel, its features swapped, over the lhs dilated by the strides; the
# rhs cotangent [j, m] [m, k] -> [j, k] convolves the lhs (batch and features swapped) with the
# cotangent as the kernel. Feature groups of the forward become batch groups of the rhs
# cotangent and vice versa.
from xjax._src.interpreters import ad  # noqa: E402


def _reshape_axis_into(src, dst, x):
    """x with axis src merged into axis dst (src major); dst counts axes after src is removed."""
    shape = core.get_aval(x).shape
    perm = [i for i in range(len(shape)) if i != src]
    perm.insert(dst, src)
    new_shape = [shape[i] for i in range(len(shape)) if i != src]
    new_shape[dst] *= shape[src]
    return reshape(x, new_shape, perm)


def _reshape_axis_out_of(src, size1, x):
    """x with axis src split into (size1, rest)."""
    shape = list(core.get_aval(x).shape)
    shape[src:src + 1] = [size1, shape[src] // size1]
    return reshape(x, shape)


def _spec_transpose(spec):
    return (spec[1], spec[0]) + tuple(spec[2:])


def _vjp_lhs_padding(in_shape, window, strides, out_shape, padding, lhs_dilation, rhs_dilation):
    lhs_d = _dilate_shape(in_shape, lhs_dilation)
    rhs_d = _dilate_shape(window, rhs_dilation)
    out_d = _dilate_shape(out_shape, strides)
    before = [k - lo - 1 for k, (lo, _) in zip(rhs_d, padding)]
    after = [l + k - 1 - o - b for l, k, o, b in zip(lhs_d, rhs_d, out_d, before)]
    return tuple(zip(before, after))


def _vjp_rhs_padding(in_shape, window, strides, out_shape, padding, lhs_dilation, rhs_dilation):
    if not in_shape:
        return ()
    lhs_d = _dilate_shape(in_shape, lhs_dilation)
    rhs_d = _dilate_shape(window, rhs_dilation)
    out_d = _dilate_shape(out_shape, strides)
    lo = [p for p, _ in padding]
    hi = [o - l + k - p - 1 for o, l, k, p in zip(out_d, lhs_d, rhs_d, lo)]
    return tuple(zip(lo, hi))


def _transpose_lhs(g, lhs_aval, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
                   feature_group_count, batch_group_count, preferred_element_type=None, **_):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    rs = core.get_aval(rhs).shape
    groups = feature_group_count
    if feature_group_count > 1:  # the group moves from the kernel's out features to its in features
        rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[1], _reshape_axis_out_of(rhs_spec[0], feature_group_count, rhs))
    elif batch_group_count > 1:
        rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[1], _reshape_axis_out_of(rhs_spec[0], batch_group_count, rhs))
        groups = batch_group_count
    dn = ConvDimensionNumbers(out_spec, _spec_transpose(rhs_spec), lhs_spec)
    pads = _vjp_lhs_padding([lhs_aval.shape[d] for d in lhs_spec[2:]], [rs[d] for d in rhs_spec[2:]], window_strides,
                            [core.get_aval(g).shape[d] for d in out_spec[2:]], padding, lhs_dilation, rhs_dilation)
    w = rev(rhs, tuple(rhs_spec[2:]))
    if core.get_aval(w).dtype != core.get_aval(g).dtype:
        w = convert_element_type(w, core.get_aval(g).dtype)
    out = conv_general_dilated(g, w, lhs_dilation, pads, window_strides, rhs_dilation, dn, groups, 1,
                               preferred_element_type=preferred_element_type,
                               out_sharding=getattr(lhs_aval, "_sharding", None))  # (typed as the lhs, as JAX's)
    if core.get_aval(out).dtype != lhs_aval.dtype:
        out = convert_element_type(out, lhs_aval.dtype)
    if batch_group_count > 1:
        out = _reshape_axis_into(lhs_spec[1], lhs_spec[0], _reshape_axis_out_of(lhs_spec[1], batch_group_count, out))
    return out


def _transpose_rhs(g, lhs, rhs_aval, *, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
                   feature_group_count, batch_group_count, preferred_element_type=None, **_):
    if np.prod(core.get_aval(g).shape) == 0:  # no degenerate convolution with an empty kernel
        return ad.zeros_like_aval(rhs_aval)
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    fgc, bgc = (batch_group_count, 1) if batch_group_count > 1 else (1, feature_group_count)
    dn = ConvDimensionNumbers(_spec_transpose(lhs_spec), _spec_transpose(out_spec), _spec_transpose(rhs_spec))
    ls = core.get_aval(lhs).shape
    pads = _vjp_rhs_padding([ls[d] for d in lhs_spec[2:]], [rhs_aval.shape[d] for d in rhs_spec[2:]],
                            window_strides, [core.get_aval(g).shape[d] for d in out_spec[2:]], padding, lhs_dilation,
                            rhs_dilation)
    if core.get_aval(lhs).dtype != core.get_aval(g).dtype:
        lhs = convert_element_type(lhs, core.get_aval(g).dtype)
    out = conv_general_dilated(lhs, g, rhs_dilation, pads, lhs_dilation, window_strides, dn, fgc, bgc,
                               preferred_element_type=preferred_element_type,
                               out_sharding=getattr(rhs_aval, "_sharding", None))
    if core.get_aval(out).dtype != rhs_aval.dtype:
        out = convert_element_type(out, rhs_aval.dtype)
    return out


def _conv_transpose_rule(ct, lhs, rhs, **params):
    if type(ct) is ad.Zero:
        return [None, None]
    if ad.is_undefined(lhs):
        return [_transpose_lhs(ct, lhs.aval, rhs, **params), None]
    return [None, _transpose_rhs(ct, lhs, rhs.aval, **params)]


ad.defbilinear(conv_general_dilated_p, _conv_transpose_rule)


# ---- batching (vmap): the mapped axis folds into the batch, feature or group dimensions -------
from xjax._src.interpreters import batching  # noqa: E402


def _conv_batch(axis, vals, dims, **params):
    lhs, rhs = vals
    lb, rb = dims
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    fgc, bgc = params["feature_group_count"], params["batch_group_count"]
    if params.get("out_sharding") is not None:
        raise NotImplementedError("vmap of conv_general_dilated with out_sharding is not implemented in xjax")
    size = axis.size
    if size == 0:  # nothing to fold into: an empty result of the batched shape
        ex_l, ex_r = batching.example_shape(lhs, lb), batching.example_shape(rhs, rb)
        aval = conv_general_dilated_p.abstract_eval(core.ShapedArray(ex_l, core.get_aval(lhs).dtype),
                                                    core.ShapedArray(ex_r, core.get_aval(rhs).dtype), **params)
        return ad.zeros_like_aval(aval.update(shape=(0,) + aval.shape, weak_type=False)), 0

    def bind(x, w, **changes):
        return conv_general_dilated_p.bind(x, w, **{**params, **changes})

    if lb is not None and rb is not None:
        # Each example its own group: lhs features (or batch groups) and rhs out features.
        if bgc > 1:
            x = _reshape_axis_into(lb, lhs_spec[0], lhs)
            changes = dict(batch_group_count=bgc * size)
        else:
            x = _reshape_axis_into(lb, lhs_spec[1], lhs)
            changes = dict(feature_group_count=fgc * size)
        out = bind(x, _reshape_axis_into(rb, rhs_spec[0], rhs), **changes)
        return _reshape_axis_out_of(out_spec[1], size, out), out_spec[1]
    if lb is not None:
        if bgc == 1:
            out = bind(_reshape_axis_into(lb, lhs_spec[0], lhs), rhs)
            return _reshape_axis_out_of(out_spec[0], size, out), out_spec[0]
        # Batch groups stay outermost in the lhs batch: (group, example, batch).
        x = _reshape_axis_out_of(lhs_spec[0] + int(lb <= lhs_spec[0]), bgc, lhs)
        x = _reshape_axis_into(lb + int(lhs_spec[0] < lb), lhs_spec[0] + 1, x)
        x = _reshape_axis_into(lhs_spec[0], lhs_spec[0], x)
        out = bind(x, rhs)
        return _reshape_axis_out_of(out_spec[0], size, out), out_spec[0]
    if fgc == 1 and bgc == 1:
        out = bind(lhs, _reshape_axis_into(rb, rhs_spec[0], rhs))
        return _reshape_axis_out_of(out_spec[1], size, out), out_spec[1]
    # Groups stay outermost in the rhs out features: (group, example, features).
    groups = fgc if fgc > 1 else bgc
    w = _reshape_axis_out_of(rhs_spec[0] + int(rb <= rhs_spec[0]), groups, rhs)
    w = _reshape_axis_into(rb + int(rhs_spec[0] < rb), rhs_spec[0] + 1, w)
    w = _reshape_axis_into(rhs_spec[0], rhs_spec[0], w)
    out = bind(lhs, w)
    out = _reshape_axis_out_of(out_spec[1], groups, out)
    out = _reshape_axis_out_of(out_spec[1] + 1, size, out)
    return _reshape_axis_into(out_spec[1], out_spec[1] + 1, out), out_spec[1]


conv_general_dilated_p.def_rules(batch=_conv_batch)
