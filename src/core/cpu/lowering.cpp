// The CPU's lowering of a plan (compiler/backend.h), made once per Executable: per fused step the
// FusedProgram of its spec, per kernel step its op's CPU kernel. The executor then runs a step
// with one call through these, nothing looked up per run.
#include <stdexcept>
#include <string>

#include "core/compiler/backend.h"
#include "core/compiler/plan.h"
#include "core/cpu/fused_lower.h"
#include "core/cpu/kernels.h"

namespace xjax {

namespace {

// Whether a single-op kernel may write its output over operand i: elementwise kernels read each
// element before writing it; the scatter family and dynamic_update_slice skip copying operand 0
// into the output when both are one buffer, and so update it in place; so does dot_general_add
// with its addend.
bool kernel_writes_over(OpId op, int i) {
  if (op_info(op).kind == OpKind::Elementwise) return true;
  switch (op) {
    case OpId::dynamic_update_slice_: case OpId::scatter_: case OpId::scatter_add_: case OpId::scatter_mul_:
    case OpId::scatter_min_: case OpId::scatter_max_:
      return i == 0;
    case OpId::dot_general_add_:  // accumulates onto its addend
      return i == 2;
    default:
      return false;
  }
}

}  // namespace

struct CpuPlan {
  struct Step {
    std::shared_ptr<FusedProgram> program;  // a fused step
    CpuKernel kernel = nullptr;             // a kernel step
    OpId op = OpId::kCount;                 // a kernel step's op
  };
  std::vector<Step> steps;  // per step of the plan; others left empty
};

std::shared_ptr<const CpuPlan> lower_to_cpu(const Plan& plan) {
  auto cpu = std::make_shared<CpuPlan>();
  cpu->steps.resize(plan.steps.size());
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const Step& step = plan.steps[s];
    if (step.kind == Step::Kind::Fused) {
      cpu->steps[s].program = lower_to_cpu(*step.spec);
    } else if (step.kind == Step::Kind::Kernel) {
      CpuPlan::Step& c = cpu->steps[s];
      c.kernel = cpu_kernel_for(step.op, step.attrs);
      c.op = step.op;
      if (!c.kernel) throw std::runtime_error(std::string("[") + op_name(step.op) + "] has no CPU kernel yet");
    }
  }
  return cpu;
}

bool cpu_may_overwrite(const CpuPlan& cpu, int step, int output, int input) {
  const CpuPlan::Step& s = cpu.steps[step];
  if (s.program) return s.program->may_overwrite(output, input);
  return s.kernel && output == 0 && kernel_writes_over(s.op, input);
}

void run_cpu_fused(const CpuPlan& cpu, int step, const void* const* in, void* const* out) {
  cpu.steps[step].program->run(in, out);
}

void run_cpu_kernel(const CpuPlan& cpu, int step, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                    const Attrs& attrs) {
  cpu.steps[step].kernel(in, out, attrs);
}

std::string describe_cpu_step(const CpuPlan& cpu, int step) { return cpu.steps[step].program->describe(); }

}  // namespace xjax
