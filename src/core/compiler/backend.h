// How a backend plugs into the compiler. The plan (plan.h) is backend-neutral: a fused step holds
// the FusedKernelSpec of its group, a kernel step its op and attributes. A backend supplies
//  - BackendCaps: what its fused kernels compute, which fusion asks (fusion.h);
//  - its lowering of a plan's steps, made once when the plan is compiled, never per run.
// The CUDA backend lowers whole plans to GpuPlans (cuda/gpu_plan.h) that Python runs. The CPU
// backend is the one the Executable runs: its lowering (a CpuPlan: per fused step a compiled
// program, per kernel step a kernel function) and its kernels are declared here and defined in
// cpu/ (cpu/lowering.cpp, cpu/kernels.cpp). This header is the only way in: nothing outside cpu/
// includes a cpu/ header.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/ops/ops.h"

namespace xjax {

struct Plan;

// What a backend's fused kernels can compute: a node joins a fused group only when can_fuse
// accepts its op, operand dtypes, result dtype and attributes (after the backend-neutral checks).
struct BackendCaps {
  const char* name;
  bool (*can_fuse)(OpId op, const std::vector<DType>& in, DType out, const Attrs& attrs);
};
// The CPU's fused engine.
const BackendCaps& cpu_caps();

// The CPU's form of a plan (opaque here), made once per Executable from its neutral plan.
struct CpuPlan;
// Lowers every fused and kernel step of `plan`; throws naming an op that has no CPU kernel.
std::shared_ptr<const CpuPlan> lower_to_cpu(const Plan& plan);
// Whether fused or kernel step `step` may write its output `output` over its input `input` (one
// buffer) without changing results: what the buffer planner may do in place depends on the code.
bool cpu_may_overwrite(const CpuPlan& cpu, int step, int output, int input);
// Runs fused step `step` over contiguous operands (in the order of its inputs and outputs).
void run_cpu_fused(const CpuPlan& cpu, int step, const void* const* in, void* const* out);
// Runs kernel step `step`.
void run_cpu_kernel(const CpuPlan& cpu, int step, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                    const Attrs& attrs);
// "exp(%3), mul(%4, %1) -> sum" style summary of fused step `step`'s program (the plan's text).
std::string describe_cpu_step(const CpuPlan& cpu, int step);

// One op run by its CPU kernel outside any plan (constant folding, the reference interpreter).
bool has_cpu_kernel(OpId op);
void run_cpu_op(OpId op, const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs);

}  // namespace xjax
