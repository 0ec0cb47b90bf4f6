// Shape and dtype rules of the index ops: XLA's gather and scatter, with JAX's convention that
// the index vector is the last dimension of the indices. The checks follow XLA's shape inference.
#include <algorithm>

#include "core/ops/index_dims.h"
#include "core/ops/op_attrs.h"

namespace xjax {

namespace {

IndexMode mode_attr(OpId op, const Attrs& attrs) {
  const std::string s = str_attr_or(op, attrs, "mode", "fill");  // JAX's default (FILL_OR_DROP)
  if (s == "clip") return IndexMode::Clip;
  if (s == "fill") return IndexMode::Fill;
  if (s == "promise_in_bounds") return IndexMode::PromiseInBounds;
  fail_value(op, "mode must be 'clip', 'fill' or 'promise_in_bounds', got '" + s + "'");
}

bool contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

void check_unique_in_range(OpId op, const char* name, const std::vector<int64_t>& dims, int64_t rank) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= rank)
      fail_value(op, std::string(name) + " " + shape_str(dims) + " out of range [0, " + std::to_string(rank) + ")");
    for (size_t j = 0; j < i; ++j)
      if (dims[j] == dims[i]) fail_value(op, std::string(name) + " " + shape_str(dims) + " must not repeat");
  }
}

void check_sorted_in_range(OpId op, const char* name, const std::vector<int64_t>& dims, int64_t rank) {
  for (size_t i = 1; i < dims.size(); ++i)
    if (dims[i] <= dims[i - 1]) fail_value(op, std::string(name) + " " + shape_str(dims) + " must be sorted and unique");
  check_unique_in_range(op, name, dims, rank);
}

void check_disjoint(OpId op, const char* a, const std::vector<int64_t>& x, const char* b, const std::vector<int64_t>& y) {
  for (int64_t d : x)
    if (contains(y, d))
      fail_value(op, std::string(a) + " " + shape_str(x) + " and " + b + " " + shape_str(y) + " must be disjoint");
}

void check_indices(OpId op, const std::vector<TypeInfo>& in) {
  if (!is_integer(in[1].dtype)) fail_type(op, "indices must have an integer dtype, got " + types_str(in));
  if (in[1].shape.empty()) fail_value(op, "indices must have rank >= 1 (the last dimension is the index vector), got " + types_str(in));
}

// The batching dimensions of operand and indices: pairwise, with equal sizes.
void check_batching(OpId op, const char* idx_name, const std::vector<int64_t>& operand_dims,
                    const std::vector<int64_t>& index_dims, const std::vector<TypeInfo>& in) {
  const Shape& operand = in[0].shape;
  const Shape& indices = in[1].shape;
  check_sorted_in_range(op, "operand_batching_dims", operand_dims, int64_t(operand.size()));
  check_unique_in_range(op, idx_name, index_dims, int64_t(indices.size()) - 1);  // never the index vector
  if (operand_dims.size() != index_dims.size())
    fail_value(op, std::string("operand_batching_dims ") + shape_str(operand_dims) + " and " + idx_name + " " +
                       shape_str(index_dims) + " must have equal lengths");
  for (size_t i = 0; i < operand_dims.size(); ++i)
    if (operand[operand_dims[i]] != indices[index_dims[i]])
      fail_value(op, "batching dimensions must have equal sizes: operand dim " + std::to_string(operand_dims[i]) +
                         " vs indices dim " + std::to_string(index_dims[i]) + " in " + types_str(in));
}

std::vector<TypeInfo> infer_gather(const std::vector<TypeInfo>& in, const Attrs& attrs) {
  const OpId op = OpId::gather_;
  check_indices(op, in);
  GatherDims d = gather_dims(op, attrs);
  const Shape& operand = in[0].shape;
  const Shape& indices = in[1].shape;
  const int64_t rank = int64_t(operand.size());
  const int64_t batch_rank = int64_t(indices.size()) - 1;
  const int64_t out_rank = int64_t(d.offset_dims.size()) + batch_rank;

  check_sorted_in_range(op, "offset_dims", d.offset_dims, out_rank);
  if (int64_t(d.start_index_map.size()) != indices.back())
    fail_value(op, "start_index_map " + shape_str(d.start_index_map) + " needs one entry per index vector component (" +
                       std::to_string(indices.back()) + ") for " + types_str(in));
  check_unique_in_range(op, "start_index_map", d.start_index_map, rank);
  check_sorted_in_range(op, "collapsed_slice_dims", d.collapsed_slice_dims, rank);
  check_batching(op, "start_indices_batching_dims", d.operand_batching_dims, d.start_indices_batching_dims, in);
  check_disjoint(op, "collapsed_slice_dims", d.collapsed_slice_dims, "operand_batching_dims", d.operand_batching_dims);
  check_disjoint(op, "start_index_map", d.start_index_map, "operand_batching_dims", d.operand_batching_dims);

  if (int64_t(d.slice_sizes.size()) != rank)
    fail_value(op, "slice_sizes " + shape_str(d.slice_sizes) + " needs one entry per operand dimension for " + types_str(in));
  if (int64_t(d.offset_dims.size() + d.collapsed_slice_dims.size() + d.operand_batching_dims.size()) != rank)
    fail_value(op, "every operand dimension must be an offset, collapsed or batching dimension: offset_dims " +
                       shape_str(d.offset_dims) + ", collapsed_slice_dims " + shape_str(d.collapsed_slice_dims) +
                       ", operand_batching_dims " + shape_str(d.operand_batching_dims) + " for operand " +
                       shape_str(operand));
  bool no_batches = numel(indices) == 0;  // as XLA: the bounds only matter when something is gathered
  for (int64_t i = 0; i < rank; ++i)
    if (d.slice_sizes[i] < 0 || (!no_batches && d.slice_sizes[i] > operand[i]))
      fail_value(op, "slice_sizes " + shape_str(d.slice_sizes) + " out of range for operand " + shape_str(operand));
  for (int64_t c : d.collapsed_slice_dims)
    if (d.slice_sizes[c] != 1)
      fail_value(op, "collapsed_slice_dims " + shape_str(d.collapsed_slice_dims) + " must have slice size 1, slice_sizes " +
                         shape_str(d.slice_sizes));
  for (int64_t b : d.operand_batching_dims)
    if (d.slice_sizes[b] > 1)
      fail_value(op, "operand_batching_dims " + shape_str(d.operand_batching_dims) +
                         " must have slice size 0 or 1, slice_sizes " + shape_str(d.slice_sizes));
  if (attrs.has("fill_value")) number_attr(op, attrs, "fill_value");  // the kernel reads it as a number

  // Batch dimensions (the indices' dims but the last) fill the positions that are not offset_dims.
  Shape out(size_t(out_rank), 0);
  size_t next_offset = 0, next_batch = 0;
  for (int64_t i = 0; i < rank; ++i) {
    if (contains(d.collapsed_slice_dims, i) || contains(d.operand_batching_dims, i)) continue;
    out[d.offset_dims[next_offset++]] = d.slice_sizes[i];
  }
  for (int64_t i = 0; i < out_rank; ++i)
    if (!contains(d.offset_dims, i)) out[i] = indices[next_batch++];
  return {{out, in[0].dtype}};
}

template <OpId kOp>
std::vector<TypeInfo> infer_scatter(const std::vector<TypeInfo>& in, const Attrs& attrs) {
  const OpId op = kOp;
  check_indices(op, in);
  if (in[2].dtype != in[0].dtype)
    fail_type(op, "updates must have the operand's dtype, got " + types_str(in));
  if ((op == OpId::scatter_add_ || op == OpId::scatter_mul_) && in[0].dtype == DType::Bool)
    fail_type(op, "does not accept dtype bool, got " + types_str(in));
  ScatterDims d = scatter_dims(op, attrs);
  const Shape& operand = in[0].shape;
  const Shape& indices = in[1].shape;
  const Shape& updates = in[2].shape;
  const int64_t rank = int64_t(operand.size());
  const int64_t batch_rank = int64_t(indices.size()) - 1;

  if (int64_t(updates.size()) != batch_rank + int64_t(d.update_window_dims.size()))
    fail_value(op, "updates must have rank " + std::to_string(batch_rank + int64_t(d.update_window_dims.size())) +
                       " (indices rank - 1 + len(update_window_dims)), got " + types_str(in));
  check_sorted_in_range(op, "update_window_dims", d.update_window_dims, int64_t(updates.size()));
  check_sorted_in_range(op, "inserted_window_dims", d.inserted_window_dims, rank);
  check_batching(op, "scatter_indices_batching_dims", d.operand_batching_dims, d.scatter_indices_batching_dims, in);
  check_disjoint(op, "inserted_window_dims", d.inserted_window_dims, "operand_batching_dims", d.operand_batching_dims);
  check_disjoint(op, "scatter_dims_to_operand_dims", d.scatter_dims_to_operand_dims, "operand_batching_dims",
                 d.operand_batching_dims);
  if (int64_t(d.update_window_dims.size() + d.inserted_window_dims.size() + d.operand_batching_dims.size()) != rank)
    fail_value(op, "every operand dimension must be a window, inserted or batching dimension: update_window_dims " +
                       shape_str(d.update_window_dims) + ", inserted_window_dims " + shape_str(d.inserted_window_dims) +
                       ", operand_batching_dims " + shape_str(d.operand_batching_dims) + " for operand " +
                       shape_str(operand));
  if (int64_t(d.scatter_dims_to_operand_dims.size()) != indices.back())
    fail_value(op, "scatter_dims_to_operand_dims " + shape_str(d.scatter_dims_to_operand_dims) +
                       " needs one entry per index vector component (" + std::to_string(indices.back()) + ") for " +
                       types_str(in));
  check_unique_in_range(op, "scatter_dims_to_operand_dims", d.scatter_dims_to_operand_dims, rank);

  std::vector<int64_t> window = scatter_window_sizes(d, operand, updates);
  for (int64_t i = 0; i < rank; ++i)  // inserted and batching dims take no room (their size may be 0)
    if (window[i] > operand[i] && !contains(d.inserted_window_dims, i) && !contains(d.operand_batching_dims, i))
      fail_value(op, "update window " + shape_str(window) + " does not fit in operand: " + types_str(in));
  // The remaining update dimensions are the indices' batch dimensions, in order.
  int64_t next_batch = 0;
  for (int64_t i = 0; i < int64_t(updates.size()); ++i) {
    if (contains(d.update_window_dims, i)) continue;
    if (updates[i] != indices[next_batch])
      fail_value(op, "updates dimension " + std::to_string(i) + " must match indices dimension " +
                         std::to_string(next_batch) + ": " + types_str(in));
    ++next_batch;
  }
  return {{operand, in[0].dtype}};
}

}  // namespace

GatherDims gather_dims(OpId op, const Attrs& attrs) {
  GatherDims d;
  d.offset_dims = ints_attr(op, attrs, "offset_dims");
  d.collapsed_slice_dims = ints_attr(op, attrs, "collapsed_slice_dims");
  d.start_index_map = ints_attr(op, attrs, "start_index_map");
  d.operand_batching_dims = ints_attr_or(op, attrs, "operand_batching_dims", {});
  d.start_indices_batching_dims = ints_attr_or(op, attrs, "start_indices_batching_dims", {});
  d.slice_sizes = ints_attr(op, attrs, "slice_sizes");
  d.mode = mode_attr(op, attrs);
  return d;
}

ScatterDims scatter_dims(OpId op, const Attrs& attrs) {
  ScatterDims d;
  d.update_window_dims = ints_attr(op, attrs, "update_window_dims");
  d.inserted_window_dims = ints_attr(op, attrs, "inserted_window_dims");
  d.scatter_dims_to_operand_dims = ints_attr(op, attrs, "scatter_dims_to_operand_dims");
  d.operand_batching_dims = ints_attr_or(op, attrs, "operand_batching_dims", {});
  d.scatter_indices_batching_dims = ints_attr_or(op, attrs, "scatter_indices_batching_dims", {});
  d.mode = mode_attr(op, attrs);
  return d;
}

std::vector<int64_t> scatter_window_sizes(const ScatterDims& d, const Shape& operand, const Shape& updates) {
  std::vector<int64_t> window(operand.size(), 1);
  size_t next = 0;
  for (size_t i = 0; i < operand.size(); ++i) {
    if (contains(d.inserted_window_dims, int64_t(i)) || contains(d.operand_batching_dims, int64_t(i))) continue;
    if (next < d.update_window_dims.size()) window[i] = updates[d.update_window_dims[next++]];
  }
  return window;
}

void register_index_infer(OpTable& t) {
  t.set_infer(OpId::gather_, infer_gather);
  t.set_infer(OpId::scatter_, infer_scatter<OpId::scatter_>);
  t.set_infer(OpId::scatter_add_, infer_scatter<OpId::scatter_add_>);
  t.set_infer(OpId::scatter_mul_, infer_scatter<OpId::scatter_mul_>);
  t.set_infer(OpId::scatter_min_, infer_scatter<OpId::scatter_min_>);
  t.set_infer(OpId::scatter_max_, infer_scatter<OpId::scatter_max_>);
}

}  // namespace xjax
