// BLAS, loaded at run time from a shared library (scipy-openblas: the BLAS NumPy and SciPy ship).
#pragma once
#include <string>

namespace xjax {

// Loads the library at `path` and resolves the scipy_-prefixed CBLAS symbols. Returns false (and
// keeps the built-in fallback kernels) when the library or a symbol is missing.
bool load_blas(const std::string& path);
bool blas_loaded();
// Sizes BLAS's own thread pool (now, or when it loads); 0: the global pool's size. BLAS sizes its
// pool process-wide, so it serves callers whose pool has this size (a device's share of the cores
// once the CPU is split into devices); the others use the built-in kernels on their own pool.
void set_blas_num_threads(int n);

}  // namespace xjax
