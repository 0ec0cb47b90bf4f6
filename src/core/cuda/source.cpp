// The prelude and the helpers shared by the CUDA generators.
#include "core/cuda/source.h"

#include <algorithm>
#include <limits>

namespace xjax::cuda {

namespace {

// The 16-bit float conversions round to nearest even and keep NaN quiet, as dtype.cpp's on the
// CPU, so results agree bit for bit; atomic_rmw emulates any-width atomics with a CAS loop on the
// aligned 32- or 64-bit word holding the element.
const char* kPrelude = R"(typedef signed char i8;
typedef short i16;
typedef int i32;
typedef long long i64;
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
#define XJAX_INF_F __int_as_float(0x7f800000)
#define XJAX_INF_D __longlong_as_double(0x7ff0000000000000LL)
__device__ __forceinline__ float f16_to_f32(u16 h) {
  u32 sign = (u32)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) return __int_as_float((int)sign) + (sign ? -1.0f : 1.0f) * (float)m * (1.0f / 16777216.0f);
  if (e == 31) return __int_as_float((int)(sign | 0x7f800000u | (m << 13)));
  return __int_as_float((int)(sign | ((e + 112) << 23) | (m << 13)));
}
__device__ __forceinline__ u16 f32_to_f16(float f) {
  u32 x = (u32)__float_as_int(f), sign = (x >> 16) & 0x8000u, a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return (u16)(sign | 0x7e00u);
  if (a >= 0x477ff000u) return (u16)(sign | 0x7c00u);
  if (a < 0x38800000u) {
    float s = __int_as_float((int)a) * 16777216.0f;
    u32 m = (u32)s;
    float r = s - (float)m;
    if (r > 0.5f || (r == 0.5f && (m & 1u))) ++m;
    return (u16)(sign | m);
  }
  a += 0xc8000fffu + ((a >> 13) & 1u);
  return (u16)(sign | (a >> 13));
}
__device__ __forceinline__ float bf16_to_f32(u16 h) { return __int_as_float((int)((u32)h << 16)); }
__device__ __forceinline__ u16 f32_to_bf16(float f) {
  u32 u = (u32)__float_as_int(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (u16)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (u16)(u >> 16);
}
template <typename T> __device__ __forceinline__ T xjax_max(T a, T b) { return (b > a || b != b) ? b : a; }
template <typename T> __device__ __forceinline__ T xjax_min(T a, T b) { return (b < a || b != b) ? b : a; }
template <typename T> __device__ __forceinline__ bool xjax_isnan(T a) { return a != a; }
template <typename T, typename W> __device__ __forceinline__ T xjax_get(W w, u32 shift) {
  T v;
  unsigned char* d = (unsigned char*)&v;
  for (u32 k = 0; k < sizeof(T); ++k) d[k] = (unsigned char)(w >> (shift + 8 * k));
  return v;
}
template <typename T, typename W> __device__ __forceinline__ W xjax_put(W w, u32 shift, T v) {
  unsigned char* s = (unsigned char*)&v;
  for (u32 k = 0; k < sizeof(T); ++k) {
    w &= ~((W)0xff << (shift + 8 * k));
    w |= (W)s[k] << (shift + 8 * k);
  }
  return w;
}
// *p = f(*p) atomically, for an element of 1, 2, 4 or 8 bytes.
template <typename T, typename F> __device__ __forceinline__ void atomic_rmw(T* p, F f) {
  if (sizeof(T) == 8) {
    u64* w = (u64*)p;
    u64 old = *w, seen;
    do {
      seen = old;
      old = atomicCAS(w, seen, xjax_put<T, u64>(seen, 0, f(xjax_get<T, u64>(seen, 0))));
    } while (old != seen);
  } else {
    unsigned long long addr = (unsigned long long)p;
    u32* w = (u32*)(addr & ~3ull);
    u32 shift = (u32)(addr & 3ull) * 8u;
    u32 old = *w, seen;
    do {
      seen = old;
      old = atomicCAS(w, seen, xjax_put<T, u32>(seen, shift, f(xjax_get<T, u32>(seen, shift))));
    } while (old != seen);
  }
}
)";

}  // namespace

std::string prelude(bool wide) {
  return std::string(kPrelude) + (wide ? "typedef long long ix;\n" : "typedef int ix;\n");
}

bool needs_wide(const std::vector<int64_t>& counts) {
  // Grid-stride loops step past the end by up to one grid (at most 2^24 threads): keep headroom.
  for (int64_t n : counts)
    if (n > (int64_t(1) << 30)) return true;
  return false;
}

std::string storage_type(DType dt) {
  switch (dt) {
    case DType::Bool: return "u8";
    case DType::Int8: return "i8";
    case DType::Int16: return "i16";
    case DType::Int32: return "i32";
    case DType::Int64: return "i64";
    case DType::UInt8: return "u8";
    case DType::UInt16: return "u16";
    case DType::UInt32: return "u32";
    case DType::UInt64: return "u64";
    case DType::Float16: return "u16";
    case DType::BFloat16: return "u16";
    case DType::Float32: return "float";
    case DType::Float64: return "double";
  }
  return "u8";
}

std::string compute_type(DType dt) {
  if (dt == DType::Float16 || dt == DType::BFloat16) return "float";
  return storage_type(dt);
}

std::string bits_type(DType dt) {
  switch (itemsize(dt)) {
    case 1: return "u8";
    case 2: return "u16";
    case 4: return "u32";
    default: return "u64";
  }
}

std::string load(DType dt, const std::string& expr) {
  if (dt == DType::Float16) return "f16_to_f32(" + expr + ")";
  if (dt == DType::BFloat16) return "bf16_to_f32(" + expr + ")";
  return "(" + expr + ")";
}

std::string store(DType dt, const std::string& value) {
  if (dt == DType::Float16) return "f32_to_f16((float)(" + value + "))";
  if (dt == DType::BFloat16) return "f32_to_bf16((float)(" + value + "))";
  if (dt == DType::Bool) return "(u8)((" + value + ") != 0)";
  return "(" + storage_type(dt) + ")(" + value + ")";
}

std::string acc_type(Combiner c, DType dt) {
  if ((c == Combiner::Add || c == Combiner::Mul) && is_integer(dt))
    return itemsize(dt) == 8 ? "u64" : "u32";  // wrap around; 8/16-bit values never promote to int
  return compute_type(dt);
}

std::string combine(Combiner c, const std::string& a, const std::string& b) {
  switch (c) {
    case Combiner::Add: return "(" + a + " + " + b + ")";
    case Combiner::Mul: return "(" + a + " * " + b + ")";
    case Combiner::Max: return "xjax_max(" + a + ", " + b + ")";
    case Combiner::Min: return "xjax_min(" + a + ", " + b + ")";
    case Combiner::And: return "(" + a + " & " + b + ")";
    case Combiner::Or: return "(" + a + " | " + b + ")";
    case Combiner::Xor: return "(" + a + " ^ " + b + ")";
  }
  return a;
}

namespace {

template <typename T>
std::string int_limit(bool highest) {
  const T v = highest ? std::numeric_limits<T>::max() : std::numeric_limits<T>::lowest();
  if constexpr (std::is_same_v<T, int64_t>)
    return highest ? "9223372036854775807LL" : "(-9223372036854775807LL - 1)";
  else if constexpr (std::is_same_v<T, uint64_t>)
    return highest ? "18446744073709551615ULL" : "0ULL";
  else
    return "(" + std::to_string(int64_t(v)) + ")";
}

std::string extreme(DType dt, bool highest) {
  switch (dt) {
    case DType::Bool: return highest ? "1" : "0";
    case DType::Int8: return int_limit<int8_t>(highest);
    case DType::Int16: return int_limit<int16_t>(highest);
    case DType::Int32: return int_limit<int32_t>(highest);
    case DType::Int64: return int_limit<int64_t>(highest);
    case DType::UInt8: return int_limit<uint8_t>(highest);
    case DType::UInt16: return int_limit<uint16_t>(highest);
    case DType::UInt32: return int_limit<uint32_t>(highest);
    case DType::UInt64: return int_limit<uint64_t>(highest);
    case DType::Float64: return highest ? "XJAX_INF_D" : "(-XJAX_INF_D)";
    default: return highest ? "XJAX_INF_F" : "(-XJAX_INF_F)";
  }
}

}  // namespace

std::string identity(Combiner c, DType dt) {
  const std::string t = acc_type(c, dt);
  switch (c) {
    case Combiner::Add: case Combiner::Or: case Combiner::Xor: return "(" + t + ")0";
    case Combiner::Mul: return "(" + t + ")1";
    case Combiner::And: return dt == DType::Bool ? "(u8)1" : "(" + t + ")(-1)";
    case Combiner::Max: return "(" + t + ")" + extreme(dt, false);
    case Combiner::Min: return "(" + t + ")" + extreme(dt, true);
  }
  return "0";
}

std::string lit(int64_t v) {
  if (v > std::numeric_limits<int32_t>::max() || v < std::numeric_limits<int32_t>::min())
    return "(ix)" + std::to_string(v) + "LL";
  return "(ix)" + std::to_string(v);
}

std::string decompose(const std::vector<int64_t>& shape, const std::string& flat, const std::string& prefix) {
  std::string s;
  const size_t n = shape.size();
  for (size_t i = 0; i < n; ++i) s += "ix " + prefix + std::to_string(i) + ";\n";
  if (n == 0) return s;
  s += "{ ix t_ = " + flat + ";\n";
  for (size_t i = n; i-- > 1;) {
    const std::string name = prefix + std::to_string(i);
    s += name + " = t_ % " + lit(shape[i]) + "; t_ /= " + lit(shape[i]) + ";\n";
  }
  s += prefix + "0 = t_; }\n";
  return s;
}

Launch grid_stride_launch(const std::string& name, int64_t n, std::vector<std::string> params) {
  Launch l;
  l.name = name;
  l.block.x = 256;
  l.grid.x = std::max<int64_t>(1, std::min<int64_t>((n + 255) / 256, 65536));
  l.params = std::move(params);
  return l;
}

std::string grid_stride_loop(const std::string& var, int64_t n) {
  return "for (ix " + var + " = (ix)blockIdx.x * (ix)blockDim.x + (ix)threadIdx.x; " + var + " < " + lit(n) + "; " +
         var + " += (ix)blockDim.x * (ix)gridDim.x)";
}

}  // namespace xjax::cuda
