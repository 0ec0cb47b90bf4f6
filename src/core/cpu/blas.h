// BLAS, loaded at run time from a shared library (scipy-openblas: the BLAS NumPy and SciPy ship).
#pragma once
#include <string>

namespace xjax {

// Loads the library at `path` and resolves the scipy_-prefixed CBLAS symbols. Returns false (and
// keeps the built-in fallback kernels) when the library or a symbol is missing.
bool load_blas(const std::string& path);
bool blas_loaded();

}  // namespace xjax
