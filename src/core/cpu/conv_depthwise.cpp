// Depthwise convolutions (one input and one output feature per group, as many groups as input
// features) computed directly. im2col would make each group's product a matrix-vector one with a
// gathered copy of the input per tap; here the features are the vector instead: an output position's
// features are the sum over taps of the input features under the tap times the tap's weights, rows
// of the channel-last lhs read in place. Padded taps read a row of zeros, so every output sums all
// taps in tap order (0 * inf is NaN as in XLA) and its bits depend neither on the position nor on the
// number of threads; the file is compiled without contraction, so not on the clone either.
#include <algorithm>
#include <memory>
#include <vector>

#include "core/arch.h"
#include "core/cpu/conv_blocks.h"
#include "core/thread_pool.h"

#define XJAX_DEPTHWISE_CLONES XJAX_WIDE_CLONES

namespace xjax::conv {

namespace {

constexpr int64_t kLanes = 16;              // features summed at once (held in registers)
constexpr int64_t kWorkPerTask = 1 << 15;   // multiply-adds

// out[c] = sum over taps t in order of src[t][c] * w[t][c], for c < n.
template <typename C>
XJAX_DEPTHWISE_CLONES void sum_taps(const C* const* src, const C* w, int64_t taps, int64_t n, C* out) {
  int64_t c0 = 0;
  for (; c0 + kLanes <= n; c0 += kLanes) {
    C acc[kLanes] = {};
    for (int64_t t = 0; t < taps; ++t) {
      const C* s = src[t] + c0;
      const C* wt = w + t * n + c0;
      for (int64_t j = 0; j < kLanes; ++j) acc[j] += s[j] * wt[j];
    }
    for (int64_t j = 0; j < kLanes; ++j) out[c0 + j] = acc[j];
  }
  for (int64_t c = c0; c < n; ++c) {
    C acc = 0;
    for (int64_t t = 0; t < taps; ++t) acc += src[t][c] * w[t * n + c];
    out[c] = acc;
  }
}

}  // namespace

bool is_depthwise(const Geometry& g) {
  return g.groups > 1 && g.groups == g.cin && g.cg == 1 && g.og == 1 && !g.batch_groups && !g.direct &&
         !g.sp.empty();
}

template <typename C>
void conv_depthwise(const Geometry& g, const C* x, const C* w, C* out) {
  Geometry tg = g;
  add_tap_tables(tg);
  const int64_t taps = tg.taps, n = tg.groups, nsp = int64_t(tg.sp.size());
  // The weights as [tap][feature] (canonically [feature][tap]).
  std::unique_ptr<C[]> wt(new C[size_t(taps * n)]);
  for (int64_t c = 0; c < n; ++c)
    for (int64_t t = 0; t < taps; ++t) wt[size_t(t * n + c)] = w[c * taps + t];
  // Tap t's index along each spatial dim (the last fastest).
  std::vector<int64_t> tap_k(size_t(taps * nsp));
  for (int64_t t = 0; t < taps; ++t)
    for (int64_t i = nsp, rest = t; i-- > 0; rest /= tg.k_sp[size_t(i)]) tap_k[size_t(t * nsp + i)] = rest % tg.k_sp[size_t(i)];
  const std::vector<C> zeros(size_t(n), C(0));
  const int64_t grain = std::max<int64_t>(1, kWorkPerTask / std::max<int64_t>(taps * n, 1));
  parallel_for(tg.rows, grain, [&](int64_t r0, int64_t r1) {
    std::vector<const C*> src(static_cast<size_t>(taps));
    std::vector<int64_t> o(static_cast<size_t>(nsp));
    for (int64_t r = r0; r < r1; ++r) {
      int64_t rest = r;
      for (int64_t i = nsp; i-- > 0; rest /= tg.out_sp[size_t(i)]) o[size_t(i)] = rest % tg.out_sp[size_t(i)];
      const C* xb = x + rest * tg.lhs_batch_stride;  // rest: the batch
      for (int64_t t = 0; t < taps; ++t) {
        int64_t off = 0;
        for (int64_t i = 0; i < nsp && off >= 0; ++i) {
          const int64_t v = tg.tab[size_t(i)][size_t(o[size_t(i)] * tg.k_sp[size_t(i)] + tap_k[size_t(t * nsp + i)])];
          off = v < 0 ? -1 : off + v;
        }
        src[size_t(t)] = off < 0 ? zeros.data() : xb + off;
      }
      sum_taps<C>(src.data(), wt.get(), taps, n, out + r * n);
    }
  });
}

template void conv_depthwise<float>(const Geometry&, const float*, const float*, float*);
template void conv_depthwise<double>(const Geometry&, const double*, const double*, double*);
template void conv_depthwise<uint32_t>(const Geometry&, const uint32_t*, const uint32_t*, uint32_t*);
template void conv_depthwise<uint64_t>(const Geometry&, const uint64_t*, const uint64_t*, uint64_t*);

}  // namespace xjax::conv
