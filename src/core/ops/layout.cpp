// Shape and dtype rules of the layout (data movement) ops. Every attribute is checked here:
// the kernels in cpu/layout.cpp trust the inferred shapes and never re-validate.
#include <algorithm>

#include "core/ops/op_attrs.h"
#include "core/size.h"

namespace xjax {

namespace {

// Rejects results whose size would overflow, before the rule computes with their element count.
void check_size(OpId op, const Shape& s, DType dt) { checked_size(s, dt, op_name(op)); }

void check_length(OpId op, const std::string& name, const std::vector<int64_t>& v, size_t rank,
                  const TypeInfo& t) {
  if (v.size() != rank)
    fail_value(op, name + " " + shape_str(v) + " must have one entry per dimension of the operand " +
                       types_str({t}) + ", got " + std::to_string(v.size()) + " for rank " + std::to_string(rank));
}

// The start-index operands of dynamic_slice / dynamic_update_slice: `rank` 0-d integers of one dtype.
void check_start_indices(OpId op, const std::vector<TypeInfo>& in, size_t first, size_t rank) {
  if (in.size() - first != rank)
    fail_value(op, "expects one start index per operand dimension (" + std::to_string(rank) + "), got " +
                       std::to_string(in.size() - first) + "; operands: " + types_str(in));
  for (size_t i = first; i < in.size(); ++i) {
    if (!is_integer(in[i].dtype))
      fail_type(op, "start indices must be integers, got " + types_str({in[i]}) + "; operands: " + types_str(in));
    if (in[i].dtype != in[first].dtype)
      fail_type(op, "start indices must all have the same dtype; operands: " + types_str(in));
    if (!in[i].shape.empty())
      fail_type(op, "start indices must be scalars (0-d), got " + types_str({in[i]}) + "; operands: " + types_str(in));
  }
}

std::vector<TypeInfo> infer_transpose(const std::vector<TypeInfo>& in, const Attrs& attrs) {
  const OpId op = OpId::transpose_;
  const TypeInfo& x = in[0];
  auto perm = ints_attr(op, attrs, "permutation");
  std::vector<bool> seen(x.shape.size(), false);
  bool ok = perm.size() == x.shape.size();
  for (int64_t p : perm) {
    if (!ok) break;
    ok = p >= 0 && p < int64_t(x.shape.size()) && !seen[p];
    if (ok) seen[p] = true;
  }
  if (!ok)
    fail_value(op, "permutation " + shape_str(perm) + " is not a permutation of the dimensions of operand " +
                       types_str(in));
  Shape out(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) out[i] = x.shape[perm[i]];
  return {{out, x.dtype}};
}

std::vector<TypeInfo> infer_reshape(const std::vector<TypeInfo>& in, const Attrs& attrs) {
  const OpId op = OpId::reshape_;
  Shape out = ints_attr(op, attrs, "new_sizes");
  for (int64_t d : out)
    if (d < 0) fail_value(op, "new_sizes " + shape_str(out) + " has a negative dimension");
  check_size(op, out, in[0].dtype);
  if (numel(out) != numel(in[0].shape))
    fail_value(op, "cannot reshape operand " + types_str(in) + " (" + std::to_string(numel(in[0].shape)) +
                       " elements) to shape " + shape_str(out) + " (" + std::to_string(numel(out)) + " elements)");
  return {{out, in[0].dtype}};
}

std::vector<TypeInfo> infer_broadcast_in_dim(const std::vector<TypeInfo>& in, const Attrs& attrs) {
  const OpId op = OpId::broadcast_in_dim_;
  const TypeInfo& x = in[0];
  Shape out = ints_attr(op, attrs, "shape");
  auto dims = ints_attr(op, attrs, "broadcast_dimensions");
  for (int64_t d : out)
    if (d < 0) fail_value(op, "target shape " + shape_str(out) + " has a negative dimension");
  check_size(op, out, x.dtype);
  const std::string ctx = " (operand " + types_str(in) + ", shape " + shape_str(out) + ", broadcast_dimensions " +
                          shape_str(dims) + ")";
  if (dims.size() != x.shape.size())
    fail_value(op, "broadcast_dimensions must have one entry per operand dimension" + ctx);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= int64_t(out.size()))
      fail_value(op, "broadcast_dimensions entry " + std::to_string(dims[i]) + " is out of range" + ctx);
    if (i > 0 && dims[i] <= dims[i - 1]) fail_value(op, "broadcast_dimensions must be strictly increasing" + ctx);
    if (x.shape[i] != 1 && x.shape[i] != out[dims[i]])
      fail_value(op, "operand dimension " + std::to_string(i) + " has size " + std::to_string(x.shape[i]) +
                         ", which must be 1 or equal target dimension " + std::to_string(dims[i]) + " of size " +
                         std::to_string(out[dims[i]]) + ctx);
  }
  return {{out, x.dtype}};
}

std::vector<TypeInfo> infer_slice(const std::vector<TypeInfo>& in, const Attrs& attrs) {
  const OpId op = OpId::slice_;
  const TypeInfo& x = in[0];
  const size_t rank = x.shape.size();
  auto start = ints_attr(op, attrs, "start_indices");
  auto limit = ints_attr(op, attrs, "limit_indices");
  auto strides = ints_attr_or(op, attrs, "strides", std::vector<int64_t>(rank, 1));
  check_length(op, "start_indices", start, rank, x);
  check_length(op, "limit_indices", limit, rank, x);
  check_length(op, "strides", strides, rank, x);
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    if (start[i] < 0 || start[i] > limit[i] || limit[i] > x.shape[i])
      fail_value(op, "start_indices " + shape_str(start) + " and limit_indices " + shape_str(limit) +
                         " must satisfy 0 <= start <= limit <= dim for operand " + types_str(in) +
                         " (dimension " + std::to_string(i) + ")");
    if (strides[i] < 1) fail_value(op, "strides " + shape_str(strides) + " must be positive");
    out[i] = limit[i] == start[i] ? 0 : (limit[i] - start[i] - 1) / strides[i] + 1;
  }
  return {{out, x.dtype}};
}

std::vector<TypeInfo> infer_dynamic_slice(const std::vector<TypeInfo>& in, const Attrs& attrs) {
  const OpId op = OpId::dynamic_slice_;
  if (in.empty()) fail_value(op, "expects an operand and its start indices, got no operands");
  const TypeInfo& x = in[0];
  auto sizes = ints_attr(op, attrs, "slice_sizes");
  check_start_indices(op, in, 1, x.shape.size());
  check_length(op, "slice_sizes", sizes, x.shape.size(), x);
  for (size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] < 0 || sizes[i] > x.shape[i])
      fail_value(op, "slice_sizes " + shape_str(sizes) + " must satisfy 0 <= size <= dim for operand " +
                         types_str({x}) + " (dimension " + std::to_string(i) + ")");
  return {{Shape(sizes), x.dtype}};
}

std::vector<TypeInfo> infer_dynamic_update_slice(const std::vector<TypeInfo>& in, const Attrs&) {
  const OpId op = OpId::dynamic_update_slice_;
  if (in.size() < 2) fail_value(op, "expects an operand, an update and start indices; operands: " + types_str(in));
  const TypeInfo &x = in[0], &u = in[1];
  if (u.dtype != x.dtype) fail_type(op, "update must have the operand's dtype; operands: " + types_str(in));
  if (u.shape.size() != x.shape.size())
    fail_value(op, "update must have the operand's rank; operands: " + types_str(in));
  for (size_t i = 0; i < x.shape.size(); ++i)
    if (u.shape[i] > x.shape[i])
      fail_value(op, "update dimensions must not exceed the operand's; operands: " + types_str(in));
  check_start_indices(op, in, 2, x.shape.size());
  return {x};
}

std::vector<TypeInfo> infer_concatenate(const std::vector<TypeInfo>& in, const Attrs& attrs) {
  const OpId op = OpId::concatenate_;
  if (in.empty()) fail_value(op, "expects at least one operand");
  int64_t dim = int_attr(op, attrs, "dimension");
  const TypeInfo& x = in[0];
  if (dim < 0 || dim >= int64_t(x.shape.size()))
    fail_value(op, "dimension " + std::to_string(dim) + " is out of range for operands " + types_str(in));
  Shape out = x.shape;
  out[dim] = 0;
  for (const TypeInfo& t : in) {
    if (t.dtype != x.dtype) fail_type(op, "operands must have the same dtype, got " + types_str(in));
    if (t.shape.size() != x.shape.size()) fail_value(op, "operands must have the same rank, got " + types_str(in));
    for (size_t i = 0; i < out.size(); ++i)
      if (int64_t(i) != dim && t.shape[i] != x.shape[i])
        fail_value(op, "operands must have equal dimensions except along dimension " + std::to_string(dim) +
                           ", got " + types_str(in));
    if (t.shape[dim] > kMaxArrayBytes - out[dim])  // each fits, their sum need not
      fail_value(op, "result is too large: operands " + types_str(in));
    out[dim] += t.shape[dim];
  }
  return {{out, x.dtype}};
}

std::vector<TypeInfo> infer_pad(const std::vector<TypeInfo>& in, const Attrs& attrs) {
  const OpId op = OpId::pad_;
  const TypeInfo &x = in[0], &v = in[1];
  if (v.dtype != x.dtype) fail_type(op, "padding value must have the operand's dtype; operands: " + types_str(in));
  if (!v.shape.empty()) fail_value(op, "padding value must be a scalar (0-d); operands: " + types_str(in));
  auto cfg = ints_attr(op, attrs, "padding_config");
  const size_t rank = x.shape.size();
  if (cfg.size() != 3 * rank)
    fail_value(op, "padding_config " + shape_str(cfg) + " must hold one (low, high, interior) triple per dimension of " +
                       types_str({x}));
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t lo = cfg[3 * i], hi = cfg[3 * i + 1], interior = cfg[3 * i + 2], d = x.shape[i];
    if (interior < 0)
      fail_value(op, "interior padding must be non-negative, got " + std::to_string(interior) + " in dimension " +
                         std::to_string(i));
    __int128 size = __int128(lo) + hi + d + __int128(std::max<int64_t>(d - 1, 0)) * interior;
    if (size < 0)
      fail_value(op, "padding_config " + shape_str(cfg) + " gives a negative size " + std::to_string(int64_t(size)) +
                         " in dimension " + std::to_string(i) + " of operand " + types_str({x}));
    if (size > (__int128(1) << 62)) fail_value(op, "padding_config " + shape_str(cfg) + " gives a too large result");
    out[i] = int64_t(size);
  }
  check_size(op, out, x.dtype);
  return {{out, x.dtype}};
}

std::vector<TypeInfo> infer_rev(const std::vector<TypeInfo>& in, const Attrs& attrs) {
  const OpId op = OpId::rev_;
  const TypeInfo& x = in[0];
  auto dims = ints_attr(op, attrs, "dimensions");
  std::vector<bool> seen(x.shape.size(), false);
  for (int64_t d : dims) {
    if (d < 0 || d >= int64_t(x.shape.size()) || seen[d])
      fail_value(op, "dimensions " + shape_str(dims) + " must be unique and in range for operand " + types_str(in));
    seen[d] = true;
  }
  return {x};
}

}  // namespace

void register_layout_infer(OpTable& t) {
  t.set_infer(OpId::transpose_, infer_transpose);
  t.set_infer(OpId::reshape_, infer_reshape);
  t.set_infer(OpId::broadcast_in_dim_, infer_broadcast_in_dim);
  t.set_infer(OpId::slice_, infer_slice);
  t.set_infer(OpId::dynamic_slice_, infer_dynamic_slice);
  t.set_infer(OpId::dynamic_update_slice_, infer_dynamic_update_slice);
  t.set_infer(OpId::concatenate_, infer_concatenate);
  t.set_infer(OpId::pad_, infer_pad);
  t.set_infer(OpId::rev_, infer_rev);
}

}  // namespace xjax
