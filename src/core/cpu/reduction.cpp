// CPU kernels of the reductions over axes: one driver for every (op, dtype), written against the
// type-erased loops of reduction_loops.h. The operand's dims are merged into alternating kept and
// reduced runs; then either the innermost run is reduced (fold contiguous runs into one
// accumulator per output) or it is kept (fold whole rows into a vector of accumulators).
#include <cstring>
#include <memory>

#include "core/cpu/reduction_kernels.h"
#include "core/cpu/reduction_loops.h"
#include "core/thread_pool.h"

namespace xjax {

namespace {

// Elements one task should cover so that scheduling costs stay small; tasks per reduction to aim
// for when there are few outputs (fixed, so results do not depend on the thread count).
constexpr int64_t kTaskElements = 1 << 15;
constexpr int64_t kTargetTasks = 64;
// Bytes of accumulators a kept-innermost task keeps hot while it streams rows through them.
constexpr int64_t kAccBlockBytes = 16384;

struct Dim {
  int64_t size, stride;
};

// Walks a multi-index over dims (last fastest) and keeps its element offset.
struct Odometer {
  const std::vector<Dim>& dims;
  std::vector<int64_t> idx;
  int64_t offset = 0;
  explicit Odometer(const std::vector<Dim>& d) : dims(d), idx(d.size(), 0) {}
  void seek(int64_t flat) {
    offset = 0;
    for (size_t i = dims.size(); i-- > 0;) {
      idx[i] = flat % dims[i].size;
      flat /= dims[i].size;
      offset += idx[i] * dims[i].stride;
    }
  }
  void next() {
    for (size_t i = dims.size(); i-- > 0;) {
      offset += dims[i].stride;
      if (++idx[i] < dims[i].size) return;
      offset -= idx[i] * dims[i].stride;
      idx[i] = 0;
    }
  }
};

int64_t offset_of(const std::vector<Dim>& dims, int64_t flat) {
  int64_t off = 0;
  for (size_t i = dims.size(); i-- > 0;) {
    off += (flat % dims[i].size) * dims[i].stride;
    flat /= dims[i].size;
  }
  return off;
}

int64_t product(const std::vector<Dim>& dims) {
  int64_t n = 1;
  for (const Dim& d : dims) n *= d.size;
  return n;
}

// Scratch accumulators, 8-byte aligned (every accumulator type is at most 8 bytes).
struct AccBuffer {
  std::unique_ptr<uint64_t[]> words;
  size_t acc_size;
  AccBuffer(int64_t n, size_t acc) : words(new uint64_t[(size_t(n) * acc + 7) / 8]), acc_size(acc) {}
  char* at(int64_t i) { return reinterpret_cast<char*>(words.get()) + size_t(i) * acc_size; }
};

// Innermost run reduced: each output folds runs of `inner` contiguous values. With few outputs,
// each output's reduction is cut into `segs` pieces whose partial accumulators are combined.
void reduce_inner(const ReduceLoops& L, const char* x, char* out, size_t isz, const std::vector<Dim>& kept,
                  const std::vector<Dim>& rows, int64_t inner, int64_t n_out) {
  int64_t per_out = product(rows) * inner;
  int64_t segs = 1;
  if (n_out < kTargetTasks) segs = std::max<int64_t>(1, std::min(kTargetTasks / n_out, per_out / kTaskElements));
  int64_t tasks = n_out * segs;
  AccBuffer partial(segs > 1 ? tasks : 0, L.acc_size);
  int64_t task_elems = per_out / segs;
  parallel_for(tasks, std::max<int64_t>(1, kTaskElements / std::max<int64_t>(1, task_elems)), [&](int64_t b, int64_t e) {
    Odometer row(rows);
    uint64_t local;  // the accumulator when an output is one task
    for (int64_t t = b; t < e; ++t) {
      int64_t p = t / segs, s = t % segs;
      int64_t q = per_out * s / segs, end = per_out * (s + 1) / segs;
      void* acc = segs > 1 ? static_cast<void*>(partial.at(t)) : &local;
      L.init(acc, 1);
      int64_t base = offset_of(kept, p);
      row.seek(q / inner);
      int64_t pos = q % inner;
      while (q < end) {
        int64_t run = std::min(inner - pos, end - q);
        L.fold(acc, x + size_t(base + row.offset + pos) * isz, run);
        q += run;
        pos = 0;
        row.next();
      }
      if (segs == 1) L.finish(out + size_t(p) * isz, acc, 1);
    }
  });
  if (segs == 1) return;
  for (int64_t p = 0; p < n_out; ++p) {
    for (int64_t s = 1; s < segs; ++s) L.combine(partial.at(p * segs), partial.at(p * segs + s), 1);
    L.finish(out + size_t(p) * isz, partial.at(p * segs), 1);
  }
}

// Innermost run kept (length `inner`): each output row accumulates whole input rows into a
// vector of accumulators, a column block at a time so that the block stays in L1.
void reduce_outer(const ReduceLoops& L, const char* x, char* out, size_t isz, const std::vector<Dim>& kept,
                  const std::vector<Dim>& rows, int64_t inner, int64_t n_out) {
  int64_t block = std::max<int64_t>(1, kAccBlockBytes / int64_t(L.acc_size));
  int64_t n_blocks = (inner + block - 1) / block;
  int64_t n_rows = product(rows);
  int64_t base_tasks = (n_out / inner) * n_blocks;
  int64_t segs = 1;
  if (base_tasks < kTargetTasks)
    segs = std::max<int64_t>(1, std::min(kTargetTasks / base_tasks, n_rows * std::min(inner, block) / kTaskElements));
  int64_t tasks = base_tasks * segs;
  AccBuffer partial(segs > 1 ? base_tasks * segs * std::min(inner, block) : 0, L.acc_size);
  int64_t task_elems = n_rows / segs * std::min(inner, block);
  parallel_for(tasks, std::max<int64_t>(1, kTaskElements / std::max<int64_t>(1, task_elems)), [&](int64_t b, int64_t e) {
    Odometer row(rows);
    alignas(64) char local[kAccBlockBytes];
    for (int64_t t = b; t < e; ++t) {
      int64_t s = t % segs, bt = t / segs;
      int64_t ko = bt / n_blocks, col = (bt % n_blocks) * block;
      int64_t width = std::min(block, inner - col);
      char* acc = segs > 1 ? partial.at(t * std::min(inner, block)) : local;
      L.init(acc, width);
      int64_t base = offset_of(kept, ko) + col;
      int64_t r = n_rows * s / segs, end = n_rows * (s + 1) / segs;
      row.seek(r);
      for (; r < end; ++r, row.next()) L.fold_rows(acc, x + size_t(base + row.offset) * isz, width);
      if (segs == 1) L.finish(out + size_t(ko * inner + col) * isz, acc, width);
    }
  });
  if (segs == 1) return;
  int64_t stride = std::min(inner, block);
  for (int64_t bt = 0; bt < base_tasks; ++bt) {
    int64_t ko = bt / n_blocks, col = (bt % n_blocks) * block;
    int64_t width = std::min(block, inner - col);
    char* acc = partial.at(bt * segs * stride);
    for (int64_t s = 1; s < segs; ++s) L.combine(acc, partial.at((bt * segs + s) * stride), width);
    L.finish(out + size_t(ko * inner + col) * isz, acc, width);
  }
}

}  // namespace

void reduce_axes(RedOp op, const Tensor& in, const Tensor& out, const std::vector<int64_t>& axes) {
  int64_t n_out = out.size();
  if (n_out == 0) return;
  const ReduceLoops& L = reduce_loops(op, in.dtype);
  size_t isz = itemsize(in.dtype);
  char* o = static_cast<char*>(out.data);
  if (in.size() == 0) {  // an empty reduction: the identity everywhere
    AccBuffer acc(n_out, L.acc_size);
    L.init(acc.at(0), n_out);
    L.finish(o, acc.at(0), n_out);
    return;
  }
  // Merge the dims into alternating runs (size-1 dims dropped); strides are contiguous.
  std::vector<bool> reduced(in.shape.size(), false);
  for (int64_t a : axes) reduced[a] = true;
  std::vector<std::pair<int64_t, bool>> runs;
  for (size_t i = 0; i < in.shape.size(); ++i) {
    if (in.shape[i] == 1) continue;
    if (!runs.empty() && runs.back().second == reduced[i])
      runs.back().first *= in.shape[i];
    else
      runs.push_back({in.shape[i], reduced[i]});
  }
  bool any_reduced = false;
  for (auto& r : runs) any_reduced = any_reduced || r.second;
  if (!any_reduced) {  // nothing to combine: a copy
    std::memcpy(o, in.data, size_t(n_out) * isz);
    return;
  }
  std::vector<Dim> kept, rows;
  int64_t stride = 1;
  for (size_t i = runs.size(); i-- > 0;) {
    std::vector<Dim>& dst = runs[i].second ? rows : kept;
    dst.insert(dst.begin(), Dim{runs[i].first, stride});
    stride *= runs[i].first;
  }
  const char* x = static_cast<const char*>(in.data);
  int64_t inner = runs.back().first;
  if (runs.back().second) {
    rows.pop_back();
    reduce_inner(L, x, o, isz, kept, rows, inner, n_out);
  } else {
    kept.pop_back();
    reduce_outer(L, x, o, isz, kept, rows, inner, n_out);
  }
}

namespace {
template <RedOp Op>
void reduce_kernel(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  reduce_axes(Op, in[0], out[0], attrs.get_ints("axes"));
}
}  // namespace

void register_reduction_cpu(OpTable& t) {
  t.set_cpu(OpId::reduce_sum_, reduce_kernel<RedOp::Sum>);
  t.set_cpu(OpId::reduce_prod_, reduce_kernel<RedOp::Prod>);
  t.set_cpu(OpId::reduce_max_, reduce_kernel<RedOp::Max>);
  t.set_cpu(OpId::reduce_min_, reduce_kernel<RedOp::Min>);
  t.set_cpu(OpId::reduce_and_, reduce_kernel<RedOp::And>);
  t.set_cpu(OpId::reduce_or_, reduce_kernel<RedOp::Or>);
  t.set_cpu(OpId::reduce_xor_, reduce_kernel<RedOp::Xor>);
  t.set_cpu(OpId::argmax_, argmax_kernel);
  t.set_cpu(OpId::argmin_, argmin_kernel);
  t.set_cpu(OpId::cumsum_, cumsum_kernel);
  t.set_cpu(OpId::cumprod_, cumprod_kernel);
  t.set_cpu(OpId::cummax_, cummax_kernel);
  t.set_cpu(OpId::cummin_, cummin_kernel);
  t.set_cpu(OpId::cumlogsumexp_, cumlogsumexp_kernel);
}

}  // namespace xjax
