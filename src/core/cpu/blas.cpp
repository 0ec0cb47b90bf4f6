// Placeholder until the contraction family lands: no BLAS, fallback kernels only.
#include "core/cpu/blas.h"

namespace xjax {
bool load_blas(const std::string&) { return false; }
bool blas_loaded() { return false; }
}  // namespace xjax
