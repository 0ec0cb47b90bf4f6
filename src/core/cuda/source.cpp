// The prelude and the helpers shared by the CUDA generators.
#include "core/cuda/source.h"

#include <algorithm>
#include <limits>

#include "core/cuda/fused.h"
#include "core/ops/scalar_names.h"

namespace xjax::cuda {

namespace {

// What only launches need, after the scalar definitions: their integer types under the short names
// the generators write, and atomic_rmw, which emulates any-width atomics with a CAS loop on the
// aligned 32- or 64-bit word holding the element.
const char* kLaunchPrelude = R"(using xjax::scalar::i8;
using xjax::scalar::i16;
using xjax::scalar::i32;
using xjax::scalar::i64;
using xjax::scalar::u8;
using xjax::scalar::u16;
using xjax::scalar::u32;
using xjax::scalar::u64;
using xjax::scalar::u128;
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
    typedef unsigned long long W;  // atomicCAS's type (u64 may be unsigned long on a host)
    W* w = (W*)p;
    W old = *w, seen;
    do {
      seen = old;
      old = atomicCAS(w, seen, xjax_put<T, W>(seen, 0, f(xjax_get<T, W>(seen, 0))));
    } while (old != seen);
  } else {
    unsigned long long addr = (unsigned long long)p;
    unsigned int* w = (unsigned int*)(addr & ~3ull);
    u32 shift = (u32)(addr & 3ull) * 8u;
    unsigned int old = *w, seen;
    do {
      seen = old;
      old = atomicCAS(w, seen, xjax_put<T, unsigned int>(seen, shift, f(xjax_get<T, unsigned int>(seen, shift))));
    } while (old != seen);
  }
}
)";

}  // namespace

std::string prelude(bool wide) {
  // The scalar definitions as fused kernels have them (fused_source_prefix), then the above.
  return fused_source_prefix() + kLaunchPrelude + (wide ? "typedef long long ix;\n" : "typedef int ix;\n");
}

bool needs_wide(const std::vector<int64_t>& counts) {
  // Grid-stride loops step past the end by up to one grid (at most 2^24 threads): keep headroom.
  for (int64_t n : counts)
    if (n > (int64_t(1) << 30)) return true;
  return false;
}

std::string storage_type(DType dt) { return scalar_storage_type(dt); }

std::string compute_type(DType dt) { return scalar_compute_type(dt); }

std::string bits_type(DType dt) {
  switch (itemsize(dt)) {
    case 1: return "u8";
    case 2: return "u16";
    case 4: return "u32";
    case 8: return "u64";
    default: return "u128";
  }
}

std::string load(DType dt, const std::string& expr) { return scalar_load(dt, "(" + expr + ")"); }

std::string store(DType dt, const std::string& value) {
  if (dt == DType::Float16 || dt == DType::BFloat16) return scalar_store(dt, "(float)(" + value + ")");
  return "(" + storage_type(dt) + ")(" + value + ")";  // bool: != 0
}

std::string acc_type(Combiner, DType dt) { return compute_type(dt); }

std::string combine(Combiner c, const std::string& a, const std::string& b) {
  const char* fn = "add";
  switch (c) {
    case Combiner::Add: fn = "add"; break;
    case Combiner::Mul: fn = "mul"; break;
    case Combiner::Max: fn = "max"; break;
    case Combiner::Min: fn = "min"; break;
    case Combiner::And: fn = "bitwise_and"; break;
    case Combiner::Or: fn = "bitwise_or"; break;
    case Combiner::Xor: fn = "bitwise_xor"; break;
  }
  return std::string("xjax::scalar::") + fn + "(" + a + ", " + b + ")";
}

std::string identity(Combiner c, DType dt) {
  const std::string t = acc_type(c, dt);
  const bool is_float = !is_integer(dt) && dt != DType::Bool;
  switch (c) {
    case Combiner::Add: case Combiner::Or: case Combiner::Xor: return "(" + t + ")0";
    case Combiner::Mul: return "(" + t + ")1";
    case Combiner::And: return dt == DType::Bool ? "(" + t + ")1" : "(" + t + ")(-1)";
    case Combiner::Max:
      if (dt == DType::Bool) return "(" + t + ")0";
      return is_float ? "(-xjax::scalar::infinity<" + t + ">())" : "xjax::scalar::int_min<" + t + ">()";
    case Combiner::Min:
      if (dt == DType::Bool) return "(" + t + ")1";
      return is_float ? "xjax::scalar::infinity<" + t + ">()" : "xjax::scalar::int_max<" + t + ">()";
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
