// Shape and dtype rules of the contraction ops: dot_general (JAX's lax.dot_general), and the
// preferred_element_type rule that conv_general_dilated shares.
//
// Errors follow JAX: every problem with the dimension numbers or dtypes is a TypeError, as
// lax.dot_general raises them.
#include <algorithm>

#include "core/ops/op_attrs.h"

namespace xjax {

namespace {

constexpr OpId kOp = OpId::dot_general_;

// Range, uniqueness and disjointness of one operand's batch and contracting dimensions.
void check_operand_dims(const char* side, const TypeInfo& t, const std::vector<int64_t>& contracting,
                        const std::vector<int64_t>& batch, const std::string& ctx) {
  int64_t rank = int64_t(t.shape.size());
  for (const auto* dims : {&batch, &contracting})
    for (int64_t d : *dims)
      if (d < 0 || d >= rank)
        fail_type(kOp, std::string("requires ") + side + " dimension numbers to be nonnegative and less than the " +
                           "rank of the " + side + " (" + std::to_string(rank) + "), got " + side + "_batch " +
                           shape_str(batch) + " and " + side + "_contracting " + shape_str(contracting) + "; " + ctx);
  std::vector<bool> seen_batch(rank, false), seen_contract(rank, false);
  for (int64_t d : batch) {
    if (seen_batch[d])
      fail_type(kOp, std::string("requires ") + side + " batch dimensions to be distinct, got " + shape_str(batch) +
                         "; " + ctx);
    seen_batch[d] = true;
  }
  for (int64_t d : contracting) {
    if (seen_contract[d])
      fail_type(kOp, std::string("requires ") + side + " contracting dimensions to be distinct, got " +
                         shape_str(contracting) + "; " + ctx);
    if (seen_batch[d])
      fail_type(kOp, std::string("requires ") + side + " batch dimensions to be disjoint from contracting " +
                         "dimensions, got " + side + "_batch " + shape_str(batch) + " and " + side + "_contracting " +
                         shape_str(contracting) + "; " + ctx);
    seen_contract[d] = true;
  }
}

std::vector<TypeInfo> infer_dot_general(const std::vector<TypeInfo>& in, const Attrs& attrs) {
  const TypeInfo& lhs = in[0];
  const TypeInfo& rhs = in[1];
  std::string ctx = "operands " + types_str(in);
  if (lhs.dtype != rhs.dtype)
    fail_type(kOp, std::string("operands must have the same dtype, got ") + dtype_name(lhs.dtype) + " and " +
                       dtype_name(rhs.dtype) + "; " + ctx);
  const auto& lc = ints_attr(kOp, attrs, "lhs_contracting_dimensions");
  const auto& rc = ints_attr(kOp, attrs, "rhs_contracting_dimensions");
  const auto lb = ints_attr_or(kOp, attrs, "lhs_batch_dimensions", {});
  const auto rb = ints_attr_or(kOp, attrs, "rhs_batch_dimensions", {});
  check_operand_dims("lhs", lhs, lc, lb, ctx);
  check_operand_dims("rhs", rhs, rc, rb, ctx);
  if (lb.size() != rb.size())
    fail_type(kOp, "requires equal numbers of lhs_batch and rhs_batch dimensions, got lhs_batch " + shape_str(lb) +
                       " and rhs_batch " + shape_str(rb) + "; " + ctx);
  if (lc.size() != rc.size())
    fail_type(kOp, "requires equal numbers of lhs and rhs contracting dimensions, got lhs_contracting " +
                       shape_str(lc) + " and rhs_contracting " + shape_str(rc) + "; " + ctx);
  Shape lbs, rbs, lcs, rcs;
  for (size_t i = 0; i < lb.size(); ++i) lbs.push_back(lhs.shape[lb[i]]), rbs.push_back(rhs.shape[rb[i]]);
  for (size_t i = 0; i < lc.size(); ++i) lcs.push_back(lhs.shape[lc[i]]), rcs.push_back(rhs.shape[rc[i]]);
  if (lbs != rbs)
    fail_type(kOp, "requires lhs batch dimensions and rhs batch dimensions to have the same shape, got " +
                       shape_str(lbs) + " and " + shape_str(rbs) + "; " + ctx);
  if (lcs != rcs)
    fail_type(kOp, "requires contracting dimensions to have the same shape, got " + shape_str(lcs) + " and " +
                       shape_str(rcs) + "; " + ctx);

  // Result: batch dims (lhs batch order), then lhs free dims, then rhs free dims.
  Shape out = lbs;
  for (int64_t d = 0; d < int64_t(lhs.shape.size()); ++d)
    if (std::find(lb.begin(), lb.end(), d) == lb.end() && std::find(lc.begin(), lc.end(), d) == lc.end())
      out.push_back(lhs.shape[d]);
  for (int64_t d = 0; d < int64_t(rhs.shape.size()); ++d)
    if (std::find(rb.begin(), rb.end(), d) == rb.end() && std::find(rc.begin(), rc.end(), d) == rc.end())
      out.push_back(rhs.shape[d]);
  return {{out, preferred_result_dtype(kOp, lhs.dtype, attrs, ctx)}};
}

}  // namespace

static int bit_width(DType dt) { return dt == DType::Bool ? 1 : int(itemsize(dt)) * 8; }

// JAX's rules for preferred_element_type: integers and bool may not narrow; floats stay floats
// (any width: f32 -> bf16 rounds the float32 result); integers may become floats.
DType preferred_result_dtype(OpId op, DType in, const Attrs& attrs, const std::string& ctx) {
  const std::string name = str_attr_or(op, attrs, "preferred_element_type", "");
  if (name.empty()) return in;
  DType pref;
  try {
    pref = dtype_from_name(name);
  } catch (const std::invalid_argument&) {
    fail_type(op, "unknown preferred_element_type '" + name + "'");
  }
  if (pref == in) return in;
  if (is_complex(in) || is_complex(pref))
    fail_type(op, std::string("preferred_element_type ") + dtype_name(pref) + " with " + dtype_name(in) +
                       " operands: a complex product keeps its operands' dtype; " + ctx);
  if (is_floating(in) && !is_floating(pref))
    fail_type(op, std::string("preferred_element_type ") + dtype_name(pref) + " is incompatible with " +
                       dtype_name(in) + " operands (floating operands need a floating result); " + ctx);
  if (is_signed_int(in) && is_unsigned(pref))
    fail_type(op, std::string("preferred_element_type must have the same signedness as the original type, got ") +
                       dtype_name(pref) + " for " + dtype_name(in) + " operands; " + ctx);
  if (!is_floating(in) && !is_floating(pref) && bit_width(pref) < bit_width(in))
    fail_type(op, std::string("preferred_element_type must not be narrower than the original type, got ") +
                       dtype_name(pref) + " for " + dtype_name(in) + " operands; " + ctx);
  return pref;
}

std::vector<TypeInfo> infer_dot_general_add(const std::vector<TypeInfo>& in, const Attrs& attrs) {
  std::vector<TypeInfo> out = infer_dot_general({in[0], in[1]}, attrs);
  if (!(in[2] == out[0]))
    fail_type(OpId::dot_general_add_, "the addend must have the product's type " + types_str(out) + ", got " +
                                          types_str({in[2]}));
  return out;
}

void register_contraction_infer(OpTable& t) {
  t.set_infer(kOp, infer_dot_general);
  t.set_infer(OpId::dot_general_add_, infer_dot_general_add);
}

}  // namespace xjax
