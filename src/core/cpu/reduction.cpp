// CPU kernels of the reductions over axes: one driver for every (op, dtype), written against the
// type-erased loops of reduction_loops.h. The operand's dims are merged into alternating kept and
// reduced runs; then either the innermost run is reduced (fold contiguous runs into one
// accumulator per output) or it is kept (fold whole rows into a vector of accumulators).
#include <algorithm>
#include <cstring>
#include <memory>

#include "core/cpu/kernels.h"
#include "core/cpu/reduction_kernels.h"
#include "core/cpu/reduction_loops.h"
#include "core/thread_pool.h"

namespace xjax {

namespace {

// Elements one task should cover so that scheduling costs stay small; tasks per reduction to aim
// for when there are few outputs (fixed, so results do not depend on the thread count).
constexpr int64_t kTaskElements = 1 << 15;
constexpr int64_t kTargetTasks = 64;
// Bytes of accumulators a kept-innermost task keeps hot (in L1/L2) while rows stream through
// them; and the most bytes of partial accumulators to allocate when rows are split between tasks.
constexpr int64_t kAccBlockBytes = 1 << 16;
constexpr int64_t kMaxPartialBytes = 1 << 20;
// Bytes of accumulators for a chunk of outputs when the innermost run is reduced.
constexpr int64_t kChunkAccBytes = 8192;

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

// Innermost run reduced, few outputs: each output's reduction is cut into `segs` pieces (runs
// of `inner` contiguous values at a time) whose partial accumulators are combined in order.
void reduce_inner_split(const ReduceLoops& L, const char* x, char* out, size_t isz, const std::vector<Dim>& kept,
                        const std::vector<Dim>& rows, int64_t inner, int64_t n_out, int64_t segs) {
  int64_t per_out = product(rows) * inner;
  int64_t tasks = n_out * segs;
  AccBuffer partial(tasks, L.acc_size);
  parallel_for(tasks, 1, [&](int64_t b, int64_t e) {
    Odometer row(rows);
    for (int64_t t = b; t < e; ++t) {
      int64_t p = t / segs, s = t % segs;
      int64_t q = per_out * s / segs, end = per_out * (s + 1) / segs;
      void* acc = partial.at(t);
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
    }
  });
  for (int64_t p = 0; p < n_out; ++p) {
    for (int64_t s = 1; s < segs; ++s) L.combine(partial.at(p * segs), partial.at(p * segs + s), 1);
    L.finish(out + size_t(p) * isz, partial.at(p * segs), 1);
  }
}

// Innermost run reduced, many outputs: a task takes a chunk of neighbouring outputs along the
// last kept dim, and for each run of reduced rows folds one segment of `inner` values per output
// (fold_segments), so short segments cost no call per output.
void reduce_inner_many(const ReduceLoops& L, const char* x, char* out, size_t isz, std::vector<Dim> kept,
                       const std::vector<Dim>& rows, int64_t inner, int64_t n_out) {
  Dim last{1, 0};
  if (!kept.empty()) {
    last = kept.back();
    kept.pop_back();
  }
  int64_t n_runs = product(rows), per_out = n_runs * inner;
  int64_t max_chunk = std::max<int64_t>(1, kChunkAccBytes / int64_t(L.acc_size));
  int64_t chunk = std::min({last.size, max_chunk, std::max<int64_t>(1, kTaskElements / per_out)});
  int64_t n_chunks = (last.size + chunk - 1) / chunk;
  int64_t tasks = (n_out / last.size) * n_chunks;
  parallel_for(tasks, std::max<int64_t>(1, kTaskElements / (chunk * per_out)), [&](int64_t b, int64_t e) {
    Odometer row(rows);
    std::unique_ptr<uint64_t[]> acc(new uint64_t[(size_t(chunk) * L.acc_size + 7) / 8]);
    for (int64_t t = b; t < e; ++t) {
      int64_t ko = t / n_chunks, c0 = (t % n_chunks) * chunk;
      int64_t count = std::min(chunk, last.size - c0);
      int64_t base = offset_of(kept, ko) + c0 * last.stride;
      L.init(acc.get(), count);
      row.seek(0);
      for (int64_t r = 0; r < n_runs; ++r, row.next())
        L.fold_segments(acc.get(), x + size_t(base + row.offset) * isz, count, inner, last.stride);
      L.finish(out + size_t(ko * last.size + c0) * isz, acc.get(), count);
    }
  });
}

// Innermost run kept (length `inner`): each output row accumulates input rows into a vector of
// accumulators. Runs of rows along the last reduced dim are `inner` apart and go to fold_rows in
// one call; columns are cut into blocks only when a row is long, so that reads stay long streams.
// With few output blocks, the rows are cut into `segs` pieces with partial accumulator vectors.
void reduce_outer(const ReduceLoops& L, const char* x, char* out, size_t isz, const std::vector<Dim>& kept,
                  std::vector<Dim> rows, int64_t inner, int64_t n_out) {
  int64_t n_rows = product(rows);
  int64_t run_len = rows.back().size;  // rows.back().stride == inner
  rows.pop_back();
  int64_t block = std::max<int64_t>(1, kAccBlockBytes / int64_t(L.acc_size));
  int64_t width0 = std::min(inner, block);
  int64_t n_blocks = (inner + block - 1) / block;
  int64_t base_tasks = (n_out / inner) * n_blocks;
  int64_t segs = 1;
  if (base_tasks < kTargetTasks)
    segs = std::max<int64_t>(1, std::min({kTargetTasks / base_tasks, n_rows * width0 / kTaskElements,
                                          kMaxPartialBytes / int64_t(L.acc_size) / (base_tasks * width0)}));
  int64_t tasks = base_tasks * segs;
  AccBuffer partial(segs > 1 ? tasks * width0 : 0, L.acc_size);
  int64_t task_elems = n_rows / segs * width0;
  parallel_for(tasks, std::max<int64_t>(1, kTaskElements / std::max<int64_t>(1, task_elems)), [&](int64_t b, int64_t e) {
    Odometer row(rows);
    std::unique_ptr<uint64_t[]> own;
    char* local = nullptr;
    if (segs == 1) {
      own.reset(new uint64_t[(size_t(width0) * L.acc_size + 7) / 8]);
      local = reinterpret_cast<char*>(own.get());
    }
    for (int64_t t = b; t < e; ++t) {
      int64_t s = t % segs, bt = t / segs;
      int64_t ko = bt / n_blocks, col = (bt % n_blocks) * block;
      int64_t width = std::min(block, inner - col);
      char* acc = segs > 1 ? partial.at(t * width0) : local;
      L.init(acc, width);
      int64_t base = offset_of(kept, ko) + col;
      int64_t r = n_rows * s / segs, end = n_rows * (s + 1) / segs;
      row.seek(r / run_len);
      int64_t pos = r % run_len;
      while (r < end) {
        int64_t run = std::min(run_len - pos, end - r);
        L.fold_rows(acc, x + size_t(base + row.offset + pos * inner) * isz, width, run, inner);
        r += run;
        pos = 0;
        row.next();
      }
      if (segs == 1) L.finish(out + size_t(ko * inner + col) * isz, acc, width);
    }
  });
  if (segs == 1) return;
  for (int64_t bt = 0; bt < base_tasks; ++bt) {
    int64_t ko = bt / n_blocks, col = (bt % n_blocks) * block;
    int64_t width = std::min(block, inner - col);
    char* acc = partial.at(bt * segs * width0);
    for (int64_t s = 1; s < segs; ++s) L.combine(acc, partial.at((bt * segs + s) * width0), width);
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
    int64_t per_out = product(rows) * inner, segs = 1;
    if (n_out < kTargetTasks) segs = std::min(kTargetTasks / n_out, per_out / kTaskElements);
    if (segs > 1)
      reduce_inner_split(L, x, o, isz, kept, rows, inner, n_out, segs);
    else
      reduce_inner_many(L, x, o, isz, std::move(kept), rows, inner, n_out);
  } else {
    kept.pop_back();
    reduce_outer(L, x, o, isz, kept, std::move(rows), inner, n_out);
  }
}

namespace {
template <RedOp Op>
void reduce_kernel(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  reduce_axes(Op, in[0], out[0], attrs.get_ints("axes"));
}
}  // namespace

void register_reduction_cpu(CpuKernelTable& t) {
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
