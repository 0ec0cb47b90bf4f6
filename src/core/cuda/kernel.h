// CUDA C source for the ops that run outside fused groups (layout, indexing, reductions, scans,
// windows, im2col). One entry point: generate_kernel(op, operand types, attributes) returns a
// KernelPlan, which the Python CUDA backend compiles once (cupy.RawModule, cached by source hash)
// and runs as its launches, in order, on one stream.
//
// A plan's buffers are named in each launch's params: "in<i>" (operand i), "out<i>" (result i)
// and "tmp<i>" (scratch buffer i, scratch_bytes[i] bytes, uninitialised: a plan writes its scratch
// before reading it). Every kernel parameter is a pointer to one of these buffers; all sizes are
// constants in the source (a plan is made per shape), with 32-bit index math when they allow.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

#include "core/attrs.h"
#include "core/graph.h"
#include "core/ops/ops.h"

namespace xjax::cuda {

// An op with no GPU kernel: NotImplementedError in Python, naming the op.
struct NoKernelError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Dim3 {
  int64_t x = 1, y = 1, z = 1;
};

struct Launch {
  std::string name;  // the extern "C" __global__ function in the plan's source
  Dim3 grid, block;
  int64_t shared_bytes = 0;  // dynamic shared memory (generated kernels use static shared arrays: 0)
  std::vector<std::string> params;  // "in0", "out0", "tmp0", ...
};

struct KernelPlan {
  std::string source;
  std::vector<Launch> launches;  // none when the results are empty
  std::vector<int64_t> scratch_bytes;
  std::vector<TypeInfo> outputs;
};

// The plan of one op for operands `in`. Raises the op's TypeError/ValueError for bad operands
// (its shape rule runs first), and NoKernelError "[cuda] no GPU kernel for op 'name' ..." for ops
// without one.
KernelPlan generate_kernel(OpId op, const std::vector<TypeInfo>& in, const Attrs& attrs);
// The CUDA generator has no float8 loads, stores or conversions yet: NotImplementedError naming
// the dtype when a value of the graph (its subgraphs included) or one of the types is float8.
void refuse_float8(const Graph& g);
void refuse_float8(OpId op, const std::vector<TypeInfo>& types);

// The same by name; also "im2col" (not an op: conv_general_dilated's lhs patches for a cuBLAS
// GEMM, see im2col.cpp), given conv_general_dilated's operand types and attributes.
KernelPlan generate_kernel(const std::string& name, const std::vector<TypeInfo>& in, const Attrs& attrs);

// Whether generate_kernel has a kernel for op (sort, top_k and dot_general run through CuPy and
// cuBLAS on the Python side; elementwise ops run as fused groups).
bool has_kernel(OpId op);

}  // namespace xjax::cuda
