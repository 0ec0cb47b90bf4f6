// Shape and dtype rules of the reductions (reduce_*, argmax, argmin) and of the scans (cum*).
// Every attribute the kernels read is validated here; the kernels trust it.
#include <algorithm>
#include <climits>

#include "core/ops/op_attrs.h"

namespace xjax {

namespace {

// Checks that axes are in [0, rank) and unique; returns the shape with them removed.
Shape reduced_shape(OpId op, const TypeInfo& t, const std::vector<int64_t>& axes) {
  int64_t rank = int64_t(t.shape.size());
  std::vector<bool> seen(t.shape.size(), false);
  for (int64_t a : axes) {
    if (a < 0 || a >= rank)
      fail_value(op, "axis " + std::to_string(a) + " in axes " + shape_str(axes) + " is out of range for operand " +
                         types_str({t}) + " (axes must be in [0, " + std::to_string(rank) + "))");
    if (seen[a]) fail_value(op, "duplicate axis " + std::to_string(a) + " in axes " + shape_str(axes));
    seen[a] = true;
  }
  Shape out;
  for (size_t i = 0; i < t.shape.size(); ++i)
    if (!seen[i]) out.push_back(t.shape[i]);
  return out;
}

template <OpId Op>
std::vector<TypeInfo> infer_reduce(const std::vector<TypeInfo>& in, const Attrs& attrs) {
  const TypeInfo& t = in[0];
  bool sum_like = Op == OpId::reduce_sum_ || Op == OpId::reduce_prod_;
  bool logical = Op == OpId::reduce_and_ || Op == OpId::reduce_or_ || Op == OpId::reduce_xor_;
  if (sum_like && t.dtype == DType::Bool)
    fail_type(Op, "does not accept dtype bool (operand " + types_str(in) + "); it needs a numeric dtype");
  if (logical && !(t.dtype == DType::Bool || is_integer(t.dtype)))
    fail_type(Op, "needs a bool or integer operand, got " + types_str(in));
  return {{reduced_shape(Op, t, ints_attr(Op, attrs, "axes")), t.dtype}};
}

template <OpId Op>
std::vector<TypeInfo> infer_arg(const std::vector<TypeInfo>& in, const Attrs& attrs) {
  const TypeInfo& t = in[0];
  const std::vector<int64_t>& axes = ints_attr(Op, attrs, "axes");
  if (axes.size() != 1)
    fail_value(Op, "needs exactly one axis, got axes " + shape_str(axes) + " for operand " + types_str(in));
  const DType index_dtype = dtype_attr(Op, attrs, "index_dtype");
  if (index_dtype != DType::Int32 && index_dtype != DType::Int64)
    fail_type(Op, std::string("index_dtype must be int32 or int64, got '") + dtype_name(index_dtype) + "'");
  Shape out = reduced_shape(Op, t, axes);
  int64_t n = t.shape[axes[0]];
  if (n == 0)
    fail_value(Op, "cannot reduce the empty axis " + std::to_string(axes[0]) + " of operand " + types_str(in));
  if (index_dtype == DType::Int32 && n - 1 > INT32_MAX)
    fail_value(Op, "axis of length " + std::to_string(n) + " does not fit index_dtype int32");
  return {{out, index_dtype}};
}

template <OpId Op>
std::vector<TypeInfo> infer_cum(const std::vector<TypeInfo>& in, const Attrs& attrs) {
  const TypeInfo& t = in[0];
  if (Op == OpId::cumlogsumexp_ && !is_floating(t.dtype) && !is_complex(t.dtype))
    fail_type(Op, "needs a floating-point or complex operand, got " + types_str(in));
  if ((Op == OpId::cumsum_ || Op == OpId::cumprod_) && t.dtype == DType::Bool)
    fail_type(Op, "does not accept dtype bool (operand " + types_str(in) + "); it needs a numeric dtype");
  int64_t axis = int_attr(Op, attrs, "axis");
  int64_t rank = int64_t(t.shape.size());
  if (axis < 0 || axis >= rank)
    fail_value(Op, "axis " + std::to_string(axis) + " is out of range for operand " + types_str(in) +
                       " (axis must be in [0, " + std::to_string(rank) + "))");
  bool_attr_or(Op, attrs, "reverse", false);  // checked here, read by the kernel
  return {t};
}

}  // namespace

void register_reduction_infer(OpTable& t) {
  t.set_infer(OpId::reduce_sum_, infer_reduce<OpId::reduce_sum_>);
  t.set_infer(OpId::reduce_prod_, infer_reduce<OpId::reduce_prod_>);
  t.set_infer(OpId::reduce_max_, infer_reduce<OpId::reduce_max_>);
  t.set_infer(OpId::reduce_min_, infer_reduce<OpId::reduce_min_>);
  t.set_infer(OpId::reduce_and_, infer_reduce<OpId::reduce_and_>);
  t.set_infer(OpId::reduce_or_, infer_reduce<OpId::reduce_or_>);
  t.set_infer(OpId::reduce_xor_, infer_reduce<OpId::reduce_xor_>);
  t.set_infer(OpId::argmax_, infer_arg<OpId::argmax_>);
  t.set_infer(OpId::argmin_, infer_arg<OpId::argmin_>);
  t.set_infer(OpId::cumsum_, infer_cum<OpId::cumsum_>);
  t.set_infer(OpId::cumprod_, infer_cum<OpId::cumprod_>);
  t.set_infer(OpId::cummax_, infer_cum<OpId::cummax_>);
  t.set_infer(OpId::cummin_, infer_cum<OpId::cummin_>);
  t.set_infer(OpId::cumlogsumexp_, infer_cum<OpId::cumlogsumexp_>);
}

}  // namespace xjax
