// Element types of the runtime and the 16-bit float storage types (computed in float32).
#pragma once
#include <complex>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/ops/scalar_portable.h"

namespace xjax {

enum class DType : uint8_t {
  Bool, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64,
  Float16, BFloat16, Float32, Float64,
  Complex64, Complex128,  // (re, im) pairs of float32 / float64, as NumPy and std::complex store them
  Float8E4M3FN, Float8E5M2,  // 1-byte storage types (ml_dtypes'): only moved and converted, see below
};
constexpr int kNumDTypes = 17;
constexpr int kNumRealDTypes = 13;  // the dtypes before Complex64, which dispatch_dtype covers

size_t itemsize(DType dt);
const char* dtype_name(DType dt);
DType dtype_from_name(const std::string& name);  // throws std::invalid_argument
inline bool is_float8(DType dt) { return dt == DType::Float8E4M3FN || dt == DType::Float8E5M2; }
inline bool is_floating(DType dt) { return (dt >= DType::Float16 && dt <= DType::Float64) || is_float8(dt); }
inline bool is_complex(DType dt) { return dt == DType::Complex64 || dt == DType::Complex128; }
inline bool is_unsigned(DType dt) { return dt >= DType::UInt8 && dt <= DType::UInt64; }
inline bool is_signed_int(DType dt) { return dt >= DType::Int8 && dt <= DType::Int64; }
inline bool is_integer(DType dt) { return is_unsigned(dt) || is_signed_int(dt); }

// float8 values reach only the ops that move their bytes and convert_element_type
// (ops/float8_ops.h); the compiler's widen_float8 pass runs every other op in float32. The kernels
// that move bytes take a float8 array as the same-sized integer type they dispatch on.
inline DType moved_as(DType dt) { return is_float8(dt) ? DType::UInt8 : dt; }

// float16 and bfloat16 (bits in memory, computed in float32) are defined with their conversions
// in core/ops/scalar_portable.h, which CUDA code shares.

// The C++ type that stores each dtype, and the type arithmetic is done in.
template <DType D> struct StorageOf;
template <> struct StorageOf<DType::Bool> { using type = bool; };
template <> struct StorageOf<DType::Int8> { using type = int8_t; };
template <> struct StorageOf<DType::Int16> { using type = int16_t; };
template <> struct StorageOf<DType::Int32> { using type = int32_t; };
template <> struct StorageOf<DType::Int64> { using type = int64_t; };
template <> struct StorageOf<DType::UInt8> { using type = uint8_t; };
template <> struct StorageOf<DType::UInt16> { using type = uint16_t; };
template <> struct StorageOf<DType::UInt32> { using type = uint32_t; };
template <> struct StorageOf<DType::UInt64> { using type = uint64_t; };
template <> struct StorageOf<DType::Float16> { using type = float16; };
template <> struct StorageOf<DType::BFloat16> { using type = bfloat16; };
template <> struct StorageOf<DType::Float32> { using type = float; };
template <> struct StorageOf<DType::Float64> { using type = double; };
template <> struct StorageOf<DType::Complex64> { using type = std::complex<float>; };
template <> struct StorageOf<DType::Complex128> { using type = std::complex<double>; };

template <typename T> struct ComputeOf { using type = T; };
template <> struct ComputeOf<float16> { using type = float; };
template <> struct ComputeOf<bfloat16> { using type = float; };

// Calls f(T{}) with T the storage type of dt; one switch instead of one per kernel.
template <typename F>
decltype(auto) dispatch_dtype(DType dt, F&& f) {
  switch (dt) {
    case DType::Bool: return f(bool{});
    case DType::Int8: return f(int8_t{});
    case DType::Int16: return f(int16_t{});
    case DType::Int32: return f(int32_t{});
    case DType::Int64: return f(int64_t{});
    case DType::UInt8: return f(uint8_t{});
    case DType::UInt16: return f(uint16_t{});
    case DType::UInt32: return f(uint32_t{});
    case DType::UInt64: return f(uint64_t{});
    case DType::Float16: return f(float16{});
    case DType::BFloat16: return f(bfloat16{});
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    case DType::Complex64: case DType::Complex128: break;
    case DType::Float8E4M3FN: case DType::Float8E5M2:
      throw std::logic_error(std::string("float8 dtype ") + (dt == DType::Float8E4M3FN ? "float8_e4m3fn" : "float8_e5m2") +
                             " reached a kernel that computes (widen_float8 should have run it in float32)");
  }
  // Complex operands reach only the kernels that take them (ops/complex_ops.h gates the shape
  // rules), which dispatch with dispatch_complex: getting here is a bug, never a wrong result.
  throw std::logic_error(std::string("complex dtype ") + (dt == DType::Complex64 ? "complex64" : "complex128") +
                         " reached a kernel of real dtypes only");
}

// Calls f(C{}) with C std::complex<float> or std::complex<double>, for complex64 / complex128.
template <typename F>
decltype(auto) dispatch_complex(DType dt, F&& f) {
  if (dt == DType::Complex64) return f(std::complex<float>{});
  if (dt != DType::Complex128) throw std::logic_error("dispatch_complex: not a complex dtype");
  return f(std::complex<double>{});
}

template <typename T> constexpr DType dtype_of();
#define XJAX_DTYPE_OF(T, D) template <> constexpr DType dtype_of<T>() { return DType::D; }
XJAX_DTYPE_OF(bool, Bool) XJAX_DTYPE_OF(int8_t, Int8) XJAX_DTYPE_OF(int16_t, Int16)
XJAX_DTYPE_OF(int32_t, Int32) XJAX_DTYPE_OF(int64_t, Int64) XJAX_DTYPE_OF(uint8_t, UInt8)
XJAX_DTYPE_OF(uint16_t, UInt16) XJAX_DTYPE_OF(uint32_t, UInt32) XJAX_DTYPE_OF(uint64_t, UInt64)
XJAX_DTYPE_OF(float16, Float16) XJAX_DTYPE_OF(bfloat16, BFloat16) XJAX_DTYPE_OF(float, Float32)
XJAX_DTYPE_OF(double, Float64) XJAX_DTYPE_OF(std::complex<float>, Complex64)
XJAX_DTYPE_OF(std::complex<double>, Complex128)
#undef XJAX_DTYPE_OF

}  // namespace xjax
