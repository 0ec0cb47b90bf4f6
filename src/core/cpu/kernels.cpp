// The CPU kernel table, filled once on first use.
#include "core/cpu/kernels.h"

#include <mutex>
#include <stdexcept>
#include <string>

#include "core/compiler/backend.h"

namespace xjax {

namespace {
CpuKernel g_kernels[kNumOps] = {};
CpuKernelSpecializer g_specializers[kNumOps] = {};

void ensure_registered() {
  static std::once_flag once;
  std::call_once(once, [] {
    CpuKernelTable t;
    register_elementwise_cpu(t);
    register_reduction_cpu(t);
    register_layout_cpu(t);
    register_index_cpu(t);
    register_contraction_cpu(t);
    register_convolution_cpu(t);
    register_window_cpu(t);
    register_sort_cpu(t);
    register_linalg_cpu(t);
    register_fft_cpu(t);
    register_collective_cpu(t);
  });
}
}  // namespace

void CpuKernelTable::set_cpu(OpId op, CpuKernel k) { g_kernels[int(op)] = k; }
void CpuKernelTable::set_specializer(OpId op, CpuKernelSpecializer s) { g_specializers[int(op)] = s; }

CpuKernel cpu_kernel(OpId op) {
  ensure_registered();
  return g_kernels[int(op)];
}

CpuKernel cpu_kernel_for(OpId op, const Attrs& attrs) {
  CpuKernel k = cpu_kernel(op);
  CpuKernelSpecializer s = g_specializers[int(op)];
  CpuKernel special = k && s ? s(attrs) : nullptr;
  return special ? special : k;
}

bool has_cpu_kernel(OpId op) { return cpu_kernel(op) != nullptr; }

void run_cpu_op(OpId op, const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  CpuKernel k = cpu_kernel(op);
  if (!k) throw std::runtime_error(std::string("[") + op_name(op) + "] has no CPU kernel yet");
  k(in, out, attrs);
}

}  // namespace xjax
