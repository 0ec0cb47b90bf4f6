// Shape and dtype rule of conv_general_dilated (JAX's lax.conv_general_dilated, XLA's
// Convolution): every attribute the kernel reads is checked here, with JAX's messages.
//
// Attributes: lhs_spec, rhs_spec, out_spec (permutations: positions of batch, feature, spatial...
// in lhs and out; of out feature, in feature, spatial... in rhs), window_strides, padding (lo, hi
// per spatial dim), lhs_dilation, rhs_dilation, feature_group_count, batch_group_count and an
// optional preferred_element_type.
#include "core/ops/op_attrs.h"
#include "core/ops/window_dims.h"

namespace xjax {

namespace {

constexpr OpId kOp = OpId::conv_general_dilated_;

std::vector<int64_t> spec_attr(const Attrs& attrs, const char* name, size_t rank, const std::string& ctx) {
  const std::vector<int64_t>& v = ints_attr(kOp, attrs, name);
  std::vector<bool> seen(rank, false);
  bool ok = v.size() == rank;
  for (int64_t d : v) {
    if (!ok || d < 0 || d >= int64_t(rank) || seen[d]) {
      ok = false;
      break;
    }
    seen[d] = true;
  }
  if (!ok)
    fail_value(kOp, std::string("dimension numbers ") + name + " " + shape_str(v) +
                        " must be a permutation of the " + std::to_string(rank) + " operand dimensions; " + ctx);
  return v;
}

std::vector<TypeInfo> infer_conv(const std::vector<TypeInfo>& in, const Attrs& attrs) {
  const TypeInfo &lhs = in[0], &rhs = in[1];
  const std::string ctx = "operands " + types_str(in);
  if (lhs.dtype != rhs.dtype)
    fail_type(kOp, std::string("requires arguments to have the same dtypes, got ") + dtype_name(lhs.dtype) + ", " +
                       dtype_name(rhs.dtype) + "; " + ctx);
  const ConvDims d = conv_dims(lhs.shape, rhs.shape, attrs);
  Shape out(lhs.shape.size());
  out[d.out_spec[0]] = lhs.shape[d.lhs_spec[0]] / d.batch_groups;
  out[d.out_spec[1]] = rhs.shape[d.rhs_spec[0]];
  for (size_t i = 0; i < d.spatial.size(); ++i) out[d.out_spec[2 + i]] = d.spatial[i].out_size();
  return {{out, preferred_result_dtype(kOp, lhs.dtype, attrs, ctx)}};
}

}  // namespace

ConvDims conv_dims(const Shape& lhs, const Shape& rhs, const Attrs& attrs) {
  const std::string ctx = "lhs shape " + shape_str(lhs) + ", rhs shape " + shape_str(rhs);
  if (lhs.size() != rhs.size())
    fail_value(kOp, "lhs and rhs must have the same number of dimensions, but got " + shape_str(lhs) + " and " +
                        shape_str(rhs) + ".");
  const size_t rank = lhs.size();
  if (rank < 2)
    fail_value(kOp, "operands need a batch and a feature dimension (rank at least 2); " + ctx);
  ConvDims d;
  d.lhs_spec = spec_attr(attrs, "lhs_spec", rank, ctx);
  d.rhs_spec = spec_attr(attrs, "rhs_spec", rank, ctx);
  d.out_spec = spec_attr(attrs, "out_spec", rank, ctx);
  d.feature_groups = int_attr_or(kOp, attrs, "feature_group_count", 1);
  d.batch_groups = int_attr_or(kOp, attrs, "batch_group_count", 1);
  const int64_t fg = d.feature_groups, bg = d.batch_groups;
  const int64_t lhs_features = lhs[d.lhs_spec[1]], lhs_batch = lhs[d.lhs_spec[0]];
  const int64_t rhs_out = rhs[d.rhs_spec[0]], rhs_in = rhs[d.rhs_spec[1]];
  auto str = [](int64_t v) { return std::to_string(v); };
  if (fg < 1) fail_value(kOp, "feature_group_count must be a positive integer, got " + str(fg) + ".");
  if (lhs_features % fg)
    fail_value(kOp, "feature_group_count must divide lhs feature dimension size, but " + str(fg) +
                        " does not divide " + str(lhs_features) + "; " + ctx);
  if (lhs_features / fg != rhs_in)
    fail_value(kOp, "lhs feature dimension size divided by feature_group_count must equal the rhs input feature "
                    "dimension size, but " + str(lhs_features) + " // " + str(fg) + " != " + str(rhs_in) + "; " + ctx);
  if (rhs_out % fg)
    fail_value(kOp, "rhs output feature dimension size must be a multiple of feature_group_count, but " +
                        str(rhs_out) + " is not a multiple of " + str(fg) + "; " + ctx);
  if (bg < 1) fail_value(kOp, "batch_group_count must be a positive integer, got " + str(bg) + ".");
  if (lhs_batch % bg)
    fail_value(kOp, "batch_group_count must divide lhs batch dimension size, but " + str(bg) +
                        " does not divide " + str(lhs_batch) + "; " + ctx);
  if (rhs_out % bg)
    fail_value(kOp, "rhs output feature dimension size must be a multiple of batch_group_count, but " +
                        str(rhs_out) + " is not a multiple of " + str(bg) + "; " + ctx);
  if (bg > 1 && fg > 1)
    fail_value(kOp, "At most one of batch_group_count and feature_group_count may be > 1, got batch_group_count=" +
                        str(bg) + " and feature_group_count=" + str(fg));
  Shape sizes, windows;
  for (size_t i = 2; i < rank; ++i) {
    sizes.push_back(lhs[d.lhs_spec[i]]);
    windows.push_back(rhs[d.rhs_spec[i]]);
  }
  d.spatial = window_dims(kOp, sizes, windows, attrs, {"lhs_dilation", "rhs_dilation"}, ctx);
  return d;
}

void register_convolution_infer(OpTable& t) { t.set_infer(kOp, infer_conv); }

}  // namespace xjax
