"""jax.scipy.signal's spectral analysis: detrend, and the windowed FFTs csd, welch, stft and istft,
with JAX's defaults (nperseg defaults to the signal's length for csd and welch) and its errors.

Segments are taken with strided gathers of NumPy index tables; windows are NumPy constants (the Hann
window computed here, others from scipy.signal.get_window at trace time).
"""
import operator
import warnings

import numpy as np

from xjax._src import dtypes, lax
from xjax._src.numpy import fft as jnp_fft
from xjax._src.numpy import util
import xjax.numpy as jnp

_BOUNDARIES = ("even", "odd", "constant", "zeros", None)


def detrend(data, axis=-1, type="linear", bp=0, overwrite_data=None):
    """data less its mean (type="constant") or its least-squares line on each piece between the
    breakpoints bp (type="linear"), along axis, as scipy.signal.detrend."""
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ("constant", "linear"):
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    (data,) = util.promote_dtypes_inexact(util.operand("detrend", data))
    if type == "constant":
        return data - jnp.mean(data, axis, keepdims=True)
    axis = util.canonicalize_axis(axis, data.ndim)
    n = data.shape[axis]
    edges = np.unique(np.r_[0, bp, n])
    if edges[0] < 0 or edges[-1] > n:
        raise ValueError("Breakpoints must be non-negative and less than length of data along given axis.")
    moved = jnp.moveaxis(data, axis, 0)
    pieces = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        piece = moved[lo:hi]
        # The line fitted by least squares on t = 1/m .. 1: the residual is the piece projected off
        # span{1, t}, which is what lstsq followed by a product gives, in closed form.
        m = hi - lo
        t = (np.arange(1, m + 1) / m - (m + 1) / (2 * m)).astype(piece.dtype)
        t = t.reshape((m,) + (1,) * (piece.ndim - 1))
        centred = piece - jnp.mean(piece, 0, keepdims=True)
        tt = float(np.sum(t * t))
        slope = jnp.sum(centred * t, 0, keepdims=True) / tt if tt > 0 else 0
        pieces.append(centred - slope * t)
    return jnp.moveaxis(jnp.concatenate(pieces, 0), 0, axis)


def _hann(n):
    return np.ones(1) if n == 1 else np.sin(np.linspace(0, np.pi, n, endpoint=False)) ** 2


def _named_window(window, n):
    if isinstance(window, str) and window == "hann":
        return _hann(n)
    try:
        from scipy.signal import get_window  # lazy: SciPy is optional, needed only for other windows
    except ImportError as err:
        raise ImportError(f"scipy must be available to use window={window!r}") from err
    return np.asarray(get_window(window, n))


def _window_and_length(window, nperseg, input_length, dtype):
    # JAX's rules: a named window takes nperseg (default: the whole signal, capped at it with a
    # warning); an array window sets nperseg and must agree with one given.
    if isinstance(window, (str, tuple)):
        n = input_length if nperseg is None else int(nperseg)
        if n > input_length:
            warnings.warn(f"nperseg={n} is greater than input_length={input_length}, using nperseg={input_length}")
            n = input_length
        return jnp.asarray(_named_window(window, n), dtype=dtype), n
    win = jnp.asarray(window, dtype=dtype)
    n = win.size if nperseg is None else int(nperseg)
    if win.ndim != 1:
        raise ValueError("window must be 1-D")
    if input_length < win.size:
        raise ValueError("window is longer than input signal")
    if n != win.size:
        raise ValueError("value specified for nperseg is different from length of window")
    return win, n


def _concrete_int(value, what):
    return operator.index(int(util.concrete_value(value, what)) if hasattr(value, "aval") else value)


def _extend(x, n, boundary):
    # Extends the last axis by n samples at each end.
    if boundary is None or n < 1:
        return x
    if boundary == "odd":
        if n > x.shape[-1] - 1:
            raise ValueError(f"The extension length n ({n}) is too big. It must not exceed x.shape[axis]-1, "
                             f"which is {x.shape[-1] - 1}.")
        left = 2 * x[..., :1] - jnp.flip(x[..., 1:n + 1], -1)
        right = 2 * x[..., -1:] - jnp.flip(x[..., -n - 1:-1], -1)
        return jnp.concatenate([left, x, right], -1)
    widths = [(0, 0)] * (x.ndim - 1) + [(n, n)]
    mode = {"even": "reflect", "constant": "edge", "zeros": "constant"}[boundary]
    return jnp.pad(x, widths, mode)


def _segments_fft(x, win, detrend_func, nperseg, noverlap, nfft, twosided):
    # [..., length] -> [..., segments, nperseg] windowed segments -> their spectra.
    if not dtypes.issubdtype(x.dtype, np.inexact):
        x = x.astype(win.dtype)
    step = nperseg - noverlap
    starts = np.arange(0, x.shape[-1] - nperseg + 1, step)
    index = (starts[:, None] + np.arange(nperseg)[None, :]).astype(np.int32)
    segments = detrend_func(jnp.take(x, index, axis=-1))
    segments = win * segments
    if twosided:
        return jnp_fft.fft(segments, n=nfft)
    return jnp_fft.rfft(jnp.real(segments), n=nfft)


def _detrend_function(detrend_type):
    if isinstance(detrend_type, str):
        return lambda d: detrend(d, type=detrend_type, axis=-1)
    if callable(detrend_type):
        return detrend_type
    if not detrend_type:
        return lambda d: d
    raise ValueError(f"Unsupported detrend type: {detrend_type}")


def _spectral(x, y, fs, window, nperseg, noverlap, nfft, detrend_type, return_onesided, scaling, axis,
              mode, boundary=None, padded=False):
    """(freqs, times, spectra) for csd/welch (mode "psd") and stft (mode "stft"), the segments' axis
    last and the frequencies' at axis."""
    if boundary not in _BOUNDARIES:
        raise ValueError(f"Unknown boundary option '{boundary}', must be one of: {list(_BOUNDARIES)}")
    x = util.operand("spectral_helper", x)
    axis = util.canonicalize_axis(_concrete_int(axis, "axis of windowed-FFT"), x.ndim)
    if y is None:
        (x,) = util.promote_dtypes_inexact(x)
        outer = x.shape[:axis] + x.shape[axis + 1:]
    else:
        if mode != "psd":
            raise ValueError("two-argument mode is available only when mode=='psd'")
        x, y = util.promote_dtypes_inexact(x, util.operand("spectral_helper", y))
        if x.ndim != y.ndim:
            raise ValueError(f"two-arguments must have the same rank ({x.ndim} vs {y.ndim}).")
        try:
            outer = util.broadcast_shapes(x.shape[:axis] + x.shape[axis + 1:], y.shape[:axis] + y.shape[axis + 1:])
        except ValueError as err:
            raise ValueError("x and y cannot be broadcast together.") from err
    result_dtype = np.result_type(x.dtype, np.complex64)
    freq_dtype = np.finfo(result_dtype).dtype
    if nperseg is not None:
        nperseg = _concrete_int(nperseg, "nperseg of windowed-FFT")
        if nperseg < 1:
            raise ValueError("nperseg must be a positive integer")
    win, nperseg = _window_and_length(window, nperseg, x.shape[axis], x.dtype)
    noverlap = nperseg // 2 if noverlap is None else _concrete_int(noverlap, "noverlap of windowed-FFT")
    nfft = nperseg if nfft is None else _concrete_int(nfft, "nfft of windowed-FFT")
    if y is None and x.size == 0:
        return (jnp.zeros(x.shape, freq_dtype),) * 2 + (jnp.zeros(x.shape, result_dtype),)
    if y is not None and (x.size == 0 or y.size == 0):
        shape = outer[:axis] + (min(x.shape[axis], y.shape[axis]),) + outer[axis:]
        return (jnp.zeros(shape, freq_dtype),) * 2 + (jnp.zeros(shape, result_dtype),)
    x = jnp.moveaxis(x, axis, -1)
    if y is not None:
        y = jnp.moveaxis(y, axis, -1)
        # The shorter signal is zero-padded to the longer's length.
        length = max(x.shape[-1], y.shape[-1])
        x, y = (jnp.pad(a, [(0, 0)] * (a.ndim - 1) + [(0, length - a.shape[-1])]) for a in (x, y))
    if nfft < nperseg:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    step = nperseg - noverlap
    signals = [x] if y is None else [x, y]
    signals = [_extend(s, nperseg // 2, boundary) for s in signals]
    if padded:
        extra = -(signals[0].shape[-1] - nperseg) % step % nperseg
        signals = [jnp.pad(s, [(0, 0)] * (s.ndim - 1) + [(0, extra)]) for s in signals]
    detrend_func = _detrend_function(detrend_type)
    if scaling == "density":
        scale = 1.0 / (fs * jnp.sum(win * win))
    elif scaling == "spectrum":
        scale = 1.0 / jnp.sum(win) ** 2
    else:
        raise ValueError(f"Unknown scaling: {scaling}")
    if mode == "stft":
        scale = jnp.sqrt(scale)
    twosided = not return_onesided
    if return_onesided and any(jnp.iscomplexobj(s) for s in signals):
        twosided = True
        warnings.warn("Input data is complex, switching to return_onesided=False")
    freqs = (jnp_fft.fftfreq if twosided else jnp_fft.rfftfreq)(nfft, 1 / fs, dtype=freq_dtype)
    spectra = [_segments_fft(s, win, detrend_func, nperseg, noverlap, nfft, twosided) for s in signals]
    if y is not None:
        result = jnp.conj(spectra[0]) * spectra[1]
    elif mode == "psd":
        result = jnp.conj(spectra[0]) * spectra[0]
    else:
        result = spectra[0]
    result = result * scale
    if not twosided and mode == "psd":
        # One-sided densities count the negative frequencies twice (not DC, nor Nyquist when nfft is even).
        doubled = np.ones(result.shape[-1])
        doubled[1:result.shape[-1] - (1 - nfft % 2)] = 2
        result = result * doubled.astype(freq_dtype)
    length = signals[0].shape[-1]
    times = jnp.arange(nperseg / 2, length - nperseg / 2 + 1, step, dtype=freq_dtype) / fs
    if boundary is not None:
        times = times - nperseg / 2 / fs
    result = result.astype(result_dtype)
    if y is None and mode != "stft":
        result = jnp.real(result)
    # [..., segments, freqs] -> freqs at axis, segments last.
    return freqs, times, jnp.moveaxis(result, -1, axis)


def stft(x, fs=1.0, window="hann", nperseg=256, noverlap=None, nfft=None, detrend=False, return_onesided=True,
         boundary="zeros", padded=True, axis=-1):
    """The short-time Fourier transform of x: (freqs, times, Zxx), as scipy.signal.stft."""
    return _spectral(x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, "spectrum", axis,
                     "stft", boundary, padded)


def _median_bias(n):
    # The median of n exponential periodograms over their mean (Allen et al., FINDCHIRP, app. B).
    k = np.arange(2.0, n, 2)
    return 1 + np.sum(1.0 / (k + 1) - 1.0 / k)


def csd(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None, detrend="constant",
        return_onesided=True, scaling="density", axis=-1, average="mean"):
    """The cross power spectral density of x and y by Welch's method: (freqs, Pxy), as scipy.signal.csd."""
    freqs, _, pxy = _spectral(x, y, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling,
                              axis, "psd")
    if y is not None:
        pxy = pxy + 0j
    if pxy.ndim >= 2 and pxy.size > 0:
        if pxy.shape[-1] > 1:
            if average == "median":
                bias = _median_bias(pxy.shape[-1])
                if jnp.iscomplexobj(pxy):
                    pxy = lax.complex(jnp.median(jnp.real(pxy), -1), jnp.median(jnp.imag(pxy), -1))
                else:
                    pxy = jnp.median(pxy, -1)
                pxy = pxy / np.asarray(bias, dtype=np.finfo(pxy.dtype).dtype)
            elif average == "mean":
                pxy = jnp.mean(pxy, -1)
            else:
                raise ValueError(f'average must be "median" or "mean", got {average}')
        else:
            pxy = jnp.reshape(pxy, pxy.shape[:-1])
    return freqs, pxy


def welch(x, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None, detrend="constant",
          return_onesided=True, scaling="density", axis=-1, average="mean"):
    """The power spectral density of x by Welch's method: (freqs, Pxx), as scipy.signal.welch."""
    freqs, pxx = csd(x, None, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap, nfft=nfft,
                     detrend=detrend, return_onesided=return_onesided, scaling=scaling, axis=axis, average=average)
    return freqs, jnp.real(pxx)


def _overlap_add(frames, step):
    # [..., frames, length] -> [..., step * (frames - 1) + length]: frame i added at i * step, as a
    # scatter-free sum of shifted pads.
    nframes, length = frames.shape[-2:]
    total = step * (nframes - 1) + length
    out = None
    for i in range(nframes):
        widths = [(0, 0)] * (frames.ndim - 2) + [(i * step, total - i * step - length)]
        placed = jnp.pad(frames[..., i, :], widths)
        out = placed if out is None else out + placed
    return out


def istft(Zxx, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None, input_onesided=True, boundary=True,
          time_axis=-1, freq_axis=-2):
    """The inverse of stft by weighted overlap-add: (times, x), as scipy.signal.istft."""
    Zxx = util.operand("istft", Zxx)
    if Zxx.ndim < 2:
        raise ValueError("Input stft must be at least 2d!")
    freq_axis = util.canonicalize_axis(freq_axis, Zxx.ndim)
    time_axis = util.canonicalize_axis(time_axis, Zxx.ndim)
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    Zxx = Zxx.astype(np.result_type(Zxx.dtype, np.complex64))
    n_default = 2 * (Zxx.shape[freq_axis] - 1) if input_onesided else Zxx.shape[freq_axis]
    nperseg = _concrete_int(nperseg or n_default, "nperseg: segment length of STFT")
    if nperseg < 1:
        raise ValueError("nperseg must be a positive integer")
    if nfft is None:
        nfft_int = n_default + 1 if input_onesided and nperseg == n_default + 1 else n_default
    else:
        nfft_int = _concrete_int(nfft, "nfft of STFT")
    if nfft_int < nperseg:
        raise ValueError(f"FFT length ({nfft_int}) must be longer than nperseg ({nperseg}).")
    noverlap = _concrete_int(noverlap or nperseg // 2, "noverlap of STFT")
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    step = nperseg - noverlap
    if time_axis != Zxx.ndim - 1 or freq_axis != Zxx.ndim - 2:
        outer = tuple(a for a in range(Zxx.ndim) if a not in (time_axis, freq_axis))
        Zxx = jnp.transpose(Zxx, outer + (freq_axis, time_axis))
    # As JAX, the inverse transform uses the nfft argument as given (None: the input's own length).
    inverse = jnp_fft.irfft if input_onesided else jnp_fft.ifft
    segments = inverse(Zxx, axis=-2, n=nfft)[..., :nperseg, :]
    if isinstance(window, (str, tuple)):
        win = jnp.asarray(_named_window(window, nperseg), dtype=segments.dtype)
    else:
        win = jnp.asarray(window)
        if win.ndim != 1:
            raise ValueError("window must be 1-D")
        if win.shape[0] != nperseg:
            raise ValueError(f"window must have length of {nperseg}")
    segments = segments * jnp.sum(win)
    frames = jnp.swapaxes(segments * win[:, None], -2, -1)
    x = _overlap_add(frames, step)
    nseg = segments.shape[-1]
    win_sq = np.asarray(win * win) if util.is_concrete(win) else None
    if win_sq is not None:
        norm = _overlap_add_numpy(win_sq, nseg, step)
    else:
        norm = _overlap_add(jnp.broadcast_to(win * win, (nseg, nperseg)), step)
    if boundary:
        half = nperseg // 2
        x = x[..., half:-half] if half else x[..., :0]
        norm = norm[..., half:-half] if half else norm[..., :0]
    x = x / jnp.where(norm > 1e-10, norm, 1.0)
    if x.ndim > 1 and time_axis != Zxx.ndim - 1:
        x = jnp.moveaxis(x, -1, time_axis - 1 if freq_axis < time_axis else time_axis)
    times = jnp.arange(x.shape[0], dtype=np.finfo(x.dtype).dtype) / fs
    return times, x


def _overlap_add_numpy(win_sq, nseg, step):
    # The window's overlap-added square, a constant when the window is.
    n = win_sq.shape[0]
    out = np.zeros(step * (nseg - 1) + n, win_sq.dtype)
    for i in range(nseg):
        out[i * step:i * step + n] += win_sq
    return out
