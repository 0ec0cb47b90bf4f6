// The reduction drivers of fused programs. The index space is (k0, r, k1) and r is reduced:
// with k1 == 1 every output folds a contiguous run of r values (inner), otherwise rows of k1
// values are folded into vectors of accumulators (outer). Few outputs: the reduced extent is cut
// into a fixed number of segments whose partial accumulators are combined in order, so results do
// not depend on the number of threads.
#include "core/cpu/fused_tile.h"
#include "core/thread_pool.h"

namespace xjax {

using namespace fused;

namespace {
constexpr int64_t kMaxPartialWords = 1 << 18;  // partial accumulators of split outer reductions
constexpr int64_t kAccBlockBytes = 1 << 17;    // accumulators one outer-reduction task keeps hot

char* out_at(void* const* outputs, const FusedReduce& red, int64_t i) {
  return static_cast<char*>(outputs[red.output]) + i * int64_t(itemsize(red.dtype));
}

// The reductions' loops, and the 8-byte words each accumulator takes in the drivers' buffers (one,
// or two when a reduction is complex: its accumulators are 16 bytes).
std::vector<const ReduceLoops*> loops_of(const std::vector<FusedReduce>& reductions, size_t& words) {
  std::vector<const ReduceLoops*> L;
  words = 1;
  for (const FusedReduce& red : reductions) {
    L.push_back(&reduce_loops(red.op, red.dtype));
    words = std::max(words, (L.back()->acc_size + 7) / 8);
  }
  return L;
}
}  // namespace

void FusedProgram::run_inner(const void* const* inputs, void* const* outputs) const {
  const size_t nr = reductions.size();
  size_t aw;
  const std::vector<const ReduceLoops*> L = loops_of(reductions, aw);

  if (r < tile) {  // whole rows per tile: one accumulator per row, finished per tile
    int64_t m = std::max<int64_t>(1, tile / r);
    int64_t tiles = (k0 + m - 1) / m;
    auto body = [&](int64_t b, int64_t e) {
      Tile t(*this, inputs, outputs);
      std::vector<uint64_t> acc(size_t(m) * nr * aw);
      for (int64_t i = b; i < e; ++i) {
        int64_t row0 = i * m, mm = std::min(m, k0 - row0);
        t.compute(row0 * r, mm * r);
        for (size_t j = 0; j < nr; ++j) {
          uint64_t* a = acc.data() + j * size_t(m) * aw;
          L[j]->init(a, mm);
          L[j]->fold_segments(a, t.slot[reductions[j].slot], mm, r, r);
          L[j]->finish(out_at(outputs, reductions[j], row0), a, mm);
        }
      }
    };
    if (tiles == 1) return body(0, 1);
    return parallel_for(tiles, std::max<int64_t>(1, task_elements / (m * r)), body);
  }

  int64_t segs = 1;
  if (k0 < kTargetTasks) segs = std::max<int64_t>(1, std::min(kTargetTasks / k0, r / kTaskElements));
  int64_t tasks = k0 * segs;
  std::vector<uint64_t> partial(size_t(tasks) * nr * aw);
  auto body = [&](int64_t b, int64_t e) {
    Tile t(*this, inputs, outputs);
    for (int64_t task = b; task < e; ++task) {
      int64_t row = task / segs, s = task % segs;
      int64_t q = r * s / segs, end = r * (s + 1) / segs;
      uint64_t* acc = partial.data() + size_t(task) * nr * aw;
      for (size_t j = 0; j < nr; ++j) L[j]->init(acc + j * aw, 1);
      for (int64_t pos = q; pos < end; pos += tile) {
        int64_t len = std::min(tile, end - pos);
        t.compute(row * r + pos, len);
        for (size_t j = 0; j < nr; ++j) L[j]->fold(acc + j * aw, t.slot[reductions[j].slot], len);
      }
    }
  };
  if (tasks == 1) body(0, 1);
  else parallel_for(tasks, std::max<int64_t>(1, task_elements / std::max<int64_t>(1, r / segs)), body);
  for (int64_t row = 0; row < k0; ++row)
    for (size_t j = 0; j < nr; ++j) {
      uint64_t* first = partial.data() + (size_t(row * segs) * nr + j) * aw;
      for (int64_t s = 1; s < segs; ++s)
        L[j]->combine(first, partial.data() + (size_t(row * segs + s) * nr + j) * aw, 1);
      L[j]->finish(out_at(outputs, reductions[j], row), first, 1);
    }
}

void FusedProgram::run_outer(const void* const* inputs, void* const* outputs) const {
  const size_t nr = reductions.size();
  size_t aw;
  const std::vector<const ReduceLoops*> L = loops_of(reductions, aw);
  // A task folds rows of a block of w columns (all of them when their accumulators fit in L2):
  // tiles are several whole rows when rows are short, else pieces of one row, so the input is
  // read in long runs.
  const int64_t w = std::min(k1, std::max(tile, kAccBlockBytes / int64_t(8 * aw * nr)));
  const int64_t m = w == k1 ? std::max<int64_t>(1, tile / k1) : 1;
  const int64_t nb = (k1 + w - 1) / w;
  const int64_t base = k0 * nb;
  int64_t segs = 1;
  if (base < kTargetTasks)
    segs = std::max<int64_t>(1, std::min({kTargetTasks / base, r * w / kTaskElements,
                                          kMaxPartialWords / (base * w * int64_t(nr * aw))}));
  const int64_t tasks = base * segs;
  const size_t row_words = size_t(w) * aw;  // one reduction's accumulators in a task
  std::vector<uint64_t> partial(segs > 1 ? size_t(tasks) * nr * row_words : 0);
  auto body = [&](int64_t b, int64_t e) {
    Tile t(*this, inputs, outputs);
    std::vector<uint64_t> local(segs > 1 ? 0 : nr * row_words);
    for (int64_t task = b; task < e; ++task) {
      int64_t s = task % segs, bt = task / segs;
      int64_t kk = bt / nb, c = (bt % nb) * w, width = std::min(w, k1 - c);
      int64_t r0 = r * s / segs, r1 = r * (s + 1) / segs;
      uint64_t* acc = segs > 1 ? partial.data() + size_t(task) * nr * row_words : local.data();
      for (size_t j = 0; j < nr; ++j) L[j]->init(acc + j * row_words, width);
      for (int64_t row = r0; row < r1; row += m) {
        int64_t mm = std::min(m, r1 - row);
        if (mm > 1 || width <= tile) {  // whole rows (or one short row) per tile
          t.compute((kk * r + row) * k1 + c, mm * width);
          for (size_t j = 0; j < nr; ++j)
            L[j]->fold_rows(acc + j * row_words, t.slot[reductions[j].slot], width, mm, width);
          continue;
        }
        for (int64_t c0 = 0; c0 < width; c0 += tile) {  // one row, tile by tile
          int64_t len = std::min(tile, width - c0);
          t.compute((kk * r + row) * k1 + c + c0, len);
          for (size_t j = 0; j < nr; ++j)
            L[j]->fold_rows(reinterpret_cast<char*>(acc + j * row_words) + c0 * int64_t(L[j]->acc_size),
                            t.slot[reductions[j].slot], len, 1, len);
        }
      }
      if (segs == 1)
        for (size_t j = 0; j < nr; ++j)
          L[j]->finish(out_at(outputs, reductions[j], kk * k1 + c), acc + j * row_words, width);
    }
  };
  if (tasks == 1) body(0, 1);
  else parallel_for(tasks, std::max<int64_t>(1, task_elements / std::max<int64_t>(1, r / segs * w)), body);
  if (segs == 1) return;
  for (int64_t bt = 0; bt < base; ++bt) {
    int64_t kk = bt / nb, c = (bt % nb) * w, width = std::min(w, k1 - c);
    for (size_t j = 0; j < nr; ++j) {
      uint64_t* first = partial.data() + (size_t(bt * segs) * nr + j) * row_words;
      for (int64_t s = 1; s < segs; ++s)
        L[j]->combine(first, partial.data() + (size_t(bt * segs + s) * nr + j) * row_words, width);
      L[j]->finish(out_at(outputs, reductions[j], kk * k1 + c), first, width);
    }
  }
}

}  // namespace xjax
