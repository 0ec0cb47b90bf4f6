#include "core/ops/index_starts.h"
#include "core/ops/float8_ops.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace xjax {

StartPlan make_start_plan(const Shape& operand, const Shape& indices, const std::vector<int64_t>& start_map,
                          const std::vector<int64_t>& window, const std::vector<int64_t>& operand_batching,
                          const std::vector<int64_t>& indices_batching, IndexMode mode) {
  StartPlan p;
  std::vector<int64_t> strides = contiguous_strides(operand);
  p.batches = numel(Shape(indices.begin(), indices.end() - 1));
  p.depth = indices.back();
  p.clip = mode == IndexMode::Clip;
  for (int64_t d : start_map) {
    p.stride.push_back(strides[d]);
    p.hi.push_back(operand[d] - window[d]);
    if (operand[d] - window[d] < 0) p.none_fit = true;
  }
  const int64_t batch_rank = int64_t(indices.size()) - 1;
  for (size_t i = 0; i < operand_batching.size(); ++i) {
    int64_t dim = indices_batching[i], div = 1;
    for (int64_t j = dim + 1; j < batch_rank; ++j) div *= indices[j];
    p.batching.push_back({div, indices[dim], strides[operand_batching[i]]});
  }
  return p;
}

void fill_element(const Attrs& attrs, DType dt, void* out) {
  if (is_complex(dt)) {  // the fill value (JAX's default NaN) as the real part, 0 as the imaginary
    const DType part = dt == DType::Complex64 ? DType::Float32 : DType::Float64;
    std::memset(out, 0, itemsize(dt));
    fill_element(attrs, part, out);
    return;
  }
  const uint64_t bits = fill_bits(attrs, dt);
  std::memcpy(out, &bits, itemsize(dt));
}

uint64_t fill_bits(const Attrs& attrs, DType dt) {
  uint64_t bits = 0;
  if (is_float8(dt)) {  // JAX's default NaN, or the fill value rounded as a conversion rounds it
    double f = std::numeric_limits<double>::quiet_NaN();
    if (attrs.has("fill_value")) {
      const AttrValue& v = attrs.items().at("fill_value");
      f = std::holds_alternative<int64_t>(v) ? double(std::get<int64_t>(v)) : attrs.get_float("fill_value");
    }
    return float8_from_double(f, dt);
  }
  dispatch_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    T v{};
    if (!attrs.has("fill_value")) {
      if constexpr (std::is_same_v<T, bool>) v = true;
      else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) v = std::numeric_limits<T>::min();
      else if constexpr (std::is_integral_v<T>) v = std::numeric_limits<T>::max();
      else v = T(std::numeric_limits<float>::quiet_NaN());
    } else if (auto* i = std::get_if<int64_t>(&attrs.items().at("fill_value"))) {
      if constexpr (std::is_same_v<T, bool>) v = *i != 0;
      else if constexpr (std::is_integral_v<T>) v = T(*i);  // two's-complement wrap-around
      else if constexpr (std::is_same_v<T, double>) v = double(*i);
      else v = T(float(*i));
    } else {
      double f = attrs.get_float("fill_value");
      if constexpr (std::is_same_v<T, bool>) {
        v = f != 0;
      } else if constexpr (std::is_integral_v<T>) {  // saturate; NaN gives 0
        if (std::isnan(f)) v = 0;
        else if (f <= double(std::numeric_limits<T>::min())) v = std::numeric_limits<T>::min();
        else if (f >= double(std::numeric_limits<T>::max())) v = std::numeric_limits<T>::max();
        else v = T(f);
      } else if constexpr (std::is_same_v<T, double>) {
        v = f;
      } else {
        v = T(float(f));
      }
    }
    std::memcpy(&bits, &v, sizeof(T));
  });
  return bits;
}

}  // namespace xjax
