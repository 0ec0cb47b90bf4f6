// The compute types of the contraction kernels (dot_general, conv_general_dilated): float for
// float32/float16/bfloat16 (and integers with a float result), double for float64, and
// uint32/uint64 for integers and bool (wrap-around, as XLA), with conversions in and out.
#pragma once
#include <type_traits>

#include "core/dtype.h"

namespace xjax {

// A value of storage type S in compute type C (integers to unsigned: modulo 2^n).
template <typename C, typename S>
inline C to_compute(S s) {
  if constexpr (std::is_same_v<S, float16> || std::is_same_v<S, bfloat16>) {
    return C(float(s));
  } else {
    return static_cast<C>(s);
  }
}

// A compute value stored as Y (bool: nonzero).
template <typename Y, typename C>
inline Y from_compute(C c) {
  if constexpr (std::is_same_v<Y, bool>) {
    return c != C(0);
  } else if constexpr (std::is_same_v<Y, float16> || std::is_same_v<Y, bfloat16>) {
    return Y(float(c));
  } else {
    return static_cast<Y>(c);
  }
}

// Storage of dt can be read as C in place (int32 as uint32, ...).
template <typename C>
bool same_storage(DType dt) {
  if constexpr (std::is_same_v<C, float>) return dt == DType::Float32;
  if constexpr (std::is_same_v<C, double>) return dt == DType::Float64;
  if constexpr (std::is_same_v<C, uint32_t>) return dt == DType::Int32 || dt == DType::UInt32;
  if constexpr (std::is_same_v<C, uint64_t>) return dt == DType::Int64 || dt == DType::UInt64;
  return false;
}

// Calls f(C{}) with the compute type of a contraction of `in` operands into an `out` result;
// `k` is the length of the sums (bool counts need 64 bits only from 2^32 terms).
template <typename F>
void dispatch_compute(DType in, DType out, int64_t k, F&& f) {
  if (is_floating(in) || is_floating(out)) {
    if (in == DType::Float64 || out == DType::Float64) {
      f(double{});
    } else {
      f(float{});
    }
  } else if (out == DType::Bool) {
    if (k < (int64_t(1) << 32)) {
      f(uint32_t{});
    } else {
      f(uint64_t{});
    }
  } else if (itemsize(out) == 8) {
    f(uint64_t{});
  } else {
    f(uint32_t{});
  }
}

}  // namespace xjax
