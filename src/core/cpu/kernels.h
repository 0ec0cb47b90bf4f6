// The CPU's kernel registry: per op, the function that computes it over whole arrays. The plan's
// kernel steps are lowered to these once (cpu/lowering.cpp); constant folding and the reference
// interpreter reach them through compiler/backend.h.
#pragma once
#include <vector>

#include "core/ops/ops.h"

namespace xjax {

// Fills the (preallocated, correctly shaped) outputs from the inputs.
using CpuKernel = void (*)(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs);

// The op's CPU kernel, or null when it has none.
CpuKernel cpu_kernel(OpId op);

// A kernel made for one step's attributes when the lowering can read them once (its work per run
// then looks nothing up), or null for the op's own kernel. It computes what the op's kernel does.
using CpuKernelSpecializer = CpuKernel (*)(const Attrs& attrs);

// The kernel a plan's step of `op` with these attributes runs: its specialisation, if any, else
// cpu_kernel(op).
CpuKernel cpu_kernel_for(OpId op, const Attrs& attrs);

// Registration, one function per op family (each in its own file).
struct CpuKernelTable {
  void set_cpu(OpId op, CpuKernel k);
  void set_specializer(OpId op, CpuKernelSpecializer s);
};
void register_elementwise_cpu(CpuKernelTable&);
void register_reduction_cpu(CpuKernelTable&);
void register_layout_cpu(CpuKernelTable&);
void register_index_cpu(CpuKernelTable&);
void register_contraction_cpu(CpuKernelTable&);
void register_convolution_cpu(CpuKernelTable&);
void register_window_cpu(CpuKernelTable&);
void register_sort_cpu(CpuKernelTable&);
void register_linalg_cpu(CpuKernelTable&);
void register_fft_cpu(CpuKernelTable&);
void register_collective_cpu(CpuKernelTable&);  // all_reduce over MPI (src/core/distributed)

}  // namespace xjax
