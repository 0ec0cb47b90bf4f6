// generate_kernel: the op's shape rule, then its family's generator; an op without a GPU kernel
// is an error naming it.
#include "core/cuda/kernel.h"

#include "core/cuda/generators.h"
#include "core/errors.h"

namespace xjax::cuda {

namespace {

[[noreturn]] void no_kernel(OpId op) {
  std::string why;
  switch (op_info(op).kind) {
    case OpKind::Elementwise: why = "elementwise ops run inside fused kernels"; break;
    case OpKind::Sort: why = "sort and top_k run through CuPy"; break;
    case OpKind::Contraction: why = "dot_general runs on cuBLAS through CuPy; conv_general_dilated as im2col + GEMM"; break;
    case OpKind::Linalg: why = "the linear-algebra ops run on cuSOLVER and cuBLAS through CuPy"; break;
    default: why = "not implemented for the GPU"; break;
  }
  throw NoKernelError(std::string("[cuda] no GPU kernel for op '") + op_name(op) + "' (" + why + ")");
}

}  // namespace

bool has_kernel(OpId op) {
  switch (op) {
    case OpId::transpose_: case OpId::reshape_: case OpId::broadcast_in_dim_: case OpId::slice_:
    case OpId::pad_: case OpId::concatenate_: case OpId::rev_: case OpId::dynamic_slice_:
    case OpId::dynamic_update_slice_: case OpId::iota_:
    case OpId::reduce_sum_: case OpId::reduce_prod_: case OpId::reduce_max_: case OpId::reduce_min_:
    case OpId::reduce_and_: case OpId::reduce_or_: case OpId::reduce_xor_: case OpId::argmax_: case OpId::argmin_:
    case OpId::cumsum_: case OpId::cumprod_: case OpId::cummax_: case OpId::cummin_: case OpId::cumlogsumexp_:
    case OpId::gather_: case OpId::scatter_: case OpId::scatter_add_: case OpId::scatter_mul_:
    case OpId::scatter_min_: case OpId::scatter_max_:
    case OpId::reduce_window_sum_: case OpId::reduce_window_max_: case OpId::reduce_window_min_:
    case OpId::select_and_gather_add_: case OpId::select_and_scatter_add_:
      return true;
    default:
      return false;
  }
}

void refuse_float8(OpId op, const std::vector<TypeInfo>& types) {
  for (const TypeInfo& t : types)
    if (is_float8(t.dtype))
      throw NotImplementedError(std::string("[cuda] ") + dtype_name(t.dtype) + " values (" + op_name(op) +
                                ") are not supported on CUDA devices yet; compute them on the CPU");
}

void refuse_float8(const Graph& g) {
  for (const Node& n : g.nodes()) {
    refuse_float8(n.op, n.outputs);
    for (const auto& sub : n.subgraphs) refuse_float8(*sub);
  }
}

namespace {

// Whether op's kernel only moves elements (and so takes complex values as any others).
bool moves_elements(OpId op) {
  switch (op) {
    case OpId::transpose_: case OpId::reshape_: case OpId::broadcast_in_dim_: case OpId::slice_: case OpId::pad_:
    case OpId::concatenate_: case OpId::rev_: case OpId::dynamic_slice_: case OpId::dynamic_update_slice_:
      return true;
    default:
      return false;
  }
}

}  // namespace

KernelPlan generate_kernel(OpId op, const std::vector<TypeInfo>& in, const Attrs& attrs) {
  if (!has_kernel(op)) no_kernel(op);
  refuse_float8(op, in);
  const Types out = infer_types(op, in, attrs);
  bool complex = false;
  for (const Types* ts : {&in, &out})
    for (const TypeInfo& t : *ts) complex = complex || is_complex(t.dtype);
  if (complex && !moves_elements(op))  // (reductions, cumulative ops, gather and scatter, windows)
    throw NoKernelError(std::string("[cuda] no GPU kernel for op '") + op_name(op) + "' on complex values yet");
  switch (op) {
    case OpId::transpose_: return gen_transpose(in, out, attrs);
    case OpId::reshape_: return gen_copy(op, in, out, attrs);
    case OpId::broadcast_in_dim_: return gen_broadcast_in_dim(in, out, attrs);
    case OpId::slice_: return gen_slice(in, out, attrs);
    case OpId::pad_: return gen_pad(in, out, attrs);
    case OpId::concatenate_: return gen_concatenate(in, out, attrs);
    case OpId::rev_: return gen_rev(in, out, attrs);
    case OpId::dynamic_slice_: return gen_dynamic_slice(in, out, attrs);
    case OpId::dynamic_update_slice_: return gen_dynamic_update_slice(in, out, attrs);
    case OpId::iota_: return gen_iota(in, out, attrs);
    case OpId::argmax_: case OpId::argmin_: return gen_arg_reduce(op, in, out, attrs);
    case OpId::cumsum_: case OpId::cumprod_: case OpId::cummax_: case OpId::cummin_: case OpId::cumlogsumexp_:
      return gen_cumulative(op, in, out, attrs);
    case OpId::gather_: return gen_gather(in, out, attrs);
    case OpId::scatter_: case OpId::scatter_add_: case OpId::scatter_mul_: case OpId::scatter_min_:
    case OpId::scatter_max_:
      return gen_scatter(op, in, out, attrs);
    case OpId::reduce_window_sum_: case OpId::reduce_window_max_: case OpId::reduce_window_min_:
      return gen_reduce_window(op, in, out, attrs);
    case OpId::select_and_gather_add_: return gen_select_and_gather_add(in, out, attrs);
    case OpId::select_and_scatter_add_: return gen_select_and_scatter_add(in, out, attrs);
    default: return gen_reduce(op, in, out, attrs);  // the reduce_* ops
  }
}

KernelPlan generate_kernel(const std::string& name, const std::vector<TypeInfo>& in, const Attrs& attrs) {
  if (name == "im2col") return gen_im2col(in, attrs);
  return generate_kernel(op_from_name(name), in, attrs);
}

}  // namespace xjax::cuda
