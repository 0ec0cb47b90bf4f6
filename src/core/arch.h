// The few things the core does differently per CPU architecture, in one place: which one we are
// compiled for, whether x86-64 function multi-versioning is available, and the spin-wait hint.
// Everything else is portable C++ (GCC vector extensions map to SSE/AVX on x86-64, NEON on
// AArch64). Supported: x86-64 (tuned: AVX2/AVX-512 kernels picked at run time) and AArch64
// (the generic kernels); any other 64-bit target builds with the generic code and no hint.
#pragma once

#if defined(__x86_64__) || defined(_M_X64)
#define XJAX_ARCH_X86_64 1
#elif defined(__aarch64__) || defined(_M_ARM64)
#define XJAX_ARCH_AARCH64 1
#endif

// target_clones: loops compiled for AVX-512, AVX2 and baseline x86-64, one picked at load time by
// an ifunc resolver (GCC on glibc only). Not in sanitizer builds (XJAX_NO_CLONES): the resolvers
// would run before the sanitizer runtime is up.
#if defined(XJAX_ARCH_X86_64) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__) && \
    !defined(XJAX_NO_CLONES)
#define XJAX_HAS_TARGET_CLONES 1
#endif

// Loops compiled for AVX-512, AVX2 with FMA (x86-64-v3) and baseline x86-64, each clone vectorised
// at its width.
#ifdef XJAX_HAS_TARGET_CLONES
#define XJAX_WIDE_CLONES __attribute__((target_clones("avx512f", "arch=x86-64-v3", "default")))
#else
#define XJAX_WIDE_CLONES
#endif

// Loops whose lanes compute independently (no reduction across them), compiled for AVX2 and
// baseline x86-64. Not for FMA CPUs: GCC turns complex products into vfmaddsub (one rounding)
// even without contraction, so only clones without FMA give the baseline's bits.
#ifdef XJAX_HAS_TARGET_CLONES
#define XJAX_ISA_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define XJAX_ISA_CLONES
#endif

namespace xjax {

// Tells the core that this thread is spinning on a flag another thread will set: x86 PAUSE, Arm
// YIELD (both only hints; a no-op elsewhere).
inline void cpu_relax() {
#if defined(XJAX_ARCH_X86_64) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(XJAX_ARCH_AARCH64) || defined(__arm__)
  asm volatile("yield" ::: "memory");
#endif
}

}  // namespace xjax
