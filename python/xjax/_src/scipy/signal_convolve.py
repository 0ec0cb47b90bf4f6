"""jax.scipy.signal's convolutions: convolve, correlate, convolve2d, correlate2d (direct, through
lax.conv_general_dilated) and fftconvolve (through jnp.fft), with SciPy's full/same/valid modes.

As JAX, method="auto" is the direct method, and convolve2d/correlate2d take only boundary="fill" with
fillvalue=0. A complex direct convolution is the core's (four real convolutions over the parts).
"""
import numpy as np

from xjax._src import lax
from xjax._src.numpy import fft as jnp_fft
from xjax._src.numpy import util
from xjax._src.vmap import vmap
import xjax.numpy as jnp

_MODES = ("full", "same", "valid")


def _correlate_padded(lhs, rhs, padding, precision):
    # One batch, one feature: lhs [1, 1, *spatial] by rhs [1, 1, *window].
    out = lax.conv_general_dilated(lhs[None, None], rhs[None, None], (1,) * lhs.ndim, padding,
                                   precision=precision)
    return out[0, 0]


def _convolve_direct(in1, in2, mode, precision):
    if mode not in _MODES:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if in1.size == 0 or in2.size == 0:
        raise ValueError(f"zero-size arrays not supported in convolutions, got shapes {in1.shape} and {in2.shape}.")
    in1, in2 = util.promote_dtypes_inexact(in1, in2)
    larger = all(s1 >= s2 for s1, s2 in zip(in1.shape, in2.shape))
    smaller = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
    if not (larger or smaller):
        raise ValueError("One input must be smaller than the other in every dimension.")
    # "same" keeps in1's shape even when the operands swap so that the window is the smaller one;
    # the padding is written in terms of the window and in2's original shape.
    in2_shape = in2.shape
    if not larger:
        in1, in2 = in2, in1
    window = in2.shape
    if mode == "valid":
        padding = [(0, 0)] * in1.ndim
    elif mode == "full":
        padding = [(w - 1, w - 1) for w in window]
    else:
        padding = [(w - 1 - (s - 1) // 2, w - s + (s - 1) // 2) for w, s in zip(window, in2_shape)]
    return _correlate_padded(in1, jnp.flip(in2), padding, precision)


def _operands(name, in1, in2):
    return util.operand(name, in1), util.operand(name, in2)


def convolve(in1, in2, mode="full", method="auto", precision=None):
    """The N-d convolution of in1 and in2, as scipy.signal.convolve."""
    in1, in2 = _operands("convolve", in1, in2)
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    if method not in ("direct", "auto"):
        raise ValueError(f"Got method={method!r}; expected 'auto', 'fft', or 'direct'.")
    return _convolve_direct(in1, in2, mode, precision)


def correlate(in1, in2, mode="full", method="auto", precision=None):
    """The N-d cross-correlation of in1 and in2, as scipy.signal.correlate."""
    in1, in2 = _operands("correlate", in1, in2)
    return convolve(in1, jnp.flip(jnp.conj(in2)), mode, method=method, precision=precision)


def _check_2d(name, in1, in2, boundary, fillvalue):
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{name}() only supports boundary='fill', fillvalue=0")
    if in1.ndim != 2 or in2.ndim != 2:
        raise ValueError(f"{name}() only supports 2-dimensional inputs.")


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """The 2-D convolution of in1 and in2 (boundary="fill", fillvalue=0 only), as scipy.signal.convolve2d."""
    in1, in2 = _operands("convolve2d", in1, in2)
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return _convolve_direct(in1, in2, mode, precision)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """The 2-D cross-correlation of in1 and in2 (boundary="fill", fillvalue=0 only), as
    scipy.signal.correlate2d."""
    in1, in2 = _operands("correlate2d", in1, in2)
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    swap = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
    same_shape = in1.shape == in2.shape
    # SciPy's correlate2d swaps the operands in "full" and "valid" when in1 is the smaller one,
    # which conjugates and reverses the result; "same" stays centred on in1.
    if mode != "same" and swap and not (mode == "valid" and same_shape):
        out = _convolve_direct(jnp.flip(in2), jnp.conj(in1), mode, precision)
        return jnp.conj(out) if mode == "full" else out
    return jnp.flip(_convolve_direct(jnp.flip(in1), jnp.conj(in2), mode, precision))


def _fftconvolve_all_axes(in1, in2, mode):
    full_shape = tuple(s1 + s2 - 1 for s1, s2 in zip(in1.shape, in2.shape))
    if mode == "valid":
        larger = all(s1 >= s2 for s1, s2 in zip(in1.shape, in2.shape))
        smaller = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
        if not (larger or smaller):
            raise ValueError("For 'valid' mode, One input must be at least as large as the other in every "
                             "dimension.")
        if smaller:
            in1, in2 = in2, in1
    if all(s1 == 1 or s2 == 1 for s1, s2 in zip(in1.shape, in2.shape)):
        full = in1 * in2  # an outer product: no transform needed
    elif jnp.iscomplexobj(in1):
        full = jnp_fft.ifftn(jnp_fft.fftn(in1, full_shape) * jnp_fft.fftn(in2, full_shape), full_shape)
    else:
        full = jnp_fft.irfftn(jnp_fft.rfftn(in1, full_shape) * jnp_fft.rfftn(in2, full_shape), full_shape)
    if mode == "full":
        out_shape = full_shape
    elif mode == "same":
        out_shape = in1.shape
    else:
        out_shape = tuple(s1 - s2 + 1 for s1, s2 in zip(in1.shape, in2.shape))
    starts = tuple((f - o) // 2 for f, o in zip(full_shape, out_shape))
    return lax.slice(full, starts, tuple(s + o for s, o in zip(starts, out_shape)))


def fftconvolve(in1, in2, mode="full", axes=None):
    """The N-d convolution of in1 and in2 by FFTs, as scipy.signal.fftconvolve; the axes not in `axes`
    must agree in length and are mapped over."""
    in1, in2 = _operands("fftconvolve", in1, in2)
    in1, in2 = util.promote_dtypes_inexact(in1, in2)
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode not in _MODES:
        raise ValueError("mode must be one of ['same', 'full', 'valid']")
    if axes is None:
        return _fftconvolve_all_axes(in1, in2, mode)
    axes = util.canonicalize_axes(tuple(axes) if np.ndim(axes) else axes, in1.ndim)
    mapped = sorted(set(range(in1.ndim)) - set(axes))
    if any(in1.shape[a] != in2.shape[a] for a in mapped):
        raise ValueError(f"mapped axes must have same shape; got in1.shape={in1.shape!r} "
                         f"in2.shape={in2.shape!r} axes={axes!r}")
    fun = lambda a, b: _fftconvolve_all_axes(a, b, mode)  # noqa: E731
    for axis in mapped:  # inner first, so each axis index refers to the full array
        fun = vmap(fun, in_axes=axis, out_axes=axis)
    return fun(in1, in2)
