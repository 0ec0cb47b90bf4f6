// The built-in contraction kernels compiled for AVX-512 (used only where the CPU has it).
#include <cstdint>

#include "core/arch.h"
#include "core/cpu/contraction_kernels.h"

#ifdef XJAX_ARCH_X86_64  // (elsewhere only the generic kernels exist)
#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq,avx512vl,avx512bw,avx2,fma,bmi,bmi2,popcnt")
#define XJAX_ISA_NS avx512
#define XJAX_ISA_VEC_BYTES 64
#define XJAX_ISA_MR 12
#include "core/cpu/contraction_kernels_impl.h"
#pragma GCC pop_options
#endif
