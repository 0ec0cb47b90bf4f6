// The CPU kernels of the sort ops that live outside sort.cpp (which registers them all).
#pragma once
#include "core/ops/ops.h"

namespace xjax {

void top_k_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs);

}  // namespace xjax
