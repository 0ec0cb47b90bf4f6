"""xjax.numpy.fft: discrete Fourier transforms (jax.numpy.fft's names)."""
from xjax._src.numpy.fft import (fft, fft2, fftfreq, fftn, fftshift, hfft, ifft, ifft2, ifftn,  # noqa: F401
                                 ifftshift, ihfft, irfft, irfft2, irfftn, rfft, rfft2, rfftfreq, rfftn)
