// The built-in contraction kernels compiled for AVX2 + FMA (used only where the CPU has them).
#include <cstdint>

#include "core/cpu/contraction_kernels.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,bmi,bmi2,popcnt")
#define XJAX_ISA_NS avx2
#define XJAX_ISA_VEC_BYTES 32
#define XJAX_ISA_MR 6
#include "core/cpu/contraction_kernels_impl.h"
#pragma GCC pop_options
