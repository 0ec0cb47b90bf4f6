// Shape and dtype rules of the sort ops: sort (variadic, lexicographic on the first num_keys
// operands, all permuted alike) and top_k (along the last axis; values and int32 indices).
#include <cstdint>
#include <limits>

#include "core/ops/op_attrs.h"

namespace xjax {

namespace {

// Rows are sorted through 32-bit positions (top_k returns them as int32).
constexpr int64_t kMaxSortLength = std::numeric_limits<int32_t>::max();

std::vector<TypeInfo> infer_sort(const std::vector<TypeInfo>& in, const Attrs& attrs) {
  const OpId op = OpId::sort_;
  if (in.empty()) fail_value(op, "expects at least one operand");
  for (const TypeInfo& t : in)
    if (t.shape != in[0].shape) fail_value(op, "operands must all have the same shape, got " + types_str(in));
  const int64_t rank = int64_t(in[0].shape.size());
  if (rank == 0) fail_value(op, "operands must have rank >= 1, got " + types_str(in));
  int64_t dim = int_attr(op, attrs, "dimension");
  if (dim < 0 || dim >= rank)
    fail_value(op, "dimension " + std::to_string(dim) + " out of range for " + types_str(in));
  int64_t num_keys = int_attr_or(op, attrs, "num_keys", 1);
  if (num_keys < 1 || num_keys > int64_t(in.size()))
    fail_value(op, "num_keys " + std::to_string(num_keys) + " must be in [1, " + std::to_string(in.size()) +
                       "] for " + std::to_string(in.size()) + " operands");
  bool_attr_or(op, attrs, "is_stable", false);  // checked here, read by the kernel
  if (in[0].shape[dim] > kMaxSortLength)
    fail_value(op, "cannot sort more than 2**31 - 1 elements along a dimension, got " + types_str(in));
  return in;
}

std::vector<TypeInfo> infer_top_k(const std::vector<TypeInfo>& in, const Attrs& attrs) {
  const OpId op = OpId::top_k_;
  const Shape& shape = in[0].shape;
  if (shape.empty()) fail_value(op, "operand must have rank >= 1, got " + types_str(in));
  int64_t k = int_attr(op, attrs, "k");
  if (k < 0 || k > shape.back())
    fail_value(op, "k = " + std::to_string(k) + " must be in [0, " + std::to_string(shape.back()) +
                       "] (the size of the last axis) for " + types_str(in));
  if (shape.back() > kMaxSortLength)
    fail_value(op, "the last axis must have fewer than 2**31 elements, got " + types_str(in));
  Shape out = shape;
  out.back() = k;
  return {{out, in[0].dtype}, {out, DType::Int32}};
}

}  // namespace

void register_sort_infer(OpTable& t) {
  t.set_infer(OpId::sort_, infer_sort);
  t.set_infer(OpId::top_k_, infer_top_k);
}

}  // namespace xjax
