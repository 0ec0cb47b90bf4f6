"""The fft primitive (jax.lax.fft): FFT, IFFT, RFFT, IRFFT over the trailing 1-3 dims.

Its shape rule and kernel are the core's `fft` op (src/core/ops/fft.h). It is linear: the JVP is
the fft of the tangent, and the transposes are JAX's (the FFT matrix is symmetric, so FFT and IFFT
transpose to themselves; RFFT and IRFFT transpose to each other with the scaling and the mask of
the coefficients that a half spectrum holds once, and JAX's conjugations).
"""
import enum
import math

import numpy as np

from xjax._src import core, dtypes
from xjax._src.interpreters import ad, batching
from xjax._src.lax.base import asarray, core_abstract_eval, define_primitive
from xjax._src.lax.complex_parts import conj
from xjax._src.lax.elementwise import convert_element_type, div, mul
from xjax._src.lax.layout import expand_dims

__all__ = ["FftType", "fft", "fft_p"]


class FftType(enum.IntEnum):
    """Which transform lax.fft computes."""

    FFT = 0
    "Forward complex-to-complex FFT."

    IFFT = 1
    "Inverse complex-to-complex FFT."

    RFFT = 2
    "Forward real-to-complex FFT."

    IRFFT = 3
    "Inverse real-to-complex FFT."


_BY_NAME = {"fft": FftType.FFT, "ifft": FftType.IFFT, "rfft": FftType.RFFT, "irfft": FftType.IRFFT}


def _fft_type(fft_type):
    if isinstance(fft_type, FftType):
        return fft_type
    if isinstance(fft_type, str):
        typ = _BY_NAME.get(fft_type.lower()) if fft_type in (fft_type.lower(), fft_type.upper()) else None
        if typ is None:
            raise ValueError(f"Unknown FFT type '{fft_type}'")
        return typ
    raise TypeError(f"Unknown FFT type value '{fft_type}'")


def _attrs(fft_type, fft_lengths):
    return {"fft_type": FftType(fft_type).name, "fft_lengths": tuple(fft_lengths)}


def _abstract_eval(x, *, fft_type, fft_lengths):
    return core_abstract_eval("fft", _attrs)(x, fft_type=fft_type, fft_lengths=fft_lengths)


fft_p = define_primitive("fft", _abstract_eval, attrs=_attrs)


def fft(x, fft_type, fft_lengths):
    """The transform `fft_type` (a FftType or its name) over the trailing len(fft_lengths) dims."""
    typ = _fft_type(fft_type)
    x = asarray(x)
    dtype = core.get_aval(x).dtype
    if typ == FftType.RFFT:
        if dtypes.is_complex(dtype):
            raise ValueError("only real valued inputs supported for rfft")
        x = convert_element_type(x, dtypes.to_inexact_dtype(dtype))
    elif not dtypes.is_complex(dtype):
        x = convert_element_type(x, dtypes.complex_dtype_of(dtypes.to_inexact_dtype(dtype)))
    fft_lengths = tuple(int(n) for n in fft_lengths)
    if not fft_lengths:  # no axes: the identity, as in JAX
        return x
    return fft_p.bind(x, fft_type=typ, fft_lengths=fft_lengths)


def _half_spectrum_mask(n, m, dtype):
    """1 at the frequencies a half spectrum of length m (of n samples) holds once, 2 elsewhere."""
    mask = np.full((m,), 2.0, dtype)
    mask[0] = 1.0
    if n % 2 == 0:
        mask[m - 1] = 1.0
    return mask


def _rfft_transpose(t, fft_lengths):
    ndim = core.get_aval(t).ndim
    dtype = core.get_aval(t).dtype
    mask = asarray(_half_spectrum_mask(fft_lengths[-1], core.get_aval(t).shape[-1], dtype))
    scaled = div(conj(t), expand_dims(mask, tuple(range(ndim - 1))))
    out = fft(scaled, FftType.IRFFT, fft_lengths)
    return mul(asarray(np.array(math.prod(fft_lengths), core.get_aval(out).dtype)), out)


def _irfft_transpose(t, fft_lengths):
    x = fft(t, FftType.RFFT, fft_lengths)
    aval = core.get_aval(x)
    mask = _half_spectrum_mask(fft_lengths[-1], aval.shape[-1], aval.dtype) / math.prod(fft_lengths)
    out = mul(expand_dims(asarray(mask.astype(aval.dtype)), tuple(range(aval.ndim - 1))), x)
    return conj(out)  # JAX's convention for complex gradients


def _transpose(t, x, *, fft_type, fft_lengths):
    if type(t) is ad.Zero:
        return [None]
    if fft_type == FftType.RFFT:
        return [_rfft_transpose(t, fft_lengths)]
    if fft_type == FftType.IRFFT:
        return [_irfft_transpose(t, fft_lengths)]
    return [fft(t, fft_type, fft_lengths)]


def _batch(axis, vals, dims, *, fft_type, fft_lengths):
    (x,), (d,) = vals, dims
    return fft_p.bind(batching.moveaxis(x, d, 0), fft_type=fft_type, fft_lengths=fft_lengths), 0


ad.deflinear(fft_p, _transpose)
fft_p.def_rules(batch=_batch)
