// convert_element_type to and from the float8 formats (values: core/ops/scalar_float8.h): a float8
// value is exact in float32, so it converts onwards as that float32 does; a value converts to
// float8 from double, which holds every other dtype's finite values exactly but int64's largest
// (those overflow float8 whichever way they round).
#include <array>
#include <complex>

#include "core/cpu/elementwise_impl.h"
#include "core/ops/scalar_convert.h"
#include "core/ops/scalar_float8.h"

namespace xjax::ew {
namespace {

// Every code's float value (scalar_float8.h's), looked up: one load per element.
template <const scalar::Float8Format& F>
const float* values() {
  static const auto table = [] {
    std::array<float, 256> t;
    for (int c = 0; c < 256; ++c) t[c] = scalar::float8_value(uint8_t(c), F);
    return t;
  }();
  return table.data();
}

template <const scalar::Float8Format& F, class To>
void from_float8(const void* const* in, void* out, int64_t n) {
  const uint8_t* a = arg<uint8_t>(in, 0);
  To* o = static_cast<To*>(out);
  const float* value = values<F>();
  for (int64_t i = 0; i < n; ++i) {
    float v = value[a[i]];
    if constexpr (std::is_same_v<To, std::complex<float>> || std::is_same_v<To, std::complex<double>>)
      o[i] = To(typename To::value_type(v), 0);
    else o[i] = scalar::convert<float, To>(v);
  }
}

template <const scalar::Float8Format& F, const scalar::Float8Format& G>
void from_float8_via(const void* const* in, void* out, int64_t n) {  // one format to the other
  const uint8_t* a = arg<uint8_t>(in, 0);
  uint8_t* o = static_cast<uint8_t*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = scalar::float8_bits(scalar::float8_value(a[i], F), G);
}

template <class From, const scalar::Float8Format& F>
void to_float8(const void* const* in, void* out, int64_t n) {
  using Load = std::conditional_t<std::is_same_v<From, bool>, uint8_t, From>;  // bool as its byte
  const Load* a = arg<Load>(in, 0);
  uint8_t* o = static_cast<uint8_t*>(out);
  using C = typename ComputeOf<From>::type;
  for (int64_t i = 0; i < n; ++i) {
    double v;
    if constexpr (std::is_same_v<From, std::complex<float>> || std::is_same_v<From, std::complex<double>>)
      v = double(a[i].real());  // the real part, as converting complex to real does
    else if constexpr (std::is_same_v<From, bool>) v = a[i] ? 1.0 : 0.0;
    else v = double(C(a[i]));
    o[i] = scalar::float8_bits(v, F);
  }
}

// float32's loop, vectorised (integer selects only: every clone gives the same bits).
template <const scalar::Float8Format& F>
XJAX_EW_CLONES void float_to_float8(const void* const* in, void* out, int64_t n) {
  const float* a = arg<float>(in, 0);
  uint8_t* o = static_cast<uint8_t*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = scalar::float8_bits(a[i], F);
}

template <const scalar::Float8Format& F>
ElementwiseLoop from_float8_to(DType to) {
  if (to == DType::Float8E4M3FN) return from_float8_via<F, scalar::kE4M3FN>;
  if (to == DType::Float8E5M2) return from_float8_via<F, scalar::kE5M2>;
  if (to == DType::Complex64) return from_float8<F, std::complex<float>>;
  if (to == DType::Complex128) return from_float8<F, std::complex<double>>;
  return dispatch_dtype(to, [](auto tag) -> ElementwiseLoop { return from_float8<F, decltype(tag)>; });
}

template <const scalar::Float8Format& F>
ElementwiseLoop to_float8_from(DType from) {
  if (from == DType::Float32) return float_to_float8<F>;
  if (from == DType::Complex64) return to_float8<std::complex<float>, F>;
  if (from == DType::Complex128) return to_float8<std::complex<double>, F>;
  return dispatch_dtype(from, [](auto tag) -> ElementwiseLoop { return to_float8<decltype(tag), F>; });
}

}  // namespace

ElementwiseLoop float8_convert_loop(DType from, DType to) {
  if (from == to) return convert_loop(from, to);  // a copy
  if (from == DType::Float8E4M3FN) return from_float8_to<scalar::kE4M3FN>(to);
  if (from == DType::Float8E5M2) return from_float8_to<scalar::kE5M2>(to);
  if (to == DType::Float8E4M3FN) return to_float8_from<scalar::kE4M3FN>(from);
  return to_float8_from<scalar::kE5M2>(from);
}

}  // namespace xjax::ew
