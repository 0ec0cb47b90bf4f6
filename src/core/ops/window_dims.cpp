// Reading and checking the window attributes of the windowed ops (see window_dims.h).
#include "core/ops/window_dims.h"

#include "core/ops/op_attrs.h"

namespace xjax {

namespace {

// Every length along a dimension (dilated input, padded input, dilated window) stays below this,
// so that positions computed from them (o * stride + k * dilation) fit in int64.
constexpr __int128 kMaxExtent = __int128(1) << 62;

// An optional int-list attribute of `n` entries, or `n` copies of `dflt` when absent.
std::vector<int64_t> list_attr(OpId op, const Attrs& attrs, const char* name, size_t n, int64_t dflt,
                               const std::string& ctx) {
  std::vector<int64_t> list = ints_attr_or(op, attrs, name, std::vector<int64_t>(n, dflt));
  if (list.size() != n)
    fail_value(op, std::string(name) + " " + shape_str(list) + " must have " + std::to_string(n) +
                       " entries (one per spatial dimension); " + ctx);
  return list;
}

}  // namespace

std::vector<WindowDim> window_dims(OpId op, const Shape& sizes, const Shape& windows, const Attrs& attrs,
                                   WindowAttrNames names, const std::string& ctx) {
  const size_t n = sizes.size();
  const auto strides = list_attr(op, attrs, "window_strides", n, 1, ctx);
  const auto base = list_attr(op, attrs, names.base_dilation, n, 1, ctx);
  const auto wdil = list_attr(op, attrs, names.window_dilation, n, 1, ctx);
  const std::vector<int64_t> pads = ints_attr_or(op, attrs, "padding", std::vector<int64_t>(2 * n, 0));
  if (pads.size() != 2 * n)
    fail_value(op, "padding " + shape_str(pads) + " must hold one (low, high) pair per spatial dimension (" +
                       std::to_string(n) + "); " + ctx);
  auto positive = [&](const std::vector<int64_t>& v, const char* name) {
    for (int64_t x : v)
      if (x < 1) fail_value(op, std::string(name) + " " + shape_str(v) + " must be positive; " + ctx);
  };
  positive(strides, "window_strides");
  positive(base, names.base_dilation);
  positive(wdil, names.window_dilation);
  std::vector<WindowDim> dims(n);
  for (size_t i = 0; i < n; ++i) {
    WindowDim& d = dims[i];
    d.size = sizes[i];
    d.window = windows[i];
    d.stride = strides[i];
    d.base_dilation = base[i];
    d.window_dilation = wdil[i];
    d.pad_lo = pads[2 * i];
    d.pad_hi = pads[2 * i + 1];
    const __int128 dilated = d.size == 0 ? 0 : __int128(d.size - 1) * d.base_dilation + 1;
    const __int128 padded = dilated + d.pad_lo + d.pad_hi;
    const __int128 span = d.window == 0 ? 0 : __int128(d.window - 1) * d.window_dilation + 1;
    if (padded < 0)
      fail_value(op, "negative padding " + shape_str(pads) + " is larger than the dilated size " +
                         std::to_string(int64_t(dilated)) + " of spatial dimension " + std::to_string(i) + "; " + ctx);
    if (dilated >= kMaxExtent || padded >= kMaxExtent || span >= kMaxExtent || d.pad_lo <= -kMaxExtent ||
        d.pad_lo >= kMaxExtent || d.pad_hi <= -kMaxExtent || d.pad_hi >= kMaxExtent)
      fail_value(op, "window, dilation or padding too large along spatial dimension " + std::to_string(i) + "; " + ctx);
  }
  return dims;
}

}  // namespace xjax
