"""xjax.scipy.signal (jax.scipy.signal): convolutions and correlations (direct and by FFT), detrending and
the windowed-FFT spectral estimates (csd, welch, stft, istft)."""
from xjax._src.scipy.signal_convolve import (convolve, convolve2d, correlate, correlate2d,  # noqa: F401
                                             fftconvolve)
from xjax._src.scipy.signal_spectral import csd, detrend, istft, stft, welch  # noqa: F401
