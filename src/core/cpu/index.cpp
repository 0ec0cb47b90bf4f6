// CPU kernels of the index ops: registration (the kernels live in index_gather.cpp and
// index_scatter.cpp).
#include "core/cpu/index_kernels.h"
#include "core/cpu/kernels.h"

namespace xjax {

void register_index_cpu(CpuKernelTable& t) {
  t.set_cpu(OpId::gather_, gather_cpu);
  t.set_cpu(OpId::scatter_, scatter_cpu);
  t.set_cpu(OpId::scatter_add_, scatter_add_cpu);
  t.set_cpu(OpId::scatter_mul_, scatter_mul_cpu);
  t.set_cpu(OpId::scatter_min_, scatter_min_cpu);
  t.set_cpu(OpId::scatter_max_, scatter_max_cpu);
}

}  // namespace xjax
