// The CPU kernels of the index ops, one file each (registered in index.cpp).
#pragma once
#include "core/ops/ops.h"

namespace xjax {

void gather_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs);
void scatter_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs);
void scatter_add_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs);
void scatter_mul_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs);
void scatter_min_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs);
void scatter_max_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs);

}  // namespace xjax
