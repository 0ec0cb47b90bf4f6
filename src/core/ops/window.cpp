// Shape and dtype rules of the windowed reductions (reduce_window_sum/max/min) and of max-pool's
// derivatives, select_and_gather_add (the JVP of reduce_window_max/min) and
// select_and_scatter_add (its transpose). Every attribute the kernels read is checked here.
//
// Attributes: window_dimensions, window_strides, padding (lo, hi per dimension), base_dilation,
// window_dilation (select_and_scatter_add has no dilations), and select_prim ("ge": max, "le":
// min) for the select_and_* ops.
#include "core/ops/op_attrs.h"
#include "core/ops/window_dims.h"

namespace xjax {

namespace {

std::vector<int64_t> window_attr(OpId op, const Attrs& attrs, size_t rank, const std::string& ctx) {
  const std::vector<int64_t>& v = ints_attr(op, attrs, "window_dimensions");
  if (v.size() != rank)
    fail_value(op, "window_dimensions " + shape_str(v) + " must have one entry per dimension of the operand; " + ctx);
  for (int64_t w : v)
    if (w < 1) fail_value(op, "window_dimensions " + shape_str(v) + " must be positive; " + ctx);
  return v;
}

Shape windowed_shape(const std::vector<WindowDim>& dims) {
  Shape out;
  for (const WindowDim& d : dims) out.push_back(d.out_size());
  return out;
}

void check_select_prim(OpId op, const Attrs& attrs) {
  const std::string& s = str_attr(op, attrs, "select_prim");
  if (s != "ge" && s != "le")
    fail_value(op, "attribute 'select_prim' must be \"ge\" (max) or \"le\" (min)");
}

template <OpId Op>
std::vector<TypeInfo> infer_reduce_window(const std::vector<TypeInfo>& in, const Attrs& attrs) {
  const TypeInfo& x = in[0];
  const std::string ctx = "operand " + types_str(in);
  if (Op == OpId::reduce_window_sum_ && x.dtype == DType::Bool)
    fail_type(Op, "does not accept dtype bool (" + ctx + "); it needs a numeric dtype");
  const auto dims = window_dims(Op, x.shape, window_attr(Op, attrs, x.shape.size(), ctx), attrs,
                                {"base_dilation", "window_dilation"}, ctx);
  return {{windowed_shape(dims), x.dtype}};
}

std::vector<TypeInfo> infer_select_and_gather_add(const std::vector<TypeInfo>& in, const Attrs& attrs) {
  constexpr OpId op = OpId::select_and_gather_add_;
  const TypeInfo &t = in[0], &x = in[1];
  const std::string ctx = "tangents and operand " + types_str(in);
  if (t.dtype != x.dtype || t.shape != x.shape)
    fail_type(op, "tangents and operand must have the same shape and dtype; " + ctx);
  if (x.dtype == DType::Bool) fail_type(op, "needs a numeric dtype; " + ctx);
  check_select_prim(op, attrs);
  const auto dims = window_dims(op, x.shape, window_attr(op, attrs, x.shape.size(), ctx), attrs,
                                {"base_dilation", "window_dilation"}, ctx);
  return {{windowed_shape(dims), t.dtype}};
}

std::vector<TypeInfo> infer_select_and_scatter_add(const std::vector<TypeInfo>& in, const Attrs& attrs) {
  constexpr OpId op = OpId::select_and_scatter_add_;
  const TypeInfo &s = in[0], &x = in[1];
  const std::string ctx = "source and operand " + types_str(in);
  if (s.dtype != x.dtype) fail_type(op, "source and operand must have the same dtype; " + ctx);
  if (x.dtype == DType::Bool) fail_type(op, "needs a numeric dtype; " + ctx);
  check_select_prim(op, attrs);
  if (attrs.has("base_dilation") || attrs.has("window_dilation"))
    fail_value(op, "takes no dilations (dilate the operand with pad first)");
  const auto dims = window_dims(op, x.shape, window_attr(op, attrs, x.shape.size(), ctx), attrs,
                                {"base_dilation", "window_dilation"}, ctx);
  if (s.shape != windowed_shape(dims))
    fail_type(op, "source shape " + shape_str(s.shape) + " must be the operand's windowed shape " +
                      shape_str(windowed_shape(dims)) + "; " + ctx);
  return {{x.shape, s.dtype}};
}

}  // namespace

void register_window_infer(OpTable& t) {
  t.set_infer(OpId::reduce_window_sum_, infer_reduce_window<OpId::reduce_window_sum_>);
  t.set_infer(OpId::reduce_window_max_, infer_reduce_window<OpId::reduce_window_max_>);
  t.set_infer(OpId::reduce_window_min_, infer_reduce_window<OpId::reduce_window_min_>);
  t.set_infer(OpId::select_and_gather_add_, infer_select_and_gather_add);
  t.set_infer(OpId::select_and_scatter_add_, infer_select_and_scatter_add);
}

}  // namespace xjax
