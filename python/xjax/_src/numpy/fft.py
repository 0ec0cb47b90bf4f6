"""jax.numpy.fft: the discrete Fourier transforms of NumPy's fft module over lax.fft, with JAX's
argument handling (n / s pad or truncate the input, axes move to the end, norm scales the result)
and its frequency and shift helpers.

lax.fft takes at most 3 axes; more are done as JAX does them, 2 or 3 axes at a time.
"""
import operator

import numpy as np

from xjax._src import dtypes, jitted_lax
from xjax._src.lax.fourier import FftType
from xjax._src.numpy import creation, manipulation, padding, rearrange, reductions, ufuncs, util

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
           "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]


def _fft_norm(s, func_name, norm):
    if norm == "backward":
        return creation.array(1)
    (s,) = util.promote_dtypes_inexact(s)
    if norm == "ortho":
        root = ufuncs.sqrt(reductions.prod(s))
        return root if func_name.startswith("i") else 1 / root
    if norm == "forward":
        return reductions.prod(s) if func_name.startswith("i") else 1 / reductions.prod(s)
    raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or "forward".')


def _fft_core(func_name, fft_type, a, s, axes, norm):
    full_name = f"jax.numpy.fft.{func_name}"
    arr = util.operand(full_name, a)
    if s is not None:
        s = tuple(map(operator.index, s))
        if np.any(np.less_equal(s, 0)):
            raise ValueError("Shape should be positive.")
    if s is not None and axes is not None and len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    orig_axes = axes
    if axes is None:
        axes = range(arr.ndim) if s is None else range(arr.ndim - len(s), arr.ndim)
    if len(axes) != len(set(axes)):
        raise ValueError(f"{full_name} does not support repeated axes. Got axes {axes}.")
    if orig_axes is not None:
        axes = tuple(range(arr.ndim - len(axes), arr.ndim))
        arr = manipulation.moveaxis(arr, orig_axes, axes)
    if s is not None:
        in_s = list(arr.shape)
        for axis, x in zip(axes, s, strict=True):
            in_s[axis] = x
        if fft_type == FftType.IRFFT:
            in_s[-1] = in_s[-1] // 2 + 1
        arr = arr[tuple(slice(n) for n in in_s)]
        arr = padding.pad(arr, [(0, x - y) for x, y in zip(in_s, arr.shape)])
    elif fft_type == FftType.IRFFT:
        s = [arr.shape[axis] for axis in axes[:-1]]
        if axes:
            s += [max(0, 2 * (arr.shape[axes[-1]] - 1))]
    else:
        s = [arr.shape[axis] for axis in axes]
    transformed = _fft_core_nd(arr, fft_type, s)
    if norm is not None:
        transformed *= _fft_norm(creation.array(s, dtype=transformed.dtype), func_name, norm)
    if orig_axes is not None:
        transformed = manipulation.moveaxis(transformed, axes, orig_axes)
    return transformed


def _fft_core_nd(arr, fft_type, s):
    if len(s) <= 3:
        return jitted_lax.fft(arr, fft_type, tuple(s))
    # More than 3 axes: the last 2 or 3 in one transform, the others recursively (as JAX does).
    n = 2 if len(s) == 4 else 3
    src = tuple(range(arr.ndim - len(s), arr.ndim - n))
    dst = tuple(range(arr.ndim - len(s) + n, arr.ndim))
    if fft_type in (FftType.RFFT, FftType.FFT):
        arr = jitted_lax.fft(arr, fft_type, tuple(s)[-n:])
        arr = manipulation.moveaxis(arr, src, dst)
        arr = _fft_core_nd(arr, FftType.FFT, s[:-n])
        return manipulation.moveaxis(arr, dst, src)
    arr = manipulation.moveaxis(arr, src, dst)
    arr = _fft_core_nd(arr, FftType.IFFT, s[:-n])
    arr = manipulation.moveaxis(arr, dst, src)
    return jitted_lax.fft(arr, fft_type, tuple(s)[-n:])


def _axis_check_1d(func_name, axis):
    full_name = f"jax.numpy.fft.{func_name}"
    if isinstance(axis, (list, tuple)):
        raise ValueError(f"{full_name} does not support multiple axes. Please use {full_name}n. Got axis = {axis!r}.")


def _fft_core_1d(func_name, fft_type, a, n, axis, norm):
    _axis_check_1d(func_name, axis)
    return _fft_core(func_name, fft_type, a, None if n is None else [n], None if axis is None else [axis], norm)


def _fft_core_2d(func_name, fft_type, a, s, axes, norm):
    if len(axes) != 2:
        raise ValueError(f"jax.numpy.fft.{func_name} only supports 2 axes. Got axes = {axes!r}.")
    return _fft_core(func_name, fft_type, a, s, axes, norm)


def fftn(a, s=None, axes=None, norm=None):
    """The n-dimensional discrete Fourier transform (numpy.fft.fftn)."""
    return _fft_core("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(a, s=None, axes=None, norm=None):
    """The n-dimensional inverse discrete Fourier transform (numpy.fft.ifftn)."""
    return _fft_core("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(a, s=None, axes=None, norm=None):
    """The n-dimensional transform of a real array, halved along the last axis (numpy.fft.rfftn)."""
    return _fft_core("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(a, s=None, axes=None, norm=None):
    """The inverse of rfftn: a real array (numpy.fft.irfftn)."""
    return _fft_core("irfftn", FftType.IRFFT, a, s, axes, norm)


def fft(a, n=None, axis=-1, norm=None):
    """The one-dimensional discrete Fourier transform (numpy.fft.fft)."""
    return _fft_core_1d("fft", FftType.FFT, a, n, axis, norm)


def ifft(a, n=None, axis=-1, norm=None):
    """The one-dimensional inverse discrete Fourier transform (numpy.fft.ifft)."""
    return _fft_core_1d("ifft", FftType.IFFT, a, n, axis, norm)


def rfft(a, n=None, axis=-1, norm=None):
    """The transform of a real array, its n // 2 + 1 non-negative frequencies (numpy.fft.rfft)."""
    return _fft_core_1d("rfft", FftType.RFFT, a, n, axis, norm)


def irfft(a, n=None, axis=-1, norm=None):
    """The inverse of rfft: n reals (2 (m - 1) by default) from m coefficients (numpy.fft.irfft)."""
    return _fft_core_1d("irfft", FftType.IRFFT, a, n, axis, norm)


def hfft(a, n=None, axis=-1, norm=None):
    """The transform of a signal with Hermitian symmetry given by its first half: real (numpy.fft.hfft)."""
    conj_a = ufuncs.conj(a)
    _axis_check_1d("hfft", axis)
    nn = (conj_a.shape[axis] - 1) * 2 if n is None else n
    return _fft_core_1d("hfft", FftType.IRFFT, conj_a, n, axis, norm) * nn


def ihfft(a, n=None, axis=-1, norm=None):
    """The inverse of hfft (numpy.fft.ihfft)."""
    _axis_check_1d("ihfft", axis)
    arr = creation.asarray(a)
    nn = arr.shape[axis] if n is None else n
    output = _fft_core_1d("ihfft", FftType.RFFT, arr, n, axis, norm)
    return ufuncs.conj(output) * (1 / nn)


def fft2(a, s=None, axes=(-2, -1), norm=None):
    """The two-dimensional discrete Fourier transform (numpy.fft.fft2)."""
    return _fft_core_2d("fft2", FftType.FFT, a, s, axes, norm)


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    """The two-dimensional inverse discrete Fourier transform (numpy.fft.ifft2)."""
    return _fft_core_2d("ifft2", FftType.IFFT, a, s, axes, norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    """The two-dimensional transform of a real array (numpy.fft.rfft2)."""
    return _fft_core_2d("rfft2", FftType.RFFT, a, s, axes, norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    """The inverse of rfft2 (numpy.fft.irfft2)."""
    return _fft_core_2d("irfft2", FftType.IRFFT, a, s, axes, norm)


def _check_freq_args(func_name, n, d):
    if isinstance(n, (list, tuple)):
        raise ValueError(f"The n argument of jax.numpy.fft.{func_name} only takes an int. Got n = {list(n)}.")
    if isinstance(d, (list, tuple)):
        raise ValueError(f"The d argument of jax.numpy.fft.{func_name} only takes a single value. "
                         f"Got d = {list(d)}.")


def fftfreq(n, d=1.0, *, dtype=None, device=None):
    """The sample frequencies of an n-point transform with sample spacing d (numpy.fft.fftfreq)."""
    dtype = dtype or dtypes.default_float_dtype()
    _check_freq_args("fftfreq", n, d)
    out_dtype = dtype
    dtype = dtypes.finfo(dtypes.to_inexact_dtype(np.dtype(dtype))).dtype
    i = creation.arange(n, dtype=dtype, device=device)
    k = (i + n // 2) % n - n // 2
    result = k.astype(dtype) / creation.array(d * n, dtype=dtype, device=device)
    return result.astype(out_dtype)


def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    """The non-negative sample frequencies of rfft (numpy.fft.rfftfreq)."""
    dtype = dtype or dtypes.default_float_dtype()
    _check_freq_args("rfftfreq", n, d)
    k = creation.arange(0, n // 2 + 1, dtype=dtype)
    result = k / creation.array(d * n, dtype=dtype)
    if device is not None:
        return result.to_device(device)
    return result


def fftshift(x, axes=None):
    """x with the zero frequency moved to the centre (numpy.fft.fftshift)."""
    x = util.operand("fftshift", x)
    if axes is None:
        axes = tuple(range(x.ndim))
        shift = [dim // 2 for dim in x.shape]
    elif isinstance(axes, int):
        shift = x.shape[axes] // 2
    else:
        shift = [x.shape[ax] // 2 for ax in axes]
    return rearrange.roll(x, shift, axes)


def ifftshift(x, axes=None):
    """The inverse of fftshift (numpy.fft.ifftshift)."""
    x = util.operand("ifftshift", x)
    if axes is None:
        axes = tuple(range(x.ndim))
        shift = [-(dim // 2) for dim in x.shape]
    elif isinstance(axes, int):
        shift = -(x.shape[axes] // 2)
    else:
        shift = [-(x.shape[ax] // 2) for ax in axes]
    return rearrange.roll(x, shift, axes)
