// The CPU lowering of a fused kernel spec: a FusedProgram for the tiled engine, with a loop per
// step and the CPU's merged steps. Also what the CPU can fuse (the capabilities fusion asks).
#pragma once
#include <memory>

#include "core/compiler/fusion.h"
#include "core/compiler/kernel_spec.h"
#include "core/cpu/fused.h"

namespace xjax {

// The program that runs `spec` on the CPU (finalized). Throws std::logic_error when some step has
// no loop (fusion asked cpu_caps(), so never expected).
std::shared_ptr<FusedProgram> lower_to_cpu(const FusedKernelSpec& spec);

}  // namespace xjax
