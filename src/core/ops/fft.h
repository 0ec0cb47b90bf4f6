// The attributes of the fft op, read once by its shape rule (ops/fft.cpp) and by its kernels.
//   fft(x; fft_type, fft_lengths): transforms over the trailing len(fft_lengths) (1-3) dims, as
//   XLA's / jax.lax.fft:
//     FFT, IFFT  complex[..., *L]      -> complex[..., *L]            (IFFT scaled by 1 / prod(L))
//     RFFT       float[..., *L]        -> complex[..., *L[:-1], L[-1] // 2 + 1]
//     IRFFT      complex[..., *L[:-1], L[-1] // 2 + 1] -> float[..., *L]  (scaled by 1 / prod(L))
//   IRFFT reads only the real parts of the zero and Nyquist frequencies of its last axis.
#pragma once
#include <string>
#include <vector>

#include "core/ops/ops.h"

namespace xjax {

enum class FftType { Fft, Ifft, Rfft, Irfft };  // the order of jax.lax.FftType

// The fft_type attribute ("FFT", "IFFT", "RFFT", "IRFFT"); ValueError for another string.
FftType fft_type_attr(const Attrs& attrs);
const char* fft_type_name(FftType t);

// The longest transform the kernels take along one axis (Bluestein's padded length stays in int64).
constexpr int64_t kMaxFftLength = int64_t(1) << 31;

}  // namespace xjax
