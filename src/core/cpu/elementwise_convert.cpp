// Loops of convert_element_type (all 13x13 dtype pairs; their values: core/ops/scalar_convert.h)
// and copy.
#include <cstring>

#include "core/cpu/elementwise_impl.h"

namespace xjax::ew {
namespace {

template <class From, class To>
void convert(const void* const* in, void* out, int64_t n) {
  // bool is read as its byte (0 or 1): GCC does not vectorise loads of bool.
  using Load = std::conditional_t<std::is_same_v<From, bool>, uint8_t, From>;
  const Load* a = arg<Load>(in, 0);
  To* o = static_cast<To*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = scalar::convert<Load, To>(a[i]);  // bytes 0/1: as bool
}

// 16-bit floats <-> float32 go through the (F16C) array conversions.
template <class H>
void half_to_float(const void* const* in, void* out, int64_t n) {
  to_float(arg<H>(in, 0), static_cast<float*>(out), n);
}
template <class H>
void float_to_half(const void* const* in, void* out, int64_t n) {
  from_float(arg<float>(in, 0), static_cast<H*>(out), n);
}

template <size_t kSize>
void copy_bytes(const void* const* in, void* out, int64_t n) {
  if (out != in[0]) std::memmove(out, in[0], size_t(n) * kSize);
}

}  // namespace

ElementwiseLoop convert_loop(DType from, DType to) {
  if (from == to) {
    switch (itemsize(from)) {
      case 1: return copy_bytes<1>;
      case 2: return copy_bytes<2>;
      case 4: return copy_bytes<4>;
      case 8: return copy_bytes<8>;
      default: return copy_bytes<16>;
    }
  }
  if (to == DType::Float32 && from == DType::Float16) return half_to_float<float16>;
  if (to == DType::Float32 && from == DType::BFloat16) return half_to_float<bfloat16>;
  if (from == DType::Float32 && to == DType::Float16) return float_to_half<float16>;
  if (from == DType::Float32 && to == DType::BFloat16) return float_to_half<bfloat16>;
  return dispatch_dtype(from, [to](auto from_tag) -> ElementwiseLoop {
    using From = decltype(from_tag);
    return dispatch_dtype(to, [](auto to_tag) -> ElementwiseLoop {
      using To = decltype(to_tag);
      return convert<From, To>;
    });
  });
}

}  // namespace xjax::ew
