// The floating-point environment of kernels: float32/float64 subnormals flush to zero, as JAX on
// CPU does (FTZ: subnormal results become 0; DAZ: subnormal operands read as 0). Set around every
// kernel run and restored after, so that NumPy in the same process keeps IEEE subnormals.
// float16 is computed in float32, where its subnormals are normal numbers: they stay, as in JAX.
#pragma once
#include <cstdint>

#include "core/arch.h"
#include "core/ops/scalar_portable.h"

#if defined(XJAX_ARCH_X86_64) || defined(__SSE2__)
#include <xmmintrin.h>
#define XJAX_HAS_MXCSR 1
#endif

namespace xjax {

#ifdef XJAX_HAS_MXCSR
constexpr uint32_t kFlushSubnormals = 0x8040;  // MXCSR bits FTZ (15) and DAZ (6)
// The calling thread's environment (x86-64 MXCSR: modes and sticky exception flags; AArch64 FPCR:
// modes only).
inline uint32_t float_env() { return _mm_getcsr(); }
inline void set_float_env(uint32_t env) {
  if (env != _mm_getcsr()) _mm_setcsr(env);  // writing MXCSR stalls the pipeline: skip when equal
}
#elif defined(XJAX_ARCH_AARCH64) && defined(__GNUC__)
// FPCR.FZ (bit 24) flushes subnormal float32/float64 operands and results alike (FTZ + DAZ);
// float16 arithmetic has its own bit (FZ16), left clear. The sticky flags live in FPSR, untouched.
constexpr uint32_t kFlushSubnormals = uint32_t(1) << 24;
inline uint32_t float_env() {
  uint64_t fpcr;
  asm volatile("mrs %0, fpcr" : "=r"(fpcr));
  return uint32_t(fpcr);
}
inline void set_float_env(uint32_t env) {
  if (env != float_env()) asm volatile("msr fpcr, %0" : : "r"(uint64_t(env)) : "memory");
}
#else
constexpr uint32_t kFlushSubnormals = 0;
inline uint32_t float_env() { return 0; }
inline void set_float_env(uint32_t) {}
#endif

// A float32/float64 subnormal as the signed zero that FTZ/DAZ make of it, in any environment: for
// code that works on the bits (libm) and for the reference interpreter's float64 values.
using scalar::flush_subnormal;

// Flushes subnormals on this thread while alive (kernel runs, constant folding); restores the
// caller's environment (on x86-64 its flags too) when it ends.
class FlushSubnormalsScope {
 public:
  FlushSubnormalsScope() : saved_(float_env()) { set_float_env(saved_ | kFlushSubnormals); }
  ~FlushSubnormalsScope() { set_float_env(saved_); }
  FlushSubnormalsScope(const FlushSubnormalsScope&) = delete;
  FlushSubnormalsScope& operator=(const FlushSubnormalsScope&) = delete;

 private:
  uint32_t saved_;
};

// The reverse, for host code called from inside a kernel run (Python callbacks): IEEE subnormals.
class KeepSubnormalsScope {
 public:
  KeepSubnormalsScope() : saved_(float_env()) { set_float_env(saved_ & ~kFlushSubnormals); }
  ~KeepSubnormalsScope() { set_float_env(saved_); }
  KeepSubnormalsScope(const KeepSubnormalsScope&) = delete;
  KeepSubnormalsScope& operator=(const KeepSubnormalsScope&) = delete;

 private:
  uint32_t saved_;
};

}  // namespace xjax
