// The geometry of the windowed ops (conv_general_dilated, reduce_window_*, select_and_*), read
// from their attributes and checked once; shared by the shape rules and the CPU kernels.
//
// Along one spatial dimension, the input of `size` elements is dilated by `base_dilation` (holes
// between its elements), padded by (pad_lo, pad_hi) (negative pads crop), and a window of
// `window` taps `window_dilation` apart steps over it by `stride`.
#pragma once
#include <string>
#include <vector>

#include "core/ops/ops.h"

namespace xjax {

struct WindowDim {
  int64_t size = 0, window = 1, stride = 1, pad_lo = 0, pad_hi = 0, base_dilation = 1, window_dilation = 1;

  static int64_t dilated(int64_t n, int64_t d) { return n == 0 ? 0 : (n - 1) * d + 1; }
  int64_t padded() const { return dilated(size, base_dilation) + pad_lo + pad_hi; }
  // Windows that fit (XLA's rule: none when the dilated window is longer than the padded input).
  int64_t out_size() const {
    const int64_t span = dilated(window, window_dilation), p = padded();
    return p < span ? 0 : (p - span) / stride + 1;
  }
  // The input element under tap k of window o, or -1 where the tap falls on padding or a hole.
  int64_t source(int64_t o, int64_t k) const {
    const int64_t p = o * stride + k * window_dilation - pad_lo;
    if (p < 0 || p >= dilated(size, base_dilation) || p % base_dilation) return -1;
    return p / base_dilation;
  }
};

// The names of one op's window attributes (conv_general_dilated names its dilations lhs_ and rhs_).
struct WindowAttrNames {
  const char* base_dilation;
  const char* window_dilation;
};

// Reads window_strides, padding (2n ints: lo, hi per dimension) and the two dilations (all
// optional: strides and dilations default to 1, padding to 0) for inputs `sizes` and windows
// `windows` (both of length n). Raises ValueError naming `op` and `ctx` for a wrong length, a
// stride or dilation below 1, or a negative pad larger than its dilated dimension.
std::vector<WindowDim> window_dims(OpId op, const Shape& sizes, const Shape& windows, const Attrs& attrs,
                                   WindowAttrNames names, const std::string& ctx);

// conv_general_dilated's dimension numbers: positions of (batch, feature, spatial...) in lhs and
// out, (out feature, in feature, spatial...) in rhs, as JAX's ConvDimensionNumbers.
struct ConvDims {
  std::vector<int64_t> lhs_spec, rhs_spec, out_spec;
  std::vector<WindowDim> spatial;  // size from lhs, window from rhs
  int64_t feature_groups = 1, batch_groups = 1;
};

// Reads and checks every attribute of conv_general_dilated against its operands' shapes (the
// kernel trusts the result). Errors are ValueErrors naming the shapes, as JAX's shape rule.
ConvDims conv_dims(const Shape& lhs, const Shape& rhs, const Attrs& attrs);

}  // namespace xjax
