// CPU kernels of the layout ops. Each one describes its op as strided copies (and fills) and
// hands them to the engine in layout_copy.cpp; the shape rules have validated every attribute.
#include <algorithm>
#include <limits>

#include "core/cpu/kernels.h"
#include "core/cpu/layout_copy.h"
#include "core/ops/dynamic_window.h"
#include "core/ops/ops.h"

namespace xjax {

namespace {

size_t esize(const Tensor& t) { return itemsize(t.dtype); }

char* bytes(const Tensor& t) { return static_cast<char*>(t.data); }

void transpose_kernel(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  const auto& perm = attrs.get_ints("permutation");
  auto in_st = contiguous_strides(in[0].shape);
  std::vector<int64_t> src_st(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) src_st[i] = in_st[perm[i]];
  strided_copy(esize(in[0]), in[0].data, src_st, out[0].data, contiguous_strides(out[0].shape), out[0].shape);
}

void reshape_kernel(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs&) {
  contiguous_copy(esize(in[0]), in[0].data, out[0].data, in[0].size());
}

void broadcast_in_dim_kernel(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  const auto& dims = attrs.get_ints("broadcast_dimensions");
  const Tensor& x = in[0];
  auto in_st = contiguous_strides(x.shape);
  std::vector<int64_t> src_st(out[0].shape.size(), 0);  // new and size-1 dimensions repeat
  for (size_t i = 0; i < dims.size(); ++i)
    if (x.shape[i] != 1) src_st[dims[i]] = in_st[i];
  strided_copy(esize(x), x.data, src_st, out[0].data, contiguous_strides(out[0].shape), out[0].shape);
}

// Copies the window of `x` starting at `start` with steps `step` into the whole of `y`.
void copy_window(const Tensor& x, const std::vector<int64_t>& start, const std::vector<int64_t>& step,
                 const Tensor& y) {
  if (y.size() == 0) return;
  auto in_st = contiguous_strides(x.shape);
  std::vector<int64_t> src_st(in_st.size());
  int64_t offset = 0;
  for (size_t i = 0; i < in_st.size(); ++i) {
    offset += start[i] * in_st[i];
    src_st[i] = in_st[i] * step[i];
  }
  strided_copy(esize(x), bytes(x) + offset * esize(x), src_st, y.data, contiguous_strides(y.shape), y.shape);
}

void slice_kernel(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  const size_t rank = in[0].shape.size();
  std::vector<int64_t> step = attrs.has("strides") ? attrs.get_ints("strides") : std::vector<int64_t>(rank, 1);
  copy_window(in[0], attrs.get_ints("start_indices"), step, out[0]);
}

// The offset of a contiguous window (see dynamic_window.h), or -1 when the window is not one.
int64_t contiguous_window_offset(const Shape& whole, const Shape& part, const Tensor* starts) {
  return contiguous_window(whole, part) ? window_offset(whole, part, starts) : -1;
}

void dynamic_slice_kernel(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs&) {
  const Tensor& x = in[0];
  const int64_t at = out[0].size() ? contiguous_window_offset(x.shape, out[0].shape, &in[1]) : -1;
  if (at >= 0) return contiguous_copy(esize(x), bytes(x) + at * esize(x), out[0].data, out[0].size());
  std::vector<int64_t> start(x.shape.size());
  for (size_t i = 0; i < start.size(); ++i) start[i] = clamp_start(read_index(in[1 + i]), x.shape[i], out[0].shape[i]);
  copy_window(x, start, std::vector<int64_t>(start.size(), 1), out[0]);
}

void dynamic_update_slice_kernel(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs&) {
  const Tensor &x = in[0], &u = in[1], &y = out[0];
  contiguous_copy(esize(x), x.data, y.data, x.size());  // no-op when the output aliases the operand
  if (u.size() == 0) return;
  const int64_t at = contiguous_window_offset(y.shape, u.shape, &in[2]);
  if (at >= 0) return contiguous_copy(esize(x), u.data, bytes(y) + at * esize(y), u.size());
  auto st = contiguous_strides(y.shape);
  int64_t offset = 0;
  for (size_t i = 0; i < st.size(); ++i) offset += clamp_start(read_index(in[2 + i]), x.shape[i], u.shape[i]) * st[i];
  strided_copy(esize(x), u.data, contiguous_strides(u.shape), bytes(y) + offset * esize(y), st, u.shape);
}

void concatenate_kernel(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  const int64_t dim = attrs.get_int("dimension");
  const Tensor& y = out[0];
  auto st = contiguous_strides(y.shape);
  int64_t offset = 0;
  for (const Tensor& x : in) {
    strided_copy(esize(y), x.data, contiguous_strides(x.shape), bytes(y) + offset * esize(y), st, x.shape);
    offset += x.shape[dim] * st[dim];
  }
}

// Sets the box [lo, hi) of y to *value.
void fill_box(const Tensor& y, const void* value, const std::vector<int64_t>& lo, const std::vector<int64_t>& hi) {
  auto st = contiguous_strides(y.shape);
  Shape shape(lo.size());
  int64_t offset = 0;
  for (size_t i = 0; i < lo.size(); ++i) {
    shape[i] = hi[i] - lo[i];
    offset += lo[i] * st[i];
  }
  if (numel(shape) == 0) return;
  strided_copy(esize(y), value, std::vector<int64_t>(lo.size(), 0), bytes(y) + offset * esize(y), st, shape);
}

void pad_kernel(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  const auto& cfg = attrs.get_ints("padding_config");
  const Tensor &x = in[0], &y = out[0];
  const void* value = in[1].data;
  const size_t rank = x.shape.size();
  if (y.size() == 0) return;
  auto in_st = contiguous_strides(x.shape), out_st = contiguous_strides(y.shape);
  // Per dimension: the operand elements [first, first + count) that land inside the result
  // (negative low/high crop), where the first one lands, and the step between them.
  Shape count(rank);
  std::vector<int64_t> first(rank), land(rank), step(rank);
  for (size_t i = 0; i < rank; ++i) {
    // 128-bit arithmetic: the shape rule admits extreme low/high that cancel out.
    const __int128 lo = cfg[3 * i], st = __int128(cfg[3 * i + 2]) + 1, n = x.shape[i], m = y.shape[i];
    const __int128 begin = lo >= 0 ? 0 : (-lo + st - 1) / st;
    const __int128 end = lo > m - 1 ? 0 : std::min(n, (m - 1 - lo) / st + 1);
    if (end <= begin) return fill_elements(esize(y), y.data, value, y.size());  // nothing lands
    first[i] = int64_t(begin);
    count[i] = int64_t(end - begin);
    land[i] = int64_t(lo + begin * st);
    step[i] = count[i] > 1 ? int64_t(st) : 1;
  }
  // Without interior padding the operand lands in a dense box, and only the 2 * rank slabs
  // around it need the padding value; with interior padding, fill everything first.
  if (std::all_of(step.begin(), step.end(), [](int64_t s) { return s == 1; })) {
    for (size_t d = 0; d < rank; ++d) {
      std::vector<int64_t> lo(rank), hi(rank);
      for (size_t i = 0; i < rank; ++i) {
        lo[i] = i < d ? land[i] : 0;
        hi[i] = i < d ? land[i] + count[i] : y.shape[i];
      }
      hi[d] = land[d];
      fill_box(y, value, lo, hi);
      lo[d] = land[d] + count[d];
      hi[d] = y.shape[d];
      fill_box(y, value, lo, hi);
    }
  } else {
    fill_elements(esize(y), y.data, value, y.size());
  }
  int64_t src_off = 0, dst_off = 0;
  std::vector<int64_t> dst_st(rank);
  for (size_t i = 0; i < rank; ++i) {
    src_off += first[i] * in_st[i];
    dst_off += land[i] * out_st[i];
    dst_st[i] = step[i] * out_st[i];
  }
  strided_copy(esize(x), bytes(x) + src_off * esize(x), in_st, bytes(y) + dst_off * esize(y), dst_st, count);
}

void rev_kernel(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  const Tensor& x = in[0];
  if (x.size() == 0) return;
  auto src_st = contiguous_strides(x.shape);
  int64_t offset = 0;
  for (int64_t d : attrs.get_ints("dimensions")) {
    offset += (x.shape[d] - 1) * src_st[d];
    src_st[d] = -src_st[d];
  }
  strided_copy(esize(x), bytes(x) + offset * esize(x), src_st, out[0].data, contiguous_strides(x.shape), x.shape);
}

}  // namespace

void register_layout_cpu(CpuKernelTable& t) {
  t.set_cpu(OpId::transpose_, transpose_kernel);
  t.set_cpu(OpId::reshape_, reshape_kernel);
  t.set_cpu(OpId::broadcast_in_dim_, broadcast_in_dim_kernel);
  t.set_cpu(OpId::slice_, slice_kernel);
  t.set_cpu(OpId::dynamic_slice_, dynamic_slice_kernel);
  t.set_cpu(OpId::dynamic_update_slice_, dynamic_update_slice_kernel);
  t.set_cpu(OpId::concatenate_, concatenate_kernel);
  t.set_cpu(OpId::pad_, pad_kernel);
  t.set_cpu(OpId::rev_, rev_kernel);
}

}  // namespace xjax
