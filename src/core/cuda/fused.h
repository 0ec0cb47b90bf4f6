// CUDA C for fused groups: the kernel of a FusedKernelSpec (compiler/kernel_spec.h), the other
// lowering of what fusion decided besides the CPU's FusedProgram. A plan's threads compute elements
// of the spec's index space in a grid-stride loop: loads are index maps over the flat index,
// steps call the scalar op definitions (core/ops/scalar_ops.h and companions) with 16-bit floats
// rounded after each step as they prescribe, stores write every element; reductions fold (k0, r,
// k1) as a two-stage tree (see fused.cpp).
//
// Buffers as in kernel.h: "in<i>" is spec.inputs[i], "out<i>" spec.outputs[i], "tmp<i>" scratch.
// Sources start with fused_source_prefix(): the scalar definitions (soft flush-to-zero, since
// CUDA's float64 has no FTZ mode); those computing a special function (lgamma, igamma, zeta, ...)
// carry scalar_special_source() next, the others go without its length.
#pragma once
#include <string>
#include <vector>

#include "core/compiler/kernel_spec.h"
#include "core/cuda/kernel.h"

namespace xjax {
struct BackendCaps;
}

namespace xjax::cuda {

// The plan (one launch, or two with a second reduction pass) computing `spec`.
KernelPlan fused_kernel(const FusedKernelSpec& spec);

// The text every fused source starts with: the scalar definitions at global scope.
std::string fused_source_prefix();

// What fused CUDA kernels compute: every elementwise op with a portable scalar definition (all of
// them, the special functions included, but bitcasts that change the width), every fusible reduction.
const BackendCaps& cuda_caps();

// ---- the pieces (fused_scalar.cpp), over core/ops/scalar_names.h.
// Element type in memory (the scalar definitions' storage types: xjax::float16, bool, ...).
std::string mem_type(DType dt);
// Type a slot holds (float16/bfloat16: float, rounded to the format after each step).
std::string slot_type(DType dt);
// A slot value from an element in memory, and back.
std::string read_mem(DType dt, const std::string& mem);
std::string write_mem(DType dt, const std::string& value);
// A slot value of the element whose bytes are `bytes` (a Fill's constant).
std::string literal(DType dt, const std::string& bytes);
// A slot value of the i64 expression v converted as convert_element_type does (an iota's value).
std::string from_i64(DType dt, const std::string& v);
// The value of step st over slot expressions args (NoKernelError when there is no definition).
std::string step_expr(const KernelStep& st, const std::vector<std::string>& args);
// Whether a fused kernel can compute op over these dtypes: a scalar definition exists for them.
bool cuda_can_fuse(OpId op, const std::vector<DType>& in, DType out, const Attrs& attrs);

}  // namespace xjax::cuda
