// The pieces every generator uses: the prelude (the scalar definitions of core/ops/scalar_ops.h and
// companions, as fused kernels have them, then the short integer type names and atomic
// read-modify-write), C names of dtypes, loads and stores, combiners with their identities, index
// decomposition and launch geometry.
#pragma once
#include <string>
#include <vector>

#include "core/cuda/kernel.h"

namespace xjax::cuda {

// The source's prelude; `wide` picks 64-bit index math (`ix`), else 32-bit.
std::string prelude(bool wide);
// Whether 32-bit index math cannot hold offsets into arrays of these many elements.
bool needs_wide(const std::vector<int64_t>& element_counts);

// C names (core/ops/scalar_names.h's): the storage type of a dtype (xjax::float16, bool, ...), the
// type arithmetic happens in (float for the 16-bit floats), an unsigned type of the same size.
std::string storage_type(DType dt);
std::string compute_type(DType dt);
std::string bits_type(DType dt);
// A compute-type value from a storage-type expression, and back (16-bit floats round to nearest
// even, bool is != 0, other dtypes convert as C).
std::string load(DType dt, const std::string& expr);
std::string store(DType dt, const std::string& value);

// The combiners of reductions, scans and scatters: calls of the scalar definitions add, mul, max,
// min, bitwise_and/or/xor (integer add and multiply wrap, max/min propagate NaN, bool add/max are
// or, mul/min are and).
enum class Combiner { Add, Mul, Max, Min, And, Or, Xor };
// The accumulator type of `c` over dtype dt: the compute type (float for 16-bit floats).
std::string acc_type(Combiner c, DType dt);
// c(a, b) over accumulator values a and b of one type.
std::string combine(Combiner c, const std::string& a, const std::string& b);
// The identity of c in the accumulator type.
std::string identity(Combiner c, DType dt);

// A C literal of type ix / 64-bit.
std::string lit(int64_t v);
// Statements that split flat index `flat` (a name) into `prefix`0.. `prefix`(n-1) over shape.
std::string decompose(const std::vector<int64_t>& shape, const std::string& flat, const std::string& prefix);

// A 1D grid-stride launch over n elements.
Launch grid_stride_launch(const std::string& name, int64_t n, std::vector<std::string> params);
// `for (ix i = ...; i < n; i += ...)` header of a grid-stride loop over n.
std::string grid_stride_loop(const std::string& var, int64_t n);

}  // namespace xjax::cuda
