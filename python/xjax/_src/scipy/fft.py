"""jax.scipy.fft: the type-2 discrete cosine transform and its inverse (dct, idct, dctn, idctn), as JAX
has them (other types raise NotImplementedError), computed by one complex FFT of length N per axis.

The DCT-II of x is Re(e^{-i pi k / 2N} FFT(v)[k]) times 2, where v is x reordered as its even entries
followed by its odd entries reversed (Makhoul); the inverse undoes each step. Complex input is
transformed part by part.
"""
import operator

import numpy as np

from xjax._src import dtypes, lax
from xjax._src.numpy import fft as jnp_fft
from xjax._src.numpy import util
import xjax.numpy as jnp


def _check_args(name, type, norm):
    if type != 2:
        raise NotImplementedError("Only DCT type 2 is implemented.")
    if norm is not None and norm not in ("backward", "ortho"):
        raise ValueError(f"jax.scipy.fft.{name}: norm={norm!r} is not implemented")


def _resize(x, n, axis):
    # n pads with zeros or truncates, as lax.pad with a negative high padding does.
    if n is None:
        return x
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"invalid number of data points ({n}) specified")
    widths = [(0, n - x.shape[a] if a == axis else 0, 0) for a in range(x.ndim)]
    return lax.pad(x, np.zeros((), x.dtype), widths)


def _makhoul_order(n):
    # v[m] = x[order[m]]: the even indices, then the odd ones from the top down.
    return np.concatenate([np.arange(0, n, 2), np.arange(n - 1 - n % 2, 0, -2)]).astype(np.int32)


def _along(values, axis, ndim):
    # A 1-D constant shaped to broadcast along axis of an ndim-array.
    return values.reshape([-1 if a == axis else 1 for a in range(ndim)])


def _ortho_factors(n, dtype):
    # dct(norm="ortho") = dct(norm=None) * these (SciPy's orthonormal scaling).
    f = np.full(n, np.sqrt(1 / (2 * n)))
    f[0] = np.sqrt(1 / (4 * n))
    return f.astype(dtype)


def _by_parts(transform, x, **kwargs):
    return lax.complex(transform(jnp.real(x), **kwargs), transform(jnp.imag(x), **kwargs))


def _dct_axis(x, axis, norm):
    n = x.shape[axis]
    v = jnp.take(x, _makhoul_order(n), axis=axis)
    spectrum = jnp_fft.fft(v, axis=axis)
    complex_dtype = spectrum.dtype
    twiddle = np.exp(-0.5j * np.pi * np.arange(n) / n).astype(complex_dtype)
    out = 2 * jnp.real(spectrum * _along(twiddle, axis, x.ndim))
    if norm == "ortho":
        out = out * _along(_ortho_factors(n, out.dtype), axis, x.ndim)
    return out


def _idct_axis(x, axis, norm):
    n = x.shape[axis]
    # The inverse of the backward DCT-II is the DCT-III over 2N: half weight on the DC term; the
    # orthonormal inverse first undoes the ortho scaling.
    weights = np.full(n, 1.0)
    weights[0] = 0.5
    if norm == "ortho":
        weights = weights / _ortho_factors(n, np.float64)
    complex_dtype = np.result_type(x.dtype, np.complex64)
    twiddle = (weights * np.exp(0.5j * np.pi * np.arange(n) / n)).astype(complex_dtype)
    v = jnp.real(jnp_fft.ifft(x * _along(twiddle, axis, x.ndim), axis=axis))
    # v holds x in Makhoul's order; gather it back.
    return jnp.take(v, np.argsort(_makhoul_order(n)).astype(np.int32), axis=axis)


def dct(x, type=2, n=None, axis=-1, norm=None):
    """The discrete cosine transform of x along axis (type 2 only, as JAX), as scipy.fft.dct."""
    x = util.operand("dct", x)
    _check_args("dct", type, norm)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return _by_parts(dct, x, type=type, n=n, axis=axis, norm=norm)
    (x,) = util.promote_dtypes_inexact(x)
    axis = util.canonicalize_axis(axis, x.ndim)
    return _dct_axis(_resize(x, n, axis), axis, norm)


def idct(x, type=2, n=None, axis=-1, norm=None):
    """The inverse of dct along axis (type 2 only, as JAX), as scipy.fft.idct."""
    x = util.operand("idct", x)
    _check_args("idct", type, norm)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return _by_parts(idct, x, type=type, n=n, axis=axis, norm=norm)
    (x,) = util.promote_dtypes_inexact(x)
    axis = util.canonicalize_axis(axis, x.ndim)
    return _idct_axis(_resize(x, n, axis), axis, norm)


def _shape_and_axes(x, s, axes):
    # JAX's rules: s alone takes the last len(s) axes; neither means every axis.
    if s is not None:
        try:
            s = [operator.index(n) for n in s]
        except TypeError:
            s = [operator.index(s)]
        if len(s) > x.ndim:
            raise ValueError(f"s must have at most x.ndim ({x.ndim}) elements, got {len(s)}")
    if axes is None:
        axes = tuple(range(x.ndim - len(s), x.ndim)) if s is not None else tuple(range(x.ndim))
    else:
        axes = util.canonicalize_axes(tuple(axes) if not isinstance(axes, int) else axes, x.ndim)
    # As JAX, sizes pair with axes in order; axes without one keep their length.
    sizes = list(s or [])[:len(axes)]
    return sizes + [None] * (len(axes) - len(sizes)), axes


def _transform_n(name, one_axis, x, type, s, axes, norm):
    x = util.operand(name, x)
    _check_args(name, type, norm)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return lax.complex(_transform_n(name, one_axis, jnp.real(x), type, s, axes, norm),
                           _transform_n(name, one_axis, jnp.imag(x), type, s, axes, norm))
    (x,) = util.promote_dtypes_inexact(x)
    sizes, axes = _shape_and_axes(x, s, axes)
    for n, axis in zip(sizes, axes):
        x = one_axis(_resize(x, n, axis), axis, norm)
    return x


def dctn(x, type=2, s=None, axes=None, norm=None):
    """The multidimensional dct (type 2 only, as JAX), as scipy.fft.dctn."""
    return _transform_n("dctn", _dct_axis, x, type, s, axes, norm)


def idctn(x, type=2, s=None, axes=None, norm=None):
    """The multidimensional idct (type 2 only, as JAX), as scipy.fft.idctn."""
    return _transform_n("idctn", _idct_axis, x, type, s, axes, norm)
