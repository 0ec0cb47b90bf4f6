// The built-in contraction kernels for any x86-64 (SSE2), the last resort of the dispatch, and the
// only ones on other CPUs (16-byte vectors: NEON on AArch64).
#include <cstdint>

#include "core/cpu/contraction_kernels.h"

#define XJAX_ISA_NS generic
#define XJAX_ISA_VEC_BYTES 16
#define XJAX_ISA_MR 4
#include "core/cpu/contraction_kernels_impl.h"
