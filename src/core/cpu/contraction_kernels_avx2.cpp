// The built-in contraction kernels compiled for AVX2 + FMA (used only where the CPU has them).
#include <cstdint>

#include "core/arch.h"
#include "core/cpu/contraction_kernels.h"

#ifdef XJAX_ARCH_X86_64  // (elsewhere only the generic kernels exist)
#pragma GCC push_options
#pragma GCC target("avx2,fma,bmi,bmi2,popcnt")
#define XJAX_ISA_NS avx2
#define XJAX_ISA_VEC_BYTES 32
#define XJAX_ISA_MR 6
#include "core/cpu/contraction_kernels_impl.h"
#pragma GCC pop_options
#endif
